#!/usr/bin/env bash
# Installs tawa's build and test dependencies from Debian's packages, and Triton 3.6.0 from PyPI into
# a virtual environment (for the test that Triton itself compiles every example kernel, and for
# bench/triton/compare.sh) at $TAWA_TRITON_VENV, default ~/.cache/tawa/triton-3.6.0 (about 650 MB), with what
# the Python package needs to build and test there (python3-dev: the headers the module compiles against).
# Idempotent: packages already present are left alone, apt-get update runs only when something is
# missing, and an environment that already imports Triton 3.6.0 is kept.
set -euo pipefail
pkgs=(cmake ninja-build gcc g++ ccache pkg-config  # gcc: lit tests build a stand-in libcuda.so.1 (tests/lit/cuda_runtime/Inputs)
      libeigen3-dev libtbb-dev libfmt-dev nlohmann-json3-dev libcli11-dev libsqlite3-dev
      libgtest-dev libgmock-dev libbenchmark-dev llvm-14-tools python3
      clang-14 sqlite3 python3-optuna python3-venv python3-pip python3-numpy python3-dev)  # tawa tune: clang++ -O1 -emit-llvm features; the record's shell; TPE in scripts/tune-eval.py; numpy: the lit tests' references (%numpy-python)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#pkgs[@]} packages present"
fi

venv="${TAWA_TRITON_VENV:-$HOME/.cache/tawa/triton-3.6.0}"
if "$venv/bin/python" -c 'import sys, triton; sys.exit(triton.__version__ != "3.6.0")' 2>/dev/null; then
  echo "install-deps: Triton 3.6.0 present in $venv"
else
  echo "install-deps: installing Triton 3.6.0 from PyPI into $venv"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "triton==3.6.0"
fi
# The Python package's build (scikit-build-core, nanobind) and tests (pytest, numpy), in the same
# environment: scripts/python-package.sh installs tawa there, and its tests wrap Triton's kernels.
# Ray: tawa tune --ray's actors (python -m tawa.tune_workers) and its tests on a local cluster.
# PyTorch 2.11 (the H200 machine's, and the one that pins Triton 3.6.0): CPU tensors in the tests, and
# tawa.custom_op checked by torch.library.opcheck and torch.compile. PyPI's wheel is the CUDA build,
# with its CUDA libraries about 4.7 GB installed (under a minute here); no GPU is needed to run it.
py_pins=("nanobind==2.9.2" "scikit-build-core==0.11.6" "pytest==8.4.2" "numpy==2.3.5" "ray==2.52.1" "torch==2.11.0")
if "$venv/bin/python" - "${py_pins[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(any(version(p.split("==")[0]) != p.split("==")[1] for p in sys.argv[1:]))
PY
then
  echo "install-deps: the Python package's build and test tools present in $venv"
else
  echo "install-deps: installing ${py_pins[*]} from PyPI into $venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${py_pins[@]}"
fi

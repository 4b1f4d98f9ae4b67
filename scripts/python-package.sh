#!/usr/bin/env bash
# Builds the Python package and installs it into the test environment ($TAWA_TRITON_VENV, default
# ~/.cache/tawa/triton-3.6.0, made by scripts/install-deps.sh): `pip install .` with scikit-build-core
# and nanobind, rebuilt incrementally in build/python/ (its C++ objects come from ccache after the
# main build). The test suite's `python` test runs pytest on python/tests in that environment.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${TAWA_TRITON_VENV:-$HOME/.cache/tawa/triton-3.6.0}"
if [ ! -x "$venv/bin/pip" ]; then
  echo "python-package: no environment at $venv; run scripts/install-deps.sh first" >&2
  exit 1
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation --no-deps .
echo "python-package: tawa $("$venv/bin/python" -c 'import tawa; print(tawa.__version__)') installed in $venv"

#!/usr/bin/env bash
# bench/gpu/python-wheel.sh [BUNDLE]: adds the Python package to a GPU bundle (default build/gpu-bundle,
# made by `cmake --build build --target gpu-bundle`), for bench/gpu/python_bench.py on the GPU machine:
#   BUNDLE/python/tawa-*.whl   the package built for that machine's Python (3.12: $TAWA_DEVICE_PYTHON,
#                              else python3.12 on PATH, else pyenv's newest 3.12), in a venv of its own
#                              at ~/.cache/tawa/py312 with nanobind and scikit-build-core
#   BUNDLE/lib-py/             the shared libraries its extension needs beyond the C and C++ runtimes
#                              (libtbb, libsqlite3): the GPU machine's own libstdc++ must stay, as
#                              torch in the same process needs it
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle="${1:-build/gpu-bundle}"
[[ -d "$bundle" ]] || { echo "python-wheel: no bundle at $bundle (cmake --build build --target gpu-bundle)" >&2; exit 1; }
py="${TAWA_DEVICE_PYTHON:-}"
if [[ -z "$py" ]]; then
  py=$(command -v python3.12 || true)
  [[ -z "$py" ]] && py=$(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python3 2>/dev/null | sort -V | tail -1 || true)
fi
[[ -x "$py" ]] || { echo "python-wheel: no Python 3.12 (set TAWA_DEVICE_PYTHON)" >&2; exit 1; }
venv="$HOME/.cache/tawa/py312"
if ! "$venv/bin/python" -c 'import nanobind, scikit_build_core' 2>/dev/null; then
  "$py" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check nanobind==2.9.2 scikit-build-core==0.11.6 numpy==2.3.5
fi
rm -rf "$bundle/python" "$bundle/lib-py"
mkdir -p "$bundle/python" "$bundle/lib-py"
"$venv/bin/pip" wheel --quiet --disable-pip-version-check --no-build-isolation --no-deps -w "$bundle/python" .
whl=$(cd "$bundle/python" && pwd)/$(cd "$bundle/python" && ls tawa-*.whl)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && python3 -m zipfile -e "$whl" .)
ext=$(ls "$tmp"/tawa/_tawa*.so)
ldd "$ext" | awk '$2 == "=>" {print $1, $3}' | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*) ;;
    *) cp -L "$path" "$bundle/lib-py/$name" ;;
  esac
done
echo "python-wheel: $(basename "$whl") and $(ls "$bundle/lib-py" | tr '\n' ' ')in $bundle"

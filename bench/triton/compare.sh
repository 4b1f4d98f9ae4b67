#!/usr/bin/env bash
# bench/triton/compare.sh [compare.py options: --repeats N, --log DIR, --tawa PATH]
# Compiles the example Triton kernels for sm_90a with Triton 3.6 (the GPU machine's version) and
# with tawa, on this machine (no GPU needed), and prints one table of what each compiler produced:
# registers, threads, shared memory, spills, wgmma / TMA / cp.async / mbarrier / setmaxnreg in the
# PTX, cold compile time. Needs build/tawa and the Triton 3.6.0 environment that
# ./scripts/build.sh (through install-deps.sh) makes at $TAWA_TRITON_VENV, default
# ~/.cache/tawa/triton-3.6.0. The figures go into BENCHMARKS.md; the test suite runs only
# --triton-only (Triton compiles every example; tests/lit/frontend/triton_accepts.test).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv="${TAWA_TRITON_VENV:-$HOME/.cache/tawa/triton-3.6.0}"
[[ -x "$venv/bin/python" ]] || { echo "compare.sh: no Triton environment at $venv (run ./scripts/install-deps.sh)" >&2; exit 1; }
[[ -x "$root/build/tawa" ]] || { echo "compare.sh: no $root/build/tawa (run ./scripts/build.sh)" >&2; exit 1; }
exec "$venv/bin/python" "$root/bench/triton/compare.py" "$@"

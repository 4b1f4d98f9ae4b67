#!/usr/bin/env bash
# bench/gpu/run.sh [--dry-run] [--bundle DIR] [LOGDIR]
# One call on an H200 machine (CUDA 13 toolkit and driver, PyTorch 2.11, Triton 3.6, no internet, none
# of our Debian libraries), sized for a 10-minute limit: checks tawa's GEMMs on the GPU against its CPU
# executor on fresh random data, then times tawa against cuBLAS (torch.matmul), torch SDPA and
# Triton 3.6 kernels of the same kind (bench/gpu/triton_kernels.py), and prints a table of TFLOP/s
# and ratios last. The full log goes to LOGDIR, else $TAWA_GPU_LOG, else ./gpu-bench-log.
#   The bundle (bin/tawa.sh and its libraries, primitives.cuh, the examples) is made here with
#   `cmake --build build --target gpu-bundle`; this script finds it beside itself (inside a bundle:
#   BUNDLE/bench/run.sh) or at build/gpu-bundle of the source tree, or takes --bundle DIR.
#   --dry-run: checks the bundle's files and that bin/tawa.sh answers, prints the plan, uses no GPU;
#   with a Python wheel in the bundle (bench/gpu/python-wheel.sh), also that tawa imports and runs.
# First the Python section (python_bench.py: tawa launched from Python on torch CUDA tensors beside
# Triton, cuBLAS and tawa's command line), then bench.py's.
# A failing step is logged with a line starting with FAILED and the run goes on with the next one (the
# first crashing kernels are run again under compute-sanitizer); the status is non-zero if any failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dry=0
bundle=""
log="${TAWA_GPU_LOG:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --bundle) shift; bundle="${1:?--bundle needs a folder}" ;;
    --bundle=*) bundle="${1#--bundle=}" ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "FAILED: unknown option $1" >&2; exit 2 ;;
    *) log="$1" ;;
  esac
  shift
done
log="${log:-$PWD/gpu-bench-log}"
if [[ -z "$bundle" ]]; then
  if [[ -x "$here/../bin/tawa.sh" ]]; then bundle="$here/.."
  else bundle="$here/../../build/gpu-bundle"; fi
fi
[[ -d "$bundle" ]] || { echo "FAILED: no tawa bundle at $bundle (cmake --build build --target gpu-bundle)" >&2; exit 1; }
bundle=$(cd "$bundle" && pwd)
mkdir -p "$log"
log=$(cd "$log" && pwd)

trap 'echo "FAILED: bench/gpu/run.sh stopped at line $LINENO (status $?); log in $log" >&2' ERR

{
  echo "== tawa GPU benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "bundle: $bundle"; [[ -f "$bundle/MANIFEST" ]] && sed 's/^/  /' "$bundle/MANIFEST"
  [[ -f "$bundle/COMMIT" ]] && echo "commit: $(cat "$bundle/COMMIT")"
} | tee -a "$log/bench.log"

py="$here/bench.py"
[[ -f "$py" ]] || { echo "FAILED: $py missing" >&2; exit 1; }

# The Python section (python_bench.py): the tawa wheel the bundle carries for the machine's Python
# (bench/gpu/python-wheel.sh), installed into the log folder; its extension's libraries from lib-py.
# $TAWA_PYTHON3 (default python3) is the Python with torch and Triton; TAWA_GPU_PYTHON=0 skips it.
python3_="${TAWA_PYTHON3:-python3}"
python_section() {  # python_section [--dry-run]: 0 when it ran clean or has nothing to run
  local whl
  whl=$(ls "$bundle"/python/tawa-*.whl 2>/dev/null | head -1)
  if [[ -z "$whl" || "${TAWA_GPU_PYTHON:-1}" == 0 ]]; then
    echo "python: no wheel in $bundle/python (bench/gpu/python-wheel.sh) or TAWA_GPU_PYTHON=0: the Python section is skipped"
    return 0
  fi
  local site="$log/pysite"
  rm -rf "$site"
  if ! "$python3_" -m pip install -q --no-index --no-deps --no-compile --target "$site" "$whl" >>"$log/python.log" 2>&1; then
    echo "FAILED: pip could not install $whl (log in $log/python.log)"
    return 1
  fi
  LD_LIBRARY_PATH="$bundle/lib-py${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" \
    timeout "${TAWA_GPU_PY_TIME_LIMIT:-150}" "$python3_" "$here/python_bench.py" --examples "$bundle/examples" --tawa "$bundle/bin/tawa.sh" "$@" \
    2>&1 | tee -a "$log/python.log"
  local rc=${PIPESTATUS[0]}
  [[ $rc -eq 0 ]] || echo "FAILED: the Python section (status $rc; log in $log/python.log)"
  return "$rc"
}

if [[ $dry -eq 1 ]]; then
  status=0
  python_section --dry-run || status=1
  python3 "$py" --bundle "$bundle" --log "$log" --dry-run || status=1
  exit "$status"
fi

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a "$log/bench.log"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
[[ -x "$CUDA_HOME/bin/nvcc" && -x "$CUDA_HOME/bin/ptxas" ]] || { echo "FAILED: no nvcc/ptxas under $CUDA_HOME (set CUDA_HOME)" >&2; exit 1; }
export CUDA_HOME
"$CUDA_HOME/bin/nvcc" --version | tail -2 | tee -a "$log/bench.log"
# tawa's cubin cache goes with the log's machine, not the home folder.
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$log/cache}"
export PYTHONUNBUFFERED=1
# TAWA_GPU_TIME_LIMIT (seconds, default 570) bounds the whole run, the Python section first (at most
# TAWA_GPU_PY_TIME_LIMIT, default 150); TAWA_GPU_STEP_TIMEOUT (default 90) each tawa call, after which
# it counts as hung; TAWA_GPU_ARGS is passed on to bench.py (e.g. to time only some sections: --only
# gemm-fp8,attention --seqs 16384 --causal yes; bench.py --help).
start=$SECONDS
status=0
python_section || status=1
left=$(( ${TAWA_GPU_TIME_LIMIT:-570} - (SECONDS - start) ))
(( left > 60 )) || left=60
timeout "$left" python3 "$py" --bundle "$bundle" --log "$log" --step-timeout "${TAWA_GPU_STEP_TIMEOUT:-90}" ${TAWA_GPU_ARGS:-} || status=$?
exit "$status"

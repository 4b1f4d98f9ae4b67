#!/usr/bin/env bash
# The demo: builds tawa, runs the pointer-form matmul example on the CPU executor with fresh random
# inputs and checks the result against an independent reference (scripts/check_reference.py, plain
# Python loops in double precision); then warp-specializes a real Triton kernel, checks the pipeline
# over 16 interleavings on the CPU, shows a deliberately broken lowering being caught, compiles it
# for sm_90a, runs fused attention's CUDA C++ on the CPU emulator, profiles the GEMM, and does the
# same from Python (examples/python/first.py).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
out=build/demo
rm -rf "$out"
M=200 N=136 K=100
echo "== tawa run: examples/matmul_ptr.tir, C[$M,$N] = A[$M,$K] @ B[$K,$N] in f16 with f32 accumulation"
build/tawa run examples/matmul_ptr.tir \
  --spec "a:*fp16[M,K], b:*fp16[K,N], c:*fp16[M,N], M:i32=$M, N:i32=$N, K:i32=$K,
          stride_am:i32=$K, stride_ak:i32=1, stride_bk:i32=$N, stride_bn:i32=1, stride_cm:i32=$N, stride_cn:i32=1,
          BLOCK_M=64, BLOCK_N=64" \
  --grid 'cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)' --save "$out"
echo "== independent reference (double precision, plain Python)"
python3 scripts/check_reference.py matmul "$out"

SPEC='a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32=200, N:i32=136, K:i32=160, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32'
echo
echo "== tawa compile: the Triton kernel examples/matmul_desc.py, warp-specialized (aref depth 3, MMA depth 1)"
# (the whole output is kept in a file and its start shown: `| head` would end tawa with SIGPIPE)
build/tawa compile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --emit nv --depth 3 --mma-depth 1 \
  --explain -o "$out/matmul_desc.nv.tir" 2> "$out/explain.txt"
head -8 "$out/explain.txt"
echo "   (the producer/consumer program lowered to mbarriers, TMA and wgmma: $out/matmul_desc.nv.tir)"
echo
echo "== tawa check: that pipeline on the CPU over 16 interleavings, against the kernel as written"
build/tawa check examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --grid 'cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)' \
  --depth 3 --mma-depth 1 --seeds 16
echo
echo "== and with a bug injected on purpose (the consumer releases its slot before its MMA has read it)"
if build/tawa check examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --grid 'cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)' \
  --depth 3 --mma-depth 1 --seeds 4 --inject early-release 2>&1 | tail -1; then :; fi

echo
echo "== tawa compile --target sm_90a: the same pipeline as CUDA C++ for Hopper, compiled by NVRTC + ptxas"
build/tawa compile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --depth 3 --mma-depth 1 \
  --target sm_90a --emit cuda -o "$out/matmul_desc.cu"
build/tawa compile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --depth 3 --mma-depth 1 \
  --target sm_90a --emit cubin -o "$out/matmul_desc.cubin" --resource-usage
echo "   (CUDA source: $out/matmul_desc.cu; no GPU is needed to compile, one is needed to run it)"
echo
echo "== tawa run --backend emu: fused attention (examples/attention.py, causal, two cooperative consumers) as"
echo "   CUDA C++ for sm_90a, run on the CPU emulator of the device primitives and checked against the executor"
build/tawa run examples/attention.py --kernel attn_fwd --backend emu --consumers 2 --grid '2, 2' \
  --spec 'Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.125, Z:i32=1, H:i32=2,
          R=512, D=64, N_CTX=256, HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=True' | grep -v "check [QKV]:"
echo
echo "== tawa profile: per-warp-group timeline of that pipeline, modelled on the CPU (H200-class cost model)"
build/tawa profile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --grid 'cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)' \
  --depth 3 --mma-depth 1 -o "$out/matmul_desc.trace.json" > "$out/profile.txt"
head -16 "$out/profile.txt"

echo
echo "== from Python: the tawa package (pip install . into the test environment), examples/python/first.py"
./scripts/python-package.sh
"${TAWA_TRITON_VENV:-$HOME/.cache/tawa/triton-3.6.0}/bin/python" examples/python/first.py > "$out/python_first.txt"
head -12 "$out/python_first.txt"
echo "   (the rest: $out/python_first.txt)"

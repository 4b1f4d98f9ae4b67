#!/usr/bin/env bash
# The demo: builds tawa, runs the pointer-form matmul example on the CPU executor with fresh random
# inputs and checks the result against an independent reference (scripts/check_reference.py, plain
# Python loops in double precision); then warp-specializes a real Triton kernel, checks the pipeline
# over 16 interleavings on the CPU, and shows a deliberately broken lowering being caught.
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
build/tawa compile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --emit nv --depth 3 --mma-depth 1 \
  --explain -o "$out/matmul_desc.nv.tir" 2>&1 | head -8
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
echo "== tawa compile --target sm_90a: the same pipeline as CUDA C++ for Hopper, compiled by nvcc/ptxas"
build/tawa compile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --depth 3 --mma-depth 1 \
  --target sm_90a --emit cuda -o "$out/matmul_desc.cu"
build/tawa compile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --depth 3 --mma-depth 1 \
  --target sm_90a --emit cubin -o "$out/matmul_desc.cubin" --resource-usage
echo "   (CUDA source: $out/matmul_desc.cu; no GPU is needed to compile, one is needed to run it)"
echo
echo "== tawa profile: per-warp-group timeline of that pipeline, modelled on the CPU (H200-class cost model)"
build/tawa profile examples/matmul_desc.py --kernel matmul_desc_kernel --spec "$SPEC" --grid 'cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)' \
  --depth 3 --mma-depth 1 -o "$out/matmul_desc.trace.json" | head -16

#!/usr/bin/env bash
# The demo: builds tawa, runs the pointer-form matmul example on the CPU executor with fresh random
# inputs, and checks the result against an independent reference (scripts/check_reference.py, plain
# Python loops in double precision).
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

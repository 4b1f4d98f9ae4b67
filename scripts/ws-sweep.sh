#!/usr/bin/env bash
# The long warp-specialization sweep (the test suite runs 16 seeds per configuration; this runs
# SEEDS, 256 by default): every example kernel that warp-specializes, in f16 and bf16, for aref
# depths 1-4 and MMA depths 0-2, one consumer or two cooperative ones, checked against the kernel as
# written over SEEDS interleavings. Prints one line per configuration and exits 1 on the first failure.
# Usage: scripts/ws-sweep.sh [SEEDS]     (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-256}
tawa=build/tawa
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gemm_spec() {  # dtype
  echo "a:*$1[M,K], b:*$1[K,N], c:*$1[M,N], M:i32=200, N:i32=136, K:i32=232, stride_am:i32=232, stride_ak:i32=1,
        stride_bk:i32=136, stride_bn:i32=1, stride_cm:i32=136, stride_cn:i32=1"
}
run() {  # label, args...
  local label=$1; shift
  if out=$("$tawa" check "$@" --seeds "$seeds" 2>&1); then
    echo "ok    $label"
  else
    echo "FAIL  $label"; echo "$out" | tail -5; exit 1
  fi
}
for dt in fp16 bf16; do
  ir=${dt/fp16/f16}
  for k in matmul_desc matmul_ptr matmul_desc_128 attention; do
    sed "s/xf16>/x$ir>/g; s/ptr<f16>/ptr<$ir>/g" "examples/$k.tir" > "$tmp/$k.tir"
  done
  for d in 1 2 3 4; do
    for p in 0 1 2; do
      run "matmul_desc $dt D=$d P=$p" "$tmp/matmul_desc.tir" --spec "$(gemm_spec $dt)" --grid 'cdiv(M, 64), cdiv(N, 64)' -D $d -P $p
      run "matmul_ptr $dt D=$d P=$p" "$tmp/matmul_ptr.tir" --spec "$(gemm_spec $dt)" --grid 'cdiv(M, 64) * cdiv(N, 64)' -D $d -P $p
      run "matmul_desc_128 cooperative $dt D=$d P=$p" "$tmp/matmul_desc_128.tir" --spec "$(gemm_spec $dt)" \
        --grid 'cdiv(M, 128), cdiv(N, 128)' --consumers 2 -D $d -P $p
      for causal in 0 1; do
        run "attention causal=$causal $dt D=$d P=$p" "$tmp/attention.tir" -D $d -P $p --grid 'cdiv(n_ctx, 64), 2' \
          --spec "q:*$dt[2,200,64], k:*$dt[2,200,64], v:*$dt[2,200,64], o:*$dt[2,200,64], sm_scale:fp32=0.125, n_ctx:i32=200, causal:i32=$causal"
      done
      run "matmul_persistent_desc.py $dt D=$d P=$p" examples/matmul_persistent_desc.py --kernel matmul_persistent_desc_kernel \
        --spec "a_ptr:*$dt[M,K], b_ptr:*$dt[K,N], c_ptr:*$dt[M,N], M:i32=200, N:i32=136, K:i32=232, BLOCK_M=64, BLOCK_N=64,
                BLOCK_K=32, GROUP_M=2, NUM_SMS=5" --grid NUM_SMS -D $d -P $p
    done
  done
done
echo "all configurations agree over $seeds seeds"

# gemm_tf32.py's results against numpy in float64 (DIR holds the buffers `tawa run --save DIR`
# wrote; "nt" as the second argument: B is stored N x K). Two bounds, each over sum_k |a||b|:
#  - against the exact product of the f32 inputs: tf32's rounding of both operands (2^-11 each,
#    relative) and the f32 accumulation;
#  - against the product of the inputs rounded to tf32 as cvt.rna.tf32.f32 rounds (to nearest, ties
#    away from zero): the f32 accumulation alone, which a kernel that truncated its operands or did
#    not round them would miss by far.
import sys

import numpy as np

d, form = sys.argv[1], sys.argv[2]
a32, b32, c = np.load(f"{d}/a_ptr.npy"), np.load(f"{d}/b_ptr.npy"), np.load(f"{d}/c_ptr.npy").astype(np.float64)
if form == "nt":
    b32 = b32.T


def rna_tf32(x):
    u = x.astype(np.float32).view(np.uint32)
    special = (u & 0x7F800000) == 0x7F800000
    r = np.where(special, u, (u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    return r.view(np.float32).astype(np.float64)


a, b = a32.astype(np.float64), b32.astype(np.float64)
K = a.shape[1]
mag = np.abs(a) @ np.abs(b)
accum = K * 2.0**-23 * mag + 1e-30
err = np.abs(c - a @ b)
assert (err <= 2.0**-10 * mag + accum).all(), f"exact: max error {err.max()}"
err_r = np.abs(c - rna_tf32(a32) @ rna_tf32(b32))
assert (err_r <= accum).all(), f"tf32-rounded: max error {(err_r / accum).max()} x the accumulation bound"
# The rounding is visible: the tf32 product differs from the f32 one by more than accumulation would.
assert (err > accum).any(), "the result is the f32 product: the operands were not read as tf32"
print(f"C within tf32 of the exact product and within f32 accumulation of the tf32-rounded one ({c.size} elements)")

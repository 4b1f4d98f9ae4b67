# gemm_ternary.py's C against numpy in int64: C = A @ W, W[k, n] = ((P[k % KQ, n] >> 2 (k // KQ)) & 3) - 1
# (ternary_s8), or with `nibbles` W[k] = P[k]'s low nibble sign-extended for k < K/2, P[k - K/2] >> 4
# after (nibbles_s8), or with `zero_point` W = Q - Z wrapped to int8 (zero_point_s8) (DIR holds the buffers
# `tawa run --save DIR` wrote). Exact: the i32 sums do not wrap.
import sys

import numpy as np

d = sys.argv[1]
kind = sys.argv[2] if len(sys.argv) > 2 else "ternary"
a, c = (np.load(f"{d}/{n}.npy").astype(np.int64) for n in "ac")
p = np.load(f"{d}/{'q' if kind == 'zero_point' else 'p'}.npy").astype(np.int64)
k = np.arange(a.shape[1])
if kind == "zero_point":  # zero_point_s8: W = Q - Z wrapped to int8
    z = np.load(f"{d}/z.npy").astype(np.int64)
    w = ((p - z[None, :] + 128) % 256) - 128
    assert (p - z[None, :] != w).mean() > 0.05, "many differences wrap"
elif kind == "nibbles":  # nibbles_s8: low nibbles sign-extended, then high ones
    kh = p.shape[0]
    low = ((p[k % kh, :] & 15) ^ 8) - 8
    w = np.where((k < kh)[:, None], low, p[k % kh, :] >> 4)
    assert w.min() == -8 and w.max() == 7, "every 4-bit weight's extremes occur"
else:
    kq = p.shape[0]
    w = ((p[k % kq, :] >> (2 * (k // kq))[:, None]) & 3) - 1
    assert set(np.unique(w)) == {-1, 0, 1, 2}, "every 2-bit weight occurs"
ref = a @ w
assert (c == ref).all(), f"{int((c != ref).sum())} elements differ"
print(f"C = A @ W exactly ({c.size} elements)")

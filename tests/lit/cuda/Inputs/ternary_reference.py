# gemm_ternary.py's C against numpy in int64: C = A @ W, W[k, n] = ((P[k % KQ, n] >> 2 (k // KQ)) & 3) - 1
# (DIR holds the buffers `tawa run --save DIR` wrote). Exact: i32 sums of these products do not wrap.
import sys

import numpy as np

d = sys.argv[1]
a, p, c = (np.load(f"{d}/{n}.npy").astype(np.int64) for n in "apc")
kq = p.shape[0]
k = np.arange(a.shape[1])
w = ((p[k % kq, :] >> (2 * (k // kq))[:, None]) & 3) - 1
assert set(np.unique(w)) == {-1, 0, 1, 2}, "every 2-bit weight occurs"
ref = a @ w
assert (c == ref).all(), f"{int((c != ref).sum())} elements differ"
print(f"C = A @ W exactly ({c.size} elements)")

# Reference for Inputs/carried_scale_ptrs.py, in float64 from the saved inputs: C = sum over K blocks k
# of (A_k @ B_k^T) * sa[m, k] * sb[n // BK, k] (BK = 64, K = 192: three blocks).
import sys

import numpy as np

d = sys.argv[1] + "/"
a, b, sa, sb, c = (np.load(d + n + ".npy").astype(np.float64) for n in ("a", "b", "sa", "sb", "c"))
M, K = a.shape
N, BK = b.shape[0], 64
ref = np.zeros((M, N))
mag = np.zeros((M, N))
for k in range(K // BK):
    ks = slice(k * BK, (k + 1) * BK)
    s = sa[:, k][:, None] * sb[np.arange(N) // BK, k][None, :]
    ref += (a[:, ks] @ b[:, ks].T) * s
    mag += (np.abs(a[:, ks]) @ np.abs(b[:, ks]).T) * np.abs(s)
assert np.count_nonzero(a) > a.size // 2 and np.count_nonzero(sb) == sb.size
err = np.abs(c - ref)
assert (err <= 2.0 ** -18 * mag + 1e-30).all(), f"max error {err.max()} at {np.unravel_index(err.argmax(), err.shape)}"
print("carried scale pointers: within f32 accumulation")

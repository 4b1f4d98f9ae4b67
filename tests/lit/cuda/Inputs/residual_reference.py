# gemm_residual.py's C against numpy in float64: C = A @ B^T + s * R (s = 1 for residual_desc, 0.5
# for residual_ptr, where s * R is rounded to f16 first, as the kernel computes it), stored in f16 (DIR holds the buffers `tawa run --save DIR` wrote).
import sys

import numpy as np

d, s = sys.argv[1], float(sys.argv[2])
a, b, r, c = (np.load(f"{d}/{n}_ptr.npy").astype(np.float64) for n in "abrc")
ref = a @ b.T + (s * r).astype(np.float16).astype(np.float64)
mag = np.abs(a) @ np.abs(b).T + s * np.abs(r)
err = np.abs(c - ref)
assert (err <= 2.0**-10 * np.abs(ref) + a.shape[1] * 2.0**-23 * mag + 1e-6).all(), f"max error {err.max()}"
print(f"C = A @ B^T + {s} R within f16 rounding ({c.size} elements)")

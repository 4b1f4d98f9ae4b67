# gemm_ptr_b.py's C against numpy in float64 (DIR holds the buffers `tawa run --save DIR` wrote):
#   kn DIR LIMIT: C = A @ B, B[k, n] = b[k * N + n] where k * N + n < LIMIT, else 0 (gemm_ptrb)
#   nk DIR LIMIT: C = A @ B, B[k, n] = b[n * K + k] where n * K + k < LIMIT, else 0 (gemm_ptrb_nk)
# The kernels sum f16 products in f32 and round C to f16.
import sys

import numpy as np

kind, d, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
a, b, c = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "abc")
flat = b.reshape(-1).copy()
flat[limit:] = 0.0
w = flat.reshape(b.shape) if kind == "kn" else flat.reshape(b.shape).T
assert limit < b.size, "the mask cuts B"
ref = a @ w
mag = np.abs(a) @ np.abs(w)
err = np.abs(c - ref)
tol = 2.0**-10 * np.abs(ref) + a.shape[1] * 2.0**-23 * mag + 1e-6
assert (err <= tol).all(), f"max error {err.max()} (at {np.unravel_index(np.argmax(err - tol), err.shape)})"
print(f"C = A @ masked B ({kind}) within f16 rounding ({c.size} elements, max error {err.max():.3g})")

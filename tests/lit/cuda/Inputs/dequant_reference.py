# gemm_dequant.py's C against numpy in float64 (DIR holds the buffers `tawa run --save DIR` wrote).
#   int8 DIR: C = A @ (Q * s) over the valid rows and columns (dq_int8)
#   int8nk DIR: C = A @ (Q^T * s), Q stored N x K (dq_int8_nk, dq_int8_nk_t)
#   nf4 DIR: C = A @ W, W[k, n] = LUT[(P[k // 2, n] >> 4 (k % 2)) & 15] * s[n] (nf4_lookup)
#   int4 DIR G: C = A @ W, W[k, n] = (((P[k // 8, n] >> 4 (k % 8)) & 15) - Z[k // G, n]) * S[k // G, n] (dq_int4)
# The kernels compute W in f16 (each subtraction and product rounded to f16) and sum in f32: the
# tolerance allows two f16 roundings of each weight, f32 sums and C's own f16 rounding.
import sys

import numpy as np

kind, d = sys.argv[1], sys.argv[2]
a, c = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("a", "c"))
if kind == "nf4":  # nf4_lookup: W[k, n] = LUT[(P[k // 2, n] >> 4 (k % 2)) & 15] (f32 -> f16) * s[n]
    p = np.load(f"{d}/p.npy").astype(np.int64)
    lut, s = np.load(f"{d}/lut.npy").astype(np.float64), np.load(f"{d}/s.npy").astype(np.float64)
    k = np.arange(a.shape[1])
    code = (p[k // 2, :] >> (4 * (k % 2))[:, None]) & 15
    w = lut[code].astype(np.float16).astype(np.float64) * s[None, :]
    assert len(np.unique(code)) == 16, "every code occurs"
elif kind in ("int8", "int8nk"):
    q, s = np.load(f"{d}/q.npy").astype(np.float64), np.load(f"{d}/s.npy").astype(np.float64)
    w = (q.T if kind == "int8nk" else q) * s[None, :]
    assert (q < 0).any() and (q > 0).any(), "signed weights"
else:
    g = int(sys.argv[3])
    p = np.load(f"{d}/p.npy").astype(np.int64)
    z, sc = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("z", "sc"))
    k = np.arange(a.shape[1])
    nib = (p[k // 8, :] >> (4 * (k % 8))[:, None]) & 15
    w = (nib - z[k // g, :]) * sc[k // g, :]
    assert len(np.unique(nib)) == 16, "every 4-bit value occurs"
ref = a @ w
mag = np.abs(a) @ np.abs(w)
err = np.abs(c - ref)
tol = 2.0**-10 * np.abs(ref) + 2.0**-10 * mag + a.shape[1] * 2.0**-23 * mag + 1e-6
assert (err <= tol).all(), f"max error {err.max()} (at {np.unravel_index(np.argmax(err - tol), err.shape)})"
print(f"C = A @ dequantized W within f16 rounding ({c.size} elements, max error {err.max():.3g})")

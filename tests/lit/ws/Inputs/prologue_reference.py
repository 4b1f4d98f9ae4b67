# prologue_math.py's bias_scaled against numpy in float64: C = A @ B + alpha * bias (DIR holds the
# buffers `tawa run --save DIR` wrote), within f32 sums and C's f16 rounding.
import sys

import numpy as np

d, alpha = sys.argv[1], float(sys.argv[2])
a, b, bias, c = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("a", "b", "bias", "c"))
ref = a @ b + alpha * bias[None, :]
mag = np.abs(a) @ np.abs(b) + abs(alpha) * np.abs(bias)[None, :]
err = np.abs(c - ref)
assert (err <= 2.0**-10 * np.abs(ref) + a.shape[1] * 2.0**-23 * mag + 1e-6).all(), f"max error {err.max()}"
print(f"C = A @ B + alpha bias within f16 rounding ({c.size} elements)")

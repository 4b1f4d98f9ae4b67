# gemm_row_scales.py's result (DIR from `tawa run --save DIR`) against numpy: C = (A @ B) * S[:, None] *
# T[None, :], the product in float64, within C's f16 rounding and the f32 sums' error.
import sys

import numpy as np

d = sys.argv[1]
load = lambda n: np.load(f"{d}/{n}.npy").astype(np.float64)
a, b, c, s, t = (load(n) for n in ("a_ptr", "b_ptr", "c_ptr", "s_ptr", "t_ptr"))
ref = (a @ b) * s[:, None] * t[None, :]
mag = (np.abs(a) @ np.abs(b)) * np.abs(s)[:, None] * np.abs(t)[None, :]
bad = np.abs(c - ref) > 2.0**-10 * np.abs(ref) + 2.0**-18 * mag + 1e-6
assert not bad.any(), f"{bad.sum()} of {c.size} differ, worst {np.abs(c - ref).max()}"
print(f"row scales: {c.size} elements within an f16 rounding")

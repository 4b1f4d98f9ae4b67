# gemm_colmajor.py's C against numpy in float64 (DIR holds the buffers `tawa run --save DIR` wrote):
# B is stored N x K (column-major K x N). Tolerance: the output type's rounding plus f32 accumulation.
import sys

import numpy as np

d = sys.argv[1]
a, bt, c = (np.load(f"{d}/{n}_ptr.npy") for n in "abc")
ref = a.astype(np.float64) @ bt.astype(np.float64).T
mag = np.abs(a.astype(np.float64)) @ np.abs(bt.astype(np.float64)).T
rel = {np.dtype(np.float16): 2.0**-10, np.dtype(np.float32): 2.0**-23}.get(c.dtype, 2.0**-7)
err = np.abs(c.astype(np.float64) - ref)
bound = rel * np.abs(ref) + a.shape[1] * 2.0**-23 * mag + 1e-30
assert (err <= bound).all(), f"max error {err.max()} ({(err / bound).max()} x the bound)"
print(f"C = A @ B within {c.dtype} rounding and f32 accumulation ({c.size} elements)")

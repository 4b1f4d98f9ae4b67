# scaled_gemm.py's output against numpy in float64 (DIR holds the buffers `tawa run --save DIR` wrote):
# c = sa[:, None] * sb[None, :] * (a @ b) (+ bias[None, :] when the run had one), within f16 rounding.
import os
import sys

import numpy as np

d = sys.argv[1]
a, b, sa, sb, c = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("a_ptr", "b_ptr", "sa_ptr", "sb_ptr", "c_ptr"))
bias = np.load(f"{d}/bias_ptr.npy").astype(np.float64) if os.path.exists(f"{d}/bias_ptr.npy") else np.zeros(c.shape[1])
sa, sb = sa.reshape(-1), sb.reshape(-1)
want = sa[:, None] * sb[None, :] * (a @ b) + bias[None, :]
mag = np.abs(sa)[:, None] * np.abs(sb)[None, :] * (np.abs(a) @ np.abs(b)) + np.abs(bias)[None, :]
assert np.count_nonzero(a) > a.size // 2 and np.count_nonzero(b) > b.size // 2, "inputs are random, not zeros"
tol = 2.0 ** -9 * mag + 2.0 ** -24  # f16 inputs, f32 accumulation, one f16 rounding of C
bad = np.abs(c - want) > tol
print(f"scaled: {'within f16 rounding' if not bad.any() else f'{bad.sum()} elements off, max err {np.abs(c - want).max()}'}")

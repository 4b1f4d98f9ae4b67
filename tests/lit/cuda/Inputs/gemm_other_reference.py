# gemm_other.py against numpy in float64: C = (A @ B) * s + bias, where s is the scale for columns
# below NS = 50 and 2.0 past it, bias the bias below NB = 70 and 0.5 past it (DIR holds the buffers
# `tawa run --save DIR` wrote).
import sys

import numpy as np

d = sys.argv[1]
L = lambda n: np.load(f"{d}/{n}.npy").astype(np.float64)
a, b, s, bias, c = L("a"), L("b"), L("scale"), L("bias"), L("c")
cols = np.arange(c.shape[1])
s2 = np.where(cols < 50, s, 2.0)
b2 = np.where(cols < 70, bias, 0.5)
ref = (a @ b) * s2 + b2
mag = (np.abs(a) @ np.abs(b)) * np.abs(s2) + np.abs(b2)
err = np.abs(c - ref)
assert (err <= 1e-5 * mag + 1e-6).all(), f"max error {err.max()} at {np.unravel_index(err.argmax(), err.shape)}"
print("C within f32 accumulation, outside filled with 2.0 and 0.5")

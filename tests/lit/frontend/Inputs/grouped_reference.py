# The grouped GEMM of pointer_arrays.test against numpy in float64: C_g = A_g @ B_g for the three
# problems whose buffers DIR holds (saved by `tawa run --save DIR`), within f32 accumulation; with
# --bt each B_g is stored N x K.
import sys

import numpy as np

d = sys.argv[1]
bt = "--bt" in sys.argv[2:]
dims = np.load(f"{d}/dims.npy")
for g, (m, n, k) in enumerate(dims):
    a = np.load(f"{d}/a{g}.npy").astype(np.float64)
    b = np.load(f"{d}/b{g}.npy").astype(np.float64)
    b = b.T if bt else b
    c = np.load(f"{d}/c{g}.npy")
    assert a.shape == (m, k) and b.shape == (k, n) and c.shape == (m, n) and c.dtype == np.float32, (g, a.shape, b.shape, c.shape)
    ref, mag = a @ b, np.abs(a) @ np.abs(b)
    err = np.abs(c.astype(np.float64) - ref)
    assert (err <= 1e-5 * mag + 1e-6).all(), f"problem {g}: max error {err.max()} at {np.unravel_index(err.argmax(), err.shape)}"
print(f"{len(dims)} problems within f32 accumulation")

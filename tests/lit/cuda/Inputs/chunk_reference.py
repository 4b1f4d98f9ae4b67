# chunk_gemm.py's output against numpy in float64 (DIR holds the buffers `tawa run --save DIR` wrote):
# out[c, h, :L, :L] = x[s:e, h] @ y[s:e, h].T with L = e - s, zeros elsewhere in the chunk's C x C.
import sys

import numpy as np

d = sys.argv[1]
x, y, out = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("x_ptr", "y_ptr", "out_ptr"))
starts = np.load(f"{d}/starts_ptr.npy")
want, mag = np.zeros_like(out), np.zeros_like(out)
for c in range(out.shape[0]):
    s, e = int(starts[c]), int(starts[c + 1])
    for h in range(out.shape[1]):
        want[c, h, : e - s, : e - s] = x[s:e, h] @ y[s:e, h].T
        mag[c, h, : e - s, : e - s] = np.abs(x[s:e, h]) @ np.abs(y[s:e, h]).T
assert np.abs(x).min() > 0 or np.count_nonzero(x) > x.size // 2, "inputs are random, not zeros"
tol = 2.0 ** -10 * mag + 1e-6  # f16 inputs, f32 accumulation: within f16 rounding of the magnitudes
bad = np.abs(out - want) > tol
print(f"chunks: {'within f16 rounding' if not bad.any() else f'{bad.sum()} elements off, max err {np.abs(out - want).max()}'}")

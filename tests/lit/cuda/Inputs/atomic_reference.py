# gemm_atomic.py's splitk_add against numpy in float64.
#   make DIR M N K DTYPE: fresh random A [M, K], B [K, N] and C [M, N] (C's initial contents) in DIR
#   check DIR OUT SPLIT: C = C0 + A @ B, C0 from DIR, C from OUT (the buffers `tawa run --save OUT`
#     wrote); each of SPLIT partial products was rounded to C's type and added atomically, so the
#     tolerance allows SPLIT + 1 roundings of that type and f32 sums.
import sys

import numpy as np

if sys.argv[1] == "make":
    d, m, n, k, dt = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    rng = np.random.default_rng()
    for name, shape in (("a", (m, k)), ("b", (k, n)), ("c", (m, n))):
        np.save(f"{d}/{name}.npy", rng.uniform(-1, 1, shape).astype(np.float16 if dt == "f16" else np.float32))
    sys.exit(0)
d0, d, split = sys.argv[2], sys.argv[3], int(sys.argv[4])
c0 = np.load(f"{d0}/c.npy").astype(np.float64)
a, b = (np.load(f"{d0}/{n}.npy").astype(np.float64) for n in "ab")
out = np.load(f"{d}/c.npy")
c = out.astype(np.float64)
ref = c0 + a @ b
mag = np.abs(c0) + np.abs(a) @ np.abs(b)
eps = 2.0**-11 if out.dtype == np.float16 else 2.0**-8  # f16, else bf16 (saved as float32 or uint16 bits)
err = np.abs(c - ref)
tol = (split + 1) * eps * mag + a.shape[1] * 2.0**-23 * mag + 1e-6
assert (err <= tol).all(), f"max error {err.max()}"
print(f"C = C0 + A @ B within {split + 1} roundings ({c.size} elements, max error {err.max():.3g})")

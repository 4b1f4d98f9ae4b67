# block_fp8.py's result (DIR from `tawa run --save DIR`) against numpy: per K block, the exact
# product of the decoded e4m3 blocks scaled by A's row scale and B's column-group scale, in float64.
#   block_fp8_reference.py DIR K BK G
import sys

import numpy as np
from fp8_reference import decode

d, K, BK, G = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
load = lambda n: np.load(f"{d}/{n}.npy")
a, b = decode(load("A").view(np.uint8), False), decode(load("B").view(np.uint8), False)
As, Bs = load("As").astype(np.float64), load("Bs").astype(np.float64)
assert np.isfinite(a).all() and np.isfinite(b).all(), "finite fp8 inputs"
c = load("C")
c = (c.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64) if c.dtype == np.uint16 else c.astype(np.float64)
M, N = c.shape
ref, mag = np.zeros((M, N)), np.zeros((M, N))
cols = np.arange(N) // G
for k0 in range(0, K, BK):
    blk = (a[:, k0:k0 + BK] @ b[k0:k0 + BK, :]) * As[:, k0 // G][:, None] * Bs[k0 // G, cols][None, :]
    ref += blk
    mag += np.abs(a[:, k0:k0 + BK]) @ np.abs(b[k0:k0 + BK, :]) * np.abs(As[:, k0 // G])[:, None] * np.abs(Bs[k0 // G, cols])[None, :]
tol = 2.0**-8 * np.abs(ref) + 2.0**-20 * mag + 1e-30  # the output's rounding (bf16 at worst) and f32 sums
bad = np.abs(c - ref) > tol
assert not bad.any(), f"{bad.sum()} of {c.size} differ, worst {np.abs(c - ref).max()}"
print(f"block fp8: {c.size} elements within an output rounding")

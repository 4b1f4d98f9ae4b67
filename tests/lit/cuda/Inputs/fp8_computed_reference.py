# fp8_computed_b.py's output against numpy in float64 (DIR from `tawa run --save DIR`, NB on the command
# line): C = A @ B' with B'[:, n] = B[:, n] for n < NB and 0.5 past it, the fp8 codes decoded.
import sys

import numpy as np
from fp8_reference import decode

d, nb = sys.argv[1], int(sys.argv[2])
a, b = decode(np.load(f"{d}/a.npy"), False), decode(np.load(f"{d}/b.npy"), False)
c = np.load(f"{d}/c.npy").astype(np.float64)
b[:, nb:] = 0.5
want, mag = a @ b, np.abs(a) @ np.abs(b)
assert np.count_nonzero(a) > a.size // 2 and np.count_nonzero(b) > b.size // 2, "inputs are random, not zeros"
bad = np.abs(c - want) > 2.0 ** -20 * mag + 1e-30  # products exact in f32, sums in f32
print(f"fp8 computed B: {'within f32 accumulation' if not bad.any() else f'{bad.sum()} elements off, max err {np.abs(c - want).max()}'}")

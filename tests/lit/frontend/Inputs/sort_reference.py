"""tl.sort's results (tests/lit/frontend/sort.test) against numpy, bit for bit.
Usage: sort_reference.py make DIR | check IN OUT"""
import sys

import numpy as np

if sys.argv[1] == "make":
    rng = np.random.default_rng()
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    x.flat[[5, 9, 30]] = [-0.0, np.inf, -np.inf]
    x[2, 3] = x[2, 7]  # a tie
    np.save(f"{sys.argv[2]}/x.npy", x)
    np.save(f"{sys.argv[2]}/q.npy", rng.integers(-3, 4, 16).astype(np.int32))
    sys.exit(0)
inp, out = sys.argv[2], sys.argv[3]
x, q = np.load(f"{inp}/x.npy"), np.load(f"{inp}/q.npy")
y, z, qs = (np.load(f"{out}/{n}.npy") for n in ("y", "z", "qs"))
assert y.tobytes() == np.sort(x, 1).tobytes(), "rows ascending"
assert z.tobytes() == np.ascontiguousarray(-np.sort(-x, 0)).tobytes(), "columns descending"
assert (qs == np.sort(q)).all(), "integers"
print("sort: rows ascending, columns descending and integers match numpy bit for bit")

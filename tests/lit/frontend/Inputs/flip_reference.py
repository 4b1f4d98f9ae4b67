"""tl.flip's results (tests/lit/frontend/flip.test) against numpy, bit for bit (-0.0, infinities and
NaN included). Usage: flip_reference.py make DIR | check DIR"""
import sys

import numpy as np

mode, d = sys.argv[1], sys.argv[2]
if mode == "make":
    x = np.random.default_rng().uniform(-1, 1, (8, 16)).astype(np.float32)
    x.flat[[3, 20, 41, 77, 100]] = [-0.0, np.inf, -np.inf, np.nan, 0.0]
    np.save(f"{d}/x.npy", x)
    sys.exit(0)
x = np.load(f"{d}/in/x.npy")
y, z, w = (np.load(f"{d}/{n}.npy") for n in ("y", "z", "w"))
same = lambda a, b: a.tobytes() == np.ascontiguousarray(b).tobytes()  # noqa: E731
assert same(y, x[:, ::-1]) and same(z, x[::-1]), "flip differs"
assert (w == (x[0, ::-1] > 0)).all(), "flip of booleans differs"
print("flip: both dimensions and booleans match numpy bit for bit")

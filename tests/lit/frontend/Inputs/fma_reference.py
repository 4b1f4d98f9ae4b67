# fma.py's results (DIR from `tawa run --save DIR`) against exact rational arithmetic: O32 the f32
# nearest x * y + z (ties to even), ERR that of x * y - f32(x * y), O64 the f64 nearest u * v + w.
import sys
from fractions import Fraction

import numpy as np

d, n = sys.argv[1], int(sys.argv[2])
load = lambda name: np.load(f"{d}/{name}.npy")[:n]


def nearest_f32(q):
    f = np.float32(float(q))  # within one unit of the nearest; pick among it and its neighbours
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - q), int(np.array(c).view(np.uint32)) & 1))
    return float(best)


x, y, z, u, v, w = (load(k) for k in "xyzuvw")
bad, nonzero = 0, 0
for k in range(n):
    p = Fraction(float(x[k])) * Fraction(float(y[k]))
    ref32 = nearest_f32(p + Fraction(float(z[k])))
    rounded = nearest_f32(p)
    referr = nearest_f32(p - Fraction(rounded))
    ref64 = float(Fraction(float(u[k])) * Fraction(float(v[k])) + Fraction(float(w[k])))
    got = (float(load("o32")[k]), float(load("err")[k]), float(load("o64")[k]))
    bad += got != (ref32, referr, ref64)
    nonzero += referr != 0
assert bad == 0, f"{bad} of {n} elements differ"
assert nonzero > n // 2, f"only {nonzero} products with a rounding error"
print(f"fma: {n} x 3 results rounded once, {nonzero} product errors nonzero")

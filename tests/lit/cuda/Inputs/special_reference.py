# gemm_special.py's results against numpy (DIR from `tawa run --save DIR`): C is NaN exactly where
# A @ B > 1 (else the f16 of A @ B), D is -inf where A @ B < -1 and +inf where A @ B > 2 (else its bf16),
# A @ B in float64; elements within f32's summation error of a threshold are not judged.
import sys

import numpy as np

d = sys.argv[1]
a, b = np.load(f"{d}/a.npy").astype(np.float64), np.load(f"{d}/b.npy").astype(np.float64)
acc, slack = a @ b, 1e-5 * (np.abs(a) @ np.abs(b))
c = np.load(f"{d}/c.npy").astype(np.float64)
dd = (np.load(f"{d}/d.npy").view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
sure = lambda t: np.abs(acc - t) > slack
for name, got, special, t in (("c nan", np.isnan(c), acc > 1, 1.0), ("d -inf", np.isneginf(dd), acc < -1, -1.0),
                              ("d +inf", np.isposinf(dd), acc > 2, 2.0)):
    bad = (got != special) & sure(t)
    assert not bad.any() and special.sum() > acc.size // 20, f"{name}: {bad.sum()} wrong of {special.sum()}"
finite = ~np.isnan(c)
assert np.allclose(c[finite], acc[finite], rtol=2e-3, atol=1e-2), "c's other values"
finite = np.isfinite(dd)
assert np.allclose(dd[finite], acc[finite], rtol=1e-2, atol=4e-2), "d's other values"
print(f"special: NaN and both infinities where A @ B crosses 1, -1 and 2 ({acc.size} elements)")

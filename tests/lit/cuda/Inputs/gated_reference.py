# gemm_gated.py's results against numpy, products in float64 (DIR from `tawa run --save DIR`):
#   gated DIR:     OUT = silu(X @ W1) * (X @ W3)                         (f16)
#   gated_ptr DIR: OUT = (X @ W1 + bias) * sigmoid(X @ W1) * (X @ W3)    (bf16)
#   two_a DIR:     OUT = A1 @ B1 - A2 @ B2                               (f16)
import sys

import numpy as np

kind, d = sys.argv[1], sys.argv[2]


def load(n):
    a = np.load(f"{d}/{n}.npy")
    if a.dtype == np.uint16:  # bf16 bits
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


if kind == "gated":
    x, w1, w3, got = load("x"), load("w1"), load("w3"), load("out")
    g, u = x @ w1, x @ w3
    ref, mag, rel = g / (1 + np.exp(-g)) * u, (np.abs(x) @ np.abs(w1)) * (np.abs(x) @ np.abs(w3)), 2.0**-10
elif kind == "gated_ptr":
    x, w1, w3, bias, got = load("x_ptr"), load("w1_ptr"), load("w3_ptr"), load("b_ptr"), load("out_ptr")
    g, u = x @ w1, x @ w3
    ref = (g + bias[None, :]) / (1 + np.exp(-g)) * u
    mag, rel = (np.abs(x) @ np.abs(w1) + np.abs(bias)[None, :]) * (np.abs(x) @ np.abs(w3)), 2.0**-7
else:
    a1, a2, b1, b2, got = load("a1"), load("a2"), load("b1"), load("b2"), load("out")
    ref, mag, rel = a1 @ b1 - a2 @ b2, np.abs(a1) @ np.abs(b1) + np.abs(a2) @ np.abs(b2), 2.0**-10
# One rounding of the output, and f32 sums (K products each) on the way.
tol = rel * np.abs(ref) + 2.0**-16 * mag + 1e-6
bad = np.abs(got - ref) > tol
assert not bad.any(), f"{kind}: {bad.sum()} of {ref.size} differ, worst {np.abs(got - ref).max()}"
assert np.abs(ref).max() > 1.0, "values of some size"
print(f"{kind}: {ref.size} elements within one rounding of the float64 reference")

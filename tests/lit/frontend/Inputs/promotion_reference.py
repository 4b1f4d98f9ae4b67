# promotion.py's results (DIR from `tawa run --save DIR`) against numpy, computed in the types Triton's
# semantic.computation_type_impl gives. A result computed in the narrower type instead differs by
# far more than the tolerances here (f16's unit is 2^-11 of the value, bf16's 2^-8).
import sys

import numpy as np

d, n = sys.argv[1], int(sys.argv[2])


def load(name):
    a = np.load(f"{d}/{name}.npy")[:n]
    if a.dtype == np.uint16:  # bf16 bits
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def bf16(v):  # nearest bf16, ties to even (8 significant bits)
    m, e = np.frexp(v)
    return np.ldexp(np.round(m * 256.0), e - 8)


x, y, k = load("h"), load("g"), load("i")
f32 = lambda v: v.astype(np.float32).astype(np.float64)
checks = [  # name, reference, relative tolerance
    ("o_div", x / f32(x + 2.0), 2e-6),  # x + 2.0 stays f16 (rounded), the division is f32
    ("o_divc", y / 3.0, 2e-6),
    ("o_rem", np.fmod(x, 0.75), 1e-6),
    ("o_bfi", y + k, 1e-6),
    ("o_bfn", y * n, 1e-6),
    ("o_hbf", (x + y.astype(np.float16).astype(np.float64)).astype(np.float16).astype(np.float64), 1e-3),
    ("o_hi", (x + k.astype(np.float16).astype(np.float64)).astype(np.float16).astype(np.float64), 1e-3),
    ("o_tiny", k * 1e-300, 1e-15),
]
# f16 + f16 (the second rounded from bf16 to f16) rounds to f16: the reference above rounds the exact
# sum once, as the kernel's f32 sum of two f16 values (exact) rounded to f16.
x2 = f32(x + 2.0).astype(np.float16).astype(np.float64)
checks[0] = ("o_div", x / x2, 2e-6)
for name, ref, rel in checks:
    got = load(name)
    bad = np.abs(got - ref) > rel * np.abs(ref) + 1e-30
    assert not bad.any(), f"{name}: {bad.sum()} of {n} differ, first {got[bad][0]} against {ref[bad][0]}"
print(f"promotion: {len(checks)} results in Triton's computation types ({n} elements each)")

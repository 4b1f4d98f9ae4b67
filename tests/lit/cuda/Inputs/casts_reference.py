# casts.py's results against numpy (DIR holds the buffers `tawa run --save DIR` wrote), the
# conversions written out here: bf16 from an integer by exact integer rounding (8 significant bits,
# nearest, ties to even), integers from floats toward zero, saturated at the type's bounds, NaN to 0.
#   s8_bf16 DIR: C = bf16(A @ B * 2049 + 33554433), CM = bf16 of values just past a midpoint (casts.py),
#                A and B int8, the sums exact in int64
#   f16_ints DIR: C8 = i8(40 (A @ B)), CU8 = u8(40 (A @ B)), C32 = i32(1e9 (A @ B)), A @ B in float64
#   casts_1d DIR: O8 / OU8 = i8 / u8 of 300 x, O32 = i32(3e9 x) in float32 (NaN where x > 0.9),
#                 OBF = bf16(q * 1048573 + 16777217)
#   f64_half DIR: OH / OB = f16 / bf16 of f64 x, MH / MB = f16 / bf16 of values just past a midpoint
#                 (casts.py's casts_f64), each rounded once from the float64 value
import sys

import numpy as np

kind, d = sys.argv[1], sys.argv[2]
load = lambda n: np.load(f"{d}/{n}.npy")


def bf16_of_int(v):
    v = int(v)
    mag, shift = abs(v), 0
    while mag >> shift >= 256:
        shift += 1
    q, rem = mag >> shift, mag & ((1 << shift) - 1)
    half = (1 << (shift - 1)) if shift else 0
    if shift and (rem > half or (rem == half and q & 1)):
        q += 1
    return float(q << shift) * (-1 if v < 0 else 1)


def bf16_bits_to_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def to_int(x, lo, hi):
    t = np.trunc(np.nan_to_num(x, nan=0.0))
    return np.clip(t, lo, hi)


if kind == "s8_bf16":
    a, b = load("a").astype(np.int64), load("b").astype(np.int64)
    acc = a @ b
    m = (acc & 126) | 128
    mid = np.where(acc < 0, -1, 1) * (m * 8388608 + 4194304 + (acc & 31) + 1)
    for name, v in (("c", acc * 2049 + 33554433), ("cm", mid)):
        got = bf16_bits_to_float(load(name).view(np.uint16))
        ref = np.vectorize(bf16_of_int, otypes=[np.float64])(v)
        bad = got != ref
        assert not bad.any(), f"{name}: {bad.sum()} element(s) differ, first {np.argwhere(bad)[0]}: {got[bad][0]} against {ref[bad][0]}"
    assert (np.abs(acc * 2049 + 33554433) > 2**24).mean() > 0.5, "most values past 2^24"
    # Rounded through f32 first, each of cm's values would be one bf16 unit smaller in magnitude.
    twice = np.abs(mid).astype(np.float32).astype(np.float64)
    assert (twice == np.abs(mid) // 128 * 128).all(), "f32 rounds to the midpoint"
    print(f"s8_bf16: {acc.size} x 2 elements exact, {acc.size} of them just past a bf16 midpoint")
elif kind == "f16_ints":
    a, b = load("a").astype(np.float64), load("b").astype(np.float64)
    s, mag, a_k = a @ b, np.abs(a) @ np.abs(b), a.shape[1]
    for name, x, lo, hi in (("c8", 40 * s, -128, 127), ("cu8", 40 * s, 0, 255), ("c32", 1e9 * s, -2**31, 2**31 - 1)):
        got, ref = load(name).astype(np.float64), to_int(x, lo, hi)
        # The kernel sums in f32 (K products, exact, each sum rounded) and scales in f32: a value may
        # land on the other side of an integer, or move by that rounding times the scale.
        scale = 1e9 if name == "c32" else 40
        tol = 1 + scale * (a_k * 2.0**-24 * mag + 2.0**-23 * np.abs(s))
        assert (np.abs(got - ref) <= tol).all(), f"{name}: max error {np.abs(got - ref).max()}"
        assert (got == lo).any() and (got == hi).any(), f"{name}: both bounds reached"
    print(f"f16_ints: i8, u8 and i32 conversions saturated and within a unit ({s.size} elements)")
elif kind == "f64_half":
    def bf16_of(d):  # nearest, ties to even: 8 significant bits (normal range, as here)
        m, e = np.frexp(d)
        return np.ldexp(np.round(m * 256.0), e - 8)

    x, offs = load("x"), np.arange(load("x").size)
    k, j = (offs % 1024).astype(np.float64), (offs % 128).astype(np.float64)
    mh = 1.0 + (2.0 * k + 1.0) * 2.0**-11 + x * 1.0e-12 + 2.0e-12
    mb = 1.0 + (2.0 * j + 1.0) * 2.0**-8 + x * 1.0e-11 + 2.0e-11
    for name, v, f16 in (("oh", x, True), ("ob", x, False), ("mh", mh, True), ("mb", mb, False)):
        ref = v.astype(np.float16).astype(np.float64) if f16 else bf16_of(v)
        got = load(name).astype(np.float64) if f16 else bf16_bits_to_float(load(name).view(np.uint16))
        bad = got != ref
        assert not bad.any(), f"{name}: {bad.sum()} element(s) differ, first at {np.argwhere(bad)[0]}: {got[bad][0]} against {ref[bad][0]}"
    # Rounded through f32 first, half of the values just past a midpoint would come out one unit low.
    low = (mh.astype(np.float32).astype(np.float16).astype(np.float64) != mh.astype(np.float16).astype(np.float64)).sum()
    assert low > x.size // 4, f"only {low} of mh's values round differently through f32"
    print(f"f64_half: {x.size} x 4 elements rounded once, {low} of them off by one through f32")
else:
    x = load("x").astype(np.float32)
    y = np.where(x > 0.9, np.float32(np.nan), x * np.float32(300.0))
    for name, lo, hi in (("o8", -128, 127), ("ou8", 0, 255)):
        got, ref = load(name).astype(np.float64), to_int(y.astype(np.float64), lo, hi)
        assert (got == ref).all(), f"{name}: {np.argwhere(got != ref)[:3]}"
    y32 = np.where(x > 0.9, np.float32(np.nan), x * np.float32(3.0e9))
    got, ref = load("o32").astype(np.float64), to_int(y32.astype(np.float64), -2**31, 2**31 - 1)
    assert (got == ref).all() and (got == 2**31 - 1).any() and (got == -2**31).any(), "o32"
    q = load("i").astype(np.int64) * 1048573 + 16777217
    ref = np.vectorize(bf16_of_int, otypes=[np.float64])(q)
    got = bf16_bits_to_float(load("obf").view(np.uint16))
    assert (got == ref).all(), f"obf: {np.argwhere(got != ref)[:3]}"
    assert np.isnan(y).any(), "NaN converted"
    print(f"casts_1d: {x.size} elements exact, NaN and both bounds included")

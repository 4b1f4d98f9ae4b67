# fp8_quant.py's results (DIR from `tawa run --save DIR`) against numpy: fp8 codes decoded from their
# bits, and the nearest code of each value found by search over the format's 256 codes (ties to the
# even code; past the largest finite value, that value).
#   quant KIND DIR:   Q = fp8(clamp(X / S)), S = max|X| / FP8_MAX per row (KIND e4m3 or e5m2)
#   dequant KIND DIR: Y = bf16(fp8 value of Q * S)
# decode() is imported by block_fp8_reference.py.
import sys

import numpy as np

def decode(b, e5):
    """fp8 codes (uint8) to float64: e5m2 when e5, else e4m3 (NaN and, for e5m2, infinities kept)."""
    b = b.astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    eb, mb = (5, 2) if e5 else (4, 3)
    bias = 15 if e5 else 7
    e, m = (b >> mb) & ((1 << eb) - 1), b & ((1 << mb) - 1)
    v = np.where(e == 0, np.ldexp(m.astype(np.float64), 1 - bias - mb), np.ldexp((m + (1 << mb)).astype(np.float64), e - bias - mb))
    nan = (e == (1 << eb) - 1) & ((m != 0) if e5 else (m == 7))
    inf = e5 & (e == 31) & (m == 0)
    return np.where(nan, np.nan, np.where(inf, np.inf, v) * sign)


def main():
    mode, kind, d = sys.argv[1], sys.argv[2], sys.argv[3]
    e5 = kind == "e5m2"
    load = lambda n: np.load(f"{d}/{n}.npy")

    codes = np.arange(128, dtype=np.uint8)
    vals = decode(codes, e5)
    ok = np.isfinite(vals)
    grid, gcodes = vals[ok], codes[ok]
    order = np.argsort(grid)
    grid, gcodes = grid[order], gcodes[order]


    def nearest(x):  # value of the nearest code
        a = np.minimum(np.abs(x), grid[-1])
        hi = np.clip(np.searchsorted(grid, a), 1, len(grid) - 1)
        lo = hi - 1
        dl, dh = a - grid[lo], grid[hi] - a
        pick = np.where(dl < dh, lo, np.where(dh < dl, hi, np.where(gcodes[lo] % 2 == 0, lo, hi)))
        return np.copysign(grid[pick], x)


    bf = lambda a: (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if mode == "quant":
        fmax = 57344.0 if e5 else 448.0
        x, s, q = bf(load("x_ptr").view(np.uint16)), load("s_ptr").astype(np.float64), decode(load("q_ptr").view(np.uint8), e5)
        amax = np.maximum(np.abs(x).max(axis=1), 1e-10)
        assert np.allclose(s, amax.astype(np.float32) / np.float32(fmax), rtol=3e-7), "scales"
        v = np.clip(x / s[:, None], -fmax, fmax)
        ref = nearest(v)
        # the kernel divides in f32 (div.full, within 2 units): a value that close to the midpoint of two
        # neighbouring codes may take either
        mid = np.abs(np.abs(v) - (np.abs(ref) + np.abs(q)) / 2) <= 1e-6 * np.abs(v)
        bad = (q != ref) & ~mid
        assert not bad.any(), f"{bad.sum()} codes differ, first {q[bad][0]} against {ref[bad][0]}"
        assert (np.abs(q) == fmax).sum() >= x.shape[0], "each row's largest reaches the format's largest"
        print(f"quant {kind}: {q.size} codes nearest, each row's largest at {fmax}")
    else:
        q, s, y = decode(load("q_ptr").view(np.uint8), e5), load("s_ptr").astype(np.float64), bf(load("y_ptr").view(np.uint16))
        ref = q * s[:, None]
        finite = np.isfinite(ref)
        assert (np.abs(y[finite] - ref[finite]) <= 2.0**-8 * np.abs(ref[finite]) + 1e-30).all(), "dequantized values"
        assert (np.isnan(ref) == np.isnan(y)).all(), "NaN codes stay NaN"
        print(f"dequant {kind}: {y.size} values within a bf16 rounding")


if __name__ == "__main__":
    main()

"""The reference of scans.py / scans_2d, computed with numpy in float64 from the inputs that
`tawa run --save OUT` wrote back (the kernels do not modify them).
Usage: scans_reference.py scans OUT ROWS N BLOCK | scans_2d OUT R C"""
import sys

import numpy as np

kernel, out = sys.argv[1], sys.argv[2]
load = lambda n: np.load(f"{out}/{n}.npy")


def close(name, got, ref, rel=1e-5):
    got = got.astype(np.float64)
    err = np.abs(got - ref)
    tol = rel * (1 + np.abs(ref)) * max(1, ref.shape[-1] // 64)  # f32 sums of a few hundred terms
    if not (err <= tol).all():
        i = np.unravel_index(np.argmax(err - tol), err.shape)
        sys.exit(f"{kernel}: {name}{list(i)}: got {got[i]}, reference {ref[i]}")


def exact(name, got, ref):
    if not np.array_equal(got, ref):
        i = np.argwhere(got != ref)[0]
        sys.exit(f"{kernel}: {name}{list(i)}: got {got[tuple(i)]}, reference {ref[tuple(i)]}")


if kernel == "scans":
    rows, n, block = (int(a) for a in sys.argv[3:6])
    x = load("x_ptr").reshape(rows, n).astype(np.float64)
    i = load("i_ptr").reshape(rows, n).astype(np.int64)
    o, io = load("out_ptr").reshape(rows, 5, block), load("iout_ptr").reshape(rows, block)
    close("cumsum", o[:, 0, :n], np.cumsum(x, 1))
    close("cumprod", o[:, 1, :n], np.cumprod(1 + 0.01 * x, 1))
    close("running max", o[:, 2, :n], np.maximum.accumulate(x, 1))
    close("reverse scan", o[:, 3, :n], np.cumsum(x[:, ::-1], 1)[:, ::-1])
    close("x.cumsum", o[:, 4, :n], np.cumsum(x, 1))
    exact("cumsum of i8 in i32", io[:, :n], np.cumsum(i, 1))
    st, ist = load("stats_ptr").reshape(rows, 4), load("istats_ptr").reshape(rows, 3)
    close("max", st[:, 0], x.max(1))
    close("reduce(+)", st[:, 1], x.sum(1))
    close("reduce(minimum)", st[:, 2], x.min(1))
    close("sum", st[:, 3], x.sum(1))
    exact("max's index", ist[:, 0], x.argmax(1))
    exact("argmax", ist[:, 1], x.argmax(1))
    last_min = n - 1 - np.argmin(i[:, ::-1], 1)  # tie_break_left=False: the last index of the minimum
    exact("argmin (last)", ist[:, 2], last_min)
    assert len(np.unique(i)) > 20, "the integer input has too few values to test ties and order"
    print(f"scans: {rows} rows of {n}: cumsum, cumprod, running max, reverse scan, i8 cumsum, reductions, "
          f"arg-reductions match")
else:
    r, c = (int(a) for a in sys.argv[3:5])
    x = load("x_ptr").reshape(r, c).astype(np.float64)
    o, idx = load("out_ptr").reshape(2, r, c), load("idx_ptr")
    close("cumsum axis 1", o[0], np.cumsum(x, 1))
    close("reverse cumsum axis 0", o[1], np.cumsum(x[::-1], 0)[::-1])
    exact("argmax axis 1", idx[:r], x.argmax(1))
    exact("argmin axis 0", idx[r:], x.argmin(0))
    print(f"scans_2d: {r}x{c}: scans and arg-reductions along both axes match")

"""Checks nan_rules.py's outputs (tests/lit/frontend/nan_rules.test) against numpy's NaN rules:
np.fmax / np.fmin (a NaN operand yields the other), np.maximum (NaN propagates), np.nanmax /
np.nanmin along rows (NaN when the whole row is NaN), and a pairwise tree for the where() combine.
Where max and min meet zeros of both signs, -0 is below +0 (IEEE 754-2019; numpy's choice there is
its first operand's, so the signs are checked apart).
Usage: nan_rules_reference.py INPUT_DIR OUTPUT_DIR"""
import sys
import warnings

import numpy as np

inp, out = sys.argv[1], sys.argv[2]
x, y = np.load(f"{inp}/x_ptr.npy"), np.load(f"{inp}/y_ptr.npy")
got = lambda n: np.load(f"{out}/{n}.npy")  # noqa: E731
eq = lambda a, b: np.array_equal(a, b, equal_nan=True)  # noqa: E731
assert np.isnan(x).any() and np.isnan(y).any()
assert eq(got("mx_ptr"), np.fmax(x, y)), "tl.maximum: NaN ignored"
assert eq(got("mxa_ptr"), np.maximum(x, y)), "tl.maximum(propagate_nan=ALL): NaN"
assert eq(got("mn_ptr"), np.fmin(x, y)), "tl.minimum: NaN ignored"
assert eq(got("mna_ptr"), np.minimum(x, y)), "tl.minimum(propagate_nan=ALL): NaN"
zeros = (x == 0) & (y == 0)
assert zeros.sum() >= 4 and (np.signbit(x) != np.signbit(y))[zeros].any()
both_neg, any_neg = np.signbit(x) & np.signbit(y), np.signbit(x) | np.signbit(y)
for name, neg in (("mx_ptr", both_neg), ("mxa_ptr", both_neg), ("mn_ptr", any_neg), ("mna_ptr", any_neg)):
    assert (np.signbit(got(name)) == neg)[zeros].all(), f"{name}: -0 is below +0"
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    assert eq(got("rmax_ptr"), np.nanmax(x, 1)), "tl.max ignores NaN"
    assert eq(got("rmin_ptr"), np.nanmin(x, 1)), "tl.min ignores NaN"
row = x[5]  # zeros of both signs
assert (row == 0).all() and np.signbit(row).any() and not np.signbit(row).all()
assert got("rmax_ptr")[5] == 0 and not np.signbit(got("rmax_ptr")[5]), "tl.max of +0 and -0 is +0"
assert got("rmin_ptr")[5] == 0 and np.signbit(got("rmin_ptr")[5]), "tl.min of +0 and -0 is -0"
assert eq(got("fl_ptr"), x[:, ::-1]), "tl.flip keeps NaN in place"
wm = []
for row in x:  # where(a > b, a, b), neighbours first (with NaNs the function is not associative: the
    level = list(row)  # order is tawa's, pairs of neighbours then pairs of pairs, as a GPU tree does)
    while len(level) > 1:
        level = [a if a > b else b for a, b in zip(level[0::2], level[1::2])]
    wm.append(level[0])
assert eq(got("wm_ptr"), np.array(wm, np.float32)), "tl.reduce with where(a > b, a, b)"
print("nan rules: maximum, minimum, max, min, flip, where-combine match numpy's; -0 below +0")

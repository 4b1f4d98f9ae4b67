"""Checks nan_rules.py's outputs (tests/lit/frontend/nan_rules.test) against numpy's NaN rules:
np.fmax / np.fmin (a NaN operand yields the other), np.maximum (NaN propagates), np.nanmax /
np.nanmin along rows (NaN when the whole row is NaN), and a pairwise tree for the where() combine.
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
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    assert eq(got("rmax_ptr"), np.nanmax(x, 1)), "tl.max ignores NaN"
    assert eq(got("rmin_ptr"), np.nanmin(x, 1)), "tl.min ignores NaN"
assert eq(got("fl_ptr"), x[:, ::-1]), "tl.flip keeps NaN in place"
wm = []
for row in x:  # where(a > b, a, b), neighbours first (with NaNs the function is not associative: the
    level = list(row)  # order is tawa's, pairs of neighbours then pairs of pairs, as a GPU tree does)
    while len(level) > 1:
        level = [a if a > b else b for a, b in zip(level[0::2], level[1::2])]
    wm.append(level[0])
assert eq(got("wm_ptr"), np.array(wm, np.float32)), "tl.reduce with where(a > b, a, b)"
print("nan rules: maximum, minimum, max, min, flip, where-combine match numpy's")

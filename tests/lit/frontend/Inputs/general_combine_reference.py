"""Checks general_combine.py's outputs (tests/lit/frontend/general_combine.test) against loops in
float64 / int64 written here. Usage: general_combine_reference.py INPUT_DIR OUTPUT_DIR"""
import sys

import numpy as np

inp, out = sys.argv[1], sys.argv[2]
x = np.load(f"{inp}/x_ptr.npy").astype(np.float64)
a = np.load(f"{inp}/a_ptr.npy").astype(np.float64)
b = np.load(f"{inp}/b_ptr.npy").astype(np.float64)
z = np.load(f"{inp}/z_ptr.npy").astype(np.int64)
R, C = x.shape
got = {n: np.load(f"{out}/{n}.npy") for n in ("vmax_ptr", "imax_ptr", "h_ptr", "hr_ptr", "last_ptr", "col_ptr")}
assert (got["vmax_ptr"] == x.max(1)).all(), "max values"
assert (got["imax_ptr"] == x.argmax(1)).all(), "first index of the max"
h = np.zeros((R, C))
for r in range(R):  # h_j = a_j * h_{j-1} + b_j, h_{-1} = 0 (the scan's second member)
    acc = 0.0
    for c in range(C):
        acc = a[r, c] * acc + b[r, c]
        h[r, c] = acc
hr = np.zeros((R, C))
for c in range(C):  # reverse along axis 0, as Triton's: a forward scan from the last row up,
    A, B = 1.0, 0.0  # acc = combine(acc, x_r): the later rows' maps first, then row r's
    for r in reversed(range(R)):
        A, B = A * a[r, c], B * a[r, c] + b[r, c]
        hr[r, c] = B
np.testing.assert_allclose(got["h_ptr"], h, rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(got["hr_ptr"], hr, rtol=1e-4, atol=1e-5)
last = np.zeros((R, C), np.int64)
for r in range(R):
    cur = 0
    for c in range(C):
        cur = z[r, c] if z[r, c] != 0 else cur
        last[r, c] = cur
assert (got["last_ptr"] == last).all(), "last non-zero so far"
col = np.zeros(C, np.int64)
for c in range(C):
    nz = [z[r, c] for r in range(R) if z[r, c] != 0]
    col[c] = nz[-1] if nz else 0
assert (got["col_ptr"] == col).all(), "last non-zero of each column"
print(f"general combine: {R}x{C}, argmax, a linear recurrence both ways and a non-commutative scan match")

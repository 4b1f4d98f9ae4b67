# Reference for Inputs/key_grads.py, in float64 from the saved inputs and outputs: P = 2^(Q K^T / 8 -
# lse), dV = f16(P)^T dO, dS = P * (dO V^T - delta), dK = f16(dS)^T Q (the kernel rounds P and dS to
# f16 before its MMAs; the tolerance allows one f16 rounding of each product term either way).
import sys

import numpy as np

d = sys.argv[1] + "/"
q, k, v, do, lse, delta, dk, dv = (np.load(d + n + ".npy").astype(np.float64) for n in ("q", "k", "v", "do", "lse", "delta", "dk", "dv"))
p = np.exp2(q @ k.T * 0.125 - lse[:, None])
ph = p.astype(np.float16).astype(np.float64)
ds = p * (do @ v.T - delta[:, None])
dsh = ds.astype(np.float16).astype(np.float64)
assert np.count_nonzero(q) > q.size // 2 and np.count_nonzero(do) > do.size // 2
for name, got, want, mag in (("dv", dv, ph.T @ do, np.abs(ph).T @ np.abs(do)), ("dk", dk, dsh.T @ q, np.abs(dsh).T @ np.abs(q))):
    err = np.abs(got - want)
    assert (err <= 2.0 ** -10 * np.abs(want) + 2.0 ** -9 * mag + 1e-6).all(), (name, err.max())
print("key gradients: within f16 rounding")

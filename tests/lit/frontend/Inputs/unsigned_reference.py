"""Checks the unsigned kernel's outputs (tests/lit/frontend/unsigned.test) against numpy's uint32
and uint8 arithmetic. Usage: unsigned_reference.py INPUT_DIR OUTPUT_DIR N BLOCK"""
import sys

import numpy as np

inp, out, n, block = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
x = np.load(f"{inp}/x_ptr.npy").astype(np.uint64)
y = np.load(f"{inp}/y_ptr.npy").astype(np.uint64)
b = np.load(f"{inp}/b_ptr.npy").astype(np.uint64)
f = np.load(f"{inp}/f_ptr.npy")
M32 = (1 << 32) - 1
want = {
    "q_ptr": x // y,
    "r_ptr": x % y,
    "s_ptr": (x >> 7) ^ ((x << 3) & M32),
    "c_ptr": (x > y).astype(np.uint64) + 2 * (x <= 0x80000000).astype(np.uint64)
    + 4 * (x > ((np.arange(n) - 500) % 2**32).astype(np.uint64)).astype(np.uint64),
    "m_ptr": np.maximum(x, y) - np.minimum(x, y),
    "h_ptr": (((x * y) >> 32) + x * 0x9E3779B9) & M32,
    "w_ptr": ((b + 200) & 255) * 1000 + b,
    "g_ptr": f.view(np.uint32).astype(np.uint64) >> 23,
}
for name, w in want.items():
    got = np.load(f"{out}/{name}.npy")
    assert got.shape == (n,), (name, got.shape)
    got = got.astype(np.uint64) & M32
    assert (got == w & M32).all(), (name, np.nonzero(got != w & M32)[0][:5])
k = np.load(f"{out}/k_ptr.npy")
assert (k == np.load(f"{inp}/x_ptr.npy").astype(np.float32)).all(), "u32 -> f32"
red = np.load(f"{out}/red_ptr.npy").astype(np.uint64)
for p in range(red.shape[0]):
    assert red[p] == x[p * block:min(n, (p + 1) * block)].max(), (p, red[p])
print(f"unsigned: {n} elements, {len(want) + 2} outputs match numpy's uint32/uint8 arithmetic")  # noqa

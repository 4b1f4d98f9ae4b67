# assigned_numbers.py's results (DIR from `tawa run --save DIR`) against numpy in Triton's types.
import sys

import numpy as np

d, n = sys.argv[1], int(sys.argv[2])
load = lambda k: np.load(f"{d}/{k}.npy")
x, u = load("x_ptr")[:n], load("u_ptr")[:n]
f32 = np.float32
y = (x.astype(f32) * f32(0.1)) * f32(0.1) * f32(3.3)
assert np.array_equal(load("y_ptr")[:n], y), "y: f16 times an f32 scalar tensor computes in f32"
assert np.array_equal(load("z_ptr")[:n], np.where(x >= 0, x, np.float16(0))), "z"
assert np.array_equal(load("s_ptr")[:n], u.astype(np.int32) << 4), "s: u8 << i32 is i32"
assert (load("q_ptr")[:n] == -3).all(), "q: -7 // 2 on tensors truncates"
acc = f32(0)
for v in x:
    acc = f32(acc + f32(v))
half = np.float16(0)
for v in x:
    half = np.float16(half + v)
assert load("acc_ptr")[0] == acc and acc != f32(half), f"acc: summed in f32 ({acc}), not f16 ({half})"
print(f"assigned numbers: {n} elements in Triton's types")

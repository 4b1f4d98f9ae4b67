"""The references of atomics.py, computed with numpy in float64 / int64, programs applied in order.
`make DIR` writes fresh random inputs; `check KERNEL DIR OUT` compares what `tawa run --save OUT`
wrote. Usage: atomics_reference.py make DIR | check histogram|every_atomic DIR OUT"""
import sys

import numpy as np

P, B, N = 4, 128, 90  # every_atomic: programs, BLOCK, n
mode, d = sys.argv[1], sys.argv[2 if sys.argv[1] == "make" else 3]
rng = np.random.default_rng()
if mode == "make":
    np.save(f"{d}/x.npy", rng.integers(0, 1000, 1000).astype(np.int32))
    np.save(f"{d}/f.npy", rng.uniform(-1, 1, (3, B)).astype(np.float32))
    np.save(f"{d}/i.npy", rng.integers(-2**31, 2**31 - 1, (5, B)).astype(np.int32))
    np.save(f"{d}/v.npy", rng.uniform(-1, 1, (P, B)).astype(np.float32))
    np.save(f"{d}/w.npy", rng.integers(-2**31, 2**31 - 1, (P, B)).astype(np.int32))
    sys.exit(0)

kernel, out = sys.argv[2], sys.argv[4]
load = lambda n: np.load(f"{out}/{n}.npy")


def same(name, got, ref, tol=0.0):
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    if not (err <= tol * (1 + np.abs(ref))).all():
        i = np.unravel_index(np.argmax(err), err.shape)
        sys.exit(f"{kernel}: {name}{list(i)}: got {got[i]}, reference {ref[i]}")


if kernel == "histogram":
    x = np.load(f"{d}/x.npy").astype(np.int64)
    ref = np.zeros(16, np.int64)
    for r in x % 16:
        ref[r] += 1
    same("bins", load("bins_ptr"), ref)
    same("count", load("count_ptr"), np.array([8]))
    same("order", load("order_ptr"), np.arange(8))
    print(f"histogram: 16 bins of {len(x)} values, the count and each program's ticket match")
    sys.exit(0)

f, i = np.load(f"{d}/f.npy").astype(np.float64), np.load(f"{d}/i.npy").astype(np.int64)
v, w = np.load(f"{d}/v.npy").astype(np.float64), np.load(f"{d}/w.npy").astype(np.int64)
old_f, old_i = np.zeros((P, 3 * B)), np.zeros((P, 3 * B), np.int64)
wrap = lambda a: ((a + 2**31) % 2**32) - 2**31
f32 = lambda a: np.float64(np.float32(a))
for p in range(P):
    for k in range(N):
        a, b, c = f[0, k], f[1, k], f[2, k]
        f[0, k] = f32(a + v[p, k])
        f[1, k] = max(b, v[p, k])
        f[2, k] = min(c, v[p, k])
        old_f[p, k] = a + b + c
        ops = (lambda o, x: o & x, lambda o, x: o | x, lambda o, x: o ^ x, max, min)
        olds = [i[j, k] for j in range(5)]
        for j, op in enumerate(ops):
            i[j, k] = op(i[j, k], w[p, k])
        old_i[p, k] = wrap(sum(olds))
same("f_ptr", load("f_ptr"), f, 1e-6)
same("i_ptr", load("i_ptr"), i)
same("old_f", load("old_f")[:, :N], old_f[:, :N], 1e-6)
same("old_i", load("old_i")[:, :N], old_i[:, :N])
same("cas_ptr", load("cas_ptr"), np.array([P - 1, 100, P]))
print(f"every_atomic: {P} programs of add/max/min (f32), and/or/xor/max/min (i32), xchg and cas match")

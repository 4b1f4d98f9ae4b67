# small_reductions.py's results (DIR from `tawa run --save DIR`) against numpy: every result exact.
import sys

import numpy as np

d = sys.argv[1]
load = lambda n: np.load(f"{d}/{n}.npy")
bf = lambda a: (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
wrap = lambda v, bits: ((int(v) + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))
h, b = load("h_ptr").astype(np.float64), bf(load("b_ptr"))
c, u, w = load("c_ptr").astype(np.int64), load("u_ptr").astype(np.int64), load("w_ptr").astype(np.int64)
t = b[:512].reshape(16, 32)
checks = {
    "o_hmax": (load("o_hmax").astype(np.float64), [h.max()]),
    "o_bmin": (bf(load("o_bmin")), [b.min()]),
    "o_rowmax": (bf(load("o_rowmax")), t.max(axis=1)),
    "o_colmin": (bf(load("o_colmin")), t.min(axis=0)),
    "o_cummax": (bf(load("o_cummax")).reshape(16, 32), np.maximum.accumulate(t, axis=1)),
    "o_csum": (load("o_csum").astype(np.int64), [wrap(c.sum(), 8)]),
    "o_cxor": (load("o_cxor").astype(np.int64), [np.bitwise_xor.reduce(c)]),
    "o_umax": (load("o_umax").astype(np.int64), [u.max()]),
    "o_wsum": (load("o_wsum").astype(np.int64), [wrap(w.sum(), 16)]),
    "o_arg": (load("o_arg").astype(np.int64), [np.argmax(c)]),
}
for name, (got, ref) in checks.items():
    assert np.array_equal(got, np.asarray(ref)), f"{name}: {got} against {ref}"
print(f"small reductions: {len(checks)} results exact")

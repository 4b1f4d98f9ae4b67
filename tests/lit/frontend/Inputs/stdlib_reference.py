"""Checks stdlib.py's outputs (tests/lit/frontend/stdlib.test) against numpy in float64 / int64.
Usage: stdlib_reference.py INPUT_DIR OUTPUT_DIR"""
import sys

import numpy as np

inp, out = sys.argv[1], sys.argv[2]
x = np.load(f"{inp}/x_ptr.npy").astype(np.float64)
k = np.load(f"{inp}/k_ptr.npy").astype(np.int64)
got = lambda n: np.load(f"{out}/{n}.npy")  # noqa: E731
e = np.exp(x - x.max(0))
np.testing.assert_allclose(got("sm_ptr"), e / e.sum(0), rtol=2e-6, atol=1e-7)
assert (got("xs_ptr") == np.bitwise_xor.reduce(k, 0)).all(), "xor_sum"
assert (got("ro_ptr") == np.bitwise_or.reduce(k, 1)).all(), "reduce_or"
assert (got("rv_ptr") == (x.reshape(-1) * 2).astype(np.float32)).all(), "ravel"
a, b = x[0].astype(np.float32), x[1].astype(np.float32)
assert (got("il_ptr") == np.stack([a, b], 1).reshape(-1)).all(), "interleave"
assert (got("cat_ptr") == np.concatenate([a, b])).all(), "cat"
assert (got("ar_ptr") == k * 3 + (k - 1)).all(), "add/mul/sub"
assert (got("g_ptr") == np.take_along_axis(x, k % x.shape[1], 1).astype(np.float32)).all(), "gather"
assert (got("tk_ptr") == -np.sort(-x, 1)[:, :4].astype(np.float32)).all(), "topk"
assert (got("me_ptr") == np.minimum(x.astype(np.float32) ** 2, 4.0)).all(), "map_elementwise"
print("stdlib: softmax, xor_sum, reduce_or, ravel, interleave, cat, add/mul/sub, gather, topk, map_elementwise match numpy")

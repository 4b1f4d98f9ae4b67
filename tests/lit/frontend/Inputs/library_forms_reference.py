"""Checks library_forms.py's outputs (tests/lit/frontend/library_forms.test) against numpy.
Usage: library_forms_reference.py row_stats DIR N | prev_row DIR BLOCK | swap_bits DIR | scalar_forms DIR"""
import math
import sys

import numpy as np

what, d = sys.argv[1], sys.argv[2]
load = lambda n: np.load(f"{d}/{n}.npy")  # noqa: E731
if what == "row_stats":
    n = int(sys.argv[3])
    x = load("x_ptr")[:, :n]
    assert (load("max_ptr") == x.max(1)).all(), "tl.max"
    first = x.argmax(1)  # numpy's argmax is the first index of the largest
    assert (load("arg_ptr") == first).all() and (load("arg2_ptr") == first).all(), "return_indices"
    if np.issubdtype(x.dtype, np.integer):
        assert (load("sum_ptr") == x.astype(np.int64).sum(1).astype(np.int32)).all(), "sum"
    else:
        ref = x.astype(np.float64).sum(1)
        assert np.abs(load("sum_ptr") - ref).max() <= 1e-5 * np.abs(x).sum(1).max(), "sum in f32"
    print(f"row_stats {x.dtype}: max, first index of the max (twice), sum match")
elif what == "prev_row":
    block = int(sys.argv[3])
    x = load("x_ptr").astype(np.float64)
    p = np.concatenate([[7.0], x[:-1, 0]])
    ref = (x + p[:, None]) * np.log2(math.e) + math.log2(block)
    assert np.abs(load("out_ptr") - ref).max() <= 1e-5 * np.abs(ref).max(), "prev_row"
    print("prev_row: masked scalar load, _log2, log2(math.e) match")
elif what == "scalar_forms":
    x, s, b = load("x_ptr").astype(np.float64), load("s_ptr").astype(np.float64), load("bias_ptr").astype(np.float64)
    ref = x * s[0] + b[None, :]
    assert np.abs(load("y_ptr") - ref).max() <= 1e-6 * np.abs(ref).max(), "scalar_forms"
    print("scalar_forms: s[None, :] of a 0-d scale and `if bias_ptr:` match")
else:
    x = load("x_ptr")
    bits = x.view(np.int16 if x.dtype == np.float16 else np.int32)
    assert (load("out_ptr").view(bits.dtype) == (bits ^ 1)).all(), "swap_bits"
    print(f"swap_bits {x.dtype}: low bit flipped")

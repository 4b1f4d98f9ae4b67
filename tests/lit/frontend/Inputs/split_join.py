# tl.split and tl.join, for tests/unit/frontend_examples_test.cpp (SplitJoin*): pairs swapped and one
# side doubled; and the epilogue-subtiling shape of Triton's persistent-matmul tutorial, a [M, 2B]
# block reshaped to [M, 2, B], permuted to [M, B, 2] and split into its two column halves.
import triton
import triton.language as tl


@triton.jit
def swap_pairs(x_ptr, y_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    offs = r[:, None] * 2 + tl.arange(0, 2)[None, :]
    lo, hi = tl.split(tl.load(x_ptr + offs))
    tl.store(y_ptr + offs, tl.join(hi, lo * 2.0))


@triton.jit
def column_halves(x_ptr, y_ptr, M: tl.constexpr, B: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, 2 * B)
    x = tl.load(x_ptr + rows[:, None] * (2 * B) + cols[None, :])
    left, right = tl.permute(tl.reshape(x, (M, 2, B)), (0, 2, 1)).split()
    half = tl.arange(0, B)
    tl.store(y_ptr + rows[:, None] * (2 * B) + half[None, :], left)
    tl.store(y_ptr + rows[:, None] * (2 * B) + B + half[None, :], right * 3.0)

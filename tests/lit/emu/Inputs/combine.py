import triton
import triton.language as tl


# A mixture-of-experts combine (written here): each of the top-k rows of a token, weighted, added into
# the token's output row with tl.atomic_add. A block holds several rows of the same token, so its
# threads add into the same addresses in the order the schedule runs them.
@triton.jit
def combine(x_ptr, w_ptr, out_ptr, n_rows, TOPK: tl.constexpr, D: tl.constexpr, BR: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, D)
    m = rows < n_rows
    x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=m[:, None], other=0.0)
    w = tl.load(w_ptr + rows, mask=m, other=0.0)
    tok = rows // TOPK
    tl.atomic_add(out_ptr + tok[:, None] * D + cols[None, :], x * w[:, None], mask=m[:, None])


# The same, and the count of rows each token received, an integer (exact in every order).
@triton.jit
def combine_count(x_ptr, w_ptr, out_ptr, cnt_ptr, n_rows, TOPK: tl.constexpr, D: tl.constexpr, BR: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, D)
    m = rows < n_rows
    x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=m[:, None], other=0.0)
    w = tl.load(w_ptr + rows, mask=m, other=0.0)
    tok = rows // TOPK
    tl.atomic_add(out_ptr + tok[:, None] * D + cols[None, :], x * w[:, None], mask=m[:, None])
    tl.atomic_add(cnt_ptr + tok, 1, mask=m)

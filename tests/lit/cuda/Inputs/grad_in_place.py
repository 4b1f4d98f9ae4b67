import triton
import triton.language as tl


# A cross-entropy backward in the shape real libraries write it: the gradient overwrites the logits
# in place, one row per program, and the label's entry is then corrected by one scalar store. Tile
# entries live in different threads of the SIMT kernel, so the correction must wait for the loop's
# stores: tl.debug_barrier() orders them (USE_BARRIER=False shows the race on the emulator).
@triton.jit
def ce_grad_in_place(X, Y, loss, stride, n_cols, BLOCK: tl.constexpr, USE_BARRIER: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    y = tl.load(Y + row)
    x_y = tl.load(X + y)
    m = float("-inf")
    d = 0.0
    for i in range(0, n_cols, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, 0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
    for i in range(0, n_cols, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n_cols, other=float("-inf"))
        tl.store(X + offs, tl.exp(x - m) / d, mask=offs < n_cols)
    if USE_BARRIER:
        tl.debug_barrier()
    tl.store(X + y, tl.exp(x_y - m) / d - 1.0)
    tl.store(loss + row, tl.log(d) + m - x_y)

# Rotary position embedding (RoPE), written for tawa's tests: each row's consecutive pairs (x0, x1)
# are rotated by the angle pos * base^(-2i/D): (x0 cos - x1 sin, x0 sin + x1 cos). Uses tl.sin,
# tl.cos, tl.split and tl.join.
import triton
import triton.language as tl


@triton.jit
def rope(x_ptr, out_ptr, rows, D: tl.constexpr, LOG_BASE: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, D // 2)
    pairs = tl.reshape(tl.load(x_ptr + row * D + tl.arange(0, D)), (D // 2, 2))
    x0, x1 = tl.split(pairs)
    theta = row * tl.exp(i.to(tl.float32) * (-2.0 * LOG_BASE / D))
    c = tl.cos(theta)
    s = tl.sin(theta)
    out = tl.reshape(tl.join(x0 * c - x1 * s, x0 * s + x1 * c), (D,))
    tl.store(out_ptr + row * D + tl.arange(0, D), out)

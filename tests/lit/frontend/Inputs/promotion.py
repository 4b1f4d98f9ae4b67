# Triton's computation types of binary operations (frontend/promotion.test): / and % of f16 or bf16
# compute in f32; bf16 with anything but bf16 (an integer tensor, a runtime integer, an f16 one does
# not count: f16 wins) computes in f32; f16 with bf16 is f16; a float constant f32 cannot hold joins
# an integer tensor as f64.
import triton
import triton.language as tl


@triton.jit
def promotion(h, g, i, o_div, o_divc, o_rem, o_bfi, o_bfn, o_hbf, o_hi, o_tiny, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(h + offs, mask=m, other=1.0)  # f16
    y = tl.load(g + offs, mask=m, other=1.0)  # bf16
    k = tl.load(i + offs, mask=m, other=1)  # i32
    tl.store(o_div + offs, x / (x + 2.0), mask=m)
    tl.store(o_divc + offs, y / 3, mask=m)
    tl.store(o_rem + offs, x % 0.75, mask=m)
    tl.store(o_bfi + offs, y + k, mask=m)
    tl.store(o_bfn + offs, y * n, mask=m)
    tl.store(o_hbf + offs, x + y, mask=m)
    tl.store(o_hi + offs, x + k, mask=m)
    tl.store(o_tiny + offs, k * 1e-300, mask=m)

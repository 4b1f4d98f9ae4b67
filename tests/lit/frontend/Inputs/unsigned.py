# Unsigned integers (tests/lit/frontend/unsigned.test): tl.uint32 / tl.uint8 division, remainder,
# shifts, comparisons, max/min, tl.umulhi and wrapping arithmetic, a bitcast from f32, conversion to
# f32 and an unsigned max reduction, each stored to its own output.
import triton
import triton.language as tl


@triton.jit
def uops(x_ptr, y_ptr, b_ptr, f_ptr, q_ptr, r_ptr, s_ptr, c_ptr, m_ptr, h_ptr, w_ptr, g_ptr, k_ptr, red_ptr, n,
         BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    msk = offs < n
    x = tl.load(x_ptr + offs, mask=msk, other=1)
    y = tl.load(y_ptr + offs, mask=msk, other=1)
    b = tl.load(b_ptr + offs, mask=msk, other=0)
    f = tl.load(f_ptr + offs, mask=msk, other=0.0)
    tl.store(q_ptr + offs, x // y, mask=msk)
    tl.store(r_ptr + offs, x % y, mask=msk)
    tl.store(s_ptr + offs, (x >> 7) ^ (x << 3), mask=msk)
    # uint32 with int32 promotes to uint32 (Triton's rule): offs - 500 < 0 compares as a large value
    tl.store(c_ptr + offs, (x > y).to(tl.int8) + (x <= 0x80000000).to(tl.int8) * 2 + (x > offs - 500).to(tl.int8) * 4,
             mask=msk)
    tl.store(m_ptr + offs, tl.maximum(x, y) - tl.minimum(x, y), mask=msk)
    tl.store(h_ptr + offs, tl.umulhi(x, y) + x * 0x9E3779B9, mask=msk)
    tl.store(w_ptr + offs, (b + 200).to(tl.int32) * 1000 + b.to(tl.float32).to(tl.int32), mask=msk)
    tl.store(g_ptr + offs, f.to(tl.uint32, bitcast=True) >> 23, mask=msk)
    tl.store(k_ptr + offs, x.to(tl.float32), mask=msk)
    tl.store(red_ptr + pid, tl.max(tl.where(msk, x, 0), axis=0))


@triton.jit
def uflip(x_ptr, out_ptr, B: tl.constexpr):
    # flip and sort pick elements with a select against the type's lowest value and a max: 0 here
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.flip(x, 0))
    tl.store(out_ptr + B + offs, tl.sort(x))

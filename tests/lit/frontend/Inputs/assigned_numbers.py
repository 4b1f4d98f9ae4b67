# Numbers bound by assignments in a kernel are scalar tensors in Triton 3.6 (visit_Assign's
# to_tensor): they promote as f32 / i32, not as weak constants (frontend/assigned_numbers.test).
import triton
import triton.language as tl


@triton.jit
def assigned(x_ptr, u_ptr, y_ptr, z_ptr, s_ptr, q_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=0.0)  # f16
    s = 0.1
    tl.store(y_ptr + o, x * s * s * 3.3, mask=m)  # f16 * f32 scalar tensor: f32
    zero = 0.0
    tl.store(z_ptr + o, tl.where(x >= 0, x, zero.to(x.dtype)), mask=m)  # a scalar tensor's .to
    u = tl.load(u_ptr + o, mask=m, other=0)  # u8
    k = 4
    tl.store(s_ptr + o, u << k, mask=m)  # u8 with i32: i32, no wrap at 8 bits
    a = -7
    tl.store(q_ptr + o, a // 2 + o * 0, mask=m)  # tensors divide as C does: -3
    acc = 0.0
    for i in range(0, n):
        acc += tl.load(x_ptr + i)  # an f32 accumulator, not f16
    tl.store(acc_ptr, acc)

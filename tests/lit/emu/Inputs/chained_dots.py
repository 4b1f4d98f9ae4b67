# Two dots with an f16 intermediate between them (written here): P = (A @ B) rounded to f16, then
# O = P @ C kept in f32. `two_dots` stores O as it is; `one_dot` stores A @ B alone.
import triton
import triton.language as tl


@triton.jit
def two_dots(a_ptr, b_ptr, c_ptr, o_ptr, N: tl.constexpr, K: tl.constexpr, J: tl.constexpr, BM: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)
    rj = tl.arange(0, J)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    p = tl.dot(a, b).to(tl.float16)
    c = tl.load(c_ptr + rn[:, None] * J + rj[None, :])
    o = tl.dot(p, c)
    tl.store(o_ptr + rm[:, None] * J + rj[None, :], o)


@triton.jit
def one_dot(a_ptr, b_ptr, o_ptr, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))

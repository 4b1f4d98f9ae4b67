# libdevice functions and tl.erf / tl.floor / tl.ceil, as Triton kernels write them.
import triton
import triton.language as tl
from triton.language.extra import libdevice


# libdevice.asin on a masked 1-D block: the form of Triton's extern-functions tutorial.
@triton.jit
def asin_kernel(src, dst, count, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = idx < count
    tl.store(dst + idx, libdevice.asin(tl.load(src + idx, mask=inside)), mask=inside)


# GELU, exact (erf) and tanh-approximated, on f16 data computed in f32.
@triton.jit
def gelu_kernel(x_ptr, exact_ptr, approx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    exact = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    approx = 0.5 * x * (1.0 + libdevice.tanh(inner))
    tl.store(exact_ptr + offs, exact.to(tl.float16), mask=mask)
    tl.store(approx_ptr + offs, approx.to(tl.float16), mask=mask)


# Every function, each on arguments inside its domain, one output row per function:
# out[f, i] = f(u[i]) or f(u[i], v[i]) with u in [0.25, 0.75] and v in [0.5, 1.5].
@triton.jit
def every_fn(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = tl.abs(x) * 0.5 + 0.25
    v = u * 2.0
    tl.store(out_ptr + 0 * n + offs, libdevice.acos(u), mask=mask)
    tl.store(out_ptr + 1 * n + offs, libdevice.acosh(u + 1.0), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.asin(u), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.asinh(x), mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.atan(x * 3.0), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.atanh(u), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.cbrt(x), mask=mask)
    tl.store(out_ptr + 7 * n + offs, tl.ceil(x * 4.0), mask=mask)
    tl.store(out_ptr + 8 * n + offs, libdevice.cosh(x), mask=mask)
    tl.store(out_ptr + 9 * n + offs, libdevice.erf(x), mask=mask)
    tl.store(out_ptr + 10 * n + offs, libdevice.erfc(x), mask=mask)
    tl.store(out_ptr + 11 * n + offs, libdevice.exp10(x), mask=mask)
    tl.store(out_ptr + 12 * n + offs, libdevice.expm1(x), mask=mask)
    tl.store(out_ptr + 13 * n + offs, tl.floor(x * 4.0), mask=mask)
    tl.store(out_ptr + 14 * n + offs, libdevice.lgamma(u), mask=mask)
    tl.store(out_ptr + 15 * n + offs, libdevice.log10(u), mask=mask)
    tl.store(out_ptr + 16 * n + offs, libdevice.log1p(x), mask=mask)
    tl.store(out_ptr + 17 * n + offs, libdevice.rint(x * 4.0), mask=mask)
    tl.store(out_ptr + 18 * n + offs, libdevice.round(x * 4.0), mask=mask)
    tl.store(out_ptr + 19 * n + offs, libdevice.sinh(x), mask=mask)
    tl.store(out_ptr + 20 * n + offs, libdevice.tan(x), mask=mask)
    tl.store(out_ptr + 21 * n + offs, libdevice.tanh(x * 2.0), mask=mask)
    tl.store(out_ptr + 22 * n + offs, libdevice.tgamma(u), mask=mask)
    tl.store(out_ptr + 23 * n + offs, libdevice.trunc(x * 4.0), mask=mask)
    tl.store(out_ptr + 24 * n + offs, libdevice.atan2(x, v), mask=mask)
    tl.store(out_ptr + 25 * n + offs, libdevice.copysign(v, x), mask=mask)
    tl.store(out_ptr + 26 * n + offs, libdevice.hypot(x, v), mask=mask)
    tl.store(out_ptr + 27 * n + offs, libdevice.pow(v, x * 2.0), mask=mask)
    tl.store(out_ptr + 28 * n + offs, libdevice.pow(v, 2.0), mask=mask)
    tl.store(out_ptr + 29 * n + offs, libdevice.fma(x, u, v), mask=mask)

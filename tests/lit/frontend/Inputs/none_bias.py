import triton
import triton.language as tl


# An optional bias, tested as real kernels test it: `bias_ptr is None` (Triton specializes a None
# argument into a constexpr None) and a HAS_BIAS flag derived from it by the caller.
@triton.jit
def scale_bias(x_ptr, bias_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * 2.0, mask=m)


@triton.jit
def gather(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    i = tl.load(idx_ptr + offs, mask=m, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + i, mask=m), mask=m)

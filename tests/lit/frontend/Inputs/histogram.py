# tl.histogram (tests/lit/frontend/histogram.test): counts of the values 0 .. NBINS - 1 in each
# program's block (values outside count nowhere), with and without a mask.
import triton
import triton.language as tl


@triton.jit
def hist(x_ptr, out_ptr, masked_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1)
    tl.store(out_ptr + pid * NBINS + tl.arange(0, NBINS), tl.histogram(x, NBINS))
    tl.store(masked_ptr + pid * NBINS + tl.arange(0, NBINS), tl.histogram(x, NBINS, mask=(x % 2) == 0))

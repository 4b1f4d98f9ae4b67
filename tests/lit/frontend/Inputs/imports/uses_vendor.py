import triton
import triton.language as tl
import otherlib.helpers as h


# A kernel that imports a library found only through the import path (-I DIR).
@triton.jit
def twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, h.double(tl.load(x_ptr + offs, mask=m)), mask=m)

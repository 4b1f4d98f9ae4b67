# A pointer cast (tests/lit/frontend/unsigned.test): f32 buffers read byte by byte through a uint8 pointer.
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # f32 values read as their raw bytes: byte 3 of each word holds the sign and the high exponent bits
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    b = x_ptr.to(tl.pointer_type(tl.uint8))
    hi = tl.load(b + offs * 4 + 3, mask=offs < n, other=0)
    tl.store(out_ptr + offs, hi, mask=offs < n)

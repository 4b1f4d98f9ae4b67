import triton
import triton.language as tl


# Walks its blocks from the last to the first: range(hi, -1, -BLOCK), a decaying sum carried through.
@triton.jit
def rev_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(n - BLOCK, -1, -BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc = acc * 0.5 + tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, acc)

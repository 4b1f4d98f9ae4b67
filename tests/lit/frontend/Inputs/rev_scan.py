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


# The same with the bounds constants (N a constexpr): range(N - BLOCK, -1, -BLOCK) folds to constant
# bounds and a negative constant step, and still runs (lightning-attn's backward walks its blocks so).
@triton.jit
def rev_copy_const(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(N - BLOCK, -1, -BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc = acc * 0.5 + tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, acc)

import triton
import triton.language as tl


# Constexprs a kernel gets from its decorators: HAS_BIAS from @triton.heuristics (is the bias None?),
# BLOCK from @triton.autotune's first config, STEPS from a heuristic tawa does not evaluate.
@triton.heuristics({
    'HAS_BIAS': lambda args: args['bias_ptr'] is not None,
    'STEPS': lambda args: triton.cdiv(args['n'], 1024),
})
@triton.autotune(
    configs=[triton.Config({'BLOCK': 128}, num_warps=4), triton.Config({'BLOCK': 256}, num_warps=8)],
    key=['n'],
)
@triton.jit
def biased(x_ptr, bias_ptr, out_ptr, n, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if HAS_BIAS:
        x += tl.load(bias_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x, mask=m)


@triton.heuristics({'STEPS': lambda args: triton.cdiv(args['n'], 1024)})
@triton.jit
def stepped(x_ptr, n, STEPS: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, 16), tl.zeros((16,), dtype=tl.float32) + STEPS)

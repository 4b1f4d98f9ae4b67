# jit functions defined in both branches of module-level ifs (frontend/branch_defs.test): the branch
# the condition takes decides, as Python would (mamba-ssm's `if TRITON3: def softplus ... else: ...`).
import triton
import triton.language as tl
from packaging import version

TRITON3 = version.parse(triton.__version__) >= version.parse("3.0.0")

if not TRITON3:
    @triton.jit
    def f(x):
        return x + 2.0
else:
    @triton.jit
    def f(x):
        return x + 1.0

if True:
    @triton.jit
    def g(x):
        return x * 10.0
else:
    @triton.jit
    def g(x):
        return x * 20.0

if version.parse(triton.__version__) < version.parse("3.7.0"):
    @triton.jit
    def h(x):
        return x - 3.0
else:
    @triton.jit
    def h(x):
        return x - 4.0


@triton.jit
def kern(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o)
    tl.store(y_ptr + o, h(g(f(x))))

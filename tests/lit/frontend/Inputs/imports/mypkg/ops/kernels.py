import triton
import triton.language as tl

from ..utils import tl_extra as tle
from mypkg.utils.helpers import scaled
from .local import add_one
import mypkg.utils.tl_extra


# A kernel of a package: its helpers come from other modules of the package, imported relatively,
# absolutely and as a module.
@triton.jit
def act(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tle.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = add_one(scaled(tle.tanh(x))) * mypkg.utils.tl_extra.SCALE
    tl.store(out_ptr + offs, y, mask=m)

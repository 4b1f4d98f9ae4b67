import triton
import triton.language as tl

from . import tl_extra


@triton.jit
def scaled(x):
    # a helper that itself uses a sibling module through a relative import
    return x * tl_extra.SCALE

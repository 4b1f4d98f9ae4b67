import triton
import triton.language as tl


@triton.jit
def scale3(x):
    return x * 3.0

import triton


@triton.jit
def double(x):
    return x + x

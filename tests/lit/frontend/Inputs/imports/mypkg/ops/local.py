import triton


@triton.jit
def add_one(x):
    return x + 1.0

# Triton's random numbers (tl.randint4x, tl.rand), for tests/unit/frontend_examples_test.cpp
# (Random*): the four Philox words of each offset, and uniform floats.
import triton
import triton.language as tl


@triton.jit
def philox_words(out_ptr, seed, B: tl.constexpr):
    offs = tl.arange(0, B)
    w0, w1, w2, w3 = tl.randint4x(seed, offs)
    tl.store(out_ptr + offs * 4, w0)
    tl.store(out_ptr + offs * 4 + 1, w1)
    tl.store(out_ptr + offs * 4 + 2, w2)
    tl.store(out_ptr + offs * 4 + 3, w3)


@triton.jit
def uniform(out_ptr, seed, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, tl.rand(seed, offs))


@triton.jit
def normal(out_ptr, seed, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, tl.randn(seed, offs))

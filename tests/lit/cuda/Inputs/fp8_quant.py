# Per-row fp8 quantization and its inverse, as LLM-serving libraries write them (cuda/fp8_simt.test): the
# SIMT path's loads, stores and conversions of fp8 elements.
import triton
import triton.language as tl


@triton.jit
def quant_fp8(x_ptr, q_ptr, s_ptr, n_cols, FP8_MAX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x)), 1e-10)
    scale = amax / FP8_MAX
    q = tl.clamp(x / scale, -FP8_MAX, FP8_MAX).to(q_ptr.dtype.element_ty)
    tl.store(q_ptr + row * n_cols + cols, q, mask=m)
    tl.store(s_ptr + row, scale)


@triton.jit
def dequant_fp8(q_ptr, s_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    q = tl.load(q_ptr + row * n_cols + cols, mask=m, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, (q.to(tl.float32) * tl.load(s_ptr + row)).to(tl.bfloat16), mask=m)

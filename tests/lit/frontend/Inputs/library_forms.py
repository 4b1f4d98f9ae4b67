# Forms Triton libraries write that Triton 3.6 compiles (tests/lit/frontend/library_forms.test):
# `dtype.value` and `dtype.int_bitwidth` in a helper given a dtype, tl.max's return_indices and
# return_indices_tie_break_left (also positionally, in Triton's order), standard's _log2, a raise in a
# branch a constexpr condition rules out, a plain function decorated @tl.constexpr, a masked scalar
# load, programmatic-dependent-launch calls and Python's math module.
import math

import torch  # read by tawa, not imported: lmdeploy compares dtypes with torch's
import triton
import triton.language as tl
from triton.language.standard import _log2


@triton.jit
def _lowest(dtype):
    d = dtype.value
    if d.is_floating():
        return float("-inf")
    width: tl.constexpr = d.int_bitwidth
    return -(2 ** (width - 1))


@tl.constexpr
def _sum_type(dt: tl.dtype) -> tl.dtype:
    if dt.is_fp16() or dt.is_bf16():
        return tl.float32
    return dt


@triton.jit
def row_stats(x_ptr, max_ptr, arg_ptr, arg2_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=_lowest(x_ptr.dtype.element_ty))
    m, i = tl.max(x, 0, return_indices=True, return_indices_tie_break_left=True)
    _, j = tl.max(x, 0, True)  # positionally: (input, axis, return_indices)
    tl.store(max_ptr + row, m)
    tl.store(arg_ptr + row, i)
    tl.store(arg2_ptr + row, j)
    acc_t: tl.constexpr = _sum_type(x_ptr.dtype.element_ty)
    y = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0).to(acc_t)
    tl.store(sum_ptr + row, tl.sum(y, 0))


@triton.jit
def prev_row(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # each program adds the previous program's first element (none for the first: `other`)
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    p = tl.load(x_ptr + (pid - 1) * BLOCK, mask=pid > 0, other=7.0)
    offs = tl.arange(0, BLOCK)
    shift: tl.constexpr = _log2(BLOCK)
    v = tl.load(x_ptr + pid * BLOCK + offs) + p
    tl.store(out_ptr + pid * BLOCK + offs, v * tl.log2(math.e) + shift)
    tl.extra.cuda.gdc_launch_dependents()


@triton.jit
def swap_bits(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    if tl.constexpr(v.dtype.primitive_bitwidth) == 32:
        itype = tl.int32
    elif tl.constexpr(v.dtype.primitive_bitwidth) == 16:
        itype = tl.int16
    else:
        raise ValueError("unsupported dtype")
    tl.store(out_ptr + offs, (v.to(itype, bitcast=True) ^ 1).to(v.dtype, bitcast=True))


@triton.jit
def scalar_forms(x_ptr, s_ptr, bias_ptr, y_ptr, BLOCK: tl.constexpr):
    # vLLM's fused_moe: a 0-d scale indexed `s[None, :]` (Triton: shape [1]); vLLM's scaled_mm:
    # `if bias_ptr:` on a pointer argument (Triton: the address is not null)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    s = tl.load(s_ptr)
    v = v * s[None, :]
    if bias_ptr:
        v += tl.load(bias_ptr + offs)[None, :]
    tl.store(y_ptr + offs[:, None] * BLOCK + offs[None, :], v)


@triton.jit
def torch_dtype(x_ptr, y_ptr, BLOCK: tl.constexpr):
    # lmdeploy's fused LoRA: a tl.dtype compared with a torch dtype, False in Triton (a tl.dtype
    # equals only tl.dtypes), so the else branch runs
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    if y_ptr.dtype.element_ty == torch.float16:
        v = v * 2
    else:
        v = v * 3
    tl.store(y_ptr + offs, v.to(y_ptr.dtype.element_ty))


# The bits of a float tile as the integer type of its width, signed and unsigned (triton.language.core's
# get_int_dtype, which Transformer Engine's permutation kernels call).
@triton.jit
def int_view(x_ptr, s_ptr, u_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    signed = tl.core.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True)
    unsigned = tl.core.get_int_dtype(x.dtype.primitive_bitwidth, False)
    tl.store(s_ptr + offs, x.to(signed, bitcast=True))
    tl.store(u_ptr + offs, x.to(unsigned, bitcast=True).to(tl.int64))

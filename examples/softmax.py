# Row-wise softmax fused into one kernel: each program walks over rows (a persistent loop) and
# keeps a whole row in registers, so the input is read once and the output written once.
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, NUM_STAGES: tl.constexpr):
    first_row = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row in tl.range(first_row, n_rows, row_step, num_stages=NUM_STAGES):
        cols = tl.arange(0, BLOCK_SIZE)
        valid = cols < n_cols
        # Padding lanes read -inf so that they vanish from the max and from the sum.
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=valid, other=-float("inf"))
        shifted = x - tl.max(x, axis=0)
        numerator = tl.exp(shifted)
        denominator = tl.sum(numerator, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=valid)

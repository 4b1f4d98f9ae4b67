# Layer normalization, forward pass: one program per row. The statistics are accumulated in f32
# over BLOCK_SIZE-wide chunks, so rows longer than one block work too.
import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, row_stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * row_stride
    Y += row * row_stride
    # Mean.
    partial = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        partial += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(partial, axis=0) / N
    # Variance (two-pass, for accuracy).
    partial = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        centered = tl.where(cols < N, x - mean, 0.0)
        partial += centered * centered
    var = tl.sum(partial, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize and apply the affine transform.
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        in_row = cols < N
        w = tl.load(W + cols, mask=in_row)
        b = tl.load(B + cols, mask=in_row)
        x = tl.load(X + cols, mask=in_row, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y, mask=in_row)

# Reductions and scans of 64-bit tiles on the SIMT path (cuda/wide_reductions.test): i64 sums past
# 2^32 (FlagGems' cumsum accumulates integers in int64), u64 max, f64 sums and max, an i64 prefix
# sum, and an i64 sum along the rows of a 2-D tile.
import triton
import triton.language as tl


@triton.jit
def wide(x_ptr, y_ptr, isum_ptr, umax_ptr, fsum_ptr, fmax_ptr, scan_ptr, rows_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + offs)
    big = x.to(tl.int64) * 4099 * 1000003  # about 2^42 at |x| = 1000
    tl.store(isum_ptr + pid, tl.sum(big, 0))
    tl.store(umax_ptr + pid, tl.max((big + (1 << 50)).to(tl.uint64), 0))
    y = tl.load(y_ptr + pid * BLOCK + offs)
    tl.store(fsum_ptr + pid, tl.sum(y, 0))
    tl.store(fmax_ptr + pid, tl.max(y, 0))
    tl.store(scan_ptr + pid * BLOCK + offs, tl.cumsum(big, 0))
    r = tl.arange(0, 8)
    c = tl.arange(0, BLOCK // 8)
    t = tl.load(x_ptr + pid * BLOCK + r[:, None] * (BLOCK // 8) + c[None, :]).to(tl.int64) * 1000003 * 4099
    tl.store(rows_ptr + pid * 8 + r, tl.sum(t, 1))


@triton.jit
def wide_sum(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # one 1-D i64 sum over many warps and nothing staged: every warp's 8-byte partial in the scratch
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + tl.program_id(0) * BLOCK + offs).to(tl.int64) * 4099 * 1000003, 0))

import triton
import triton.language as tl


# Rows gathered through an index tile: block pid's rows are rows_of[pid * BR + i] of x (masked past R),
# times w. The gathered load is a tile.desc_load with a tile of rows; the producer's threads copy it.
@triton.jit
def gemm_rows(x_base, rows_of, w_base, out_base, R, K, N, BR: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    live = r < R
    src = tl.load(rows_of + r, mask=live, other=0)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    total = tl.zeros((BR, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(x_base + src[:, None] * K + (k0 + ks)[None, :], mask=live[:, None] & ((k0 + ks)[None, :] < K), other=0.0)
        w = tl.load(w_base + (k0 + ks)[:, None] * N + cols[None, :], mask=(k0 + ks)[:, None] < K, other=0.0)
        total = tl.dot(x, w, total)
    tl.store(out_base + r[:, None] * N + cols[None, :], total.to(tl.float16), mask=live[:, None])


# A mixture-of-experts projection in the style of serving libraries' fused MoE kernels: the rows of
# block pid_m are tokens sorted by expert (padded with ids >= num_valid), each token routed to top_k
# experts; A's rows are gathered (token // top_k), B is the block's expert, C's rows are scattered.
@triton.jit
def moe_gemm(a_ptr, b_ptr, c_ptr, w_ptr, sorted_ids, expert_ids, num_valid, N, K,
             stride_am, stride_ak, stride_be, stride_bk, stride_bn, stride_cm, stride_cn,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TOP_K: tl.constexpr,
             ROUTED_WEIGHT: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_id = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    tok = tl.load(sorted_ids + offs_id)
    tok_mask = tok < num_valid
    expert = tl.load(expert_ids + pid_m).to(tl.int64)
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (tok[:, None] // TOP_K * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + expert * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=tok_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ROUTED_WEIGHT:
        wt = tl.load(w_ptr + tok, mask=tok_mask, other=0)
        acc = acc * wt[:, None]
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * tok[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=tok_mask[:, None] & (offs_cn[None, :] < N))


# The MoE projection as serving libraries write it with early exits: programs past the padded count
# return at once, and a block of an expert this rank does not hold (-1) stores zeros and returns
# (the front end's if/else nests, which canonicalize turns into guards around the K loop).
@triton.jit
def moe_early(a_ptr, b_ptr, c_ptr, sorted_ids, expert_ids, num_post_padded, num_valid, N, K,
              stride_am, stride_ak, stride_be, stride_bk, stride_bn, stride_cm, stride_cn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TOP_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    total = tl.load(num_post_padded)
    if pid_m * BLOCK_M >= total:
        return
    offs_id = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    tok = tl.load(sorted_ids + offs_id)
    tok_mask = tok < num_valid
    expert = tl.load(expert_ids + pid_m).to(tl.int64)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * tok[:, None] + stride_cn * offs_cn[None, :]
    c_mask = tok_mask[:, None] & (offs_cn[None, :] < N)
    if expert == -1:
        tl.store(c_ptrs, tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16), mask=c_mask)
        return
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (tok[:, None] // TOP_K * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + expert * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=tok_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptrs, acc.to(tl.float16), mask=c_mask)


# Checks on gathered rows: ids in i64 (masked off past M, some of them past 2^31), a batch offset
# `program_id(1) * batch_stride` on the gathered base, and an epilogue that adds a residual read
# through the gathered rows (a 2-D load through a tile of pointers in the consumer).
@triton.jit
def rows_checked(x_base, ids, w_base, res, out, M, K, N: tl.constexpr, batch_stride,
                 BR: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BR)
    src = tl.load(ids + r)
    live = (src >= 0) & (src < M)
    cols = tl.arange(0, N)
    ks = tl.arange(0, BK)
    x_ptrs = x_base + tl.program_id(1) * batch_stride + src[:, None] * K + ks[None, :]
    total = tl.zeros((BR, N), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(x_ptrs, mask=live[:, None] & ((k0 + ks)[None, :] < K), other=0.0)
        w = tl.load(w_base + (k0 + ks)[:, None] * N + cols[None, :], mask=(k0 + ks)[:, None] < K, other=0.0)
        total = tl.dot(x, w, total)
        x_ptrs += BK
    rv = tl.load(res + src[:, None] * N + cols[None, :], mask=live[:, None], other=0.0)
    dst = tl.program_id(1) * BR + r
    tl.store(out + dst[:, None] * N + cols[None, :], (total + rv.to(tl.float32)).to(tl.float16))


# Row masks the affine analysis cannot read as bounds: an i8 flag tested, `ids != PAD`, and the ids
# clamped with tl.where before they address: each is folded into the gathered rows as written.
@triton.jit
def rows_flagged(x_base, ids, flags, w_base, out, K, N: tl.constexpr, PAD: tl.constexpr, BR: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    raw = tl.load(ids + r)
    keep = (tl.load(flags + r) != 0) & (raw != PAD)
    src = tl.where(keep, raw, 0)
    cols = tl.arange(0, N)
    ks = tl.arange(0, BK)
    total = tl.zeros((BR, N), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(x_base + src[:, None] * K + (k0 + ks)[None, :], mask=keep[:, None] & ((k0 + ks)[None, :] < K), other=0.0)
        w = tl.load(w_base + (k0 + ks)[:, None] * N + cols[None, :], mask=(k0 + ks)[:, None] < K, other=0.0)
        total = tl.dot(x, w, total)
    tl.store(out + r[:, None] * N + cols[None, :], total.to(tl.float16))


@triton.jit
def rows_swapped(x_base, rows_of, w_base, out_base, R, K, N, BR: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, BACK: tl.constexpr = False):
    # gemm_rows as SWAP_AB computes it: out[r]^T = w^T @ x[rows_of[r]]^T (x's gathered rows along B's columns),
    # stored transposed; with BACK transposed back after the loop (`tl.trans(accumulator)`), stored row-major.
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    live = r < R
    src = tl.load(rows_of + r, mask=live, other=0)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    total = tl.zeros((BN, BR), dtype=tl.float32)
    for k0 in range(0, K, BK):
        xt = tl.load(x_base + src[None, :] * K + (k0 + ks)[:, None], mask=live[None, :] & ((k0 + ks)[:, None] < K), other=0.0)
        wt = tl.load(w_base + (k0 + ks)[None, :] * N + cols[:, None], mask=((k0 + ks)[None, :] < K) & (cols[:, None] < N), other=0.0)
        total = tl.dot(wt, xt, total)
    if BACK:
        out = tl.trans(total)
        tl.store(out_base + r[:, None] * N + cols[None, :], out.to(out_base.dtype.element_ty), mask=live[:, None] & (cols[None, :] < N))
    else:
        tl.store(out_base + r[None, :] * N + cols[:, None], total.to(tl.float16), mask=live[None, :] & (cols[:, None] < N))


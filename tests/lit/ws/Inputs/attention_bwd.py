# Attention's backward pass as a Triton user writes it: per program, one block of keys (dK, dV: a
# loop over query blocks) and one block of queries (dQ: a loop over key blocks). The forward pass
# saved each query row's log-sum-exp in base 2 (lse) and the host computed delta = rowsum(O * dO);
# k arrives scaled by sm_scale / ln 2. Each step reads a row statistic as a 1-D block (lse, delta)
# and one operand transposed (q and k loaded as HEAD x rows tiles). CAUSAL: the blocks on the
# diagonal in steps of half the rows, masked, then the others unmasked (four loops in all).
import triton
import triton.language as tl


@triton.jit
def dkdv_step(dk_acc, dv_acc, q, do, lse, delta, kb, vb, base, bh, seq, stride_row, start, own,
              HEAD: tl.constexpr, ROWS: tl.constexpr, MASK: tl.constexpr):
    dims = tl.arange(0, HEAD)
    rows = start + tl.arange(0, ROWS)
    qt = tl.load(q + base + rows[None, :] * stride_row + dims[:, None])
    row_lse = tl.load(lse + bh * seq + rows)
    pt = tl.math.exp2(tl.dot(kb, qt) - row_lse[None, :])
    if MASK:
        pt = tl.where(rows[None, :] >= own[:, None], pt, 0.0)
    g = tl.load(do + base + rows[:, None] * stride_row + dims[None, :])
    dv_acc += tl.dot(pt.to(tl.float16), g)
    row_delta = tl.load(delta + bh * seq + rows)
    dst = pt * (tl.dot(vb, tl.trans(g)) - row_delta[None, :])
    dk_acc += tl.dot(dst.to(tl.float16), tl.trans(qt))
    return dk_acc, dv_acc


@triton.jit
def dq_step(dq_acc, k, v, qb, gb, own_lse, own_delta, base, stride_row, start, own,
            HEAD: tl.constexpr, COLS: tl.constexpr, MASK: tl.constexpr):
    dims = tl.arange(0, HEAD)
    cols = start + tl.arange(0, COLS)
    kt = tl.load(k + base + cols[None, :] * stride_row + dims[:, None])
    vt = tl.load(v + base + cols[None, :] * stride_row + dims[:, None])
    p = tl.math.exp2(tl.dot(qb, kt) - own_lse[:, None])
    if MASK:
        p = tl.where(own[:, None] >= cols[None, :], p, 0.0)
    ds = p * (tl.dot(gb, vt) - own_delta[:, None])
    dq_acc += tl.dot(ds.to(tl.float16), tl.trans(kt))
    return dq_acc


@triton.jit
def attn_bwd(q, k, v, do, lse, delta, dq, dk, dv, sm_scale, seq, stride_bh, stride_row,
             HEAD: tl.constexpr, BLOCK: tl.constexpr, STEP: tl.constexpr, CAUSAL: tl.constexpr):
    blk = tl.program_id(0)
    bh = tl.program_id(1)
    base = (bh * stride_bh).to(tl.int64)  # batch and head offsets past 2**31 elements
    own = blk * BLOCK + tl.arange(0, BLOCK)
    tile_at = own[:, None] * stride_row + tl.arange(0, HEAD)[None, :]

    # dK and dV of this program's keys: the query blocks at or after them (all, without CAUSAL).
    kb = tl.load(k + base + tile_at)
    vb = tl.load(v + base + tile_at)
    dk_acc = tl.zeros([BLOCK, HEAD], dtype=tl.float32)
    dv_acc = tl.zeros([BLOCK, HEAD], dtype=tl.float32)
    lo = 0
    if CAUSAL:
        for j in range(2 * BLOCK // STEP):
            dk_acc, dv_acc = dkdv_step(dk_acc, dv_acc, q, do, lse, delta, kb, vb, base, bh, seq, stride_row,
                                       blk * BLOCK + j * (STEP // 2), own, HEAD, STEP // 2, True)
        lo = (blk + 1) * BLOCK
    for start in range(lo, seq, STEP):
        dk_acc, dv_acc = dkdv_step(dk_acc, dv_acc, q, do, lse, delta, kb, vb, base, bh, seq, stride_row, start, own,
                                   HEAD, STEP, False)
    tl.store(dv + base + tile_at, dv_acc.to(tl.float16))
    tl.store(dk + base + tile_at, (dk_acc * sm_scale).to(tl.float16))

    # dQ of this program's queries: the key blocks at or before them (all, without CAUSAL).
    qb = tl.load(q + base + tile_at)
    gb = tl.load(do + base + tile_at)
    own_lse = tl.load(lse + bh * seq + own)
    own_delta = tl.load(delta + bh * seq + own)
    dq_acc = tl.zeros([BLOCK, HEAD], dtype=tl.float32)
    hi = seq
    if CAUSAL:
        for j in range(2 * BLOCK // STEP):
            dq_acc = dq_step(dq_acc, k, v, qb, gb, own_lse, own_delta, base, stride_row, blk * BLOCK + j * (STEP // 2), own,
                             HEAD, STEP // 2, True)
        hi = blk * BLOCK
    for start in range(0, hi, STEP):
        dq_acc = dq_step(dq_acc, k, v, qb, gb, own_lse, own_delta, base, stride_row, start, own, HEAD, STEP, False)
    tl.store(dq + base + tile_at, (dq_acc * 0.6931471805599453).to(tl.float16))

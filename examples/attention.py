# Fused attention forward (softmax(Q K^T * scale) V) with an online softmax, in the structure of
# FlashAttention: the inner loop lives in a helper that the kernel calls once per STAGE.
#   STAGE 1: key blocks strictly left of the diagonal (no masking needed)
#   STAGE 2: the key block on the diagonal (causal mask applied)
#   STAGE 3: all key blocks (non-causal attention)
# Q, K, V and Out are [Z * H * N_CTX, HEAD_DIM] row-major f16 tensors.
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale,
                    offs_m, offs_n,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                    N_CTX: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = k_desc.load([kv_row0 + start_n, 0])
        qk = tl.dot(q, k.T)
        if STAGE == 2:
            causal = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(causal, 0, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_new[:, None]
        else:
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        p = tl.math.exp2(qk)
        row_sum = tl.sum(p, 1)
        correction = tl.math.exp2(m_i - m_new)
        l_i = l_i * correction + row_sum
        acc = acc * correction[:, None]
        v = v_desc.load([kv_row0 + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, Z, H,
             N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    tl.static_assert(BLOCK_N <= HEAD_DIM, "BLOCK_N must not exceed HEAD_DIM")
    tl.static_assert(N_CTX % BLOCK_M == 0)
    tl.static_assert(not CAUSAL or BLOCK_M % BLOCK_N == 0, "the diagonal stage covers BLOCK_M keys in steps of BLOCK_N")
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    rows = Z * H * N_CTX
    q_desc = tl.make_tensor_descriptor(Q, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(K, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(V, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(Out, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    kv_row0 = off_hz * N_CTX
    q_row = kv_row0 + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * LOG2E
    q = q_desc.load([q_row, 0])
    if CAUSAL:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale,
                                        offs_m, offs_n, BLOCK_M, BLOCK_N, 1, N_CTX)
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale,
                                        offs_m, offs_n, BLOCK_M, BLOCK_N, 2, N_CTX)
    else:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_desc, v_desc, kv_row0, start_m, qk_scale,
                                        offs_m, offs_n, BLOCK_M, BLOCK_N, STAGE=3, N_CTX=N_CTX)
    acc = acc / l_i[:, None]
    o_desc.store([q_row, 0], acc.to(Out.dtype.element_ty))

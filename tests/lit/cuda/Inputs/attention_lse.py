# Attention forward as a training kernel writes it: besides Out, the base-2 logsumexp of each query
# row, M[row] = max + log2(sum), which the backward pass reads (tl.store(m_ptrs, m_i) of a row
# vector). One loop over the key blocks; when CAUSAL, it stops after the diagonal block and masks every
# block (simpler than the staged form of examples/attention.py). Q, K, V, Out: [Z*H*N_CTX, HEAD_DIM]
# f16; M: [Z*H*N_CTX] f32.
import triton
import triton.language as tl


@triton.jit
def attn_fwd_lse(Q, K, V, Out, M, sm_scale, Z, H,
                 N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 CAUSAL: tl.constexpr):
    tl.static_assert(N_CTX % BLOCK_M == 0)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    rows = Z * H * N_CTX
    q_d = tl.make_tensor_descriptor(Q, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    k_d = tl.make_tensor_descriptor(K, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    v_d = tl.make_tensor_descriptor(V, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    o_d = tl.make_tensor_descriptor(Out, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    base = off_hz * N_CTX
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = q_d.load([base + start_m * BLOCK_M, 0])
    end = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in tl.range(0, end, BLOCK_N):
        s = tl.dot(q, k_d.load([base + start_n, 0]).T) * scale
        if CAUSAL:
            s = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], s, -1.0e6)
        m_next = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_next[:, None])
        alpha = tl.math.exp2(m_i - m_next)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(tl.float16), v_d.load([base + start_n, 0]), acc)
        m_i = m_next
    lse = m_i + tl.math.log2(l_i)
    tl.store(M + base + offs_m, lse, mask=offs_m < N_CTX)
    o_d.store([base + start_m * BLOCK_M, 0], (acc / l_i[:, None]).to(tl.float16))

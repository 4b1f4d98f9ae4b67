import triton
import triton.language as tl


# The key-side gradients of attention for one block of keys, written as the formulas read (the
# probabilities and their gradient transposed where used, as FlagAttention's backward writes them):
# P = 2^(Q K^T / 8 - lse), dV = sum over query blocks of P^T dO, dP = dO V^T,
# dS = P * (dP - delta), dK = sum of dS^T Q.
@triton.jit
def key_grads(q, k, v, do, lse, delta, dk, dv, M, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    keys = tl.program_id(0) * BN + tl.arange(0, BN)
    d = tl.arange(0, D)
    kb = tl.load(k + keys[:, None] * D + d[None, :])
    vb = tl.load(v + keys[:, None] * D + d[None, :])
    grad_k = tl.zeros((BN, D), dtype=tl.float32)
    grad_v = tl.zeros((BN, D), dtype=tl.float32)
    for m0 in range(0, M, BM):
        rows = m0 + tl.arange(0, BM)
        qb = tl.load(q + rows[:, None] * D + d[None, :])
        gb = tl.load(do + rows[:, None] * D + d[None, :])
        probs = tl.exp2(tl.dot(qb, tl.trans(kb)) * 0.125 - tl.load(lse + rows)[:, None])
        grad_v += tl.dot(tl.trans(probs).to(tl.float16), gb)
        dprobs = tl.dot(gb, tl.trans(vb))
        scores_grad = (probs * (dprobs - tl.load(delta + rows)[:, None])).to(tl.float16)
        grad_k += tl.dot(tl.trans(scores_grad), qb)
    tl.store(dk + keys[:, None] * D + d[None, :], grad_k.to(tl.float16))
    tl.store(dv + keys[:, None] * D + d[None, :], grad_v.to(tl.float16))

import triton
import triton.language as tl


# One KV head's group of G query heads (G = 16 rows: a block under wgmma's 64) attending over keys
# stored in pages of BN rows, the pages in the order a page table lists them: softmax(Q K^T) V.
@triton.jit
def paged_group(q, k, v, o, table, pages, G: tl.constexpr, D: tl.constexpr, BN: tl.constexpr):
    h = tl.program_id(0)
    if pages <= 0:
        return
    g = tl.arange(0, G)
    d = tl.arange(0, D)
    x = tl.load(q + (h * G + g)[:, None] * D + d[None, :])
    m = tl.full((G,), float("-inf"), tl.float32)
    l = tl.zeros((G,), tl.float32)
    acc = tl.zeros((G, D), tl.float32)
    for i in range(0, pages):
        page = tl.load(table + i)
        rows = page * BN + tl.arange(0, BN)
        kb = tl.load(k + rows[:, None] * D + d[None, :])
        vb = tl.load(v + rows[:, None] * D + d[None, :])
        s = tl.dot(x, tl.trans(kb)) * 0.125
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vb)
        m = m_new
    tl.store(o + (h * G + g)[:, None] * D + d[None, :], (acc / l[:, None]).to(tl.float16))

import triton
import triton.language as tl


# Attention over keys a token table lists (a paged KV cache as LightLLM keeps it: `Req_to_tokens`):
# program h's G query rows attend over n_tok keys; key j's row in k and v is
# table[stride_req * req + start + j], req = reqs[h]. The table is read in the loop, block by block,
# and K is loaded transposed (D x BN), as LightLLM's decode kernel loads it.
@triton.jit
def token_table(q, k, v, o, table, reqs, stride_req, start, n_tok, G: tl.constexpr, D: tl.constexpr, BN: tl.constexpr):
    h = tl.program_id(0)
    g = tl.arange(0, G)
    d = tl.arange(0, D)
    j = tl.arange(0, BN)
    req = tl.load(reqs + h)
    x = tl.load(q + (h * G + g)[:, None] * D + d[None, :])
    m = tl.full((G,), float("-inf"), tl.float32)
    l = tl.zeros((G,), tl.float32)
    acc = tl.zeros((G, D), tl.float32)
    for s in range(0, n_tok, BN):
        loc = tl.load(table + stride_req * req + start + s + j, mask=s + j < n_tok, other=0)
        kt = tl.load(k + loc[None, :] * D + d[:, None], mask=(s + j)[None, :] < n_tok, other=0.0)
        sc = tl.dot(x, kt) * 0.125
        sc = tl.where((s + j)[None, :] < n_tok, sc, float("-inf"))
        vb = tl.load(v + loc[:, None] * D + d[None, :], mask=(s + j)[:, None] < n_tok, other=0.0)
        m_new = tl.maximum(m, tl.max(sc, 1))
        p = tl.exp(sc - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vb)
        m = m_new
    tl.store(o + (h * G + g)[:, None] * D + d[None, :], (acc / l[:, None]).to(tl.float16))

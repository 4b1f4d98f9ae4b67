# attention_bwd.py against numpy in float64.
#   make DIR BH SEQ HEAD [--causal]: fresh random q, k, v, dO (f16) and what the forward pass saves:
#     lse (base-2 log-sum-exp of each score row) and delta = rowsum(O * dO), as DIR/*.npy;
#     k is written pre-scaled by sm_scale / ln 2 as the kernel takes it (sm_scale = 1/sqrt(HEAD)).
#   check DIR [--causal]: dQ, dK, dV (saved by `tawa run --save DIR`) against the gradients of
#     O = softmax(sm_scale * q k^T) v computed from the same f16 inputs in float64.
import sys

import numpy as np

mode, d = sys.argv[1], sys.argv[2]
causal = "--causal" in sys.argv


def scores2(q, k2):  # base-2 scores of the scaled k, masked
    s = np.einsum("bqd,bkd->bqk", q, k2)
    if causal:
        n = s.shape[1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    return s


if mode == "make":
    bh, seq, head = (int(x) for x in sys.argv[3:6])
    rng = np.random.default_rng()
    sm_scale = 1.0 / np.sqrt(head)
    q, k, v, do = (rng.standard_normal((bh, seq, head)).astype(np.float16) for _ in range(4))
    k2 = (k.astype(np.float64) * (sm_scale / np.log(2.0))).astype(np.float16)
    s = scores2(q.astype(np.float64), k2.astype(np.float64))
    top = s.max(axis=2, keepdims=True)
    lse = (top[..., 0] + np.log2(np.exp2(s - top).sum(axis=2))).astype(np.float32)
    p = np.exp2(s - lse[..., None].astype(np.float64))
    o = np.einsum("bqk,bkd->bqd", p, v.astype(np.float64))
    delta = (o * do.astype(np.float64)).sum(axis=2).astype(np.float32)
    for name, a in dict(q=q, k=k2, v=v, do=do, lse=lse, delta=delta).items():
        np.save(f"{d}/{name}.npy", a)
    print(f"made {bh} x {seq} x {head}, sm_scale {sm_scale}")
    sys.exit(0)

ld = lambda n: np.load(f"{d}/{n}.npy").astype(np.float64)
q, k2, v, do, lse, delta = (ld(n) for n in ("q", "k", "v", "do", "lse", "delta"))
head = q.shape[2]
sm_scale = 1.0 / np.sqrt(head)
p = np.exp2(scores2(q, k2) - lse[..., None])
dv = np.einsum("bqk,bqd->bkd", p, do)
dp = np.einsum("bqd,bkd->bqk", do, v)
ds = p * (dp - delta[..., None])
dk = sm_scale * np.einsum("bqk,bqd->bkd", ds, q)
dq = np.log(2.0) * np.einsum("bqk,bkd->bqd", ds, k2)
worst = 0.0
for name, ref in dict(dq=dq, dk=dk, dv=dv).items():
    got = np.load(f"{d}/{name}.npy").astype(np.float64)
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    # f16 operands (P and dS rounded to f16 before their products) and an f16 result
    tol = 4e-3 * np.abs(ref).max() + 1e-3
    err = np.abs(got - ref).max()
    assert err <= tol, f"{name}: max error {err} > {tol} at {np.unravel_index(np.abs(got - ref).argmax(), ref.shape)}"
    worst = max(worst, err / tol)
print(f"dq, dk, dv match the float64 gradients (worst error {worst:.2f} of the tolerance)")

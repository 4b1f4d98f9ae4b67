# gemm_gather.py's outputs against numpy in float64 (DIR holds the buffers `tawa run --save DIR` wrote).
#   rows DIR: out[r] = x[rows_of[r]] @ w (gemm_rows)
#   moe DIR TOP_K BLOCK_M ROUTED: c[t] = (a[t // TOP_K] @ b[expert of t's block]) * w[t] (when ROUTED, in
#     f32) for every routed id t < c's rows that sorted_ids lists; every row of c must be written; a
#     block whose expert is -1 stores zeros (moe_early; ROUTED 0, no w_ptr).
#   flagged DIR PAD: out[r] = x[ids[r]] @ w where flags[r] != 0 and ids[r] != PAD, else zeros (rows_flagged)
#   checked DIR: out[b * 64 + r] = x[b, ids[r]] @ w + res[ids[r]] (zero rows where ids[r] is not in [0, M)) (rows_checked)
import sys

import numpy as np

kind, d = sys.argv[1], sys.argv[2]
if kind == "rows":
    x, w, out = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("x_base", "w_base", "out_base"))
    rows = np.load(f"{d}/rows_of.npy")
    got, want, mag = out, x[rows] @ w, np.abs(x[rows]) @ np.abs(w)
    k = x.shape[1]
elif kind == "flagged":
    x, w, out = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("x_base", "w_base", "out"))
    ids, flags, pad = np.load(f"{d}/ids.npy"), np.load(f"{d}/flags.npy"), int(sys.argv[3])
    keep = (flags != 0) & (ids != pad)
    rows = np.where(keep[:, None], x[np.where(keep, ids, 0)], 0.0)
    want, mag, got, k = rows @ w, np.abs(rows) @ np.abs(w), out, x.shape[1]
    assert 0 < keep.sum() < len(ids) and (ids == pad).any() and (flags == 0).any(), "some rows kept, some padded, some flagged off"
elif kind == "checked":
    x, w, res, out = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("x_base", "w_base", "res", "out"))
    ids = np.load(f"{d}/ids.npy")
    live = (ids >= 0) & (ids < x.shape[1])
    rows = [np.where(live[:, None], x[b][np.where(live, ids, 0)], 0.0) for b in range(x.shape[0])]
    rres = np.where(live[:, None], res[np.where(live, ids, 0)], 0.0)
    want = np.concatenate([r @ w + rres for r in rows])
    mag = np.concatenate([np.abs(r) @ np.abs(w) + np.abs(rres) for r in rows])
    got, k = out, x.shape[2]
    assert 0 < live.sum() < len(ids) and (np.abs(ids[~live]) > 2**31).any(), "some ids masked off, some past 2^31"
else:
    top_k, bm, routed = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
    a, b, c = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("a_ptr", "b_ptr", "c_ptr"))
    wt = np.load(f"{d}/w_ptr.npy").astype(np.float64) if routed else None
    ids, experts = np.load(f"{d}/sorted_ids.npy"), np.load(f"{d}/expert_ids.npy")
    valid = c.shape[0]
    routed_ids = [(i, t) for i, t in enumerate(ids) if t < valid]
    assert sorted(t for _, t in routed_ids) == list(range(valid)), "every row of c is routed once"
    want, mag = np.zeros_like(c), np.zeros_like(c)
    for i, t in routed_ids:
        e = experts[i // bm]
        if e < 0:
            continue  # zeros
        want[t] = a[t // top_k] @ b[e] * (wt[t] if routed else 1.0)
        mag[t] = np.abs(a[t // top_k]) @ np.abs(b[e]) * (abs(wt[t]) if routed else 1.0)
    got, k = c, a.shape[1]
err = np.abs(got - want)
assert (err <= 2.0**-10 * np.abs(want) + k * 2.0**-23 * mag + 1e-6).all(), f"max error {err.max()}"
print(f"{kind}: within f16 rounding of the float64 product ({got.size} elements)")

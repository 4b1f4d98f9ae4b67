# table_columns.py's output against numpy in float64 (DIR from `tawa run --save DIR`):
# C[r, j] = sum_k A[r, k] * B'[k, t[j]] + t[r], t = table[order[block rows]], B' = B (K rows: no fill).
import sys

import numpy as np

d = sys.argv[1]
a, b, c = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("a", "b", "c"))
table, order = np.load(f"{d}/table.npy"), np.load(f"{d}/order.npy")
t = table[order].astype(np.int64)
bs = c.shape[1]
want, mag = np.zeros_like(c), np.zeros_like(c)
for p in range(c.shape[0] // bs):
    r = slice(p * bs, (p + 1) * bs)
    want[r] = a[r] @ b[:, t[r]] + t[r][:, None]
    mag[r] = np.abs(a[r]) @ np.abs(b[:, t[r]]) + np.abs(t[r])[:, None]
assert np.count_nonzero(a) > a.size // 2 and len(set(t.tolist())) > 8, "random inputs and table entries"
bad = np.abs(c - want) > 2.0 ** -20 * mag + 1e-30
print(f"table columns: {'within f32 accumulation' if not bad.any() else f'{bad.sum()} elements off, max err {np.abs(c - want).max()}'}")

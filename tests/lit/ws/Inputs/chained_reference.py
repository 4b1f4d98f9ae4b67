# chained_tiles.py's C against numpy in float64, in program order: tile t multiplies by B block t,
# which for t >= S is the ones the program's previous tile wrote (blocks below S are as given: the
# buffer saved after the run still holds them). DIR holds `tawa run --save DIR`'s buffers.
import sys

import numpy as np

d, s, bm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a, b, c = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "abc")
m = a.shape[0]
tiles = -(-m // bm)
for t in range(tiles):
    blk = b[t] if t < s else np.ones_like(b[t])
    if t + s < b.shape[0]:
        assert (b[t + s] == 1).all(), f"block {t + s} was written with ones"
    rows = slice(t * bm, min(m, (t + 1) * bm))
    want = a[rows] @ blk
    err = np.abs(c[rows] - want)
    assert (err <= a.shape[1] * 2.0**-23 * (np.abs(a[rows]) @ np.abs(blk)) + 1e-6).all(), f"tile {t}: max error {err.max()}"
print(f"chained_tiles: program order kept ({tiles} tiles)")

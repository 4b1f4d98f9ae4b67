"""Checks tl.histogram's results (tests/lit/frontend/histogram.test) against numpy: per block of
BLOCK inputs, the count of each value 0 .. NBINS - 1, and the same over the even values only.
Usage: histogram_reference.py INPUT_DIR OUTPUT_DIR N NBINS BLOCK"""
import sys

import numpy as np

inp, out, n, nbins, block = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
x = np.load(f"{inp}/x_ptr.npy").astype(np.int64)
got, got_masked = np.load(f"{out}/out_ptr.npy"), np.load(f"{out}/masked_ptr.npy")
for p in range(got.shape[0]):
    blk = x[p * block:min(n, (p + 1) * block)]
    want = np.array([(blk == b).sum() for b in range(nbins)])
    want_masked = np.array([((blk == b) & (blk % 2 == 0)).sum() for b in range(nbins)])
    assert (got[p] == want).all(), (p, got[p], want)
    assert (got_masked[p] == want_masked).all(), (p, got_masked[p], want_masked)
print(f"histogram: {got.shape[0]} blocks of {block}, {nbins} bins: counts match numpy")

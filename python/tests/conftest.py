import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def rng():
    """Fresh random inputs each run; the seed is printed on failure."""
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """A private disk cache per test, so that cache behaviour is each test's own."""
    d = tmp_path / "cache"
    monkeypatch.setenv("TAWA_CACHE_DIR", str(d))
    return d


def nonzero_uniform(rng, shape, dtype):
    x = rng.uniform(-1.0, 1.0, size=shape)
    x[x == 0] = 0.5
    return x.astype(dtype)

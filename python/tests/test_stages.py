"""Each stage of a compiled kernel is readable from Python."""
import shutil

import numpy as np
import pytest

import kernels
import tawa


def test_stages_of_a_warp_specialized_matmul():
    a = np.ones((64, 64), np.float16)
    k = kernels.matmul.warmup(a, a, a, 64, 64, 64, 64, 1, 64, 1, 64, 1, BM=64, BN=64, BK=32)
    assert "tile.dot" in k.ir("tile")
    assert "wg.region" in k.ir("ws")
    assert "mbarrier" in k.ir("nv")
    assert "__global__" in k.cuda
    assert "consumer" in k.explanation
    with pytest.raises(tawa.TawaError, match="unknown stage"):
        k.ir("llvm")


@pytest.mark.skipif(shutil.which("ptxas") is None and not __import__("os").path.exists("/usr/local/cuda/bin/ptxas"),
                    reason="no CUDA toolkit (ptxas) on this machine")
def test_ptx_cubin_and_resources():
    x = np.ones(64, np.float32)
    k = kernels.add.warmup(x, x, x, 64, BLOCK=64)
    assert ".entry" in k.ptx
    assert k.cubin[:4] == b"\x7fELF"
    assert "registers" in k.resources


def test_a_simt_kernel_has_no_warp_specialized_stage():
    x = np.ones(64, np.float32)
    k = kernels.add.warmup(x, x, x, 64, BLOCK=64)
    assert k.simt
    with pytest.raises(tawa.TawaError, match="could not warp-specialize"):
        k.ir("ws")

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


def test_check_proves_the_pipeline_on_these_inputs(rng):
    M, N, K = 64 * int(rng.integers(1, 3)), 64, 32 * int(rng.integers(2, 5))
    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.full((M, N), 5, np.float16)
    args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
    grid = (M // 64, N // 64)
    for backend in ("exec", "emu"):
        summary = tawa.check(kernels.matmul, grid, *args, BM=64, BN=64, BK=32, seeds=4, backend=backend)
        assert "agree" in summary and "@matmul" in summary
    assert (c == 5).all()  # check never writes the caller's arrays


def test_check_catches_a_broken_lowering(rng):
    a = rng.uniform(-1, 1, (64, 128)).astype(np.float16)
    b = rng.uniform(-1, 1, (128, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float16)
    with pytest.raises(tawa.TawaError, match="seed") as e:
        kernels.matmul.check((1, 1), a, b, c, 64, 64, 128, 128, 1, 64, 1, 64, 1, BM=64, BN=64, BK=32, seeds=8,
                             inject="skip-release")
    assert e.value.file == kernels.__file__


@pytest.mark.parametrize("backend", ["exec", "emu"])
def test_profile_block_records_each_launch_and_still_computes(rng, tmp_path, backend):
    M, N, K = 128, 64, 256
    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    x = rng.uniform(-1, 1, 300).astype(np.float32)
    out = np.zeros_like(x)
    with tawa.profile(trace_dir=str(tmp_path)) as prof:
        kernels.matmul[(M // 64, N // 64)](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=64, backend=backend)
        kernels.add[(3,)](x, x, out, 300, BLOCK=128, backend=backend)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.sqrt(K))
    np.testing.assert_array_equal(out, x + x)
    assert [l.kernel for l in prof.launches] == ["matmul", "add"]
    first, second = prof.launches
    assert first.profiled and "modelled" in first.summary.lower() and "consumer" in first.summary.lower()
    assert first.report and '"traceEvents"' in first.trace
    assert not second.profiled and "SIMT" in second.summary
    assert (tmp_path / "matmul.0.trace.json").exists()
    assert tawa.profiler.session() is None  # the block ended


def test_asm_is_tritons_mapping_of_stages():
    x = np.ones(64, np.float32)
    k = kernels.add.warmup(x, x, x, 64, BLOCK=64)
    assert "tile.store" in k.asm["tile"] and "__global__" in k.asm["cuda"]
    assert list(k.asm) == ["tile", "ws", "nv", "cuda", "ptx", "cubin"] and "ptx" in k.asm
    with pytest.raises(KeyError, match="the stages are"):
        k.asm["ttgir"]


def test_shared_ring_reaches_the_passes():
    # Attention's K and V stream through arefs of their own unless shared_ring asks for one aref.
    import os
    k = tawa.load(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "attention.py"), "attn_fwd")
    q = np.ones((2 * 128, 64), np.float16)
    args = (q, q, q, np.zeros_like(q), 0.125, 1, 2)
    meta = dict(N_CTX=128, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=64, CAUSAL=False)
    split = k.warmup(*args, **meta).ir("ws")
    shared = k.warmup(*args, **meta, shared_ring=True).ir("ws")
    assert "%aref_k = aref.create" in split and "%aref_v = aref.create" in split
    assert "%aref_k" not in shared and "%aref = aref.create" in shared


def test_keep_program_order_reaches_the_passes():
    # Causal attention launches its query blocks longest first (program-order reads the block index
    # reversed) unless keep_program_order asks for the order as written.
    import os
    k = tawa.load(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "attention.py"), "attn_fwd")
    q = np.ones((2 * 128, 64), np.float16)
    args = (q, q, q, np.zeros_like(q), 0.125, 1, 2)
    meta = dict(N_CTX=128, HEAD_DIM=64, BLOCK_M=64, BLOCK_N=64, CAUSAL=True)
    reordered = k.warmup(*args, **meta)
    kept = k.warmup(*args, **meta, keep_program_order=True)
    assert "tile.num_programs {axis = 0}" in reordered.ir("ws")
    assert "tile.num_programs {axis = 0}" not in kept.ir("ws")
    assert "program-order" in reordered.explanation

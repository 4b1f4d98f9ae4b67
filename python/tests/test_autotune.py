"""tawa.autotune: configurations ranked once per key value, kept in the tuner's SQLite record
across processes, trial launches on copies, Triton's autotuned kernels wrapped."""
import os
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tawa

KERNEL = textwrap.dedent("""
    import tawa
    import tawa.language as tl

    @tawa.autotune(configs=[tawa.Config({"BM": 64, "BK": 32}), tawa.Config({"BM": 64, "BK": 64}),
                            tawa.Config({"BM": 128, "BK": 64}, num_warps=8)], key=["M", "K"])
    @tawa.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.arange(0, 64)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, 64), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)
""")

SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    import tawa, tuned
    rng = np.random.default_rng(int(sys.argv[2]))
    M, N, K = 256, 64, 128
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.full((M, N), 9, np.float16)
    grid = lambda meta: (tawa.cdiv(M, meta["BM"]),)
    tuned.mm[grid](a, b, c, M, N, K)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.sqrt(K)), abs(c - ref).max()
    tuned.mm[grid](a, b, c, M, N, K)  # the same key: no new measurement
    print(tuned.mm.measured, tuned.mm.best[("256", "128")].kwargs)
""")


def test_tuned_once_and_remembered_across_processes(tmp_path, cache_dir):
    (tmp_path / "tuned.py").write_text(KERNEL)
    env = dict(os.environ, TAWA_CACHE_DIR=str(cache_dir))

    def run():
        p = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(int.from_bytes(os.urandom(2), "little"))],
                           env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        measured, best = p.stdout.split(" ", 1)
        return int(measured), best.strip()

    first = run()
    assert first[0] == 3  # every configuration measured once
    second = run()
    assert second == (0, first[1])  # a new process: nothing measured, the same choice
    db = sqlite3.connect(str(cache_dir / "autotune.db"))
    assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
    rows = db.execute("select count(*) from results where program like '%mm[M=256, K=128]'").fetchone()[0]
    assert rows == 3


def test_trial_launches_leave_the_callers_arrays_to_the_final_launch(tmp_path, rng):
    # An accumulating kernel: C += A @ B. Trial launches on the caller's C would add A @ B once per
    # configuration; only the final launch may touch it.
    (tmp_path / "acc.py").write_text(KERNEL.replace("acc.to(tl.float16)",
                                                    "(acc + tl.load(c + rm[:, None] * N + rn[None, :], mask=rm[:, None] < M, "
                                                    "other=0.0).to(tl.float32)).to(tl.float16)"))
    sys.path.insert(0, str(tmp_path))
    try:
        import acc
    finally:
        sys.path.pop(0)
    M, N, K = 128, 64, 64
    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = rng.uniform(-1, 1, (M, N)).astype(np.float16)
    before = c.astype(np.float64)
    acc.mm[lambda m: (tawa.cdiv(M, m["BM"]),)](a, b, c, M, N, K)
    assert acc.mm.measured == 3
    ref = before + a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-2)


def test_a_kernel_with_no_warp_groups_cannot_be_ranked_on_the_cpu(tmp_path):
    (tmp_path / "ew.py").write_text(textwrap.dedent("""
        import tawa
        import tawa.language as tl

        @tawa.autotune(configs=[tawa.Config({"B": 64}), tawa.Config({"B": 128})], key=["n"])
        @tawa.jit
        def ew(x, n, B: tl.constexpr):
            i = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(x + i, tl.load(x + i, mask=i < n) * 2, mask=i < n)
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        import ew
    finally:
        sys.path.pop(0)
    x = np.ones(100, np.float32)
    with pytest.raises(tawa.TawaError, match="warp-specialized") as e:
        ew.ew[(2,)](x, 100)
    assert e.value.file.endswith("ew.py")
    assert (x == 1).all()


def test_wrap_turns_triton_autotune_into_tawa_autotune(tmp_path, rng):
    triton = pytest.importorskip("triton", reason="Triton is not installed in this environment")
    (tmp_path / "tt.py").write_text(KERNEL.replace("import tawa\n", "import triton\n").replace("tawa.language", "triton.language")
                                    .replace("tawa.autotune", "triton.autotune").replace("tawa.Config", "triton.Config")
                                    .replace("@tawa.jit", "@triton.jit"))
    sys.path.insert(0, str(tmp_path))
    try:
        import tt
    finally:
        sys.path.pop(0)
    k = tawa.wrap(tt.mm)
    assert isinstance(k, tawa.Autotuner) and k.key == ["M", "K"] and len(k.configs) == 3
    M, N, K = 128, 64, 64
    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    k[lambda m: (tawa.cdiv(M, m["BM"]),)](a, b, c, M, N, K)
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3, atol=2e-2)
    assert k.measured == 3

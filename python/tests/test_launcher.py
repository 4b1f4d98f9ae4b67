"""The C++ launcher in front of JITFunction._run (python/src/launcher.cpp): a launch it has seen the
key of goes straight to the kernel _run chose for it. It must choose exactly what _run would: the
same specialization for every kind of argument, the same backend, and never a kernel compiled for
other arguments."""
import threading

import numpy as np
import pytest

import kernels
import tawa
from conftest import nonzero_uniform
from tawa.jit import JITFunction


@pytest.fixture
def slow_calls(monkeypatch):
    """Counts the launches that reach the Python launcher (JITFunction._run)."""
    calls = []
    run = JITFunction._run

    def counted(self, grid, args, kwargs):
        calls.append(self.__name__)
        return run(self, grid, args, kwargs)

    monkeypatch.setattr(JITFunction, "_run", counted)
    return calls


def fresh(jitfn, **kw):
    return tawa.JITFunction(jitfn.fn, **kw)


def test_a_seen_launch_skips_python_and_computes(rng, slow_calls):
    k = fresh(kernels.add)
    for _ in range(3):
        n = 16 * int(rng.integers(20, 200))  # the same key each time: 16-divisible, aligned fp32 arrays
        x, y = nonzero_uniform(rng, n, np.float32), nonzero_uniform(rng, n, np.float32)
        out = np.full(n, 7, np.float32)
        ck = k[(tawa.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        np.testing.assert_array_equal(out, (x.astype(np.float64) + y).astype(np.float32))
        assert ck.last_run_seconds is not None and ck.last_run_seconds > 0
    assert len(slow_calls) == 1 and k._launcher.size == 1 and k.compiles == 1


def _aligned(rng, n, dtype):
    buf = nonzero_uniform(rng, n + 16, dtype)
    off = (-buf.__array_interface__["data"][0] % 16) // buf.itemsize
    return buf[off:off + n]


def _unaligned(rng, n, dtype):
    a = _aligned(rng, n + 1, dtype)
    return a[1:]


def test_every_key_fact_picks_what_the_python_launcher_picks(rng, slow_calls):
    """Each change of one fact of Triton's key (dtype, alignment, width, 16-divisibility, the constant
    1, a constexpr's value or type, None, an option) is a launch the launcher has not seen: it goes to
    _run, and later launches with the same facts get _run's kernel again. Checked against warmup()
    (the Python path's choice) and against numpy."""
    k = fresh(kernels.pick)
    n = 64
    cases = [
        # (x, n, BIAS, BLOCK, options)
        (_aligned(rng, n, np.float32), 64, None, 64, {}),
        (_unaligned(rng, n, np.float32), 64, None, 64, {}),      # alignment of a pointer
        (_aligned(rng, n, np.float16), 64, None, 64, {}),        # dtype
        (_aligned(rng, n, np.float32), 63, None, 64, {}),        # 16-divisibility
        (_aligned(rng, n, np.float32), 1, None, 64, {}),         # the constant 1
        (_aligned(rng, n, np.float32), 64, 2, 64, {}),           # a constexpr's value
        (_aligned(rng, n, np.float32), 64, 2.5, 64, {}),         # a constexpr's type (float)
        (_aligned(rng, n, np.float32), 64, True, 64, {}),        # bool, not the int 1
        (_aligned(rng, n, np.float32), 64, 1, 64, {}),
        (_aligned(rng, n, np.float32), 64, None, 32, {}),        # BLOCK
        (_aligned(rng, n, np.float32), 64, None, 64, {"num_warps": 8}),  # a hint in the spec
        (_aligned(rng, n, np.float32), 64, None, 64, {"num_warps": 4}),
        (_aligned(rng, n, np.float32), 64, None, 64, {"num_stages": 2}),
    ]
    seen = {}
    for rounds in range(2):
        for x, m, bias, block, opts in cases:
            out = np.zeros(n, x.dtype)
            ck = k[(tawa.cdiv(m, block),)](x, out, m, bias, block, **opts)
            assert ck is k.warmup(x, out, m, bias, block, **opts), (m, bias, block, opts)
            ref = x[:m].astype(np.float64) + (0 if bias is None else float(bias))
            np.testing.assert_allclose(out[:m], ref.astype(x.dtype), rtol=1e-3 if x.dtype == np.float16 else 1e-6)
            seen.setdefault(id(ck), ck)
        if rounds == 0:
            first = len(slow_calls)
    assert first == len(cases)  # each a new key the first time,
    assert len(slow_calls) == first  # none the second
    assert len(seen) == len(cases)


def test_integer_widths_and_do_not_specialize(rng, slow_calls):
    k = fresh(kernels.add)  # n: an i32, a u32 or an i64 by its value
    x = nonzero_uniform(rng, 64, np.float32)
    for n in (64, 2**31 + 16, 2**40, -(2**31) - 16, 2**31 + 16, 64, 2**40):
        out = np.zeros(64, np.float32)
        ck = k[(1,)](x, x, out, n, BLOCK=64)  # n >= 64: all 64 elements; negative: none
        assert ck is k.warmup(x, x, out, n, BLOCK=64)
        assert ck.key[3][0] == ("i32" if n == 64 else "u32" if n < 2**32 and n > 0 else "i64")
        np.testing.assert_array_equal(out, x + x if n > 0 else 0)
    assert len(slow_calls) == 3
    s = fresh(kernels.scale, do_not_specialize=["n"])  # do_not_specialize n: 1 and 16-divisible values are plain i32s
    x = nonzero_uniform(rng, 64, np.float32)
    for m in (64, 1, 32):
        out = np.zeros(64, np.float32)
        alpha = float(rng.uniform(0.5, 2))
        ck = s[(1,)](x, out, m, alpha, BLOCK=64)
        assert ck is s.warmup(x, out, m, alpha, BLOCK=64)
        np.testing.assert_allclose(out[:m], x[:m] * np.float32(alpha), rtol=1e-6)
    assert s._launcher.size == 1


def test_grid_callables_options_and_errors_after_a_seen_launch(rng, slow_calls):
    k = fresh(kernels.scale)
    n = 16 * int(rng.integers(10, 100))
    x = nonzero_uniform(rng, n, np.float32)
    metas = []

    def grid(meta):
        metas.append(dict(meta))
        return [tawa.cdiv(meta["n"], meta["BLOCK"])]  # a list: _run converts it

    for _ in range(2):
        out = np.zeros(n, np.float32)
        k[lambda meta: (tawa.cdiv(meta["n"], meta["BLOCK"]),)](x, out, n, 1.5, BLOCK=128)
        np.testing.assert_array_equal(out, x * np.float32(1.5))
        out[:] = 0
        k[grid](x, out, n=n, alpha=1.5, BLOCK=128, num_warps=4)
        np.testing.assert_array_equal(out, x * np.float32(1.5))
    assert len(metas) == 2 and metas[1]["n"] == n and metas[1]["BLOCK"] == 128 and metas[1]["num_warps"] == 4
    # Run options and every error still go to _run, with its located messages.
    calls = len(slow_calls)
    k[(1,)](x, out, n, 1.5, BLOCK=128, seed=3)
    assert len(slow_calls) == calls + 1
    with pytest.raises(tawa.TawaError, match="takes 5 argument"):
        k[(1,)](x, out, n, 1.5, 128, 9)
    with pytest.raises(tawa.TawaError, match="two values for parameter 'n'"):
        k[(1,)](x, out, n, 1.5, n=n, BLOCK=128)
    with pytest.raises(tawa.TawaError, match="grid must be 1 to 3 integers"):
        k[(1, 2, 3, 4)](x, out, n, 1.5, BLOCK=128)
    with pytest.raises(tawa.TawaError, match="CUDA tensors|backend 'cuda'"):
        k[(1,)](x, out, n, 1.5, BLOCK=128, backend="cuda")


def test_changing_the_backend_is_seen(rng):
    k = fresh(kernels.add)
    x = nonzero_uniform(rng, 64, np.float32)
    out = np.zeros(64, np.float32)
    k[(1,)](x, x, out, 64, BLOCK=64)
    k.backend = "cuda"  # host arrays on the GPU backend: _run's error, not the remembered executor launch
    with pytest.raises(tawa.TawaError, match="host arrays"):
        k[(1,)](x, x, out, 64, BLOCK=64)
    with pytest.raises(ValueError, match="unknown backend"):
        k.backend = "gpu"


def test_a_profile_block_sees_seen_launches(rng, tmp_path):
    k = fresh(kernels.matmul)
    M = N = K = 64
    a, b = nonzero_uniform(rng, (M, K), np.float16), nonzero_uniform(rng, (K, N), np.float16)
    c = np.zeros((M, N), np.float16)
    args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
    k[(1, 1)](*args, BM=64, BN=64, BK=32)
    with tawa.profile(trace_dir=str(tmp_path)) as prof:
        k[(1, 1)](*args, BM=64, BN=64, BK=32)
    assert len(prof.launches) == 1 and prof.launches[0].profiled


def test_launches_from_threads(rng):
    k = fresh(kernels.add)
    n = 4096
    xs = [nonzero_uniform(rng, n, np.float32) for _ in range(4)]
    outs = [np.zeros(n, np.float32) for _ in range(4)]
    k[(4,)](xs[0], xs[0], outs[0], n, BLOCK=1024)
    errors = []

    def work(i):
        try:
            for _ in range(20):
                k[(4,)](xs[i], xs[i], outs[i], n, BLOCK=1024)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for x, out in zip(xs, outs):
        np.testing.assert_array_equal(out, x + x)

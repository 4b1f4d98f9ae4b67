"""Specialization as Triton does it, and the caches in memory and on disk."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import kernels
import tawa


def fresh(jitfn):
    return tawa.JITFunction(jitfn.fn)


def test_keys_follow_tritons_rules():
    k = fresh(kernels.add)
    x = np.ones(64, np.float32)
    base = np.ones(80, np.float32)
    key = k.specialization_key(x, x, x, 64, BLOCK=32)
    assert key == (("fp32", True, "*"), ("fp32", True, "*"), ("fp32", True, "*"), ("i32", True), "32")
    # 17 is not divisible by 16; 1 is a constant; 2**40 needs 64 bits.
    assert k.specialization_key(x, x, x, 17, BLOCK=32)[3] == ("i32", False)
    assert k.specialization_key(x, x, x, 1, BLOCK=32)[3] == "1"
    assert k.specialization_key(x, x, x, 2**40, BLOCK=32)[3] == ("i64", True)
    # A view one element past a 16-byte boundary is not aligned.
    off = base[1:65] if base.__array_interface__["data"][0] % 16 == 0 else base[0:64]
    assert off.__array_interface__["data"][0] % 16 != 0
    assert k.specialization_key(off, x, x, 64, BLOCK=32)[0] == ("fp32", False, "*")
    assert k.specialization_key(x.astype(np.float16), x, x, 64, BLOCK=32)[0] == ("fp16", True, "*")


def test_do_not_specialize():
    x = np.ones(64, np.float32)
    key = kernels.scale.specialization_key(x, x, 1, 2.0, BLOCK=32)
    assert key[2] == ("i32", False)  # n: neither the constant 1 nor divisibility
    assert kernels.scale.specialization_key(x, x, 32, 2.0, BLOCK=32)[2] == ("i32", False)


def test_one_compile_per_specialization(rng):
    k = fresh(kernels.add)
    for n in (100, 300, 700):  # the same key: none divisible by 16
        x = rng.uniform(-1, 1, n).astype(np.float32)
        out = np.zeros_like(x)
        k[(tawa.cdiv(n, 128),)](x, x, out, n, BLOCK=128)
        np.testing.assert_array_equal(out, x + x)
    assert k.compiles == 1
    k[(1,)](x[:64], x[:64], out[:64], 64, BLOCK=128)  # divisible by 16: a new key, the same code
    assert (k.compiles, k.disk_hits) == (1, 1)  # (tawa's code does not depend on it: the disk entry serves)
    k[(1,)](x, x, out, n, BLOCK=64)  # a new constexpr: new code
    assert (k.compiles, k.disk_hits) == (2, 1)
    np.testing.assert_array_equal(out, x + x)


def test_the_disk_cache_serves_a_new_process_and_notices_an_edit(tmp_path, cache_dir):
    src = tmp_path / "kern.py"
    src.write_text(textwrap.dedent("""
        import tawa
        import tawa.language as tl

        @tawa.jit
        def twice(x, out, n, B: tl.constexpr):
            i = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(out + i, tl.load(x + i, mask=i < n) * 2, mask=i < n)
    """))
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {str(tmp_path)!r})
        import tawa, kern
        x = np.arange(1, 101, dtype=np.float32)
        out = np.zeros_like(x)
        kern.twice[(2,)](x, out, 100, B=64)
        assert (out == float(sys.argv[1]) * x).all(), out
        print(kern.twice.compiles, kern.twice.disk_hits)
    """)
    env = dict(os.environ, TAWA_CACHE_DIR=str(cache_dir))

    def run(factor):
        p = subprocess.run([sys.executable, "-c", script, factor], env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return p.stdout.split()

    assert run("2") == ["1", "0"]
    assert run("2") == ["0", "1"]
    src.write_text(src.read_text().replace("* 2", "* 3"))  # the same key, new source: never the stale kernel
    assert run("3") == ["1", "0"]


def test_a_corrupt_cache_entry_is_compiled_again(rng, cache_dir):
    k = fresh(kernels.add)
    x = rng.uniform(-1, 1, 64).astype(np.float32)
    out = np.zeros_like(x)
    k[(1,)](x, x, out, 64, BLOCK=64)
    entries = list((cache_dir / "python").glob("*.json"))
    assert len(entries) == 1
    entries[0].write_text('{"files": {}, "ir": "func @broken(')
    k2 = fresh(kernels.add)
    k2[(1,)](x, x, out, 64, BLOCK=64)
    assert (k2.compiles, k2.disk_hits) == (1, 0)
    np.testing.assert_array_equal(out, x + x)

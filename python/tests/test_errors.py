"""Every mistake is a Python exception carrying tawa's located diagnostic."""
import numpy as np
import pytest

import kernels
import tawa


def test_out_of_bounds_access_is_located_at_the_load():
    x, y = np.ones(32, np.float32), np.full(32, 5, np.float32)
    with pytest.raises(tawa.TawaError) as e:
        kernels.out_of_bounds[(1,)](x, y)
    assert e.value.file == kernels.__file__
    src = open(kernels.__file__).read().splitlines()
    assert "tl.load(x + i)" in src[e.value.line - 1]
    assert e.value.col > 0
    assert (y == 5).all()  # a failed launch leaves the arrays alone


def test_a_malformed_kernel_is_located(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("import tawa\n\n@tawa.jit\ndef k(x, n):\n    y = x +\n")
    with pytest.raises(tawa.TawaError) as e:
        tawa.load(str(p), "k")[(1,)](np.ones(4, np.float32), 4)
    assert (e.value.file, e.value.line) == (str(p), 5)
    assert f"{p}:5:" in str(e.value)


def test_an_unsupported_construct_names_what_was_written(tmp_path):
    p = tmp_path / "lam.py"
    p.write_text("import tawa\nimport tawa.language as tl\n\n@tawa.jit\ndef k(x):\n    f = lambda v: v\n")
    with pytest.raises(tawa.TawaError) as e:
        tawa.load(str(p), "k")[(1,)](np.ones(4, np.float32))
    assert e.value.line == 6 and "lambda" in e.value.message


def test_argument_mistakes():
    x = np.ones(64, np.float32)
    with pytest.raises(tawa.ArgumentError, match="missing argument for parameter 'n'"):
        kernels.add[(1,)](x, x, x, BLOCK=64)
    with pytest.raises(TypeError, match="has no parameter 'nn'"):
        kernels.add[(1,)](x, x, x, nn=3, BLOCK=64)
    with pytest.raises(tawa.ArgumentError, match="takes 5 argument"):
        kernels.add[(1,)](x, x, x, 64, 64, 3)
    with pytest.raises(tawa.ArgumentError, match="two values"):
        kernels.add[(1,)](x, x, x, 64, BLOCK=64, n=3)
    with pytest.raises(tawa.ArgumentError, match="dtype complex64"):
        kernels.add[(1,)](x.astype(np.complex64), x, x, 64, BLOCK=64)
    with pytest.raises(tawa.ArgumentError, match="which a kernel cannot take"):
        kernels.add[(1,)]([1.0] * 64, x, x, 64, BLOCK=64)
    with pytest.raises(tawa.ArgumentError, match="constexpr 'BLOCK' cannot take a list"):
        kernels.add[(1,)](x, x, x, 64, BLOCK=[64])
    with pytest.raises(tawa.ArgumentError, match="grid must be"):
        kernels.add[(1.5,)](x, x, x, 64, BLOCK=64)
    with pytest.raises(tawa.TawaError, match="unknown backend"):
        kernels.add[(1,)](x, x, x, 64, BLOCK=64, backend="gpu")
    with pytest.raises(TypeError, match="launch it as add\\[grid\\]"):
        kernels.add(x, x, x, 64, BLOCK=64)
    e = pytest.raises(tawa.ArgumentError, kernels.add[(1,)], x, x, x, 64, BLOCK=64, bogus=1).value
    assert e.file == kernels.__file__ and e.line > 0


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        tawa.load(str(tmp_path / "nope.py"))
    p = tmp_path / "two.py"
    p.write_text("import tawa\n\n@tawa.jit\ndef a(x):\n    pass\n\n@tawa.jit\ndef b(x):\n    pass\n")
    with pytest.raises(tawa.TawaError, match="2 kernels"):
        tawa.load(str(p))
    with pytest.raises(tawa.TawaError, match="no @triton.jit function named 'c'"):
        tawa.load(str(p), "c")


"""tawa with PyTorch itself (2.11, CPU tensors: no GPU here): torch tensors launched on the executor
and the emulator, and tawa.custom_op checked by torch.library.opcheck and traced by torch.compile."""
import itertools

import numpy as np
import pytest

import kernels
import tawa

torch = pytest.importorskip("torch", reason="PyTorch is not installed in this environment (scripts/install-deps.sh installs it)")

_names = itertools.count()


def fresh_name(what):
    return f"tawa_test::{what}{next(_names)}"  # an op can be defined once per process


def rand(gen, *shape, dtype=torch.float32):
    x = torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1
    x[x == 0] = 0.5  # never zero
    return x.to(dtype)


@pytest.fixture
def gen():
    g = torch.Generator()
    seed = g.seed()
    print(f"torch seed {seed}")
    return g


@pytest.mark.parametrize("backend", ["exec", "emu"])
def test_cpu_tensors_launch_in_place(gen, backend):
    M, N, K = 96, 80, 64
    a, b = rand(gen, M, K, dtype=torch.float16), rand(gen, K, N, dtype=torch.float16)
    for _ in range(2):  # the second launch through the C++ launcher
        c = torch.full((M, N), 3.0, dtype=torch.float16)
        kernels.matmul[(tawa.cdiv(M, 64), tawa.cdiv(N, 64))](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=32,
                                                            backend=backend)
        ref = a.double() @ b.double()
        torch.testing.assert_close(c.double(), ref, rtol=2e-3, atol=2e-3 * K ** 0.5)
    rows, cols = 7, 100
    big = rand(gen, rows, cols + 13) * 4
    inp = big[:, 3:3 + cols]  # a strided view: its base address, its row stride an argument
    assert not inp.is_contiguous()
    out = torch.zeros(rows, cols)
    kernels.softmax[(rows,)](out, inp, inp.stride(0), out.stride(0), cols, BLOCK=128, backend=backend)
    torch.testing.assert_close(out.double(), torch.softmax(inp.double(), dim=1), rtol=1e-5, atol=1e-7)


def add_op():
    return tawa.custom_op(fresh_name("add"), kernels.add, schema="(Tensor x, Tensor y) -> Tensor",
                          outputs=lambda x, y: torch.empty_like(x), args=lambda x, y, out: (x, y, out, x.numel()),
                          grid=lambda meta: (tawa.cdiv(meta["n"], meta["BLOCK"]),), BLOCK=256)


def test_custom_op_computes_and_passes_opcheck(gen):
    add = add_op()
    n = int(torch.randint(1, 3000, (1,), generator=gen))
    x, y = rand(gen, n), rand(gen, n)
    torch.testing.assert_close(add(x, y), (x.double() + y.double()).float(), rtol=0, atol=0)
    # schema, autograd registration, fake tensors, AOT dispatch (dynamic shapes): each must say SUCCESS
    assert set(torch.library.opcheck(add, (x, y)).values()) == {"SUCCESS"}


def test_custom_op_that_writes_an_argument(gen):
    name = fresh_name("scale")
    scale = tawa.custom_op(name, kernels.scale, schema="(Tensor x, Tensor(a!) out, float alpha) -> ()",
                           args=lambda x, out, alpha: (x, out, out.numel(), alpha), grid=(4,), BLOCK=256)
    x, out = rand(gen, 1000), torch.zeros(1000)
    scale(x, out, 1.5)
    torch.testing.assert_close(out, (x.double() * 1.5).float(), rtol=0, atol=0)
    assert set(torch.library.opcheck(scale, (x, torch.zeros(1000), 0.25)).values()) == {"SUCCESS"}


def test_custom_op_under_torch_compile(gen):
    add = add_op()

    @torch.compile(backend="aot_eager", fullgraph=True, dynamic=True)
    def f(x, y):
        return add(x * 2, y).sin()

    for n in (1000, 1537):  # two sizes under one dynamic graph
        x, y = rand(gen, n), rand(gen, n)
        torch.testing.assert_close(f(x, y), ((x.double() * 2 + y.double()).float()).sin(), rtol=1e-6, atol=1e-6)


def test_custom_op_errors():
    with pytest.raises(ValueError, match="must be 'namespace::op'"):
        tawa.custom_op("add", kernels.add, schema="(Tensor x) -> Tensor", args=lambda x, o: (), grid=(1,))
    with pytest.raises(TypeError, match="must be a tawa kernel"):
        tawa.custom_op("tawa_test::bad", lambda: None, schema="(Tensor x) -> Tensor", args=lambda x, o: (), grid=(1,))
    add = add_op()
    with pytest.raises(tawa.TawaError, match=r"kernels\.py:\d+:\d+: error: array argument 'x' has dtype"):
        add(torch.ones(10, dtype=torch.complex64), torch.ones(10, dtype=torch.complex64))  # located at the kernel


def test_a_program_with_a_custom_op_exits_quietly(tmp_path):
    """torch.library holds the op's implementation (and so tawa's kernels) until the process ends:
    nothing may be reported at exit (nanobind would list them as leaked)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "op.py"
    script.write_text(f"""
import sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import torch, kernels, tawa
op = tawa.custom_op("tawa_exit::add", kernels.add, schema="(Tensor x, Tensor y) -> Tensor",
                    outputs=lambda x, y: torch.empty_like(x), args=lambda x, y, out: (x, y, out, x.numel()), grid=(4,), BLOCK=256)
x = torch.rand(1000) + 0.5
assert torch.equal(op(x, x), x + x)
""")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stderr == "", r.stderr

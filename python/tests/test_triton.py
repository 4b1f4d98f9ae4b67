"""Kernels written for Triton (triton.jit, triton.autotune, triton.heuristics) run through tawa.wrap,
and Triton's own example kernels load from their files."""
import importlib.util
import os

import numpy as np
import pytest

import tawa

triton = pytest.importorskip("triton", reason="Triton is not installed in this environment")

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_wrap_a_triton_jit_kernel_from_the_examples(rng):
    mod = _import(os.path.join(EXAMPLES, "softmax.py"), "softmax_example")
    k = tawa.wrap(mod.softmax_kernel)
    rows, cols = int(rng.integers(2, 30)), int(rng.integers(2, 300))
    x = rng.uniform(-3, 3, (rows, cols)).astype(np.float32)
    out = np.zeros_like(x)
    block = 1 << (cols - 1).bit_length()
    k[(min(rows, 4),)](out, x, cols, cols, rows, cols, BLOCK_SIZE=block, NUM_STAGES=2)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_wrap_carries_do_not_specialize_and_reads_autotune_configs(tmp_path, rng):
    p = tmp_path / "tuned.py"
    p.write_text(
        "import triton\nimport triton.language as tl\n\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=4), triton.Config({'BLOCK': 256})], key=['n'])\n"
        "@triton.jit(do_not_specialize=['n'])\n"
        "def neg(x, out, n, BLOCK: tl.constexpr):\n"
        "    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out + i, -tl.load(x + i, mask=i < n), mask=i < n)\n")
    mod = _import(str(p), "tuned")
    assert isinstance(tawa.wrap(mod.neg), tawa.Autotuner)
    k = tawa.wrap(mod.neg.fn)  # the triton.jit function under the autotuner
    assert isinstance(k, tawa.JITFunction)
    n = int(rng.integers(100, 1000))
    x = rng.uniform(-1, 1, n).astype(np.float32)
    out = np.zeros_like(x)
    assert k.specialization_key(x, out, 32)[2] == ("i32", False)
    k[(tawa.cdiv(n, 128),)](x, out, n)  # BLOCK from the first config, which the front end reads from the source
    np.testing.assert_array_equal(out, -x)


def test_load_reads_a_file_whose_imports_this_process_lacks(rng):
    # examples/vector_add.py imports torch at module level; tawa.load never imports it.
    k = tawa.load(os.path.join(EXAMPLES, "vector_add.py"), "add_kernel")
    n = int(rng.integers(1, 3000))
    x, y = rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)
    out = np.zeros_like(x)
    k[(tawa.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, backend="emu")
    np.testing.assert_array_equal(out, x + y)


def test_wrap_refuses_what_is_no_kernel():
    with pytest.raises(TypeError):
        tawa.wrap(42)


def test_the_first_python_example_runs():
    import subprocess
    import sys

    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "python", "first.py")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    err = float(p.stdout.split("max |error| ")[1].split()[0])
    assert err < 0.05, p.stdout
    assert "agrees bit for bit" in p.stdout and "modelled" in p.stdout and "wg.region" in p.stdout and "sm_90a" in p.stdout


@pytest.mark.parametrize("backend", ["exec", "emu"])
@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_from_python(rng, backend, causal):
    # examples/attention.py (FlashAttention's structure, device-side tensor descriptors) on numpy
    # arrays; the reference is softmax(Q K^T * scale) V in float64.
    k = tawa.load(os.path.join(EXAMPLES, "attention.py"), "attn_fwd")
    Z, H, N_CTX, D = 1, 2, 128, 64
    q, kk, v = (rng.uniform(-1, 1, (Z * H * N_CTX, D)).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    scale = float(rng.uniform(0.05, 0.2))
    k[(N_CTX // 64, Z * H)](q, kk, v, out, scale, Z, H, N_CTX=N_CTX, HEAD_DIM=D, BLOCK_M=64, BLOCK_N=64, CAUSAL=causal,
                            backend=backend)
    qh, kh, vh = (x.astype(np.float64).reshape(Z * H, N_CTX, D) for x in (q, kk, v))
    s = qh @ kh.transpose(0, 2, 1) * scale
    if causal:
        s = np.where(np.tril(np.ones((N_CTX, N_CTX), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ref = (p / p.sum(axis=-1, keepdims=True)) @ vh
    np.testing.assert_allclose(out.astype(np.float64).reshape(Z * H, N_CTX, D), ref, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("backend", ["exec", "emu"])
def test_host_tensor_descriptors(rng, backend):
    # A GEMM taking Triton's host TensorDescriptor arguments, B stored [N, K] and read transposed (as
    # the persistent-matmul tutorial does).
    k = tawa.load(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "lit", "frontend", "Inputs", "host_desc.py"),
                  "gemm_bt")
    M, N, K = 64 * int(rng.integers(1, 4)), 64 * int(rng.integers(1, 3)), 64 * int(rng.integers(1, 4))
    a, bt = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    D = tawa.TensorDescriptor
    k[(M // 64 * (N // 64),)](D.from_tensor(a, [64, 64]), D.from_tensor(bt, [64, 64]), D.from_tensor(c, [64, 64]), M, N, K,
                             BM=64, BN=64, BK=64, backend=backend)
    ref = a.astype(np.float64) @ bt.astype(np.float64).T
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.sqrt(K))


def test_host_descriptor_mistakes():
    k = tawa.load(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "lit", "frontend", "Inputs", "host_desc.py"),
                  "copy_rows")
    x = np.ones((128, 64), np.float32)
    y = np.zeros((128, 32), np.float32)
    view = x[:, :32]  # row stride 64, shape [128, 32]: not row-major over its shape
    with pytest.raises(tawa.ArgumentError, match="not the row-major strides"):
        k[(2,)](tawa.TensorDescriptor(view, [128, 32], [64, 1], [64, 32]), tawa.TensorDescriptor.from_tensor(y, [64, 32]), BM=64)
    with pytest.raises(tawa.ArgumentError, match="needs 8192 elements"):
        k[(2,)](tawa.TensorDescriptor(y, [256, 32], [32, 1], [64, 32]), tawa.TensorDescriptor.from_tensor(y, [64, 32]), BM=64)
    with pytest.raises(tawa.ArgumentError, match="padding"):
        k[(2,)](tawa.TensorDescriptor(y, [128, 32], [32, 1], [64, 32], padding="nan"), tawa.TensorDescriptor.from_tensor(y, [64, 32]),
                BM=64)
    src = np.arange(128 * 32, dtype=np.float32).reshape(128, 32)
    k[(2,)](tawa.TensorDescriptor.from_tensor(src, [64, 32]), tawa.TensorDescriptor.from_tensor(y, [64, 32]), BM=64)
    np.testing.assert_array_equal(y, src)

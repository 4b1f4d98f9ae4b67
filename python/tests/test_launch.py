"""Kernels launched on numpy arrays through the executor and the emulator, against references in
float64 computed here, with tolerances set by dtype."""
import numpy as np
import pytest

import kernels
import tawa
from conftest import nonzero_uniform

BACKENDS = ["exec", "emu"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_vector_add(rng, backend, dtype):
    n = int(rng.integers(1, 5000))
    x, y = nonzero_uniform(rng, n, dtype), nonzero_uniform(rng, n, dtype)
    out = np.full(n, 7, dtype=dtype)
    k = kernels.add[(tawa.cdiv(n, 256),)](x, y, out, n, BLOCK=256, backend=backend)
    ref = (x.astype(np.float64) + y.astype(np.float64)).astype(dtype)  # one rounding, as the kernel
    np.testing.assert_array_equal(out, ref)
    assert isinstance(k, tawa.CompiledKernel) and k.name == "add"


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_callable_and_keyword_arguments(rng, backend):
    n = int(rng.integers(300, 3000))
    x = nonzero_uniform(rng, n, np.float32)
    out = np.zeros(n, np.float32)
    alpha = float(rng.uniform(0.5, 2.0))
    kernels.scale[lambda meta: (tawa.cdiv(meta["n"], meta["BLOCK"]),)](x, out=out, n=n, alpha=alpha, BLOCK=128, backend=backend)
    np.testing.assert_allclose(out, (x.astype(np.float64) * np.float32(alpha)).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-5), (np.float16, 2e-3)])
def test_softmax_on_a_strided_view(rng, backend, dtype, rtol):
    rows, cols = int(rng.integers(3, 40)), int(rng.integers(5, 200))
    big = nonzero_uniform(rng, (rows, cols + 13), dtype) * 4
    inp = big[:, 3:3 + cols]  # a view: rows start 13 elements apart, not at the base address
    out = np.zeros((rows, cols), dtype)
    block = 1 << (cols - 1).bit_length()
    kernels.softmax[(rows,)](out, inp, inp.strides[0] // inp.itemsize, out.strides[0] // out.itemsize, cols, BLOCK=block,
                             backend=backend)
    x = inp.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_fp16_with_f32_accumulation(rng, backend):
    # N and K multiples of 8: rows 16-byte aligned, every tile moved by TMA.
    M, N, K = int(rng.integers(20, 150)), 8 * int(rng.integers(4, 20)), 8 * int(rng.integers(2, 12))
    a, b = nonzero_uniform(rng, (M, K), np.float16), nonzero_uniform(rng, (K, N), np.float16)
    c = np.full((M, N), 3, np.float16)
    k = kernels.matmul[(tawa.cdiv(M, 64), tawa.cdiv(N, 64))](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=32,
                                                            backend=backend)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.sqrt(K))
    assert not k.simt


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_whose_rows_tma_cannot_address(rng, backend):
    # K and N not multiples of 8 (rows of A, B and C 2 * odd bytes apart) and A a view one element
    # past a base: TMA takes none of them; on the emulator the kernel stays warp-specialized and the
    # threads move those tiles (tile maps).
    M, N, K = int(rng.integers(20, 150)), 8 * int(rng.integers(2, 12)) + 3, 8 * int(rng.integers(2, 12)) + 5
    big = nonzero_uniform(rng, M * K + 1, np.float16)
    a = big[1:].reshape(M, K)
    b = nonzero_uniform(rng, (K, N), np.float16)
    c = np.full((M, N), 3, np.float16)
    k = kernels.matmul[(tawa.cdiv(M, 64), tawa.cdiv(N, 64))](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=32,
                                                            backend=backend)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.sqrt(K))
    assert not k.simt


def test_matmul_reads_a_transposed_operand_through_its_strides(rng):
    M, N, K = int(rng.integers(20, 100)), int(rng.integers(20, 100)), int(rng.integers(10, 70))
    a = nonzero_uniform(rng, (M, K), np.float16)
    bt = nonzero_uniform(rng, (N, K), np.float16)
    b = bt.T  # strides (2, 2K): not contiguous
    c = np.zeros((M, N), np.float32)
    kernels.matmul[(tawa.cdiv(M, 32), tawa.cdiv(N, 32))](a, b, c, M, N, K, K, 1, b.strides[0] // 2, b.strides[1] // 2, N, 1,
                                                        BM=32, BN=32, BK=16)
    ref = a.astype(np.float64) @ bt.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.sqrt(K))


def test_untouched_memory_around_a_view_stays(rng):
    n = 500
    base = nonzero_uniform(rng, n + 40, np.float32)
    before = base.copy()
    out = base[20:20 + n]
    x = nonzero_uniform(rng, n, np.float32)
    kernels.scale[(tawa.cdiv(n, 128),)](x, out, n, 2.0, BLOCK=128)
    np.testing.assert_array_equal(base[:20], before[:20])
    np.testing.assert_array_equal(base[20 + n:], before[20 + n:])
    np.testing.assert_array_equal(out, (x.astype(np.float64) * 2).astype(np.float32))


@pytest.mark.parametrize("bias", [None, 3])
def test_none_and_constexpr_values_select_the_code(rng, bias):
    n = int(rng.integers(10, 400))
    x = rng.integers(-50, 50, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    kernels.pick[(tawa.cdiv(n, 64),)](x, out, n, bias, BLOCK=64)
    np.testing.assert_array_equal(out, x + (bias or 0))


def test_numpy_scalars_are_the_numbers_they_hold(rng):
    n = int(rng.integers(100, 900))
    x = nonzero_uniform(rng, n, np.float32)
    out = np.zeros_like(x)
    kernels.scale[(np.int64(tawa.cdiv(n, 128)),)](x, out, np.int32(n), np.float32(2.5), BLOCK=128)
    np.testing.assert_allclose(out, (x.astype(np.float64) * 2.5).astype(np.float32), rtol=1e-6)
    assert kernels.scale.specialization_key(x, out, np.int64(n), np.float64(1.0), BLOCK=128)[2:4] == (("i32", False), "fp32")


@pytest.mark.parametrize("backend", BACKENDS)
def test_uint32_hash(rng, backend):
    # numpy uint32 arrays and a salt >= 2**31 (a tl.uint32 scalar, as Triton types it): the multiply
    # wraps, >> is logical and % unsigned, as numpy's uint32 arithmetic
    n = int(rng.integers(100, 3000))
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    salt = int(rng.integers(2**31, 2**32))
    out = np.zeros(n, np.uint32)
    k = kernels.mix32[(tawa.cdiv(n, 256),)](x, out, n, salt, BLOCK=256, backend=backend)
    h = ((x.astype(np.uint64) ^ salt) * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    np.testing.assert_array_equal(out, (h % 1000003).astype(np.uint32))
    assert "%salt: u32" in k.asm["tile"] and "ptr<u32>" in k.asm["tile"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_of_pointers(rng, backend):
    # tawa.pointer_array: int64 elements holding the arrays' addresses (as torch's data_ptr() would),
    # with the arrays themselves attached, so that each backend gives the kernel its own addresses.
    sizes = rng.integers(1, 700, size=int(rng.integers(2, 6))).astype(np.int32)
    arrays = [nonzero_uniform(rng, int(n), np.float32) for n in sizes]
    before = [x.copy() for x in arrays]
    ptrs = tawa.pointer_array(arrays)
    assert ptrs.dtype == np.int64 and [int(p) for p in ptrs] == [x.ctypes.data for x in arrays]
    factor = float(rng.uniform(0.5, 2.0))
    kernels.scale_each[(len(arrays),)](ptrs, sizes, factor, BLOCK=128, backend=backend)
    for x, x0 in zip(arrays, before):
        np.testing.assert_array_equal(x, (x0.astype(np.float64) * np.float32(factor)).astype(np.float32))
    assert [int(p) for p in ptrs] == [x.ctypes.data for x in arrays]  # the launch never writes the addresses
    if backend == "emu":  # the emulated kernel checked against the executor on the same inputs
        assert "2 schedule(s)" in kernels.scale_each.check((len(arrays),), ptrs, sizes, factor, BLOCK=128, seeds=2, backend=backend)
        assert [int(p) for p in ptrs] == [x.ctypes.data for x in arrays]


def test_arrays_of_pointers_errors(rng):
    with pytest.raises(tawa.ArgumentError, match="pointer_array: item 1 is a list"):
        tawa.pointer_array([np.ones(4, np.float32), [1.0, 2.0]])
    with pytest.raises(tawa.ArgumentError, match="not contiguous"):
        tawa.pointer_array([np.ones((4, 4), np.float32)[:, 1]])
    # Raw host addresses in a plain int64 array: the executor cannot tell which array they name.
    x = nonzero_uniform(rng, 16, np.float32)
    raw = np.array([x.ctypes.data], np.int64)
    with pytest.raises(tawa.TawaError, match="out-of-bounds load: the address points into no buffer") as e:
        kernels.scale_each[(1,)](raw, np.array([16], np.int32), 2.0, BLOCK=16)
    assert e.value.file.endswith("kernels.py") and e.value.line > 0

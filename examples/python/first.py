"""Your first contact with tawa from Python: a plain Triton-style GEMM, launched Triton's way on
numpy arrays, checked against numpy, its warp-specialized pipeline verified for races, profiled per
warp group, and its CUDA C++ printed. No GPU and no Triton needed.

    pip install .                      # from the tawa checkout (scripts/python-package.sh does it)
    python examples/python/first.py
"""
import numpy as np

import tawa
import tawa.language as tl


@tawa.jit
def matmul(a, b, c, M, N, K, stride_am, stride_bk, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        x = tl.load(a + rm[:, None] * stride_am + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = tl.load(b + kk[:, None] * stride_bk + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def main():
    rng = np.random.default_rng()
    M, N, K = 200, 128, 256
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    grid = lambda meta: (tawa.cdiv(M, meta["BLOCK_M"]), tawa.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    args = (a, b, c, M, N, K, K, N, N)
    blocks = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64)

    # 1. Launch on the CPU executor (backend="emu" runs the emitted CUDA kernel on the CPU emulator).
    k = matmul[grid](*args, **blocks)
    err = np.abs(c.astype(np.float64) - a.astype(np.float64) @ b.astype(np.float64)).max()
    print(f"C = A @ B on the executor: max |error| {err:.2e} against float64 numpy")

    # 2. Verify the warp-specialized pipeline: 8 interleavings of its warp groups, bit for bit.
    print(tawa.check(matmul, grid, *args, seeds=8, **blocks))

    # 3. Profile it per warp group (modelled by tawa's cost model of an H200-class SM).
    with tawa.profile() as prof:
        matmul[grid](*args, **blocks)
    print(prof.launches[0].summary)

    # 4. What tawa made of it: its decisions, the warp-specialized IR, the CUDA C++ for sm_90a.
    print("\n".join(k.explanation.splitlines()[3:6]))
    print("\n".join(line for line in k.ir("ws").splitlines() if "wg.region" in line))
    print("\n".join(k.cuda.splitlines()[:6]), "\n...")


if __name__ == "__main__":
    main()

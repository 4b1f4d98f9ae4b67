import triton
import triton.language as tl


# B's block read masked only where it may run past K, unmasked elsewhere (the form of vLLM's
# prefix-prefill K and V loads): C = A @ B.
@triton.jit
def branch_loads(a, b, c, K, N: tl.constexpr, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, N)
    acc = tl.zeros((BM, N), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        x = tl.load(a + rows[:, None] * K + ks[None, :], mask=ks[None, :] < K, other=0.0)
        if k0 + BK > K:
            y = tl.load(b + ks[:, None] * N + cols[None, :], mask=ks[:, None] < K, other=0.0)
        else:
            y = tl.load(b + ks[:, None] * N + cols[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rows[:, None] * N + cols[None, :], acc)

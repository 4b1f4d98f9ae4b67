import triton
import triton.language as tl


# Rows bounded twice (vLLM's grouped decode masks its query heads by its group's end and by the
# head count): O[h] = Q[h] @ K for h < min((g + 1) * VALID, HEADS), zeros... left unwritten past it.
@triton.jit
def two_bounds(q, k, o, HEADS, VALID, D: tl.constexpr, N: tl.constexpr, BH: tl.constexpr, BK: tl.constexpr):
    g = tl.program_id(0)
    h = g * VALID + tl.arange(0, BH)
    live = (h < (g + 1) * VALID) & (h < HEADS)
    acc = tl.zeros((BH, N), dtype=tl.float32)
    for k0 in range(0, D, BK):
        d = k0 + tl.arange(0, BK)
        x = tl.load(q + h[:, None] * D + d[None, :], mask=live[:, None], other=0.0)
        y = tl.load(k + d[:, None] * N + tl.arange(0, N)[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(o + h[:, None] * N + tl.arange(0, N)[None, :], acc, mask=live[:, None])

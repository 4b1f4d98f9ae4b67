# tl.flip (tests/lit/frontend/flip.test): a 2-D tile flipped along its last dimension (dim None) and
# its first, and a 1-D boolean result flipped.
import triton
import triton.language as tl


@triton.jit
def flips(x, y, z, w, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    v = tl.load(x + r * C + c)
    tl.store(y + r * C + c, tl.flip(v))
    tl.store(z + r * C + c, tl.flip(v, 0))
    tl.store(w + tl.arange(0, C), tl.flip(tl.load(x + tl.arange(0, C)), dim=0) > 0)

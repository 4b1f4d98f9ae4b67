import triton
import triton.language as tl


# An early exit nested in a runtime if (`if live: if flag == 0: return`): each branch runs its statements
# and, unless it returns, the rest of the kernel. Flag 0 returns at once, 1 triples x, 2 triples it and
# then stores x + 1 (the last store, after the if).
@triton.jit
def nested_exit(x, out, flags, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    f = tl.load(flags + pid)
    if pid * BLOCK < n:
        if f == 0:
            return
        tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 3.0, mask=offs < n)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + 1.0, mask=(offs < n) & (f == 2))

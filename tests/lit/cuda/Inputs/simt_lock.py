# Rows accumulated into GROUP partial sums under spin locks, as Triton's layer-norm backward kernel
# accumulates dW: each program takes the lock of its group with tl.atomic_cas in a while loop, reads
# the group's count (the first one stores, the others add), and releases the lock.
import triton
import triton.language as tl


@triton.jit
def locked_rows(x_ptr, partial_ptr, lock_ptr, N, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0)
    g = row % GROUP
    lock = lock_ptr + g
    count = lock_ptr + GROUP + g
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        x += tl.load(partial_ptr + g * N + cols, mask=mask, other=0)
    tl.store(partial_ptr + g * N + cols, x, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)

"""Element-wise addition of two vectors, written as a plain Triton kernel.

The host-side code below the kernel is ordinary PyTorch/Python; tawa reads only the
@triton.jit function and skips everything else in this file.
"""
import functools
import os
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

DEVICE = os.environ.get("DEVICE", "cuda")


@triton.jit
def add_kernel(x_ptr,  # first input
               y_ptr,  # second input
               out_ptr,
               n_elements,
               BLOCK_SIZE: tl.constexpr,
               ):
    """Each program handles one contiguous block of BLOCK_SIZE elements."""
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # The last block may run past the end of the vectors.
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    y = tl.load(y_ptr + offsets, mask=in_bounds)
    tl.store(out_ptr + offsets, x + y, mask=in_bounds)


@dataclass
class LaunchConfig:
    block: int = 1024
    warps: int = 4

    def grid(self, n):
        return (triton.cdiv(n, self.block), )


def log_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print(f"calling {fn.__name__} with {len(args)} args: {[type(a).__name__ for a in args]!r}")
        return fn(*args, **kwargs)
    return wrapper


@log_calls
def add(x: torch.Tensor, y: torch.Tensor, cfg=LaunchConfig()) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]), )
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=cfg.block, num_warps=cfg.warps)
    return out


squares = {i: i * i for i in range(4)}
odd = [v for v in squares.values() if v % 2]
msg = f"{len(odd)} odd squares; nested {'quotes'!s} and {{braces}}"
total = sum(x for x in odd) if odd else 0
try:
    with open(os.devnull) as fh:
        fh.read()
except OSError as exc:  # never happens
    raise RuntimeError("unreachable") from exc
match_me = {"kind": "add"}
print(r"raw \string", b"bytes", '''triple
quoted''', 0x1F, 1_000, 1e-5, 3j if False else None)

if __name__ == "__main__":
    torch.manual_seed(0)
    size = 98432
    a = torch.rand(size, device=DEVICE)
    b = torch.rand(size, device=DEVICE)
    out = add(a, b)
    print(f"max difference: {torch.max(torch.abs(out - (a + b)))}")

"""CPU-side cost of a launch from Python: binding the arguments, the specialization key and the
cache lookup, for tawa's launcher (JITFunction.warmup: everything a launch does before running the
kernel) and, side by side, Triton 3.6's (its binder, compute_cache_key and the cache dictionary,
the steps JITFunction.run takes before the driver launch; no GPU is needed for them).

    ~/.cache/tawa/triton-3.6.0/bin/python bench/python/launch_overhead.py

Prints one row per kernel: medians over 15 batches of 2000 calls, in microseconds per call. With
--gpu-path DRIVER (a build of tests/lit/cuda_runtime/Inputs/fake_libcuda.c), it also times whole launches on
CUDA tensors (python/tests/fake_torch.py) through the GPU path down to cuLaunchKernel, which that
driver only answers: tawa's own CPU cost of a GPU launch, without the driver's.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import tawa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "tests"))
import kernels  # noqa: E402


def per_call_us(fn, calls=2000, batches=15):
    for _ in range(200):
        fn()
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


class HostTensor:
    """What Triton's specialization reads from a tensor: data_ptr() and dtype."""

    def __init__(self, a, dtype):
        self._p = a.__array_interface__["data"][0]
        self.dtype = dtype

    def data_ptr(self):
        return self._p


def triton_launch_prefix(jitfn, args, kwargs):
    """Triton's steps before the driver launch, as a closure (None when Triton is absent)."""
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend
        from triton.runtime.jit import compute_cache_key, create_function_from_signature
    except ImportError:
        return None
    backend = make_backend(GPUTarget("cuda", 90, 32))
    tj = triton.jit(jitfn.fn)
    binder = create_function_from_signature(tj.signature, tj.params, backend)
    kernel_key_cache, kernel_cache = {}, {}
    _, spec, opts = binder(*args, **kwargs)
    kernel_cache[compute_cache_key(kernel_key_cache, spec, opts)] = object()

    def step():
        _, specialization, options = binder(*args, **kwargs)
        return kernel_cache[compute_cache_key(kernel_key_cache, specialization, options)]

    return step


def gpu_path(driver):
    """Whole launches on stand-in CUDA tensors over the recording driver (in a child process: the
    driver is opened once per process)."""
    import subprocess

    script = f"""
import sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
sys.path.insert(0, {os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests")!r})
import fake_torch
fake_torch.install()
import kernels
from launch_overhead import per_call_us
T = fake_torch.Tensor
x = T(1 << 32, "float32", [4096])
a = T(1 << 33, "float16", [128, 128])
mm_args = (a, a, a, 128, 128, 128, 128, 1, 128, 1, 128, 1)
add = per_call_us(lambda: kernels.add[(4,)](x, x, x, 4096, BLOCK=1024))
mm = per_call_us(lambda: kernels.matmul[(2, 2)](*mm_args, BM=64, BN=64, BK=32))
# the same launches through the Python launcher alone (JITFunction._run), without the C++ one in front
add_py = per_call_us(lambda: kernels.add._run((4,), (x, x, x, 4096), {{"BLOCK": 1024}}))
mm_py = per_call_us(lambda: kernels.matmul._run((2, 2), mm_args, {{"BM": 64, "BN": 64, "BK": 32}}))
print(f"{{add:.2f}} {{mm:.2f}} {{add_py:.2f}} {{mm_py:.2f}}")
"""
    env = dict(os.environ, TAWA_LIBCUDA=driver, TAWA_FAKE_CUDA_RUN="1")
    env.pop("TAWA_FAKE_CUDA_LOG", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout.split()
    print(f"whole launch on CUDA tensors, tawa's side (recording driver): add {out[0]} us, matmul (3 TMA maps) {out[1]} us; "
          f"through the Python launcher alone: add {out[2]} us, matmul {out[3]} us")


def main():
    import triton.language as tl

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu-path", metavar="DRIVER", help="a build of tests/lit/cuda_runtime/Inputs/fake_libcuda.c (run with TAWA_FAKE_CUDA_RUN=1)")
    opts = ap.parse_args()

    x = np.random.rand(4096).astype(np.float32)
    a = np.random.rand(128, 128).astype(np.float16)
    cases = [
        ("add (4 args + 1 constexpr)", kernels.add, (x, x, x, 4096), {"BLOCK": 1024},
         (HostTensor(x, tl.float32),) * 3 + (4096,), {"BLOCK": 1024}),
        ("matmul (12 args + 3 constexprs)", kernels.matmul, (a, a, a, 128, 128, 128, 128, 1, 128, 1, 128, 1),
         {"BM": 64, "BN": 64, "BK": 32}, (HostTensor(a, tl.float16),) * 3 + (128, 128, 128, 128, 1, 128, 1, 128, 1),
         {"BM": 64, "BN": 64, "BK": 32}),
    ]
    print(f"{'kernel':34} {'tawa us/launch':>15} {'triton us/launch':>17} {'tawa/triton':>12}")
    for name, k, args, kw, targs, tkw in cases:
        k.warmup(*args, **kw)
        ours = per_call_us(lambda: k.warmup(*args, **kw))
        step = triton_launch_prefix(k, targs, tkw)
        theirs = per_call_us(step) if step else float("nan")
        print(f"{name:34} {ours:15.2f} {theirs:17.2f} {ours / theirs:12.2f}")
    out = np.empty_like(x)
    run = per_call_us(lambda: kernels.add[(4,)](x, x, out, 4096, BLOCK=1024), calls=200, batches=7)
    print(f"whole launch of add on the executor (4 programs of 1024): {run:.1f} us")
    if opts.gpu_path:
        gpu_path(opts.gpu_path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""tawa from Python on the GPU (issue 26): the example kernels launched as a PyTorch user launches
them -- ``kernel[grid](...)`` on CUDA tensors, on torch's current stream -- each checked against a
float64 reference on fresh random data (the output poisoned with NaN first), then timed with CUDA
events beside the very same source compiled by Triton 3.6 and beside cuBLAS, and beside tawa's
command line (`tawa run --backend cuda`, the same spec) when the bundle's bin/tawa.sh is given. Last,
the CPU cost of a launch: a loop of small launches timed on the host, tawa's against Triton's.

    PYTHONPATH=SITE LD_LIBRARY_PATH=BUNDLE/lib-py python3 bench/gpu/python_bench.py --examples BUNDLE/examples \\
        [--tawa BUNDLE/bin/tawa.sh] [--dry-run]

SITE holds the tawa wheel built for the GPU machine's Python (bench/gpu/python-wheel.sh);
BUNDLE/lib-py the shared libraries its extension needs that the machine lacks. --dry-run only
imports tawa and runs a vector add on the CPU executor (no torch, no GPU): the wheel loads. Prints
one table; the status is 1 if a check failed.
"""
import argparse
import importlib.util
import math
import os
import re
import statistics
import subprocess
import sys
import time

FAILED = []


def fail(msg):
    print(f"FAILED: {msg}", flush=True)
    FAILED.append(msg)


def dry_run():
    import numpy as np

    import tawa

    k = tawa.load(os.path.join(ARGS.examples, "vector_add.py"), "add_kernel")
    x = np.random.default_rng().uniform(0.5, 1.5, 3000).astype(np.float32)
    out = np.full_like(x, np.nan)
    k[(3,)](x, x, out, 3000, BLOCK_SIZE=1024)
    if not np.array_equal(out, x + x):
        fail("dry run: the vector add on the executor is wrong")
        return
    print(f"python: tawa {tawa.__version__} from {os.path.dirname(tawa.__file__)} loads and runs on the executor "
          f"(Python {sys.version.split()[0]})")


def triton_module(path):
    spec = importlib.util.spec_from_file_location("bench_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def gpu_ms(torch, fn, reps=20, warmup=3):
    """Median of `reps` CUDA-event-timed launches, after `warmup`."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def host_us(torch, fn, launches=2000, batches=5):
    """CPU time per launch of a loop of launches (the GPU keeps up with small kernels), median of batches."""
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(launches):
            fn()
        out.append((time.perf_counter() - t0) / launches * 1e6)
        torch.cuda.synchronize()
    return statistics.median(out)


def rel_err(torch, got, ref):
    got = got.double()
    if torch.isnan(got).any():
        return math.inf
    return float(torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref))


def cli_ms(path, kernel, spec, grid):
    """tawa run --backend cuda on the same spec: its median (ms), or None."""
    if not ARGS.tawa:
        return None
    cmd = [ARGS.tawa, "run", path, "--kernel", kernel, "--spec", spec, "--grid", grid, "--backend", "cuda", "--check", "none",
           "--reps", "20", "--warmup", "3", "--seed", "1"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=ARGS.step_timeout)
    except subprocess.TimeoutExpired:
        fail(f"{kernel}: tawa run did not answer within {ARGS.step_timeout} s")
        return None
    m = re.search(r"median_ms=([0-9.]+)", p.stdout)
    if p.returncode or not m:
        fail(f"{kernel}: tawa run --backend cuda: {(p.stdout + p.stderr)[-400:]}")
        return None
    return float(m.group(1))


def main():
    import torch

    import tawa

    if not torch.cuda.is_available():
        fail("torch sees no GPU")
        return
    print(f"python: tawa {tawa.__version__}, torch {torch.__version__}, GPU {torch.cuda.get_device_name(0)}", flush=True)
    rows = []  # (what, tawa, triton, reference, cli, unit)
    ex = ARGS.examples

    # Vector add (memory-bound), fp32.
    n = 1 << 26
    add_path = os.path.join(ex, "vector_add.py")
    t_add, tr_add = tawa.load(add_path, "add_kernel"), triton_module(add_path).add_kernel
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, math.nan)
    grid = (triton_cdiv(n, 1024),)
    t_add[grid](x, y, out, n, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    err = rel_err(torch, out, x.double() + y.double())
    if not err < 1e-6:
        fail(f"vector add: ||err||/||ref|| = {err:.3g}")
    gbs = lambda ms: 3 * n * 4 / ms / 1e6  # noqa: E731
    ms_t = gpu_ms(torch, lambda: t_add[grid](x, y, out, n, BLOCK_SIZE=1024))
    ms_tr = gpu_ms(torch, lambda: tr_add[grid](x, y, out, n, BLOCK_SIZE=1024))
    ms_ref = gpu_ms(torch, lambda: torch.add(x, y, out=out))
    ms_cli = cli_ms(add_path, "add_kernel", f"x_ptr:*fp32[{n}], y_ptr:*fp32[{n}], out_ptr:*fp32[{n}], n_elements:i32={n}, BLOCK_SIZE=1024",
                    str(grid[0]))
    rows.append((f"vector add fp32, n = 2^26 (err {err:.1e})", gbs(ms_t), gbs(ms_tr), gbs(ms_ref), ms_cli and gbs(ms_cli), "GB/s"))

    # GEMM fp16 -> fp16 with fp32 accumulation (examples/matmul.py: pointer arithmetic, made TMA by tawa).
    mm_path = os.path.join(ex, "matmul.py")
    t_mm, tr_mm = tawa.load(mm_path, "matmul_kernel"), triton_module(mm_path).matmul_kernel
    for size in (4096, 8192):
        M = N = K = size
        a, b = torch.randn(M, K, device="cuda", dtype=torch.float16), torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.full((M, N), math.nan, device="cuda", dtype=torch.float16)
        meta = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=4)
        grid = (triton_cdiv(M, 128) * triton_cdiv(N, 128),)
        args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
        t_mm[grid](*args, **meta)
        torch.cuda.synchronize()
        err = rel_err(torch, c, a.double() @ b.double())
        if not err < 1e-2:
            fail(f"GEMM {size}: ||err||/||ref|| = {err:.3g}")
        tflops = lambda ms: 2 * M * N * K / ms / 1e9  # noqa: E731
        ms_t = gpu_ms(torch, lambda: t_mm[grid](*args, **meta))
        ms_tr = gpu_ms(torch, lambda: tr_mm[grid](*args, **meta))
        ms_ref = gpu_ms(torch, lambda: torch.matmul(a, b, out=c))
        spec = (f"a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32={M}, N:i32={N}, K:i32={K}, stride_am:i32={K}, "
                f"stride_ak:i32=1, stride_bk:i32={N}, stride_bn:i32=1, stride_cm:i32={N}, stride_cn:i32=1, BLOCK_M=128, "
                f"BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=4")
        ms_cli = cli_ms(mm_path, "matmul_kernel", spec, str(grid[0]))
        rows.append((f"GEMM fp16 {size}^3 (err {err:.1e})", tflops(ms_t), tflops(ms_tr), tflops(ms_ref), ms_cli and tflops(ms_cli),
                     "TFLOP/s"))

    # The CPU cost of a launch: small vector adds, launched back to back.
    xs, ys, outs = (torch.randn(4096, device="cuda") for _ in range(3))
    us_t = host_us(torch, lambda: t_add[(4,)](xs, ys, outs, 4096, BLOCK_SIZE=1024))
    us_tr = host_us(torch, lambda: tr_add[(4,)](xs, ys, outs, 4096, BLOCK_SIZE=1024))
    us_ref = host_us(torch, lambda: torch.add(xs, ys, out=outs))

    print()
    print(f"{'kernel':44} {'unit':8} {'tawa (Python)':>14} {'Triton 3.6':>11} {'torch/cuBLAS':>13} {'tawa CLI':>9} {'tawa/Triton':>12}")
    for what, t, tr, ref, cli, unit in rows:
        print(f"{what:44} {unit:8} {t:14.1f} {tr:11.1f} {ref:13.1f} {cli if cli else float('nan'):9.1f} {t / tr:12.2f}")
    print(f"{'host cost of a launch (add, 4096 elements)':44} {'us':8} {us_t:14.2f} {us_tr:11.2f} {us_ref:13.2f} {'':>9} "
          f"{us_t / us_tr:12.2f}")


def triton_cdiv(a, b):
    return -(-a // b)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", required=True, help="the examples folder (the bundle's, or the source tree's)")
    ap.add_argument("--tawa", help="bin/tawa.sh of the bundle: also time tawa's command line on the same specs")
    ap.add_argument("--step-timeout", type=int, default=120, help="seconds a tawa run may take")
    ap.add_argument("--dry-run", action="store_true", help="import tawa and run a kernel on the CPU executor only")
    ARGS = ap.parse_args()
    try:
        dry_run() if ARGS.dry_run else main()
    except Exception as e:  # noqa: BLE001 - reported as a failed step, with its text
        fail(f"{type(e).__name__}: {e}")
    sys.exit(1 if FAILED else 0)

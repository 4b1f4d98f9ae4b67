"""Launching on CUDA tensors, without a GPU: the launch path from kernel[grid](...) down to
cuLaunchKernel, checked against a recording driver (tests/lit/cuda_runtime/Inputs/fake_libcuda.c with
TAWA_FAKE_CUDA_RUN=1, built here and loaded through $TAWA_LIBCUDA) and a stand-in for torch (fake_torch.py). What is checked is what the launcher asks of
the driver: the kernel is compiled (NVRTC, ptxas: a real cubin) and loaded once, every launch passes
the tensors' own device addresses and torch's current stream, encodes the TMA maps from those
addresses, and never allocates, copies or synchronizes. Whether the kernel then computes the right
numbers on a GPU is for bench/gpu/run.sh on the H200.

Each launch runs in a child process: the driver is opened once per process."""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fake_torch
import kernels
import tawa

HERE = os.path.dirname(os.path.abspath(__file__))

PRELUDE = f"""
import sys
sys.path.insert(0, {HERE!r})
import fake_torch
torch = fake_torch.install()
import kernels
import tawa
T = fake_torch.Tensor
"""

NEVER_PER_LAUNCH = ("alloc", "copy", "sync", "memset", "event")


@pytest.fixture(scope="session")
def recording_driver(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler builds the recording driver (the project's build needs one too)"
    out = tmp_path_factory.mktemp("driver") / "libcuda.so.1"
    source = os.path.join(HERE, "..", "..", "tests", "lit", "cuda_runtime", "Inputs", "fake_libcuda.c")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out), source], check=True)
    return str(out)


def launch(driver, tmp_path, body, params=0):
    """Runs PRELUDE + body in a child process over `driver`; (result, the driver's log lines)."""
    log = tmp_path / "driver.log"
    env = dict(os.environ, TAWA_LIBCUDA=driver, TAWA_FAKE_CUDA_RUN="1", TAWA_FAKE_CUDA_LOG=str(log), TAWA_FAKE_CUDA_PARAMS=str(params))
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    return r, log.read_text().splitlines() if log.exists() else []


def test_vector_add_launches_on_the_tensors_and_torchs_stream(recording_driver, tmp_path, rng):
    x, y, o = (int(a) << 8 for a in rng.integers(1 << 30, 1 << 38, size=3))  # 256-byte aligned, as torch allocates
    n = int(rng.integers(300, 5000))
    r, log = launch(recording_driver, tmp_path, f"""
        x, y, o = T({x}, "float32", [{n}]), T({y}, "float32", [{n}]), T({o}, "float32", [{n}])
        ck = kernels.add[({(n + 255) // 256},)](x, y, o, {n}, BLOCK=256)
        assert ck.last_run_seconds is None
        fake_torch.set_stream(0x7777)
        kernels.add[lambda m: ((m["n"] + m["BLOCK"] - 1) // m["BLOCK"],)](x, y, o, {n}, BLOCK=256)
        print(kernels.add.compiles)
        """, params=4)
    assert r.stdout.split() == ["1"]
    assert [l for l in log if l.split()[0] in ("load", "function")] == ["load", "function add"]
    launches = [l for l in log if l.startswith("launch")]
    blocks = (n + 255) // 256
    args = f"params={x:#x},{y:#x},{o:#x},{n:#x}"
    assert len(launches) == 2
    assert launches[0].startswith(f"launch grid={blocks},1,1 block=128 ") and launches[0].endswith(f"stream=0x5151 {args}")
    assert launches[1].startswith(f"launch grid={blocks},1,1 block=128 ") and launches[1].endswith(f"stream=0x7777 {args}")
    assert not [l for l in log if l.split()[0] in NEVER_PER_LAUNCH], log


def test_seen_launches_follow_the_arrays(recording_driver, tmp_path, rng):
    """The C++ launcher (python/src/launcher.cpp) remembers a launch's kernel by its key, never its
    arrays: host arrays and CUDA tensors of the same dtype and alignment are different launches, and a
    seen launch on other tensors passes their addresses."""
    addrs = [int(a) << 8 for a in rng.integers(1 << 30, 1 << 38, size=6)]
    n = 16 * int(rng.integers(20, 300))
    r, log = launch(recording_driver, tmp_path, f"""
        import numpy as np
        k = tawa.JITFunction(kernels.add.fn)
        h = np.random.default_rng().uniform(0.5, 1.5, {n}).astype(np.float32)
        out = np.zeros({n}, np.float32)
        g = ({(n + 1023) // 1024},)
        k[g](h, h, out, {n}, BLOCK=1024)               # host arrays: the executor
        assert (out == h + h).all()
        a = [T(p, "float32", [{n}]) for p in {addrs}]
        for i in (0, 3, 0):                             # the same key three times: two sets of tensors
            k[g](a[i], a[i + 1], a[i + 2], {n}, BLOCK=1024)
        out[:] = 0
        k[g](h, h, out, {n}, BLOCK=1024)               # host arrays again, after the GPU launches
        assert (out == h + h).all()
        print(k._launcher.size, k.compiles)
        """, params=4)
    assert r.stdout.split() == ["2", "1"]  # two keys (host, GPU); one compile (the same specialization)
    launches = [l for l in log if l.startswith("launch")]
    assert [l.split("params=")[1] for l in launches] == [
        ",".join(f"{v:#x}" for v in addrs[i:i + 3] + [n]) for i in (0, 3, 0)]


def test_tma_gemm_encodes_its_maps_from_the_tensors(recording_driver, tmp_path, rng):
    M, N, K = 128, 128, 64
    a, b, c = (int(v) << 8 for v in rng.integers(1 << 30, 1 << 38, size=3))
    gemm = f"kernels.matmul[(2, 2)](A, B, C, {M}, {N}, {K}, {K}, 1, {N}, 1, {N}, 1, BM=64, BN=64, BK=32)"
    r, log = launch(recording_driver, tmp_path, f"""
        A, B, C = T({a}, "float16", [{M}, {K}]), T({b}, "float16", [{K}, {N}]), T({c}, "float16", [{M}, {N}])
        {gemm}
        {gemm}
        A = T({a + 2}, "float16", [{M}, {K}])  # a view one element in: TMA cannot take its base
        {gemm}
        A = T({a}, "float16", [{M}, {K}])
        {gemm}
        """, params=3)
    maps = [l for l in log if l.startswith("map")]
    # A (M x K), B (K x N), C (M x N): the driver's order is {{cols, rows}}, row strides in bytes.
    first = [f"map base={a:#x} rank=2 type=6 dims={K},{M} strides={2 * K}", f"map base={b:#x} rank=2 type=6 dims={N},{K} strides={2 * N}",
             f"map base={c:#x} rank=2 type=6 dims={N},{M} strides={2 * N}"]
    assert [m.split(" box=")[0] for m in maps[:3]] == first
    assert maps[3:6] == maps[:3], "the second launch encodes the same maps"
    launches = [l for l in log if l.startswith("launch")]
    assert len(launches) == 4
    assert launches[0].startswith("launch grid=2,2,1") and launches[0].endswith(f"stream=0x5151 params={a:#x},{b:#x},{c:#x}")
    # The unaligned A: another kernel (A's tiles moved by threads), loaded once; A has no TMA map.
    loads = [i for i, l in enumerate(log) if l == "load"]
    assert len(loads) == 2, log
    third = log[loads[1]:log.index(launches[2])]
    assert not [m for m in third if m.startswith("map") and f"base={a + 2:#x}" in m], third
    # Aligned again: the first kernel, from memory, with its maps.
    assert [m.split(" box=")[0] for m in maps[-3:]] == first
    assert not [l for l in log if l.split()[0] in NEVER_PER_LAUNCH], log


def test_profile_on_cuda_tensors(recording_driver, tmp_path, rng):
    """tawa.profile() on CUDA tensors: the instrumented kernel (one more parameter, its event buffer:
    allocated, zeroed, read back after the launch) on torch's stream, waited for, the summary timed
    by GPU 0's clock; a SIMT kernel in the block launches as usual, listed unprofiled. (This driver
    runs nothing, so the kernel records no events: the summary says so.)"""
    a, b, c = (int(v) << 8 for v in rng.integers(1 << 30, 1 << 38, size=3))
    r, log = launch(recording_driver, tmp_path, f"""
        A, B, C = T({a}, "float16", [128, 64]), T({b}, "float16", [64, 128]), T({c}, "float16", [128, 128])
        args = (A, B, C, 128, 128, 64, 64, 1, 128, 1, 128, 1)
        src = kernels.matmul.warmup(*args, BM=64, BN=64, BK=32).cuda
        assert src[src.index("__global__"):].split("{{")[0].count("const ") == 9  # the 10th: the event buffer
        fake_torch.set_stream(0x4242)
        x = T(1 << 40, "float32", [64])
        with tawa.profile() as prof:
            kernels.matmul[(2, 2)](*args, BM=64, BN=64, BK=32)
            kernels.add[(1,)](x, x, x, 64, BLOCK=64)
        first, second = prof.launches
        assert first.profiled and not second.profiled, prof.launches
        print(first.summary)
        """, params="10,4")
    assert "times measured by GPU 0's clock64" in r.stdout and "0 cycles) measured" in r.stdout, r.stdout
    assert "events: 0 recorded, 0 lost" in r.stdout and "advice (from the measured summary)" in r.stdout, r.stdout
    allocs = [l for l in log if l.startswith("alloc")]
    assert len(allocs) == 1, log  # the event buffer, nothing else
    buffer = allocs[0].split("-> ")[1]
    at = log.index(allocs[0])
    matmul = next(i for i, l in enumerate(log) if l.startswith("launch grid=2,2,1"))
    assert log[at + 1] == "memset" and "sync" in log[at + 2:matmul]
    assert log[matmul].endswith(f",{buffer}") and "stream=0x4242 " in log[matmul], log[matmul]
    assert log[matmul + 1:matmul + 3] == ["sync", "copy"], log[matmul:]
    add = [l for l in log[matmul + 1:] if l.startswith("launch")]
    assert len(add) == 1 and add[0].startswith("launch grid=1,1,1") and "stream=0x4242 " in add[0]


def test_no_driver_is_a_located_error(tmp_path):
    env = dict(os.environ, TAWA_LIBCUDA=str(tmp_path / "absent.so"))
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent("""
        x = T(1 << 20, "float32", [64])
        try:
            kernels.add[(1,)](x, x, x, 64, BLOCK=64)
        except tawa.TawaError as e:
            print(e)
        """)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "error: no CUDA driver (libcuda.so.1 not found) (TAWA_LIBCUDA=" in r.stdout, r.stdout


def test_cuda_tensor_errors():
    T = fake_torch.Tensor  # (errors found before the driver or torch.cuda is asked anything)
    x = T(1 << 20, "float32", [64])
    host = np.ones(64, np.float32)
    cases = [
        (lambda: kernels.add[(1,)](x, host, x, 64, BLOCK=64), "argument 'x' is a CUDA tensor but 'y' is a host array"),
        (lambda: kernels.add[(1,)](x, x, x, 64, BLOCK=64, backend="exec"), "backend 'exec' cannot read"),
        (lambda: kernels.add[(1,)](host, host, host, 64, BLOCK=64, backend="cuda"),
         "backend 'cuda' launches on CUDA tensors, and these arrays are host arrays"),
        (lambda: kernels.add[(1,)](T(1 << 20, "float32", [64], index=1), x, x, 64, BLOCK=64),
         "tensor argument 'x' lives on 'cuda:1'"),
        (lambda: kernels.add.check((1,), T(1 << 20, "float32", [64], stride=[2]), x, x, 32, BLOCK=64),
         "check copies CUDA tensors to the host, and 'x' is a strided view"),
    ]
    for call, message in cases:
        with pytest.raises(tawa.TawaError) as e:
            call()
        assert message in str(e.value)
        assert str(e.value).startswith(kernels.add.path + ":"), str(e.value)  # located at the kernel
    with pytest.raises(tawa.TawaError, match="item 0 is a CUDA tensor"):
        tawa.pointer_array([x])


def test_autotune_times_each_configuration_on_the_gpu_and_remembers(recording_driver, tmp_path):
    """tawa.autotune on CUDA tensors: each configuration launched GPU_WARMUP + GPU_REPS times on
    copies of the tensors, timed with torch's CUDA events (here: the times the stand-in reports, 3, 1
    and 2 ms), the fastest kept under the GPU's name in the record; a second process reuses it and
    launches only the chosen configuration, on the caller's tensors."""
    record = str(tmp_path / "tune.db")
    x, y, o = 1 << 36, 2 << 36, 3 << 36
    body = f"""
        at = sys.modules["tawa.autotune"]  # the module (tawa.autotune is the decorator)
        configs = [tawa.Config({{"BLOCK": 128}}), tawa.Config({{"BLOCK": 256}}), tawa.Config({{"BLOCK": 512}})]
        tuned = tawa.autotune(configs=configs, key=["n"], record={record!r})(kernels.add)
        fake_torch.elapsed.extend([3.0] * at.GPU_REPS + [1.0] * at.GPU_REPS + [2.0] * at.GPU_REPS)
        x, y, o = T({x}, "float32", [4096]), T({y}, "float32", [4096]), T({o}, "float32", [4096])
        tuned[lambda m: (tawa.cdiv(4096, m["BLOCK"]),)](x, y, o, 4096)
        print(tuned.best[("4096",)], tuned.measured, len(fake_torch.elapsed))
        """
    r, log = launch(recording_driver, tmp_path, body, params=3)
    assert r.stdout.split() == ["Config({'BLOCK':", "256})", "3", "0"], r.stdout
    launches = [l for l in log if l.startswith("launch")]
    at = sys.modules["tawa.autotune"]
    assert len(launches) == 3 * (at.GPU_WARMUP + at.GPU_REPS) + 1
    trials, final = launches[:-1], launches[-1]
    assert all(f"{x:#x}" not in l for l in trials), "trials run on copies"
    assert final.startswith("launch grid=16,1,1 ") and final.endswith(f"params={x:#x},{y:#x},{o:#x}")
    # A new process: the record answers, nothing is timed, one launch.
    (tmp_path / "driver.log").unlink()
    r2, log2 = launch(recording_driver, tmp_path, body, params=3)
    assert r2.stdout.split()[:3] == ["Config({'BLOCK':", "256})", "0"], r2.stdout
    assert [l for l in log2 if l.startswith("launch")] == [final]


def test_check_runs_on_host_copies_of_cuda_tensors():
    """tawa.check on CUDA tensors: the pipeline runs on the CPU on their host copies (.cpu(); the
    stand-in's copies hold fresh random values), nothing is launched on the GPU."""
    T = fake_torch.Tensor
    M, N, K = 128, 128, 64
    a, b, c = T(1 << 36, "float16", [M, K]), T(2 << 36, "float16", [K, N]), T(3 << 36, "float16", [M, N])
    summary = tawa.check(kernels.matmul, (2, 2), a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=32, seeds=3)
    assert "agrees bit for bit with the kernel as written under 3 interleaving(s)" in summary, summary
    summary = tawa.check(kernels.matmul, (2, 2), a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=32, seeds=2, backend="emu")
    assert "2 schedule(s) of the emitted CUDA kernel agree bit for bit" in summary, summary

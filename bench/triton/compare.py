#!/usr/bin/env python3
"""Triton 3.6 and tawa compiling the same Triton kernels for sm_90a, on a machine without a GPU.

Run by bench/triton/compare.sh (read that first). For each case below, the unmodified kernel in
examples/ is compiled twice from the same source and the same launch spec:
  - by Triton (triton.compile for GPUTarget("cuda", 90), specialized as its launcher would on the GPU:
    pointers and integers that are multiples of 16 carry tt.divisibility = 16, integers equal to 1
    become constants), to PTX and a cubin;
  - by tawa (`tawa compile --target sm_90a --emit ptx` and `--emit cubin --resource-usage`, each with a
    cold cubin cache).
It prints one table: registers per thread, threads, shared memory, spills, and what the PTX contains
(wgmma, TMA copies, cp.async copies, mbarrier waits, setmaxnreg: warp specialization), plus each
compiler's cold compile time. Static figures only; nothing here says how fast either kernel runs.
Writes LOG/results.json and LOG/compare.md when --log is given.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

ATTN = ("Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], Out:*fp16[R,D], sm_scale:fp32=0.08838834764831845, Z:i32=4, H:i32=16, "
        "R=262144, D=128, N_CTX=4096, HEAD_DIM=128, BLOCK_M={bm}, BLOCK_N={bn}, CAUSAL={causal}")
GEMM = ("a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, "
        "BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K=64")

# (label, example file, kernel, spec, tawa flags, Triton num_warps, Triton num_stages). Triton gets the
# warps tawa's kernel has as consumers (4 per warp group) and the stages of its aref depth.
CASES = [
    ("GEMM 128x128x64 (matmul_desc.py)", "examples/matmul_desc.py", "matmul_desc_kernel",
     GEMM.format(bm=128, bn=128), ["--consumers", "2", "--depth", "4"], 8, 4),
    ("GEMM 128x256x64 (matmul_desc.py)", "examples/matmul_desc.py", "matmul_desc_kernel",
     GEMM.format(bm=128, bn=256), ["--consumers", "2", "--depth", "3"], 8, 3),
    ("GEMM 128x256x64 persistent (matmul_persistent_desc.py)", "examples/matmul_persistent_desc.py",
     "matmul_persistent_desc_kernel", GEMM.format(bm=128, bn=256) + ", GROUP_M=8, NUM_SMS=132",
     ["--consumers", "2", "--depth", "3"], 8, 3),
    ("attention, 128x128 blocks (attention.py)", "examples/attention.py", "attn_fwd",
     ATTN.format(bm=128, bn=128, causal="False"), ["--consumers", "2", "--depth", "2"], 8, 2),
    ("attention causal, 128x64 blocks (attention.py)", "examples/attention.py", "attn_fwd",
     ATTN.format(bm=128, bn=64, causal="True"), ["--consumers", "2", "--depth", "2"], 8, 2),
    ("attention, 64x128 blocks, 1 consumer (attention.py)", "examples/attention.py", "attn_fwd",
     ATTN.format(bm=64, bn=128, causal="False"), ["--consumers", "1", "--depth", "2"], 4, 2),
    ("GEMM 128x256x64, pointer form (matmul.py)", "examples/matmul.py", "matmul_kernel",
     GEMM.format(bm=128, bn=256).replace("K:i32=8192, ", "K:i32=8192, stride_am:i32=8192, stride_ak:i32=1, stride_bk:i32=8192, "
                                         "stride_bn:i32=1, stride_cm:i32=8192, stride_cn:i32=1, ") + ", GROUP_M=8",
     ["--consumers", "2", "--depth", "3"], 8, 3),
    ("GEMM 128x256x64 persistent, pointer form (matmul_persistent.py)", "examples/matmul_persistent.py",
     "matmul_persistent_kernel", GEMM.format(bm=128, bn=256) + ", GROUP_M=8, NUM_SMS=132", ["--consumers", "2", "--depth", "3"], 8, 3),
    ("softmax (softmax.py)", "examples/softmax.py", "softmax_kernel",
     "out_ptr:*fp32[R,C], in_ptr:*fp32[R,C], in_row_stride:i32=1024, out_row_stride:i32=1024, n_rows:i32=4096, "
     "n_cols:i32=1000, R=4096, C=1024, BLOCK_SIZE=1024, NUM_STAGES=2", [], 4, 2),
    ("layer norm (layer_norm.py)", "examples/layer_norm.py", "layer_norm_fwd",
     "X:*fp32[R,C], Y:*fp32[R,C], W:*fp32[C], B:*fp32[C], Mean:*fp32[R], Rstd:*fp32[R], row_stride:i32=4096, N:i32=4096, "
     "eps:fp32=1e-5, R=4096, C=4096, BLOCK_SIZE=1024", [], 4, 2),
    ("vector add (vector_add.py)", "examples/vector_add.py", "add_kernel",
     "x_ptr:*fp32[n], y_ptr:*fp32[n], out_ptr:*fp32[n], n_elements:i32=1048576, n=1048576, BLOCK_SIZE=1024", [], 4, 2),
]

# Kernels of tawa's tests that are Triton kernels too: --triton-only checks that Triton compiles them
# (they are not in the comparison table).
TEST_KERNELS = [
    ("libdevice.asin, the form of Triton's tutorial 07", "tests/lit/frontend/Inputs/libdevice.py", "asin_kernel",
     "src:*fp32[n], dst:*fp32[n], count:i32=4096, n=4096, BLOCK=1024", 4, 2),
    ("GELU with tl.erf and libdevice.tanh", "tests/lit/frontend/Inputs/libdevice.py", "gelu_kernel",
     "x_ptr:*fp16[n], exact_ptr:*fp16[n], approx_ptr:*fp16[n], n:i32=4096, BLOCK=1024", 4, 2),
    ("every libdevice function tawa has", "tests/lit/frontend/Inputs/libdevice.py", "every_fn",
     "x_ptr:*fp32[n], out_ptr:*fp32[o], n:i32=4096, o=118784, BLOCK=1024", 4, 2),
    ("persistent GEMM, B given N x K and used as b.T", "tests/lit/ws/Inputs/transposed_b.py", "bt_persistent",
     "a_ptr:*fp16[M,K], b_ptr:*fp16[N,K], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, BLOCK_M=128, BLOCK_N=256, "
     "BLOCK_K=64, NUM_SMS=132", 8, 3),
    ("GEMM, B given N x K and used as tl.trans(b)", "tests/lit/ws/Inputs/transposed_b.py", "bt_trans",
     "a_ptr:*fp16[M,K], b_ptr:*fp16[N,K], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, BLOCK_M=128, BLOCK_N=128, "
     "BLOCK_K=64, PERMUTE=False", 4, 3),
    ("GEMM with A given K x M and used as tl.trans(a)", "tests/lit/ws/Inputs/transposed_a.py", "at_gemm",
     "a_ptr:*fp16[K,M], b_ptr:*fp16[K,N], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, BLOCK_M=128, BLOCK_N=128, "
     "BLOCK_K=64, B_TRANSPOSED=False", 4, 3),
    ("GEMM with A given K x M and B N x K, both transposed", "tests/lit/ws/Inputs/transposed_a.py", "at_gemm",
     "a_ptr:*fp16[K,M], b_ptr:*fp16[N,K], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, BLOCK_M=128, BLOCK_N=128, "
     "BLOCK_K=64, B_TRANSPOSED=True", 4, 3),
    ("GEMM with a bias per column", "tests/lit/cuda/Inputs/gemm_bias.py", "gemm_bias",
     "a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], bias_ptr:*fp16[N], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, "
     "BLOCK_M=128, BLOCK_N=128, BLOCK_K=64", 4, 3),
    ("GEMM with a scale per row", "tests/lit/cuda/Inputs/gemm_bias.py", "gemm_row_scale",
     "a_ptr:*fp16[M,K], b_ptr:*fp16[K,N], scale_ptr:*fp32[M], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, "
     "BLOCK_M=128, BLOCK_N=128, BLOCK_K=64", 4, 3),
    ("GEMM, B given N x K and used as tl.permute(b, (1, 0))", "tests/lit/ws/Inputs/transposed_b.py", "bt_trans",
     "a_ptr:*fp16[M,K], b_ptr:*fp16[N,K], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, BLOCK_M=128, BLOCK_N=128, "
     "BLOCK_K=64, PERMUTE=True", 4, 3),
]


class _TorchStandIn(types.ModuleType):
    """Stands in for torch where it is not installed: examples/vector_add.py's host code and
    bench/gpu/triton_kernels.py import it, and compiling their kernels does not need it."""
    def __getattr__(self, name):
        return type(name, (), {})


def ensure_torch():
    if "torch" in sys.modules:
        return
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.modules["torch"] = _TorchStandIn("torch")


def split_top(text):
    """Split a spec at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def triton_signature(fn, spec):
    """Triton's signature, constants and divisibility hints for fn from a tawa launch spec, as Triton's
    launcher would specialize them on the GPU (torch allocations are 16-byte aligned)."""
    entries = {}
    for part in split_top(spec):
        head = part.split("=", 1)[0]
        if ":" in head:  # name:type[shape] or name:type=value
            name, rest = part.split(":", 1)
            ty, _, value = rest.partition("=")
            entries[name.strip()] = (ty.split("[")[0].strip(), value.strip() or None)
        else:  # NAME=value: a constexpr or a shape symbol
            name, value = part.split("=", 1)
            entries[name.strip()] = ("constexpr", value.strip())
    sig, consts, attrs = {}, {}, {}
    for i, arg in enumerate(fn.arg_names):
        if arg not in entries:
            raise SystemExit(f"compare.py: the spec has no entry for {fn.__name__}'s argument {arg}")
        ty, value = entries[arg]
        if ty == "constexpr":
            sig[arg] = "constexpr"
            consts[(i,)] = {"True": True, "False": False}.get(value, None)
            if consts[(i,)] is None:
                consts[(i,)] = float(value) if "." in value else int(value)
        elif ty.startswith("*"):
            sig[arg] = ty
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif ty in ("i32", "i64") and value is not None and int(value) == 1:
            sig[arg] = "constexpr"
            consts[(i,)] = 1
        else:
            sig[arg] = ty
            if ty in ("i32", "i64") and value is not None and int(value) % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
    return sig, consts, attrs


def ptx_counts(ptx):
    return {
        "wgmma": len(re.findall(r"wgmma\.mma_async", ptx)),
        "tma": len(re.findall(r"cp\.async\.bulk\.tensor", ptx)),
        "cp.async": len(re.findall(r"cp\.async\.c[ag]\.", ptx)),
        "mbarrier waits": len(re.findall(r"mbarrier\.(?:try_)?wait", ptx)),
        "setmaxnreg": len(re.findall(r"setmaxnreg", ptx)),
    }


def triton_tool(name):
    """A tool shipped in Triton's wheel (the CUDA toolkit here has no cuobjdump)."""
    import triton
    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)


def cubin_usage(cubin_path):
    """Registers, stack, shared memory of the cubin's kernels (cuobjdump --dump-resource-usage)."""
    out = subprocess.run([triton_tool("cuobjdump"), "--dump-resource-usage", cubin_path],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", out)
    if not m:
        raise SystemExit(f"compare.py: no resource usage in cuobjdump's answer for {cubin_path}:\n{out}")
    return dict(regs=int(m.group(1)), stack=int(m.group(2)), static_smem=int(m.group(3)), local=int(m.group(4)))


def load_module(path):
    import importlib.util
    ensure_torch()
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_kernel(path, name):
    return getattr(load_module(path), name)


def triton_compile(fn, spec, warps, stages, work):
    import triton
    from triton.backends.compiler import GPUTarget
    sig, consts, attrs = triton_signature(fn, spec)
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    t0 = time.perf_counter()
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
    seconds = time.perf_counter() - t0
    cubin = os.path.join(work, f"triton_{fn.__name__}.cubin")
    with open(cubin, "wb") as f:
        f.write(k.asm["cubin"])
    use = cubin_usage(cubin)
    return dict(seconds=seconds, regs=use["regs"], threads=32 * warps, smem=k.metadata.shared + use["static_smem"],
                spills=use["local"], stack=use["stack"], **ptx_counts(k.asm["ptx"]))


def tawa_compile(tawa, path, kernel, spec, flags, work, tag):
    cache = os.path.join(work, f"cache_{tag}")
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    base = [tawa, "compile", path, "--kernel", kernel, "--spec", spec, "--target", "sm_90a"] + flags
    ptx_path = os.path.join(work, f"tawa_{tag}.ptx")
    r = subprocess.run(base + ["--emit", "ptx", "-o", ptx_path], capture_output=True, text=True, env=env)
    if r.returncode:
        raise SystemExit(f"compare.py: tawa failed on {path}:\n{r.stdout}{r.stderr}")
    shutil.rmtree(cache, ignore_errors=True)
    t0 = time.perf_counter()
    r = subprocess.run(base + ["--emit", "cubin", "-o", os.path.join(work, f"tawa_{tag}.cubin"), "--resource-usage"],
                       capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"compare.py: tawa failed on {path}:\n{r.stdout}{r.stderr}")
    m = re.search(r"(\d+) registers, (\d+) B stack, (\d+) B spill stores, (\d+) B spill loads, (\d+) B static \+ "
                  r"(\d+) B dynamic shared memory, (\d+) threads", r.stdout)
    if not m:
        raise SystemExit(f"compare.py: no resource line in tawa's answer:\n{r.stdout}")
    g = [int(x) for x in m.groups()]
    with open(ptx_path) as f:
        counts = ptx_counts(f.read())
    return dict(seconds=seconds, regs=g[0], stack=g[1], spills=g[2] + g[3], smem=g[4] + g[5], threads=g[6], **counts)


def bench_kernels():
    """The Triton kernels bench/gpu/run.sh times tawa against (bench/gpu/triton_kernels.py), compiled as
    its launcher specializes them at M = N = K = 8192 (strides of 1 become constants): that they compile
    with Triton 3.6, and what they become. The module imports torch, which compiling does not need; a
    stand-in module is used where torch is absent."""
    ensure_torch()
    tk = load_module(os.path.join(ROOT, "bench", "gpu", "triton_kernels.py"))
    gemm = ("a_ptr:*{t}[M,K], b_ptr:*{t}[K,N], c_ptr:*fp16[M,N], M:i32=8192, N:i32=8192, K:i32=8192, s_am:i32=8192, "
            "s_ak:i32=1, s_bk:i32={sbk}, s_bn:i32={sbn}, s_cm:i32=8192, s_cn:i32=1, BM={bm}, BN={bn}, BK={bk}, GROUP_M=8")
    cases = []
    for bm, bn, bk, warps, stages in tk._GEMM_CONFIGS[2]:
        cases.append((f"_gemm fp16 {bm}x{bn}x{bk}", tk._gemm, gemm.format(t="fp16", sbk=8192, sbn=1, bm=bm, bn=bn, bk=bk), warps, stages))
    for bm, bn, bk, warps, stages in tk._GEMM_CONFIGS[1]:
        cases.append((f"_gemm fp8e4nv {bm}x{bn}x{bk} (B K-major)", tk._gemm,
                      gemm.format(t="fp8e4nv", sbk=1, sbn=8192, bm=bm, bn=bn, bk=bk), warps, stages))
    for causal in (False, True):
        cases.append((f"_attn_fwd 128x64 blocks, causal={causal}", tk._attn_fwd,
                      "Q:*fp16[R,D], K:*fp16[R,D], V:*fp16[R,D], O:*fp16[R,D], sm_scale:fp32=0.088, s_z:i32=8388608, "
                      f"s_h:i32=524288, s_n:i32=128, H:i32=16, N_CTX:i32=4096, HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL={causal}",
                      8, 3))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tawa", default=os.path.join(ROOT, "build", "tawa"), help="the tawa binary (default: build/tawa)")
    ap.add_argument("--repeats", type=int, default=3, help="cold compiles per case and compiler; the median is shown")
    ap.add_argument("--log", help="folder for results.json and compare.md")
    ap.add_argument("--triton-only", action="store_true",
                    help="only check that Triton compiles every case and the benchmark's kernels for sm_90a (a test)")
    args = ap.parse_args()
    import triton
    if not triton.__version__.startswith("3.6"):
        raise SystemExit(f"compare.py: needs Triton 3.6 (the GPU machine's); found {triton.__version__}")
    rows = []
    work = tempfile.mkdtemp(prefix="tawa-triton-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    if args.triton_only:
        covered = {rel for _, rel, *_ in CASES}
        examples = {os.path.join("examples", f) for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py")}
        if examples - covered:
            raise SystemExit("compare.py: no case for " + ", ".join(sorted(examples - covered)) + " (add one to CASES)")
        cases = [(label, load_kernel(os.path.join(ROOT, rel), kernel), spec, warps, stages, rel)
                 for label, rel, kernel, spec, _, warps, stages in CASES]
        cases += [(label, load_kernel(os.path.join(ROOT, rel), kernel), spec, warps, stages, rel)
                  for label, rel, kernel, spec, warps, stages in TEST_KERNELS]
        cases += [(label, fn, spec, warps, stages, "bench/gpu/triton_kernels.py") for label, fn, spec, warps, stages in bench_kernels()]
        for label, fn, spec, warps, stages, rel in cases:
            x = triton_compile(fn, spec, warps, stages, work)
            print(f"ok: Triton {triton.__version__} compiles {rel}:{fn.__name__} ({label}) for sm_90a: {x['wgmma']} wgmma, "
                  f"{x['tma']} TMA, {x['cp.async']} cp.async, {x['spills']} B spilled", flush=True)
        shutil.rmtree(work, ignore_errors=True)
        return
    for i, (label, rel, kernel, spec, flags, warps, stages) in enumerate(CASES):
        path = os.path.join(ROOT, rel)
        fn = load_kernel(path, kernel)
        tr = [triton_compile(fn, spec, warps, stages, work) for _ in range(args.repeats)]
        tw = [tawa_compile(args.tawa, path, kernel, spec, flags, work, str(i)) for _ in range(args.repeats)]
        t, w = dict(tr[0]), dict(tw[0])
        t["seconds"] = statistics.median(x["seconds"] for x in tr)
        w["seconds"] = statistics.median(x["seconds"] for x in tw)
        rows.append(dict(case=label, file=rel, kernel=kernel, spec=spec, tawa_flags=flags,
                         triton_options=dict(num_warps=warps, num_stages=stages), triton=t, tawa=w))
        print(f"{label}: triton {t['regs']} regs x {t['threads']} threads, {t['smem']} B smem, {t['seconds']:.2f} s; "
              f"tawa {w['regs']} regs x {w['threads']} threads, {w['smem']} B smem, {w['seconds']:.2f} s", flush=True)

    head = ("| kernel | compiler | registers x threads | shared memory | spills | wgmma | TMA copies | cp.async | "
            "mbarrier waits | setmaxnreg | cold compile (median of %d) |" % args.repeats)
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        for who in ("triton", "tawa"):
            x = r[who]
            name = "Triton " + triton.__version__ + f" (num_warps {r['triton_options']['num_warps']}, num_stages " \
                f"{r['triton_options']['num_stages']})" if who == "triton" else "tawa " + " ".join(r["tawa_flags"])
            lines.append(f"| {r['case'] if who == 'triton' else ''} | {name} | {x['regs']} x {x['threads']} | "
                         f"{x['smem'] // 1024} KiB | {x['spills']} B | {x['wgmma']} | {x['tma']} | {x['cp.async']} | "
                         f"{x['mbarrier waits']} | {x['setmaxnreg']} | {x['seconds']:.2f} s |")
    def ptxas_version(path):
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"release ([0-9.]+)", out)
        return m.group(1) if m else "?"
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    lines.append("")
    lines.append(f"ptxas: Triton's own (CUDA {ptxas_version(triton_tool('ptxas'))}), tawa's from {cuda} (CUDA "
                 f"{ptxas_version(os.path.join(cuda, 'bin', 'ptxas'))}). tawa's registers are the kernel's launch figure; "
                 "setmaxnreg then moves them from the producer warp group to the consumers.")
    lines += ["", "The Triton kernels bench/gpu/run.sh compares with (bench/gpu/triton_kernels.py), as Triton 3.6 compiles them "
              "for sm_90a at M = N = K = 8192 and sequence 4096:", "",
              "| kernel | num_warps, num_stages | registers x threads | shared memory | spills | wgmma | TMA copies | cp.async | "
              "mbarrier waits | setmaxnreg |", "|" + "---|" * 10]
    for label, fn, spec, warps, stages in bench_kernels():
        x = triton_compile(fn, spec, warps, stages, work)
        rows.append(dict(case="bench/gpu/triton_kernels.py " + label, spec=spec, triton_options=dict(num_warps=warps, num_stages=stages),
                         triton=x))
        lines.append(f"| {label} | {warps}, {stages} | {x['regs']} x {x['threads']} | {x['smem'] // 1024} KiB | {x['spills']} B | "
                     f"{x['wgmma']} | {x['tma']} | {x['cp.async']} | {x['mbarrier waits']} | {x['setmaxnreg']} |")
    shutil.rmtree(work, ignore_errors=True)
    table = "\n".join(lines)
    print()
    print(table)
    if args.log:
        os.makedirs(args.log, exist_ok=True)
        with open(os.path.join(args.log, "results.json"), "w") as f:
            json.dump(dict(triton=triton.__version__, rows=rows), f, indent=1)
        with open(os.path.join(args.log, "compare.md"), "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()

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
    ("softmax (softmax.py)", "examples/softmax.py", "softmax_kernel",
     "out_ptr:*fp32[R,C], in_ptr:*fp32[R,C], in_row_stride:i32=1024, out_row_stride:i32=1024, n_rows:i32=4096, "
     "n_cols:i32=1000, R=4096, C=1024, BLOCK_SIZE=1024, NUM_STAGES=2", [], 4, 2),
]


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


def load_kernel(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tawa", default=os.path.join(ROOT, "build", "tawa"), help="the tawa binary (default: build/tawa)")
    ap.add_argument("--repeats", type=int, default=3, help="cold compiles per case and compiler; the median is shown")
    ap.add_argument("--log", help="folder for results.json and compare.md")
    args = ap.parse_args()
    import triton
    if not triton.__version__.startswith("3.6"):
        raise SystemExit(f"compare.py: needs Triton 3.6 (the GPU machine's); found {triton.__version__}")
    rows = []
    work = tempfile.mkdtemp(prefix="tawa-triton-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton-cache")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
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
    shutil.rmtree(work, ignore_errors=True)

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

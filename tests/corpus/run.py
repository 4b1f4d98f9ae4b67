"""Runs the real-kernel corpus (cases.py) through tawa: each kernel, unmodified from its package,
on fresh random inputs (written here as .npy and loaded), on the CPU executor against its numpy
reference where references.py has one; on the CPU emulator of the sm_90a CUDA kernel (checked by
tawa against the executor); and compiled for sm_90a to a cubin (noting the tl.dot kernels that take
the SIMT fallback, and ptxas's spills at the default flags). Prints one line per kernel and a
summary, and with --markdown a table. Exit status 1 when a kernel fails on the executor, differs
from its reference, or when any backend crashes (a located error, exit status 1, is a result).

Usage: run.py --tawa BUILD/tawa [--cache DIR] [--only REGEX] [--backends exec,emu,sm_90a]
              [--markdown FILE] [--jobs N]"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from cases import CASES  # noqa: E402
from references import REFERENCES  # noqa: E402

NP = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64, "i8": np.int8, "i16": np.int16, "i32": np.int32,
      "i64": np.int64, "i1": np.bool_, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
TOL = {np.float16: (2e-3, 2e-3), np.float32: (2e-5, 2e-6), np.float64: (1e-9, 1e-12)}


def split_top(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[(<" and 1 or 0
        depth -= ch in "])>" and 1 or 0
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_spec(spec):
    """(buffers: name -> (dtype, dims, range or None), values: name -> python value)"""
    buffers, values, strides = {}, {}, {}
    for e in split_top(spec):
        m = re.fullmatch(r"(\w+)\s*:\s*\*\s*(\w+)\s*\[([^\]]*)\](?:\s+strides\(([^)]*)\))?(?:\s+in\s+(\S+)\.\.(\S+))?", e)
        if m:
            rng = (float(m.group(5)), float(m.group(6))) if m.group(5) else None
            buffers[m.group(1)] = (m.group(2), [d.strip() for d in m.group(3).split(",")], rng)
            if m.group(4):
                strides[m.group(1)] = [s.strip() for s in m.group(4).split(",")]
            continue
        m = re.fullmatch(r"(\w+)\s*(?::\s*\w+)?\s*=\s*(.+)", e)
        if not m:
            raise ValueError(f"cannot read spec entry {e!r}")
        v = m.group(2).strip()
        for conv in (int, float):
            try:
                v = conv(v)
                break
            except ValueError:
                pass
        values[m.group(1)] = {"True": True, "False": False, "None": None}.get(v, v) if isinstance(v, str) else v
    for b, names in strides.items():  # `strides(s0, s1, ...)`: the buffer's row-major strides
        dims = [int(x) if x.isdigit() else int(values[x]) for x in buffers[b][1]]
        for k, s in enumerate(names):
            if s != "_":
                values[s] = int(np.prod(dims[k + 1:], dtype=np.int64))
    return buffers, values


def make_inputs(case, rng, d):
    buffers, values = parse_spec(case.spec)
    arrays = {}
    for name, (dt, dims, r) in buffers.items():
        if dt not in NP:  # a dtype tawa does not take: it says so when the spec is read
            continue
        shape = [int(x) if x.isdigit() else int(values[x]) for x in dims]
        t = NP[dt]
        if name in case.inputs:
            a = np.array(case.inputs[name], dtype=t).reshape(shape)
        elif np.issubdtype(t, np.floating):
            lo, hi = r or (-1.0, 1.0)
            a = rng.uniform(lo, hi, shape).astype(t)
        elif t is np.bool_:
            a = rng.integers(0, 2, shape).astype(t)
        else:  # unsigned: the whole range of the type (packed bits use every one)
            lo, hi = r or ((0, int(np.iinfo(t).max) + 1) if np.issubdtype(t, np.unsignedinteger) else (-64, 65))
            a = rng.integers(int(lo), int(hi), shape, dtype=np.uint64 if t is np.uint64 else np.int64).astype(t)
        if name in case.adjust:
            a = case.adjust[name](a).astype(t)
        np.save(os.path.join(d, name + ".npy"), a)
        arrays[name] = a
    return arrays, values


def tawa(args, cmd, timeout=600):
    p = subprocess.run([args.tawa] + cmd, capture_output=True, text=True, timeout=timeout)
    out = p.stdout + p.stderr
    err = next((ln for ln in out.splitlines() if ": error: " in ln), out.strip().splitlines()[-1] if out.strip() else "")
    return p.returncode, err, out


def short(err, root):
    return err.replace(root + "/", "").strip()


def run_case(args, case):
    root = os.path.join(args.cache, case.root)
    path = os.path.join(root, case.file)
    res = {"case": case, "exec": "", "ref": "", "emu": "", "sm_90a": "", "spills": None, "crash": False}
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.default_rng()
        inputs, values = make_inputs(case, rng, d)
        loads = [f"{n}={os.path.join(d, n + '.npy')}" for n in inputs]
        base = [path, "--kernel", case.kernel, "--spec", case.spec, "-I", root]
        if "exec" in args.backends:
            rc, err, _ = tawa(args, ["run"] + base + ["--grid", case.grid, "--backend", "exec", "--load"] + loads +
                              ["--save", os.path.join(d, "out")])
            res["crash"] |= rc not in (0, 1)
            res["exec"] = "ok" if rc == 0 else "FAIL: " + short(err, root)
            if rc == 1 and case.expect and case.expect in err:
                res["exec"] = "expected error: " + short(err, root)
            ref = REFERENCES.get(f"{case.file}:{case.kernel}") or REFERENCES.get(case.kernel)
            if rc == 0 and ref:
                exp = ref({k: v.astype(np.float64) if np.issubdtype(v.dtype, np.floating) else v.astype(np.int64)
                           for k, v in inputs.items()}, values)
                bad = []
                for name, want in exp.items():
                    got = np.load(os.path.join(d, "out", name + ".npy"))
                    rtol, atol = TOL.get(got.dtype.type, (0, 0))
                    want = np.asarray(want, dtype=np.float64).reshape(got.shape)
                    g = got.astype(np.float64)
                    scale = max(1.0, float(np.abs(want).max()))
                    if not np.all(np.abs(g - want) <= rtol * np.abs(want) + atol * scale):
                        k = int(np.argmax(np.abs(g - want)))
                        bad.append(f"{name}[{k}] {g.flat[k]:.6g} vs {want.flat[k]:.6g}")
                res["ref"] = "right" if not bad else "WRONG: " + "; ".join(bad)
            elif rc == 0:
                res["ref"] = "no reference"
        if "emu" in args.backends:
            rc, err, out = tawa(args, ["run"] + base + ["--grid", case.grid, "--backend", "emu", "--load"] + loads)
            res["crash"] |= rc not in (0, 1)
            res["emu"] = "ok" if rc == 0 and "check=ok" in out else "error: " + short(err, root)
        if "sm_90a" in args.backends:
            rc, err, out = tawa(args, ["compile"] + base + ["--target", "sm_90a", "--emit", "cubin", "-o", os.path.join(d, "k.cubin"),
                                       "--resource-usage"])
            res["crash"] |= rc not in (0, 1)
            # A tl.dot kernel the warp-specialized path cannot take compiles through the SIMT fallback
            # (no TMA or wgmma, a warning on stderr): right, and slower than the warp-specialized form.
            fallback = rc == 0 and "is not warp-specialized (" in out
            res["sm_90a"] = ("ok (SIMT fallback)" if fallback else "ok") if rc == 0 else "error: " + short(err, root)
            # ptxas's spills (stores + loads, bytes) at the default flags: what "ptxas clean" measures.
            spills = re.findall(r"(\d+) B spill stores, (\d+) B spill loads", out)
            if rc == 0 and spills:
                res["spills"] = sum(int(a) + int(b) for a, b in spills)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tawa", required=True)
    ap.add_argument("--cache", default=os.environ.get("TAWA_CORPUS_CACHE", os.path.expanduser("~/.cache/tawa/corpus")))
    ap.add_argument("--only", default="")
    ap.add_argument("--backends", default="exec,emu,sm_90a")
    ap.add_argument("--markdown")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    args.backends = args.backends.split(",")
    cases = [c for c in CASES if re.search(args.only, f"{c.root}/{c.file}:{c.kernel}")]
    missing = sorted({c.root for c in cases if not os.path.isdir(os.path.join(args.cache, c.root))})
    if missing:
        sys.exit(f"run: {', '.join(missing)} not in {args.cache}: run tests/corpus/fetch.py first")
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        results = list(ex.map(lambda c: run_case(args, c), cases))
    rows = []
    for r in results:
        c = r["case"]
        spill = "" if r["spills"] is None else f" ({r['spills']} B of spills)" if r["spills"] else ""
        print(f"{c.root.split('-')[0]:7} {c.kernel:45} exec: {r['exec'] or '-':4} {r['ref'] or '':14} emu: {r['emu'][:70] or '-'} | "
              f"sm_90a: {r['sm_90a'][:70] or '-'}{spill}")
        rows.append(f"| {c.root} | `{c.file}`:`{c.kernel}` | {r['exec']} | {r['ref']} | {r['emu'] or '-'} | {r['sm_90a'] or '-'} | "
                    f"{'-' if r['spills'] is None else r['spills']} |")
    n = len(results)
    ran = sum(r["exec"] == "ok" for r in results)
    expected = sum(r["exec"].startswith("expected error") for r in results)
    right = sum(r["ref"] == "right" for r in results)
    wrong = sum(r["ref"].startswith("WRONG") for r in results)
    emu = sum(r["emu"] == "ok" for r in results)
    sm90 = sum(r["sm_90a"].startswith("ok") for r in results)
    fallback = sum(r["sm_90a"] == "ok (SIMT fallback)" for r in results)
    crashes = sum(r["crash"] for r in results)
    spilling = sum(bool(r["spills"]) for r in results)
    summary = (f"corpus: {n} kernels; exec ran {ran}/{n} ({expected} expected error(s)), right against a numpy reference {right} (wrong {wrong}, "
               f"{ran - right - wrong} without a reference); emu {emu}/{n}; sm_90a {sm90}/{n} ({fallback} through the SIMT fallback, "
               f"{spilling} with spills); crashes {crashes}")
    print(summary)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| package | kernel | exec | reference | emu | sm_90a | ptxas spills (B) |\n|---|---|---|---|---|---|---|\n")
            f.write("\n".join(rows) + "\n\n" + summary + "\n")
    sys.exit(1 if ran + expected < n or wrong or crashes else 0)


if __name__ == "__main__":
    main()

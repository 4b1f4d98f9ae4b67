#!/usr/bin/env python3
"""Mutation testing: does the test suite catch small, plausible bugs?

The mutants live beside the code they mutate, in a `mutants.toml` in each source folder:

    [[mutant]]
    id = "lower-aref.phase-parity"        # unique
    file = "LowerAref.cpp"                 # relative to the mutants.toml's folder
    from = '''text that occurs exactly once in the file'''
    to = '''its replacement'''
    what = "the bug, in words"
    tests = ["lit:ws/lower_aref", "unit:WsCheck.*"]
    equivalent = "..."                     # optional: why a survivor changes no behaviour

`tests` names the tests expected to catch it: "unit:FILTER" is a GoogleTest filter of
build/tests/tawa_unit_tests, "lit:REGEX" selects lit tests by path. Each mutant is applied alone to a
scratch copy of the repository (the files git tracks, as they are in the working tree), which is
rebuilt incrementally; its tests run, and it is *caught* when one of them fails, *survived* when all
pass, *invalid* when it does not compile or its text is not found exactly once. Before the mutants,
the same tests run on the unmutated copy: a selector that fails there is reported and its mutants
are not judged.

Not part of the README's test command (a run takes about an hour on 2 cores). Run it before
resolving an issue that touches a pass or the emitter, and put the table in BENCHMARKS.md:

    scripts/mutate.py                       # every mutant; table on stdout
    scripts/mutate.py --only 'lower-aref'   # ids matching a regex
    scripts/mutate.py --list                # the mutants and their tests, nothing runs
    scripts/mutate.py --markdown out.md     # also write the table as Markdown
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LIT = "/usr/lib/llvm-14/build/utils/lit/lit.py"


def load_mutants():
    mutants, seen = [], set()
    for path in sorted(glob.glob(os.path.join(ROOT, "src", "**", "mutants.toml"), recursive=True)):
        folder = os.path.dirname(path)
        with open(path, "rb") as f:
            try:
                data = tomllib.load(f)
            except tomllib.TOMLDecodeError as e:
                sys.exit(f"{os.path.relpath(path, ROOT)}: error: {e}")
        for k, m in enumerate(data.get("mutant", [])):
            where = f"{os.path.relpath(path, ROOT)}: mutant #{k + 1}"
            for key in ("id", "file", "from", "to", "what", "tests"):
                if key not in m:
                    sys.exit(f"{where}: error: missing '{key}'")
            if m["id"] in seen:
                sys.exit(f"{where}: error: id '{m['id']}' is used twice")
            if m["from"] == m["to"]:
                sys.exit(f"{where}: error: 'from' and 'to' are the same")
            for t in m["tests"]:
                if not (t.startswith("unit:") or t.startswith("lit:")):
                    sys.exit(f"{where}: error: test selector '{t}' is neither unit:FILTER nor lit:REGEX")
            seen.add(m["id"])
            m["path"] = os.path.relpath(os.path.join(folder, m["file"]), ROOT)
            mutants.append(m)
    return mutants


def run(cmd, cwd, timeout=None, env=None):
    """Runs a shell command in its own process group; on a timeout the whole group is killed (a test a
    mutant made spin must not outlive its verdict: it would hold the binary the next mutant relinks)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, time.time() - t0
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return 124, (out or "") + f"\n(timed out after {timeout} s)", time.time() - t0


def sync_scratch(scratch):
    """Copies the tracked files (working-tree contents) into scratch, leaving its build folder."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, stdout=subprocess.PIPE, check=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        rel = f.decode()
        src, dst = os.path.join(ROOT, rel), os.path.join(scratch, rel)
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(src, "rb") as a:
            data = a.read()
        if os.path.exists(dst):
            with open(dst, "rb") as b:
                if b.read() == data:
                    continue
        with open(dst, "wb") as b:
            b.write(data)


def run_tests(scratch, selectors, timeout):
    """Runs each selector; returns (all passed, the first failure's name and output tail)."""
    build = os.path.join(scratch, "build")
    for sel in selectors:
        kind, arg = sel.split(":", 1)
        if kind == "unit":
            cmd = f"{build}/tests/tawa_unit_tests --gtest_filter='{arg}'"
        else:
            cmd = f"python3 {LIT} -q {build}/tests/lit --filter '{arg}'"
        rc, out, _ = run(cmd, scratch, timeout)
        if kind == "unit" and rc == 0 and re.search(r"Running 0 tests", out):
            return False, sel, "the filter selects no test"
        if rc != 0:
            return False, sel, out[-1500:]
    return True, None, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="run the mutants whose id matches this regex")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--scratch", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tawa-mutate"),
                    help="the scratch copy (kept between runs, so rebuilds are incremental)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="build jobs")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per build or test selector")
    ap.add_argument("--markdown", help="write the results table as Markdown to this file")
    args = ap.parse_args()

    mutants = load_mutants()
    if args.only:
        mutants = [m for m in mutants if re.search(args.only, m["id"])]
    if args.list:
        for m in mutants:
            print(f"{m['id']:<44} {m['path']}: {m['what']}  [{', '.join(m['tests'])}]")
        print(f"{len(mutants)} mutant(s)")
        return 0
    if not mutants:
        sys.exit("no mutants selected")

    scratch = os.path.abspath(args.scratch)
    os.makedirs(scratch, exist_ok=True)
    print(f"scratch copy: {scratch}", flush=True)
    sync_scratch(scratch)
    build = os.path.join(scratch, "build")
    cfg = (f"cmake -S {scratch} -B {build} -G Ninja -DCMAKE_BUILD_TYPE=Release -DTAWA_BENCH=OFF > /dev/null")
    rc, out, _ = run(cfg, scratch)
    if rc != 0:
        sys.exit("configure failed:\n" + out[-3000:])
    make = f"cmake --build {build} -j {args.jobs}"
    rc, out, secs = run(make, scratch, None)
    if rc != 0:
        sys.exit("the unmutated copy does not build:\n" + out[-3000:])
    print(f"built the unmutated copy in {secs:.0f} s", flush=True)

    # The selectors must pass before anything is mutated.
    broken = {}
    for sel in sorted({t for m in mutants for t in m["tests"]}):
        ok, _, tail = run_tests(scratch, [sel], args.timeout)
        if not ok:
            broken[sel] = tail
            print(f"baseline: '{sel}' fails on the unmutated copy:\n{tail}", flush=True)
    print(f"baseline: {len({t for m in mutants for t in m['tests']}) - len(broken)} test selector(s) pass", flush=True)

    results = []
    for m in mutants:
        path = os.path.join(scratch, m["path"])
        with open(path) as f:
            original = f.read()
        n = original.count(m["from"])
        row = {"id": m["id"], "path": m["path"], "what": m["what"], "tests": m["tests"],
               "equivalent": m.get("equivalent", ""), "detail": "", "secs": 0.0}
        if n != 1:
            row["result"] = "invalid"
            row["detail"] = f"its text occurs {n} times in {m['path']}"
        elif any(t in broken for t in m["tests"]):
            row["result"] = "not judged"
            row["detail"] = "a test selector fails on the unmutated copy"
        else:
            t0 = time.time()
            try:
                with open(path, "w") as f:
                    f.write(original.replace(m["from"], m["to"]))
                rc, out, _ = run(make, scratch, args.timeout)
                if rc != 0:
                    row["result"] = "invalid"
                    row["detail"] = "does not compile: " + " ".join(l for l in out.splitlines() if "error" in l)[:300]
                else:
                    ok, which, tail = run_tests(scratch, m["tests"], args.timeout)
                    row["result"] = "survived" if ok else "caught"
                    if not ok:
                        row["detail"] = f"by {which}"
            finally:
                with open(path, "w") as f:
                    f.write(original)
            row["secs"] = time.time() - t0
        results.append(row)
        extra = f" ({row['detail']})" if row["detail"] else ""
        print(f"{row['result']:<10} {m['id']}: {m['what']}{extra} [{row['secs']:.0f} s]", flush=True)
        if args.markdown:
            write_markdown(args.markdown, results, len(mutants))
    run(make, scratch, None)  # leave the scratch build unmutated
    head = summary(results, len(mutants))
    print(head)
    if args.markdown:
        write_markdown(args.markdown, results, len(mutants))
    return 0 if all(r["result"] in ("caught", "survived") for r in results) else 1


def summary(results, total):
    counts = {k: sum(r["result"] == k for r in results) for k in ("caught", "survived", "invalid", "not judged")}
    return (f"{len(results)} of {total} mutant(s) run: {counts['caught']} caught, {counts['survived']} survived"
            f" ({sum(1 for r in results if r['result'] == 'survived' and r['equivalent'])} of them equivalent)"
            f", {counts['invalid']} invalid, {counts['not judged']} not judged")


def write_markdown(path, results, total):
    """The table so far (rewritten after each mutant, so an interrupted run keeps what it measured)."""
    with open(path, "w") as f:
        f.write(summary(results, total) + "\n\n| mutant | file | the bug | expected catchers | result |\n|---|---|---|---|---|\n")
        for r in results:
            res = r["result"] + (f" {r['detail']}" if r["detail"] else "")
            if r["result"] == "survived" and r["equivalent"]:
                res += f" (equivalent: {r['equivalent']})"
            what = r["what"].replace("|", "\\|")
            f.write(f"| {r['id']} | {r['path']} | {what} | {', '.join(r['tests'])} | {res} |\n")


if __name__ == "__main__":
    sys.exit(main())

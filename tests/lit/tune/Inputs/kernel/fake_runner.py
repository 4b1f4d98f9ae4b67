#!/usr/bin/env python3
"""Stands in for `tawa run FILE --kernel K --spec SPEC --grid G --backend cuda --check none --depth D ...`
when a test tunes a kernel without a GPU ($TAWA_SELF points here). It checks the command line the tuner
built (every tile-size placeholder filled in, the WS options given), appends the configuration to
$FAKE_RUN_LOG, and prints the two lines `tawa run` ends with, with a median_ms made up from the
configuration: a smooth function with one best point (BLOCK_M=128, BLOCK_N=256, BLOCK_K=64 where the
kernel has them; consumers=2, depth=3, mma_depth=1, persistent, group_m=8), so the search has something
to find. With FAKE_RUN_FAIL set it fails as a crashing kernel would (exit 1, an error on stderr).
`compile ... --target sm_90a --emit cubin` (a compile worker's job) is checked and logged to
$FAKE_COMPILE_LOG."""
import math
import os
import re
import sys

args = sys.argv[1:]
opt = {args[i]: args[i + 1] for i in range(1, len(args) - 1) if args[i].startswith("--")}
if args[:1] == ["compile"]:
    # The compile alone, as a compile worker runs it (tawa tune --compile-workers): logged, no output.
    if opt.get("--target") != "sm_90a" or opt.get("--emit") != "cubin" or "{" in opt.get("--spec", "{"):
        sys.exit("fake_runner: unexpected compile command line: %r" % args)
    if os.environ.get("FAKE_COMPILE_LOG"):
        with open(os.environ["FAKE_COMPILE_LOG"], "a") as f:
            f.write(opt["--spec"] + " depth=" + opt.get("--depth", "?") + "\n")
    sys.exit(0)
if args[:1] != ["run"] or opt.get("--backend") != "cuda" or opt.get("--check") != "none" or "--spec" not in opt:
    sys.exit("fake_runner: unexpected command line: %r" % args)
if "--grid" not in opt:  # as tawa run: a launch needs its grid
    sys.exit("<grid>:1:1: error: tawa run needs --grid")
if "{" in opt["--spec"] or "{" in opt["--grid"]:
    sys.exit("fake_runner: a placeholder was left in: %r" % args)
tiles = {k: int(v) for k, v in re.findall(r"\b((?:BLOCK|TILE)_[A-Z0-9_]+)=(\d+)", opt["--spec"])}
if not tiles:
    sys.exit("fake_runner: no tile sizes in the spec: %r" % opt["--spec"])
ws = {k: int(opt[k]) for k in ("--depth", "--mma-depth", "--consumers", "--persistent", "--group-m")}
if os.environ.get("FAKE_RUN_LOG"):
    with open(os.environ["FAKE_RUN_LOG"], "a") as f:
        f.write(" ".join("%s=%d" % kv for kv in sorted(tiles.items())) + " " +
                " ".join("%s=%d" % (k[2:].replace("-", "_"), v) for k, v in ws.items()) + " grid='%s'\n" % opt["--grid"])
if os.environ.get("FAKE_RUN_FAIL"):
    sys.exit("error: CUDA_ERROR_ILLEGAL_ADDRESS (made up by the fake runner)")
best = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}
ms = 0.5 * (1 + sum(0.3 * abs(math.log2(v / best.get(k, 64))) for k, v in tiles.items())
            + 0.2 * abs(ws["--consumers"] - 2) + 0.1 * abs(ws["--depth"] - 3) + 0.05 * abs(ws["--mma-depth"] - 1)
            + 0.1 * (ws["--persistent"] == 0) + 0.02 * abs(math.log2((ws["--group-m"] + 1) / 9)))
print("time: median %.4f ms (made up by the fake runner)" % ms)
print("result: kernel=%s backend=cuda check=none median_ms=%.6f tflops=n/a gbps=0.000" % (opt["--kernel"], ms))

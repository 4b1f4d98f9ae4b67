"""The skeleton suite's parameters change how fast a program runs, never what it computes.

For every program of bench/skeletons/suite.json: run it with its SPACE.json default and with a second
configuration that differs from it in every parameter but at most one (which a constraint may tie),
chosen by hand below to be legal and far from the default: other grains, partitioners, thread
counts, methods, layouts, and compare the checksums
they print. Floating-point reductions may add in another order: a relative difference up to 1e-4 is
allowed (the checksum is printed with 6 significant digits). Prints `NAME: checksum C (2 runs agree)`
per program and exits 1 at the first disagreement, a missing program or a second configuration that
does not name every parameter.

  skeleton_checksums.py SUITE_DIR BIN_DIR
"""
import json
import os
import subprocess
import sys

OTHER = {
    "matmul": {"ti": 16, "tj": 128, "tk": 32, "grain": 2, "part": "simple", "threads": 3},
    "stencil": {"rows": 64, "cols": 256, "part": "static", "threads": 3, "order": "ji", "update": "copy"},
    "mandelbrot": {"rows": 32, "cols": 96, "part": "simple", "threads": 3, "split": "cols"},
    "histogram": {"grain": 65536, "part": "static", "threads": 3, "method": "atomic", "ways": 1, "pad": 8},
    "nbody": {"grain": 64, "tile": 512, "part": "affinity", "threads": 3, "layout": "aos", "unroll": 4},
    "blackscholes": {"grain": 4096, "batch": 17, "part": "simple", "threads": 3, "layout": "aos"},
    "prefixsum": {"grain": 65536, "part": "static", "threads": 3, "algo": "twopass", "unroll": 4},
    "kmeans": {"grain": 4096, "block": 16, "part": "static", "threads": 3, "reduce": "deterministic"},
    "convpipe": {"tokens": 7, "rows": 32, "tile": 256, "threads": 3, "stages": "fused"},
    "wordfreq": {"tokens": 9, "chunk": 65536, "threads": 3, "merge": "concurrent", "local": "sort"},
    "sort": {"algo": "quick", "cutoff": 16384, "merge_cutoff": 4096, "threads": 3},
    "spmv": {"grain": 1024, "part": "static", "threads": 3, "schedule": "nnz"},
    "julia": {"rows": 32, "cols": 96, "part": "simple", "threads": 3, "split": "cols"},
    "dgemm": {"ti": 8, "tj": 256, "tk": 16, "grain": 2, "part": "static", "threads": 3},
    "coulomb": {"grain": 32, "tile": 640, "part": "affinity", "threads": 3, "layout": "aos", "unroll": 8},
    "lumahist": {"grain": 4096, "part": "static", "threads": 3, "method": "combinable", "ways": 7, "pad": 1},
    "palette": {"grain": 4096, "block": 16, "part": "static", "threads": 3, "reduce": "deterministic"},
    "bigrams": {"tokens": 9, "chunk": 65536, "threads": 3, "merge": "concurrent", "local": "sort"},
}


def checksum(command, config):
    argv = command.replace("{bin}", BIN)
    for k, v in config.items():
        argv = argv.replace("{" + k + "}", str(v))
    out = subprocess.run(argv.split(), capture_output=True, text=True, timeout=60)
    lines = [l for l in out.stdout.splitlines() if l.startswith("checksum: ")]
    if out.returncode != 0 or len(lines) != 1:
        sys.exit(f"error: `{argv}` exited {out.returncode} with {len(lines)} checksum lines: {out.stderr.strip()}")
    return float(lines[0].split()[1])


if __name__ == "__main__":
    SUITE, BIN = sys.argv[1], sys.argv[2]
    suite = json.load(open(os.path.join(SUITE, "suite.json")))
    for prog in suite["programs"]:
        name = prog["name"]
        space = json.load(open(os.path.join(SUITE, name, "SPACE.json")))
        params = sorted(k for k in space if k not in ("description", "default", "constraints"))
        other = OTHER.get(name)
        if other is None or sorted(other) != params:
            sys.exit(f"error: {name}: the second configuration must name exactly {params}")
        if sum(other[k] == space["default"][k] for k in params) > 1:
            sys.exit(f"error: {name}: the second configuration must differ from the default in all parameters but one")
        a, b = checksum(prog["command"], space["default"]), checksum(prog["command"], other)
        if abs(a - b) > 1e-4 * max(abs(a), abs(b), 1e-30):
            sys.exit(f"error: {name}: checksum {a:.6g} with the default, {b:.6g} with {json.dumps(other)}")
        print(f"{name}: checksum {a:.6g} (2 runs agree)")

#!/usr/bin/env python3
"""Evaluations per second of `tawa tune` on its engines: in the tuner's process, on 1 and 2 local
worker processes (--workers), and on 1 and 2 Ray actors (--ray, a local cluster this script starts
with the venv's `ray start` and stops at the end).

Two workloads:
  replay  a recorded GPU landscape (../shared/landscapes/bh-convolution-A100): every evaluation is a
          table lookup, so the figures are the engine's own cost. Random search, budgets 100 and 300
          on a fresh record; the cost per evaluation is (t300 - t100) / 200, which leaves out the
          start-up (Ray's connection, the actors' import of tawa).
  onetbb  bench/skeletons matmul (N=768, each run ~0.1-1 s, 2 cores here): random search, budget 12,
          --reps 1 --warmups 0; against running the same 12 command lines one after another in this
          script (the tuner's overhead per evaluation = (tune - direct) / 12). With two workers the
          two runs share the machine's two cores, so their figures are not those of one at a time.
Each figure is the median of --reps runs. Prints a Markdown table.

    python3 bench/tune/workers.py --tawa build/tawa --python ~/.cache/tawa/triton-3.6.0/bin/python
"""

import argparse
import json
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    t = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(map(shlex.quote, cmd)), p.stdout[-2000:], p.stderr[-2000:]))
    return t, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tawa", default=os.path.join(ROOT, "build", "tawa"))
    ap.add_argument("--python", required=True, help="a Python with tawa and Ray (the test environment)")
    ap.add_argument("--landscape", default=os.path.join(ROOT, "..", "shared", "landscapes", "bh-convolution-A100"))
    ap.add_argument("--skeletons", default=os.path.join(ROOT, "build", "bench", "skeletons"))
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    ray_cli = os.path.join(os.path.dirname(args.python), "ray")
    env = dict(os.environ, TAWA_PYTHON=args.python, RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO="0")
    out = subprocess.run([ray_cli, "start", "--head", "--num-cpus", "2", "--num-gpus", "2", "--disable-usage-stats",
                          "--include-dashboard=false"], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("ray start failed:\n" + out.stdout + out.stderr)
    engines = [("in-process", []), ("1 local worker", ["--workers", "1"]), ("2 local workers", ["--workers", "2"]),
               ("Ray, 1 actor", ["--ray", "auto", "--ray-workers", "1"]), ("Ray, 2 actors", ["--ray", "auto", "--ray-workers", "2"])]
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            def tune(extra, budget, base):
                times = []
                for r in range(args.reps):
                    db = os.path.join(tmp, "b%d-%d.db" % (budget, r))
                    for suffix in ("", "-wal", "-shm"):
                        if os.path.exists(db + suffix):
                            os.remove(db + suffix)
                    t, _ = run([args.tawa, "tune", *base, "--method", "random", "--budget", str(budget), "--finalists", "0",
                                "--db", db, *extra], env)
                    times.append(t)
                return statistics.median(times), db

            replay = ["--replay", os.path.join(args.landscape, "data.csv"), "--space", os.path.join(args.landscape, "SPACE.json")]
            skel = os.path.join(ROOT, "bench", "skeletons", "matmul")
            command = (os.path.join(args.skeletons, "skel_matmul") +
                       " --ti {ti} --tj {tj} --tk {tk} --grain {grain} --part {part} --threads {threads}")
            tbb = ["--program", command, "--space", os.path.join(skel, "SPACE.json"), "--reps", "1", "--warmups", "0"]
            direct = None
            for name, extra in engines:
                t100, _ = tune(extra, 100, replay)
                t300, _ = tune(extra, 300, replay)
                per = (t300 - t100) / 200
                t12, db = tune(extra, 12, tbb)
                if direct is None:
                    # The same twelve command lines, one after another, as the first engine ran them.
                    with sqlite3.connect(db) as c:
                        configs = [json.loads(k) for (k,) in c.execute("select config from configurations order by id")]
                    lines = [command.format(**cfg) for cfg in configs]
                    ds = []
                    for _ in range(args.reps):
                        t0 = time.perf_counter()
                        for line in lines:
                            subprocess.run(line, shell=True, capture_output=True, check=True)
                        ds.append(time.perf_counter() - t0)
                    direct = statistics.median(ds)
                rows.append((name, 300 / t300, per * 1e3, 12 / t12, (t12 - direct) / 12 * 1e3))
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env)
    print("| engine | replay: evaluations/s (budget 300, whole run) | replay: ms per evaluation (t300 - t100) / 200 "
          "| oneTBB matmul: evaluations/s (budget 12) | oneTBB: overhead ms per evaluation vs direct |")
    print("|---|---|---|---|---|")
    for name, eps, per, teps, over in rows:
        print("| %s | %.0f | %.3f | %.2f | %+.0f |" % (name, eps, per, teps, over))
    print("\ndirect: the 12 oneTBB command lines one after another took %.2f s (%.2f evaluations/s)" % (direct, 12 / direct))


if __name__ == "__main__":
    main()

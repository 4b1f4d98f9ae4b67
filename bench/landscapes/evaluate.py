#!/usr/bin/python3
"""Leave one device out: MaSiF on recorded GPU tuning landscapes, side by side with other searches.

For each of the landscapes in ../shared/landscapes (a kernel brute-forced on one GPU), the target:
  1. a fresh record (SQLite) gets every *other* landscape imported with `tawa tune --import` (the same
     kernel on the other five GPUs, and the other kernel on all six), each under its kernel's name
     ("convolution", "dedispersion"), its device (--device GPU, with the facts in devices/GPU.json)
     and the kernel's static features; never the target's own measurements;
  2. `tawa tune --replay <target>/data.csv --space SPACE.constrained.json --name KERNEL --device GPU`
     searches the target with each tawa method and --seeds seeds (--fresh: every evaluation measured
     by the search itself, so seeds are independent):
       masif                 the default search, neighbours from the record;
       masif-other-vendor    neighbours only from the other vendor's GPUs (NVIDIA guiding AMD and back);
       masif-same-vendor     neighbours only from the same vendor's GPUs (do the others' records hurt?);
       masif-empty           an empty record (no neighbours: MaSiF's documented default search);
       copy                  "copy the neighbours' best": every neighbour's best configuration, then
                             every neighbour's second best, ...: transfer alone, no search;
       random, greedy        tawa's baselines.
     Each search runs once at the largest budget; the best after k evaluations is read from its
     progress lines. That equals a search run with budget k because these searches do not look at the
     budget when the figures are exact (a replay without --replay-noise: no confirmations); the script
     checks this for one seed of each method at every budget and stops if it does not hold.
     masif-empty does look at it (its first phase is sized by the budget): it runs once per budget.
  3. Kernel Tuner's strategies and Optuna's TPE come from bench/landscapes/baselines.py (its CSV,
     --baselines), run on the same data in Kernel Tuner's simulation mode.

Reported: the mean fraction of the optimum (optimum / best found; 0 when nothing valid was found) over
the landscapes at each budget, with the standard error over seeds (the spread of the per-seed means
over the landscapes), and per landscape. --benchmarks FILE replaces the part of FILE between the
markers `<!-- landscapes:begin -->` and `<!-- landscapes:end -->` with the tables.

  bench/landscapes/evaluate.py --tawa build/tawa --seeds 30 --baselines bench/landscapes/results/baselines.csv \\
      --out bench/landscapes/results/tawa.csv --benchmarks BENCHMARKS.md
  bench/landscapes/evaluate.py --tawa build/tawa --seeds 3 --only convolution-A100 --methods masif,copy
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUDGETS = [10, 20, 25, 30, 50, 100]
TAWA_METHODS = ["masif", "masif-other-vendor", "masif-same-vendor", "masif-empty", "copy", "random", "greedy"]
NVIDIA = {"A100", "A4000", "A6000"}
# MaSiF without neighbours sizes its first phase by the budget (up to 20): run once per budget.
PER_BUDGET = {"masif-empty"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tawa", default=os.path.join(ROOT, "build", "tawa"))
    p.add_argument("--landscapes", default=os.path.join(os.path.dirname(ROOT), "shared", "landscapes"))
    p.add_argument("--seeds", type=int, default=30)
    p.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    p.add_argument("--methods", default=",".join(TAWA_METHODS))
    p.add_argument("--only", default="", help="a regular expression over landscape names")
    p.add_argument("--work", default="/tmp/tawa-landscapes")
    p.add_argument("--out", default="", help="CSV of every search (landscape,method,budget,seed,best_ms,fraction)")
    p.add_argument("--baselines", default="", help="baselines.py's CSV, merged into the tables")
    p.add_argument("--benchmarks", default="", help="write the tables into this file between the landscapes markers")
    p.add_argument("--no-check", action="store_true", help="skip the budget-prefix check")
    return p.parse_args()


def landscapes(a):
    with open(os.path.join(a.landscapes, "landscapes.json")) as f:
        manifest = json.load(f)
    out = []
    for l in manifest:
        kernel = l["kernel_family"]
        data = os.path.join(a.landscapes, l["name"])
        with open(os.path.join(data, "data.csv")) as f:
            best = min(float(r["time_ms"]) for r in csv.DictReader(f))
        out.append({"name": l["name"], "kernel": kernel, "gpu": l["gpu"], "dir": data, "optimum_ms": best,
                    "features": os.path.join(a.landscapes, "features", kernel + ".json")})
    return out


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("evaluate: failed (%d): %s\n%s%s" % (r.returncode, " ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def device_args(gpu):
    return ["--device", gpu, "--device-facts", os.path.join(HERE, "devices", gpu + ".json")]


def remove_record(path):
    """A SQLite record and its write-ahead files."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def make_record(a, target, all_landscapes):
    path = os.path.join(a.work, "record-%s.db" % target["name"])
    remove_record(path)
    for l in all_landscapes:
        if l["name"] == target["name"]:
            continue
        run([a.tawa, "tune", "--import", os.path.join(l["dir"], "data.csv"), "--import", os.path.join(l["dir"], "failures.csv"),
             "--space", os.path.join(l["dir"], "SPACE.constrained.json"), "--name", l["kernel"], "--features", l["features"],
             "--db", path] + device_args(l["gpu"]))
    return path


LINE = re.compile(r"^\[\S+ \S+ (\d+)/(\d+)\] .*   best (\S+)( s|)$")


def search(a, target, record, method, budget, seed):
    """The best figure (ms) after each evaluation of one search: a list, index k-1 for k evaluations."""
    db = record
    extra = []
    if method == "masif-empty":
        db = os.path.join(a.work, "empty-%s-%d.db" % (target["name"], seed))
        remove_record(db)
    if method in ("masif-other-vendor", "masif-same-vendor"):
        same = method == "masif-same-vendor"
        pool = [g for g in ("A100", "A4000", "A6000", "MI250X", "W6600", "W7800")
                if g != target["gpu"] and ((g in NVIDIA) == (target["gpu"] in NVIDIA)) == same]
        extra = ["--neighbours-from", ",".join("@" + g for g in pool)]
    tawa_method = "masif" if method.startswith("masif") else method
    out = run([a.tawa, "tune", "--replay", os.path.join(target["dir"], "data.csv"), "--space",
               os.path.join(target["dir"], "SPACE.constrained.json"), "--name", target["kernel"], "--features", target["features"],
               "--db", db, "--method", tawa_method, "--budget", str(budget), "--seed", str(seed), "--fresh"] +
              device_args(target["gpu"]) + extra)
    bests = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            b = m.group(3)
            bests.append(math.inf if b == "failed" else float(b) * 1000)
    if method == "masif-empty":
        remove_record(db)
    return bests


def best_after(bests, k):
    if not bests:
        return math.inf
    return bests[min(k, len(bests)) - 1]


def fraction(optimum, best):
    return optimum / best if best and math.isfinite(best) else 0.0


def load_rows(path):
    rows = []
    if path and os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                rows.append(r)
    return rows


def summarize(rows, budgets, names):
    """{method: {budget: (mean, se, n_seeds)}}, and per landscape {method: {budget: mean}}."""
    by = {}
    for r in rows:
        by.setdefault(r["method"], {}).setdefault(int(r["budget"]), {}).setdefault(r["landscape"], {})[int(r["seed"])] = float(r["fraction"])
    table, per = {}, {}
    for method, bb in by.items():
        for budget, ll in bb.items():
            if budget not in budgets or set(ll) != set(names):
                continue  # a method that did not run on every landscape is left out of the means
            seeds = set.intersection(*(set(s) for s in ll.values()))
            if not seeds:
                continue
            per_seed = [statistics.mean(ll[n][s] for n in names) for s in sorted(seeds)]
            mean = statistics.mean(per_seed)
            se = statistics.stdev(per_seed) / math.sqrt(len(per_seed)) if len(per_seed) > 1 else 0.0
            table.setdefault(method, {})[budget] = (mean, se, len(seeds))
            for n in names:
                per.setdefault(n, {}).setdefault(method, {})[budget] = statistics.mean(ll[n][s] for s in seeds)
    return table, per


def markdown(table, per, budgets, names, seeds_note):
    methods = sorted(table, key=lambda m: -table[m].get(25, table[m].get(budgets[0], (0,)))[0])
    out = ["| method | " + " | ".join("%d evals" % b for b in budgets) + " |", "|---|" + "---|" * len(budgets)]
    for m in methods:
        cells = []
        for b in budgets:
            if b in table[m]:
                mean, se, n = table[m][b]
                cells.append("%.3f ± %.3f" % (mean, se))
            else:
                cells.append("—")
        out.append("| %s | %s |" % (m, " | ".join(cells)))
    out.append("")
    out.append(seeds_note)
    if "masif" in table:
        out.append("")
        out.append("The goal (issue 29): MaSiF above every other method at every budget by more than two standard errors "
                   "(of the difference: the two methods' standard errors over seeds, combined), and >= 0.98 at 25:")
        out.append("")
        out.append("| budget | masif | best other method | its mean | difference | 2 SE | met |")
        out.append("|---|---|---|---|---|---|---|")
        for b in budgets:
            if b not in table["masif"]:
                continue
            m, se, _ = table["masif"][b]
            others = [(table[o][b][0], o) for o in table if o != "masif" and not o.startswith("masif-") and b in table[o]]
            if not others:
                continue
            best, who = max(others)
            two = 2 * math.sqrt(se ** 2 + table[who][b][1] ** 2)
            out.append("| %d | %.3f | %s | %.3f | %+.3f | %.3f | %s |" % (b, m, who, best, m - best, two, "yes" if m - best > two else "**no**"))
        if 25 in table["masif"]:
            out.append("")
            out.append("MaSiF at 25 evaluations: %.3f (goal 0.98: %s)." % (table["masif"][25][0], "met" if table["masif"][25][0] >= 0.98 else "**not met**"))
    out.append("")
    b = 25 if 25 in budgets else budgets[0]
    out.append("Per landscape at %d evaluations (mean over seeds):" % b)
    out.append("")
    out.append("| landscape | " + " | ".join(methods) + " |")
    out.append("|---|" + "---|" * len(methods))
    for n in names:
        out.append("| %s | %s |" % (n, " | ".join("%.3f" % per[n][m][b] if m in per.get(n, {}) and b in per[n][m] else "—"
                                                 for m in methods)))
    return "\n".join(out)


def main():
    a = parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    methods = [m for m in a.methods.split(",") if m]
    for m in methods:
        if m not in TAWA_METHODS:
            sys.exit("evaluate: unknown method %r (tawa's: %s)" % (m, ", ".join(TAWA_METHODS)))
    if not os.access(a.tawa, os.X_OK):
        sys.exit("evaluate: %s is not an executable tawa (build it, or give --tawa)" % a.tawa)
    os.makedirs(a.work, exist_ok=True)
    all_l = landscapes(a)
    targets = [l for l in all_l if re.search(a.only, l["name"])]
    if not targets:
        sys.exit("evaluate: --only %r selects no landscape" % a.only)
    rows = load_rows(a.out)
    done = {(r["landscape"], r["method"], r["budget"], r["seed"]) for r in rows}
    fields = ("landscape", "method", "budget", "seed", "best_ms", "fraction")
    out = open(a.out, "a", newline="") if a.out else None
    writer = csv.writer(out) if out else None
    if out and os.path.getsize(a.out) == 0:
        writer.writerow(fields)

    def keep(t, method, budget, seed, best):
        row = {"landscape": t["name"], "method": method, "budget": str(budget), "seed": str(seed),
               "best_ms": "%.6g" % best, "fraction": "%.6f" % fraction(t["optimum_ms"], best)}
        rows.append(row)
        if writer:
            writer.writerow([row[k] for k in fields])

    top = max(budgets)
    for t in targets:
        record = None
        for method in methods:
            for seed in range(a.seeds):
                if all((t["name"], method, str(b), str(seed)) in done for b in budgets):
                    continue
                record = record or make_record(a, t, all_l)
                if method in PER_BUDGET:
                    for b in budgets:
                        keep(t, method, b, seed, best_after(search(a, t, record, method, b, seed), b))
                else:
                    bests = search(a, t, record, method, top, seed)
                    if seed == 0 and not a.no_check:
                        for b in budgets:
                            if b == top:
                                continue
                            short = search(a, t, record, method, b, seed)
                            if best_after(short, b) != best_after(bests, b):
                                sys.exit("evaluate: %s on %s: a search with budget %d found %g ms, the budget-%d search %g ms "
                                         "after %d evaluations; the prefix reading does not hold"
                                         % (method, t["name"], b, best_after(short, b), top, best_after(bests, b), b))
                    for b in budgets:
                        keep(t, method, b, seed, best_after(bests, b))
                if out:
                    out.flush()
            print("evaluate: %s %s done" % (t["name"], method), flush=True)
    if out:
        out.close()
    names = [t["name"] for t in targets]
    base = [r for r in load_rows(a.baselines) if r["landscape"] in names]
    table, per = summarize(rows + base, budgets, names)
    seeds = sorted({v[2] for m in table.values() for v in m.values()})
    note = ("Mean fraction of the optimum over %d landscapes (optimum / best found), ± the standard error over seeds "
            "(seeds per method: %s)." % (len(names), ", ".join(map(str, seeds))))
    text = markdown(table, per, budgets, names, note)
    print(text)
    if a.benchmarks:
        with open(a.benchmarks) as f:
            doc = f.read()
        begin, end = "<!-- landscapes:begin -->", "<!-- landscapes:end -->"
        if begin not in doc or end not in doc:
            sys.exit("evaluate: %s has no %s ... %s markers" % (a.benchmarks, begin, end))
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        with open(a.benchmarks, "w") as f:
            f.write(head + begin + "\n" + text + "\n" + end + tail)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Leave-one-out evaluation of `tawa tune` over the oneTBB skeleton suite (bench/skeletons).

For each program of the suite:
  oracle   exhaustive search when the space (before constraints) has at most --exhaustive-limit
           points, otherwise the best of --oracle-samples random legal configurations, each measured
           once (1 run, no warm-up), all kept in the record; labelled as such in the table;
  default  oneTBB's defaults as the program's SPACE.json "default" states them (auto_partitioner,
           the smallest grain, all hardware threads);
  masif / random / greedy   `tawa tune --suite ... --leave-one-out --method M --budget B` at each
           budget (neighbours come only from the other programs, tuned by their oracle runs);
  tpe      Optuna's TPE (Debian's python3-optuna) at the same budgets, every trial measured through
           `tawa tune --evaluate`, so it shares the record and the measurement protocol.
Reported: each search's best as % of the oracle (oracle time / found time; above 100% means the
search found a configuration faster than the oracle's best sample), and the speedup of the oracle's
best over the default.

Resumable: every measurement lives in the SQLite record (--db), and a re-run asks tawa for the same
configurations, which it answers from the record without running anything; finished rows are also
cached in --results (JSON). Run it with /usr/bin/python3 (Debian's python3-optuna).

  scripts/tune-eval.py --build build                       # the full protocol (hours on 2 cores)
  scripts/tune-eval.py --build build --oracle-samples 300 --reps 1 --warmups 0   # a reduced run
  # The oracle alone, in rounds of 250 samples per program (stop it any time: every program then has
  # about as many), cutting samples that cannot become the best; then the searches, reusing it:
  scripts/tune-eval.py --build build --oracle-only --oracle-chunk 250 --oracle-cutoff 1.5 --timeout 2
  scripts/tune-eval.py --build build --oracle-samples 1000 --oracle-chunk 250 --oracle-cutoff 1.5 --timeout 2
"""
import argparse
import json
import math
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory (tawa, bench/skeletons/skel_*)")
    p.add_argument("--suite", default=os.path.join(ROOT, "bench", "skeletons"))
    p.add_argument("--db", default="tune-eval.db", help="the SQLite record shared by every run")
    p.add_argument("--results", default="tune-eval.json", help="finished rows, for resuming and for the table")
    p.add_argument("--programs", default="", help="comma-separated subset of the suite")
    p.add_argument("--budgets", default="45,20")
    p.add_argument("--seeds", type=int, default=1, help="searches per method and budget (different seeds), averaged")
    p.add_argument("--oracle-samples", type=int, default=2000)
    p.add_argument("--exhaustive-limit", type=int, default=3000)
    p.add_argument("--reps", type=int, default=3, help="timed repetitions per measurement of the searches")
    p.add_argument("--warmups", type=int, default=1)
    p.add_argument("--methods", default="masif,random,greedy,tpe",
                   help="comma-separated columns: masif, random, greedy, tpe, or masif-kN (MaSiF with N neighbours)")
    p.add_argument("--timeout", type=float, default=60, help="a run longer than this counts as a failed configuration")
    p.add_argument("--benchmarks", default=os.path.join(ROOT, "BENCHMARKS.md"), help="where the table goes ('' for nowhere)")
    p.add_argument("--oracle-cutoff", type=float, default=0,
                   help="cut an oracle sample once it runs longer than the program's set-up time plus this factor times "
                        "the best figure so far (the default's before the first round); such a sample cannot become "
                        "the oracle's best (0: only --timeout)")
    p.add_argument("--oracle-chunk", type=int, default=0,
                   help="measure the oracles in rounds of this many samples per program (0: all at once)")
    p.add_argument("--oracle-only", action="store_true",
                   help="measure the oracles and defaults (the part that does not depend on the searches) and stop")
    p.add_argument("--remeasure", type=int, default=5,
                   help="re-measure the oracle's, the default's and every search's best configuration side by side, this many "
                        "interleaved rounds each (0: report only the figures measured during the searches)")
    p.add_argument("--oracle-top", type=int, default=5,
                   help="re-measure the oracle's this many fastest samples with the rest; the fastest median is its figure")
    p.add_argument("--reuse-measurements", action="store_true",
                   help="let a search answer a configuration from the record's earlier measurements of it (the oracle's "
                        "single runs, other seeds' and budgets' searches), as every evaluation before 2026-12-04 did. "
                        "Default: each search measures all it evaluates itself (tawa tune --fresh), so its seeds are "
                        "independent searches; without that a deterministic search's second seed replays its first")
    p.add_argument("--note", default="", help="a sentence for the table's header (e.g. what was reduced)")
    return p.parse_args()


def tune_cmd(a):
    return [os.path.join(a.build, "tawa"), "tune"]


def run_tune(a, args, log=True, timeout=None):
    cmd = tune_cmd(a) + ["--suite", a.suite, "--db", a.db, "--bin", os.path.join(a.build, "bench", "skeletons"),
                         "--timeout", str(timeout or a.timeout)] + args
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("tune-eval: failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    if log:
        print("  %-60s %6.1f s" % (" ".join(args)[:60], time.time() - t0), flush=True)
    return json.loads(lines[-1])


def space_values(space):
    """Each parameter's ordered values, as tawa's SPACE.json parser defines them (keys sorted)."""
    out = {}
    for k in sorted(space):
        if k in ("constraints", "default", "description"):
            continue
        v = space[k]
        if isinstance(v, list):
            out[k] = sorted(v) if all(isinstance(x, int) for x in v) else list(v)
        elif "pow2" in v:
            lo, hi = v["pow2"]
            vals = []
            while lo <= hi:
                vals.append(lo)
                lo *= 2
            out[k] = vals
        else:
            out[k] = list(range(v["min"], v["max"] + 1, v.get("step", 1)))
    return out


def constraint_fn(space):
    """The space's constraints as a Python predicate (the same small language: && || ! and C ops)."""
    exprs = []
    for c in space.get("constraints", []):
        e = c.replace("&&", " and ").replace("||", " or ")
        e = re.sub(r"!(?!=)", " not ", e)
        e = re.sub(r"(?<![/])/(?![/])", "//", e)
        exprs.append(compile(e, c, "eval"))

    def legal(cfg):
        for e in exprs:
            try:
                if not eval(e, {"min": min, "max": max}, dict(cfg)):
                    return False
            except ZeroDivisionError:
                return False
        return True

    return legal


def tpe_search(a, name, space, budget, seed):
    """Optuna's TPE, every trial measured through `tawa tune --evaluate` (the record's protocol)."""
    def measure(key):
        r = run_tune(a, ["--only", name, "--evaluate", key, "--reps", str(a.reps), "--warmups", str(a.warmups)] + fresh_args(a),
                     log=False)
        return r["seconds"] if r["seconds"] is not None else math.inf

    return tpe_minimize(space, budget, seed, measure)


def tpe_minimize(space, budget, seed, objective):
    """TPE over `space` for `budget` distinct legal configurations; objective(key) -> seconds (inf: failed).
    key is the configuration as JSON with sorted keys."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    values = space_values(space)
    legal = constraint_fn(space)
    seen = {}
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=min(10, max(1, budget // 3)))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    trials = 0
    worst = 0.0
    # Budget = distinct legal configurations measured, as for tawa's searches. Illegal proposals
    # get a penalty (so TPE learns to avoid them) and repeated ones their first value; neither counts.
    while len(seen) < budget and trials < 20 * budget:
        trials += 1
        t = study.ask()
        cfg = {}
        for k, vals in values.items():
            if all(isinstance(x, int) for x in vals):
                cfg[k] = vals[t.suggest_int(k, 0, len(vals) - 1)]
            else:
                cfg[k] = t.suggest_categorical(k, vals)
        key = json.dumps(cfg, sort_keys=True)
        if not legal(cfg):
            study.tell(t, 2 * worst if worst > 0 else 1e3)
            continue
        if key not in seen:
            seen[key] = objective(key)
            if math.isfinite(seen[key]):
                worst = max(worst, seen[key])
        study.tell(t, seen[key] if math.isfinite(seen[key]) else 2 * worst + 1)
    best = min(seen.values()) if seen else math.inf
    cfg = json.loads(min(seen, key=seen.get)) if seen else None
    return {"seconds": best, "evaluations": len(seen), "config": cfg}


def legal_configs(space):
    """Every legal configuration of the space, as dicts, in the order of the values' product."""
    import itertools
    values = space_values(space)
    legal = constraint_fn(space)
    keys = list(values)
    for combo in itertools.product(*values.values()):
        cfg = dict(zip(keys, combo))
        if legal(cfg):
            yield cfg


def legal_count(space, limit=2000000):
    size = 1
    for v in space_values(space).values():
        size *= len(v)
    if size > limit:
        return "%.3g (before constraints)" % size
    return "{:,}".format(sum(1 for _ in legal_configs(space)))


SETUP = {}


def setup_seconds(a, name, space):
    if name not in SETUP:
        SETUP[name] = measure_setup(a, name, space)
    return SETUP[name]


def measure_setup(a, name, space):
    """Wall time of one run of the default configuration minus its own `tawa-time` figure: what the program
    spends outside the timed region (generating its input), the part of a run the figure does not see."""
    suite = json.load(open(os.path.join(a.suite, "suite.json")))
    cmd = [p["command"] for p in suite["programs"] if p["name"] == name][0]
    cmd = cmd.replace("{bin}", os.path.join(a.build, "bench", "skeletons"))
    for k, v in space["default"].items():
        cmd = cmd.replace("{%s}" % k, str(v))
    best = math.inf
    for _ in range(3):
        t0 = time.time()
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        wall = time.time() - t0
        fig = float(r.stdout.strip().splitlines()[-1].split()[-1])
        best = min(best, wall - fig)
    return max(0.0, best)


def oracle_size(space):
    size = 1
    for v in space_values(space).values():
        size *= len(v)
    return size


def oracle_of(a, name, space, default_seconds=None, samples=None, best=None):
    """The oracle: exhaustive search of a small space, else the first `samples` of a random search with a
    fixed seed (a longer run of the same seed repeats the shorter one's samples from the record and
    adds new ones), every sample measured once."""
    size = oracle_size(space)
    timeout = None
    if size <= a.exhaustive_limit:
        r = run_tune(a, ["--only", name, "--method", "exhaustive", "--budget", "100000000", "--reps", "1", "--warmups", "0"])
        label = "exhaustive"
    else:
        if a.oracle_cutoff and (best or default_seconds):
            # A sample slower than the best so far (or than the default, before there is one) cannot
            # become the oracle's best, so a run is cut once it is clearly slower: the program's
            # set-up time (input generation, outside the timed region) plus oracle_cutoff x that figure.
            ref = best or default_seconds
            timeout = min(a.timeout, 1.5 * setup_seconds(a, name, space) + a.oracle_cutoff * ref + 0.1)
            print("  %s: oracle samples cut after %.3f s (set-up + %.2f x %.4f s, the %s)" % (
                name, timeout, a.oracle_cutoff, ref, "best so far" if best else "default's figure"), flush=True)
        r = run_tune(a, ["--only", name, "--method", "random", "--seed", "1000", "--budget", str(samples or a.oracle_samples),
                         "--reps", "1", "--warmups", "0"], timeout=timeout)
        label = "best of %d random" % r[name]["evaluations"]
    return {"seconds": r[name]["seconds"], "config": r[name]["config"], "label": label, "size": size,
            "samples": r[name]["evaluations"], "cutoff": a.oracle_cutoff}


def main():
    a = parse_args()
    a.db = os.path.abspath(a.db)
    suite = json.load(open(os.path.join(a.suite, "suite.json")))
    names = [p["name"] for p in suite["programs"]]
    if a.programs:
        names = [n for n in names if n in a.programs.split(",")]
    budgets = [int(b) for b in a.budgets.split(",")]
    methods = a.methods.split(",")
    results = json.load(open(a.results)) if os.path.exists(a.results) else {}

    def save():
        with open(a.results + ".tmp", "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
        os.replace(a.results + ".tmp", a.results)

    spaces = {n: json.load(open(os.path.join(a.suite, n, "SPACE.json"))) for n in names}
    SPACES.update(spaces)
    for n in names:
        LEGAL[n] = legal_count(spaces[n])
    print("oracle runs (every program first: leave-one-out needs the others tuned)", flush=True)
    for n in names:
        row = results.setdefault(n, {})
        if "default" not in row:
            d = json.dumps(spaces[n]["default"], sort_keys=True)
            r = run_tune(a, ["--only", n, "--evaluate", d, "--reps", str(max(3, a.reps)), "--warmups", str(max(1, a.warmups))])
            row["default"] = r["seconds"]
            save()
    # Round-robin chunks of --oracle-chunk samples over the programs, so that a run stopped early
    # leaves every program with about as many samples (each row's label says how many).
    chunk = a.oracle_chunk or a.oracle_samples
    goal = 0
    while goal < a.oracle_samples:
        goal = min(a.oracle_samples, goal + chunk)
        for n in names:
            row = results[n]
            old = row.get("oracle")
            if old and (old["label"] == "exhaustive" or old.get("samples", a.oracle_samples) >= goal):
                continue
            row["oracle"] = oracle_of(a, n, spaces[n], row["default"], goal, old["seconds"] if old else None)
            save()
        print("oracle: %d samples per program (%s)" % (goal, time.strftime("%H:%M:%S")), flush=True)
    if a.oracle_only:
        print("tune-eval: oracles and defaults done (--oracle-only)", flush=True)
        return
    print("searches", flush=True)
    for n in names:
        row = results[n]
        for m in methods:
            for b in budgets:
                for s in range(a.seeds):
                    key = "%s@%d#%d" % (m, b, s)
                    if key in row:
                        continue
                    row.setdefault("load", []).append(os.getloadavg()[0])
                    if m == "tpe":
                        row[key] = tpe_search(a, n, spaces[n], b, 1 + s)
                        print("  tpe %s budget %d seed %d: %.4g s" % (n, b, 1 + s, row[key]["seconds"]), flush=True)
                    else:
                        r = run_tune(a, ["--only", n, "--leave-one-out"] + method_args(m) + ["--budget", str(b),
                                         "--seed", str(1 + s), "--reps", str(a.reps), "--warmups", str(a.warmups)] + fresh_args(a))
                        row[key] = {"seconds": r[n]["seconds"], "evaluations": r[n]["evaluations"], "config": r[n]["config"]}
                    row[key]["fresh"] = not a.reuse_measurements
                    save()
    if a.remeasure:
        print("re-measuring the configurations found, side by side (%d interleaved rounds)" % a.remeasure, flush=True)
        for n in names:
            remeasure(a, n, spaces[n], results[n], budgets, methods)
            save()
    table = render(a, names, budgets, methods, results)
    print(table)
    if a.benchmarks:
        write_section(a.benchmarks, table)


def fresh_args(a):
    return [] if a.reuse_measurements else ["--fresh"]


def method_args(m):
    """tawa tune's options for a method column: `masif`, `random`, `greedy`, or `masif-kN` (MaSiF with
    N neighbours instead of tawa's default)."""
    k = re.fullmatch(r"masif-k(\d+)", m)
    if k:
        return ["--method", "masif", "--neighbours", k.group(1)]
    return ["--method", m]


def config_key(c):
    return json.dumps(c, sort_keys=True)


def found_config(a, name, entry):
    """The configuration a search found: kept in its row, or (rows written before TPE kept it) the
    configuration the record holds with exactly that figure."""
    if entry.get("config"):
        return entry["config"]
    con = sqlite3.connect(a.db)
    rows = con.execute("select config from results where program=? and status='ok' and abs(seconds - ?) < 1e-12",
                       (name, entry["seconds"])).fetchall()
    con.close()
    return json.loads(rows[0][0]) if rows else None


def run_config(a, name, cfg):
    suite = json.load(open(os.path.join(a.suite, "suite.json")))
    cmd = [p["command"] for p in suite["programs"] if p["name"] == name][0]
    cmd = cmd.replace("{bin}", os.path.join(a.build, "bench", "skeletons"))
    for k, v in cfg.items():
        cmd = cmd.replace("{%s}" % k, str(v))
    try:
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=max(10, 5 * a.timeout))
        return float(r.stdout.strip().splitlines()[-1].split()[-1]) if r.returncode == 0 else math.inf
    except Exception:
        return math.inf


def oracle_top(a, name, oracle):
    """The --oracle-top fastest oracle samples (single runs, no warm-up, of the seed-1000 random search;
    the searches measure with their own protocol), fastest first; the whole space when it was exhaustive."""
    con = sqlite3.connect(a.db)
    rows = con.execute("select r.config from measurements m join configurations r on r.id = m.configuration_id "
                       "join programs p on p.id = r.program_id where p.name = ? and m.status = 'ok' and m.origin in ('random', 'exhaustive') "
                       "and m.warmups = 0 order by m.seconds limit ?", (name, a.oracle_top)).fetchall()
    con.close()
    return [json.loads(r[0]) for r in rows] or [oracle["config"]]


def oracle_ref(row):
    """The oracle's reference figure when re-measured: the fastest median among its top samples."""
    meds = [row["remeasured"][config_key(c)] for c in row["oracle"].get("top", [row["oracle"]["config"]])
            if config_key(c) in row["remeasured"]]
    meds.append(row["remeasured"][config_key(row["oracle"]["config"])])
    return min(meds)


def remeasure(a, name, space, row, budgets, methods):
    """Re-measures the oracle's best configuration, the default and every search's best side by side:
    --remeasure interleaved rounds, each in a fresh random order, straight from the command line (not the
    record), the median of each. Load that comes and goes during the evaluation (other work on the
    machine) then touches them alike, and the oracle's figure (the best of many single runs, so biased
    towards a lucky moment) is no longer compared with figures measured at other times."""
    import random
    cfgs = {config_key(row["oracle"]["config"]): row["oracle"]["config"], config_key(space["default"]): space["default"]}
    if "top" not in row["oracle"]:
        row["oracle"]["top"] = oracle_top(a, name, row["oracle"])
    for c in row["oracle"]["top"]:
        cfgs[config_key(c)] = c
    for m in methods:
        for b in budgets:
            for s in range(a.seeds):
                e = row.get("%s@%d#%d" % (m, b, s))
                if e and e.get("seconds") is not None and math.isfinite(e["seconds"]):
                    c = found_config(a, name, e)
                    if c:
                        e["config"] = c
                        cfgs[config_key(c)] = c
    done = row.setdefault("remeasured", {})
    todo = [k for k in cfgs if k not in done]
    if not todo:
        return
    runs = {k: [] for k in todo}
    rng = random.Random(7)
    for _ in range(a.remeasure):
        order = list(todo)
        rng.shuffle(order)
        for k in order:
            runs[k].append(run_config(a, name, cfgs[k]))
    for k in todo:
        v = sorted(runs[k])
        done[k] = v[len(v) // 2]
    print("  %s: %d configurations re-measured" % (name, len(todo)), flush=True)


def render(a, names, budgets, methods, results):
    cols = [(m, b) for b in budgets for m in methods]

    remeasured = [False]

    def fig(r, e):
        if remeasured[0]:
            return r.get("remeasured", {}).get(config_key(e["config"])) if e.get("config") else None
        return e["seconds"]

    def found(r, m, b):
        return [fig(r, r["%s@%d#%d" % (m, b, s)]) for s in range(a.seeds) if "%s@%d#%d" % (m, b, s) in r]

    def table(ref_of, ref_name):
        head = "| program | legal space | oracle | %s (s) | default (s) | speedup of the %s over default | " % (ref_name, ref_name) + \
            " | ".join("%s@%d" % (m, b) for m, b in cols) + " |"
        rows = [head, "|" + "---|" * (6 + len(cols))]
        sums = {c: [] for c in cols}
        speedups = []
        for n in names:
            r = results[n]
            ref = ref_of(r)
            cells = []
            for m, b in cols:
                pct = [100.0 * ref / v for v in found(r, m, b) if v and math.isfinite(v)]
                if pct:
                    sums[(m, b)].append(sum(pct) / len(pct))
                    cells.append("%.0f%%" % (sum(pct) / len(pct)))
                else:
                    cells.append("-")
            dflt = r["remeasured"].get(config_key(SPACES[n]["default"])) if remeasured[0] else r.get("default")
            sp = dflt / ref if dflt else float("nan")
            speedups.append(sp)
            rows.append("| %s | %s | %s | %.4f | %.4f | %.2fx | %s |" % (n, LEGAL.get(n, "%.3g" % r["oracle"]["size"]), r["oracle"]["label"],
                                                                      ref, dflt, sp, " | ".join(cells)))
        geo = math.exp(sum(math.log(x) for x in speedups) / len(speedups)) if speedups else float("nan")
        rows.append("| **mean** | | | | | %.2fx (geomean) | %s |" % (geo, " | ".join(
            ("**%.1f%%**" % (sum(sums[c]) / len(sums[c]))) if sums[c] else "-" for c in cols)))
        return rows

    mach = ""
    try:
        con = sqlite3.connect(a.db)
        mach = con.execute("select description from machines order by id limit 1").fetchone()[0]
    except Exception:
        pass
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except Exception:
        commit = "unknown"
    samples = sorted({results[n]["oracle"].get("samples", 0) for n in names if results[n]["oracle"]["label"] != "exhaustive"})
    cutoffs = sorted({results[n]["oracle"].get("cutoff", 0) for n in names})
    loads = [x for n in names for x in results[n].get("load", [])]
    text = ["## tawa tune", "",
            "Leave-one-out over the oneTBB skeleton suite (`scripts/tune-eval.py`; each program's MaSiF neighbours come only from "
            "the suite's other programs, tuned by their oracle runs). Each cell: the search's best configuration as %% of the reference "
            "(reference time / found time; above 100%% means it found a faster configuration than the reference), averaged over "
            "%d seed(s). %s Default: the program's SPACE.json `default`, "
            "i.e. oneTBB's defaults (auto_partitioner, the smallest grain, all hardware threads) with the program's own "
            "settings for the rest. Machine: %s. Searches measured with %d warm-up run(s) and %d repetition(s) (median); "
            "oracle samples with one run each; a run over %g s counts as a failed configuration."
            % (a.seeds, sharing(names, results), mach or "unknown", a.warmups, a.reps, a.timeout), "",
            "Table written %s by `scripts/tune-eval.py`, tuner at commit %s. Oracle: %s random samples per program (seed 1000)%s. "
            "Load average (1 min) when the searches started: %s." % (
                time.strftime("%Y-%m-%d %H:%M %Z"), commit or "unknown", "/".join(str(x) for x in samples) or "no",
                (", a sample cut (recorded as a timeout) once it ran longer than the program's set-up time plus %s x the best "
                 "figure so far (the default's before the first round): such a sample cannot be the oracle's best" % "/".join("%g" % c for c in cutoffs if c))
                if any(cutoffs) else "", ("%.1f-%.1f" % (min(loads), max(loads))) if loads else "not recorded"), ""]
    if a.note:
        text += [a.note, ""]
    if all("remeasured" in results[n] for n in names):
        remeasured[0] = True
        text += ["**Re-measured side by side** (the headline): the oracle's best configuration, the default and every search's "
                 "best configuration run again in %d interleaved rounds (a fresh random order each round), the median of each; "
                 "the oracle's figure is the fastest median among its %d fastest samples (a single run can be lucky); "
                 "each cell is that figure / the found configuration's median:" % (a.remeasure, a.oracle_top), ""]
        text += table(oracle_ref, "oracle") + [""]
        if "masif" in methods and len(methods) > 1:
            text += ["Paired differences, re-measured: for each program and seed, MaSiF's % of the oracle minus the other "
                     "method's, the mean over those pairs and its standard error (a difference within about two standard "
                     "errors of zero is not one this evaluation can tell from noise):", ""]
            for b in budgets:
                parts = []
                for o in methods:
                    if o == "masif":
                        continue
                    diffs = []
                    for n in names:
                        r = results[n]
                        ref = oracle_ref(r)
                        for s in range(a.seeds):
                            em, eo = r.get("masif@%d#%d" % (b, s)), r.get("%s@%d#%d" % (o, b, s))
                            fm, fo = (fig(r, em) if em else None), (fig(r, eo) if eo else None)
                            if fm and fo and math.isfinite(fm) and math.isfinite(fo):
                                diffs.append(100.0 * ref / fm - 100.0 * ref / fo)
                    if len(diffs) > 1:
                        se = statistics.stdev(diffs) / math.sqrt(len(diffs))
                        parts.append("MaSiF - %s %+.1f points (standard error %.1f)" % (o, statistics.mean(diffs), se))
                if parts:
                    text.append("- budget %d (%d pairs): %s" % (b, len(diffs), "; ".join(parts)))
            text.append("")
        remeasured[0] = False
    text += ["As measured during the searches: the search's own figure for its best configuration against the oracle's "
             "recorded figure (the best of its single runs, so biased low by lucky moments):", ""]
    text += table(lambda r: r["oracle"]["seconds"], "oracle") + [""]
    return "\n".join(text)


def sharing(names, results):
    """How the searches used the record: each measured all it evaluated itself (tawa tune --fresh), or they shared it."""
    flags = {e.get("fresh", False) for n in names for k, e in results[n].items() if "@" in k and isinstance(e, dict)}
    if flags == {True}:
        return "Every search measured all it evaluated itself (`tawa tune --fresh`): its seeds are independent searches."
    shared = ("For random search, budget 20 with the same seed is the budget-45 search stopped early; a search answers "
              "a configuration the record has measured before (the oracle's single runs, other searches) from the record, "
              "so a deterministic search's later seeds mostly replay its first.")
    return shared if flags == {False} else "Some searches measured all they evaluated (`--fresh`), others shared the record. " + shared


# Legal configurations per program (constraints applied), as bench/skeletons/README.md lists them.
LEGAL = {}
SPACES = {}


def write_section(path, table):
    old = open(path).read() if os.path.exists(path) else ""
    start = old.find("## tawa tune")
    if start < 0:
        new = (old.rstrip("\n") + "\n\n" if old else "") + table
    else:
        end = old.find("\n## ", start + 1)
        new = old[:start] + table + (old[end:] if end >= 0 else "")
    with open(path + ".tmp", "w") as f:
        f.write(new)
    os.replace(path + ".tmp", path)
    print("tune-eval: table written to %s (section '## tawa tune')" % path)


if __name__ == "__main__":
    main()

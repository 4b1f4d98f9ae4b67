#!/usr/bin/env python3
"""Run third-party tuning strategies on recorded GPU tuning landscapes (simulation only).

This is the "side by side" half of the landscape benchmark: for every
(landscape, method, budget, seed) it runs one search against a recorded
brute-force landscape and writes the best time the search found.  No GPU is
used: every evaluation is a look-up in the recorded data.  tawa's own searches
are run by another script.

Data
----
``--landscapes`` names a folder of ``bh-<kernel>-<gpu>/`` landscapes (see its
README.md).  Each holds ``data.csv`` (parameters, time_ms, std_ms: the
configurations that ran), ``failures.csv`` (parameters, status: configurations
inside the restrictions that failed) and ``SPACE.constrained.json`` (parameter
value lists and C-like ``constraints``).  The optimum of a landscape is the
minimum time_ms of data.csv; the *fraction* of a search is
``optimum / best time found`` (0 when it found no valid configuration).

Methods
-------
``kt:<strategy>``  Kernel Tuner (``kernel_tuner==1.5.0``) in simulation mode.
    data.csv + failures.csv are converted into a Kernel Tuner cache file
    (``<work>/kt/<landscape>.json``): a JSON object with ``device_name``,
    ``kernel_name``, ``problem_size``, ``tune_params_keys``, ``tune_params``,
    ``objective`` ("time") and ``cache``, a map from the key
    ``"v1,v2,...,vN"`` (parameter values in ``tune_params_keys`` order joined
    by commas) to an entry ``{param: value, ..., "time": ms, "times": [ms],
    "compile_time": 0, "verification_time": 0, "benchmark_time": 0}``.  A
    failed configuration gets its failures.csv status
    (``"RuntimeFailedConfig"`` / ``"CompilationFailedConfig"``) as its
    ``time``; Kernel Tuner's ``read_cache`` turns such a string into an error
    result.  ``tune_kernel`` is called with ``simulation_mode=True``, the
    cache file, the landscape's constraints as ``restrictions`` (so the space
    is the constrained one) and ``strategy_options={"max_fevals": budget}``.
    Strategies: random_sample, genetic_algorithm, dual_annealing,
    simulated_annealing, basinhopping, pso, greedy_ils, bayes_opt (and any
    other name Kernel Tuner knows, via --methods).
``optuna:tpe``  Optuna's TPESampler(seed=seed) over the same space: each trial
    suggests every parameter categorically from its value list.

Budget
------
``kt:*``  ``max_fevals``.  Kernel Tuner's simulation runner counts one
    evaluation each time a configuration that is in the cache is run for the
    first time: unique configurations, *including failed ones* (a recorded
    compile/run failure costs one evaluation, as it would on a GPU).  A
    configuration that violates the restrictions is rejected by the strategy
    before it reaches the runner and costs nothing (Kernel Tuner knows the
    constraints).  Re-visiting a configuration costs nothing.  A strategy may
    stop before spending its whole budget; ``evaluations`` records what it
    spent.  Seen in 1.5: dual_annealing passes max_fevals to scipy as
    ``maxfun``, which counts every call (revisits and restriction-rejected
    points too), so it spends only about a third to a half of the budget
    (about 15 unique configurations for budgets 20-50); simulated_annealing
    fits its cooling schedule to max_fevals calls and spends about 3/4;
    basinhopping sometimes ends a little early.
``optuna:tpe``  Number of distinct configurations evaluated.  A configuration
    that violates a constraint or is not in data.csv (a recorded failure) is a
    failed evaluation: it costs one evaluation, and its value told to the
    study is a penalty of 1e9 ms (TPE splits trials by rank, so any value
    worse than every real time acts the same).  A configuration suggested
    again costs nothing: its earlier value is told again.  The loop stops
    when the budget is spent or after 20 x budget trials.

Columns of --out: landscape, method, budget, seed, best_ms (empty when
nothing valid was found), fraction, evaluations (budget spent), seconds (wall
time of that run).  Rows are appended as they finish and rows already in
--out are skipped, so an interrupted run can be resumed by running the same
command again.

Seeding: Kernel Tuner 1.5's strategies draw from Python's ``random`` and
NumPy's global ``numpy.random`` (scipy's dual_annealing / basinhopping draw
from NumPy's global state too, as they are given no generator);
``tune_kernel``'s ``seed`` argument is only read by its pymoo strategies.  So
both ``random.seed(s)`` and ``numpy.random.seed(s)`` are called before each run
(and ``seed=s`` is passed as well).  bayes_opt's initial Latin hypercube
sample is drawn by scipy from an OS-seeded generator; the script hands it a
``numpy.random.default_rng(s)`` instead, so every run repeats exactly.

Install
-------
    python3 -m venv ~/.cache/tawa/kt-venv
    ~/.cache/tawa/kt-venv/bin/pip install -r bench/landscapes/requirements.txt

(kernel_tuner==1.5.0 and optuna==5.1.0 with the dependencies they pulled in;
Python 3.11.)  Then run this script with ~/.cache/tawa/kt-venv/bin/python.
"""

import os

# one core: keep BLAS / OpenMP (numpy, scikit-learn in bayes_opt) single-threaded
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import csv
import json
import math
import random
import re
import sys
import time
import traceback
import warnings

DEFAULT_BUDGETS = [10, 20, 25, 30, 50, 100]
KT_STRATEGIES = [
    "random_sample",
    "genetic_algorithm",
    "dual_annealing",
    "simulated_annealing",
    "basinhopping",
    "pso",
    "greedy_ils",
    "bayes_opt",
]
DEFAULT_METHODS = ["kt:" + s for s in KT_STRATEGIES] + ["optuna:tpe"]
COLUMNS = ["landscape", "method", "budget", "seed", "best_ms", "fraction", "evaluations", "seconds"]
OPTUNA_PENALTY_MS = 1e9
OPTUNA_TRIAL_CAP = 20  # at most this many trials per unit of budget

EXAMPLES = """examples:
  # everything (12 landscapes x 9 methods x 6 budgets x 30 seeds):
  ~/.cache/tawa/kt-venv/bin/python bench/landscapes/baselines.py \\
      --landscapes /work/shared/landscapes --out bench/landscapes/results/baselines.csv

  # a quick look: two methods, convolution only, 5 seeds, two budgets
  ~/.cache/tawa/kt-venv/bin/python bench/landscapes/baselines.py \\
      --landscapes /work/shared/landscapes --out /tmp/b.csv --only 'convolution' \\
      --methods kt:random_sample,optuna:tpe --budgets 20,50 --seeds 5
"""


# ---------------------------------------------------------------- landscapes

def _number(text):
    """Parse a CSV cell as int when it is one, else float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def translate_constraint(expr):
    """Translate a C-like constraint expression into a Python one."""
    out = expr.replace("||", " or ").replace("&&", " and ")
    out = re.sub(r"!(?!=)", " not ", out)
    return " ".join(out.split())


class Landscape:
    """One recorded landscape: its space, constraints, times and failures."""

    def __init__(self, folder):
        self.folder = folder
        self.name = os.path.basename(os.path.normpath(folder))
        with open(os.path.join(folder, "SPACE.constrained.json")) as f:
            space = json.load(f)
        skip = {"description", "constraints", "default"}
        self.params = {k: list(v) for k, v in space.items() if k not in skip}
        self.names = list(self.params)
        self.constraints_c = list(space.get("constraints", []))
        self.constraints = [translate_constraint(c) for c in self.constraints_c]
        self._compiled = [compile(c, "<constraint>", "eval") for c in self.constraints]

        self.times = {}  # config tuple -> time_ms
        with open(os.path.join(folder, "data.csv"), newline="") as f:
            for row in csv.DictReader(f):
                key = tuple(_number(row[n]) for n in self.names)
                self.times[key] = float(row["time_ms"])
        self.failures = {}  # config tuple -> status
        path = os.path.join(folder, "failures.csv")
        if os.path.exists(path):
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    key = tuple(_number(row[n]) for n in self.names)
                    self.failures[key] = row["status"]
        self.optimum = min(self.times.values())
        kernel = self.name.split("-")[1] if self.name.count("-") >= 2 else self.name
        self.kernel = kernel

    def satisfies(self, config):
        env = dict(zip(self.names, config))
        return all(eval(c, {"__builtins__": {}}, env) for c in self._compiled)

    def fraction(self, best_ms):
        return 0.0 if best_ms is None else self.optimum / best_ms


def find_landscapes(root, only):
    pattern = re.compile(only) if only else None
    found = []
    for entry in sorted(os.listdir(root)):
        folder = os.path.join(root, entry)
        if not os.path.isfile(os.path.join(folder, "data.csv")):
            continue
        if pattern and not pattern.search(entry):
            continue
        found.append(folder)
    return found


# ------------------------------------------------------------- Kernel Tuner

def write_kt_cache(land, path):
    """Write land's data.csv + failures.csv as a Kernel Tuner cache file."""
    cache = {}
    for config, t in land.times.items():
        entry = dict(zip(land.names, config))
        entry.update(time=t, times=[t], compile_time=0.0, verification_time=0.0, benchmark_time=0.0)
        cache[",".join(str(v) for v in config)] = entry
    for config, status in land.failures.items():
        entry = dict(zip(land.names, config))
        entry.update(time=status, times=status, compile_time=0.0, verification_time=0.0, benchmark_time=0.0)
        cache[",".join(str(v) for v in config)] = entry
    doc = {
        "schema_version": "1.0.0",
        "device_name": land.name,
        "kernel_name": land.kernel,
        "problem_size": [1],
        "tune_params_keys": land.names,
        "tune_params": land.params,
        "objective": "time",
        "cache": cache,
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, path)


def _seed_bayes_opt_lhs(seed):
    """Make bayes_opt's initial Latin hypercube sample depend on the seed.

    Kernel Tuner 1.5's bayes_opt builds ``scipy.stats.qmc.LatinHypercube(d=...)``
    without a generator, and scipy then seeds it from the OS, so runs would
    not repeat.  Give it one seeded from the run's seed; nothing else changes.
    """
    import numpy
    from scipy.stats import qmc
    import kernel_tuner.strategies.bayes_opt as bo

    def seeded_lhs(*args, **kwargs):
        kwargs.setdefault("rng", numpy.random.default_rng(seed))
        return qmc.LatinHypercube(*args, **kwargs)

    bo.LatinHypercube = seeded_lhs


def run_kt(land, strategy, budget, seed, cache_path):
    """One Kernel Tuner run; returns (best_ms or None, evaluations)."""
    import numpy
    from kernel_tuner import tune_kernel
    from kernel_tuner.util import ErrorConfig, InvalidConfig

    random.seed(seed)
    numpy.random.seed(seed)
    if strategy == "bayes_opt":
        _seed_bayes_opt_lhs(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _env = tune_kernel(
            land.kernel,
            "",
            (1,),
            [],
            {k: list(v) for k, v in land.params.items()},
            restrictions=list(land.constraints),
            cache=cache_path,
            simulation_mode=True,
            strategy=strategy,
            strategy_options={"max_fevals": budget},
            quiet=True,
            verbose=False,
            seed=seed,
        )
    best = None
    evaluated = set()
    for r in results:
        if not r:
            continue
        config = tuple(r[n] for n in land.names)
        err = r.get("__error__")
        if isinstance(err, InvalidConfig):
            continue  # rejected by the restrictions: never reached the runner
        evaluated.add(config)
        if err is not None or isinstance(r.get("time"), ErrorConfig):
            continue
        t = r.get("time")
        if isinstance(t, (int, float)) and math.isfinite(t):
            # the cache holds the recorded time; look it up to be sure
            t = land.times.get(config, t)
            best = t if best is None else min(best, t)
    return best, len(evaluated)


# ------------------------------------------------------------------- Optuna

def run_optuna_tpe(land, budget, seed):
    """One Optuna TPE run; returns (best_ms or None, evaluations)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = optuna.samplers.TPESampler(seed=seed)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    seen = {}  # config -> value told (time_ms or penalty)
    best = None
    trials = 0
    while len(seen) < budget and trials < OPTUNA_TRIAL_CAP * budget:
        trial = study.ask()
        config = tuple(trial.suggest_categorical(n, land.params[n]) for n in land.names)
        trials += 1
        if config not in seen:
            t = land.times.get(config)
            if t is not None and land.satisfies(config):
                seen[config] = t
                best = t if best is None else min(best, t)
            else:
                seen[config] = OPTUNA_PENALTY_MS
        study.tell(trial, seen[config])
    return best, len(seen)


# ---------------------------------------------------------------------- main

def parse_list(text, kind=str):
    return [kind(x) for x in text.split(",") if x.strip()]


def load_done(path):
    done = set()
    if os.path.exists(path):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                try:
                    done.add((row["landscape"], row["method"], int(row["budget"]), int(row["seed"])))
                except (KeyError, ValueError, TypeError):
                    pass
    return done


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--landscapes", required=True, help="folder of bh-*/ landscapes (read-only)")
    ap.add_argument("--out", required=True, help="CSV to append results to (resumes: rows already there are skipped)")
    ap.add_argument("--only", default=None, help="regex: only landscapes whose folder name matches")
    ap.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                    help="comma-separated methods (default: %(default)s)")
    ap.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)),
                    help="comma-separated budgets (default: %(default)s)")
    ap.add_argument("--seeds", type=int, default=30, help="seeds 0..N-1 (default: %(default)s)")
    ap.add_argument("--seed-start", type=int, default=0, help="first seed (default: %(default)s)")
    ap.add_argument("--work", default="/tmp/tawa-landscapes", help="scratch folder for cache files (default: %(default)s)")
    args = ap.parse_args(argv)

    methods = parse_list(args.methods)
    for m in methods:
        if not (m.startswith("kt:") or m == "optuna:tpe"):
            ap.error(f"unknown method {m!r} (kt:<strategy> or optuna:tpe)")
    budgets = parse_list(args.budgets, int)
    seeds = list(range(args.seed_start, args.seed_start + args.seeds))
    folders = find_landscapes(args.landscapes, args.only)
    if not folders:
        ap.error(f"no landscapes under {args.landscapes} match {args.only!r}")

    done = load_done(args.out)
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    new_file = not os.path.exists(args.out) or os.path.getsize(args.out) == 0
    out = open(args.out, "a", newline="")
    writer = csv.writer(out)
    if new_file:
        writer.writerow(COLUMNS)
        out.flush()

    broken = {}  # method -> reason it could not run
    start_all = time.time()
    for folder in folders:
        land = Landscape(folder)
        cache_path = os.path.join(args.work, "kt", land.name + ".json")
        if any(m.startswith("kt:") for m in methods):
            write_kt_cache(land, cache_path)
        print(f"{land.name}: {len(land.times)} valid, {len(land.failures)} failed, optimum {land.optimum} ms",
              flush=True)
        for method in methods:
            if method in broken:
                continue
            t_method = time.time()
            n_runs = 0
            for budget in budgets:
                for seed in seeds:
                    if (land.name, method, budget, seed) in done:
                        continue
                    t0 = time.time()
                    try:
                        if method == "optuna:tpe":
                            best, evals = run_optuna_tpe(land, budget, seed)
                        else:
                            best, evals = run_kt(land, method[3:], budget, seed, cache_path)
                    except Exception as e:  # a strategy that does not run: say why, skip it
                        reason = f"{type(e).__name__}: {e}"
                        broken[method] = reason
                        print(f"SKIP {method}: fails to run ({reason})", flush=True)
                        traceback.print_exc()
                        break
                    secs = time.time() - t0
                    writer.writerow([
                        land.name, method, budget, seed,
                        "" if best is None else repr(best),
                        f"{land.fraction(best):.6f}", evals, f"{secs:.3f}",
                    ])
                    out.flush()
                    n_runs += 1
                if method in broken:
                    break
            if n_runs:
                print(f"  {method}: {n_runs} runs in {time.time() - t_method:.1f} s", flush=True)
    out.close()
    print(f"done in {time.time() - start_all:.1f} s", flush=True)
    for m, why in broken.items():
        print(f"not run: {m}: {why}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

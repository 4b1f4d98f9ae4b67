#!/usr/bin/python3
"""Replay evaluation of `tawa tune`'s search methods against a recorded oracle: no program runs.

A design tool for the search methods, not a measurement. It takes an evaluation record made by
scripts/tune-eval.py (the oracle's single-run random samples of every suite program) and, for each
program P of the suite:
  1. copies the record, keeping only the oracle samples (measurements with origin 'random' and no
     warm-up), so every neighbour is known only by its oracle;
  2. replaces P's own measurements by a surrogate over P's whole legal space: a sampled configuration
     keeps its recorded time (a failed or cut sample: the slowest recorded time); any other gets the
     distance-weighted geometric mean of its 5 nearest samples (parameters scaled to [0, 1], on a log
     scale when they span 8x or more; a categorical mismatch counts 1);
  3. runs the real searches on that record (`tawa tune --suite --only P --leave-one-out --method M
     --budget B --seed S`): every configuration they ask for is answered from the record, so a search
     takes milliseconds and its result depends only on the method, never on the machine's noise;
     Optuna's TPE runs on the same surrogate here in Python.
Each cell is the best sampled time / the surrogate time of the configuration the search found (at
most 100%), averaged over --seeds seeds. Because the surrogate is piecewise smooth where the real
programs are noisy, these figures rank methods; they are not the programs' real speed, and a claim
about the tuner needs scripts/tune-eval.py.

  scripts/tune-sim.py --record /tmp/db.sqlite --seeds 5            # every program the record has, all methods
  scripts/tune-sim.py --record /tmp/db.sqlite --methods masif --programs matmul,histogram
  # Do the static features choose better neighbours than chance? The same seeds and noise, paired:
  scripts/tune-sim.py --record /tmp/db.sqlite --seeds 8 --noise 0.05 --methods masif --json /tmp/a.json
  scripts/tune-sim.py --record /tmp/db.sqlite --seeds 8 --noise 0.05 --methods masif --shuffle-features --json /tmp/b.json
  scripts/tune-sim.py --compare /tmp/a.json /tmp/b.json
  # Do a neighbour's best configurations carry over? Measured times only, no search:
  scripts/tune-sim.py --record /tmp/db.sqlite --transfer

--transfer runs no search. For each program P it asks `tawa tune --dry-run --leave-one-out` for P's
nearest neighbour N by the static features, then compares the two oracles on the configurations both
sampled (same parameter names and values: the twins, whose oracles drew the same random samples):
- the rank correlation (Spearman) of the two programs' times, over the configurations that finished in
  both, and over all of them with a cut or failed sample tied as the slowest (the oracle cut samples
  1.5x slower than its best so far, so the first sees only the region near the top);
- where N's 10 fastest samples land among P's samples (their percentile; a configuration drawn at
  random lands at 50% on average). MaSiF's premise is that they land near 0%;
- whether N's whole landscape helps, not only its best points: of 400 of P's samples drawn at random,
  the best of the 45 that a surrogate of N's samples calls fastest, against the best of 45 drawn at
  random from the same 400 (% of P's best sample; the mean of 40 draws each).
"""
import argparse
import importlib.util
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("tune_eval", os.path.join(ROOT, "scripts", "tune-eval.py"))
tune_eval = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tune_eval)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--record", help="an evaluation record (SQLite) holding the oracle samples")
    p.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"),
                   help="run nothing: for every pair of columns of the two --json files with the same budget, the mean "
                        "paired difference B - A over (program, seed) and its standard error (over --programs only, when given)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--suite", default=os.path.join(ROOT, "bench", "skeletons"))
    p.add_argument("--work", default="/tmp/tune-sim", help="scratch folder for the per-program records")
    p.add_argument("--programs", default="", help="comma-separated subset of the suite (default: every suite program the record "
                   "has 100 or more oracle samples of)")
    p.add_argument("--methods", default="masif,random,greedy,tpe")
    p.add_argument("--budgets", default="45,20")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--noise", type=float, default=0,
                   help="the searches see each measurement's time times exp(NOISE * N(0, 1)), drawn per measurement and seed; "
                        "they are scored on the noise-free surrogate (0.05: about the noise of a 3-run median here)")
    p.add_argument("--reuse", action="store_true", help="reuse the per-program records --work holds from an earlier run")
    p.add_argument("--neighbours", type=int, default=0, help="k for masif (0: tawa's default)")
    p.add_argument("--json", default="", help="also write every search's score here: {program: {\"method@budget\": [one per seed]}}, "
                   "for paired comparisons between runs (seed s sees the same noise in every run)")
    p.add_argument("--transfer", action="store_true",
                   help="run no search: whether each program's nearest neighbour's best configurations are fast on it "
                        "(rank correlation and percentiles over the configurations both oracles sampled)")
    p.add_argument("--shuffle-features", action="store_true",
                   help="a control for the features: before the searches of each seed, deal the other programs' feature "
                        "vectors out among them at random (drawn from the seed), so MaSiF's k neighbours are k programs "
                        "chosen at random instead of the nearest")
    return p.parse_args()


def canon(cfg):
    """A configuration's key as tawa's Space::key prints it (nlohmann::json: sorted keys, compact)."""
    return json.dumps(cfg, sort_keys=True, separators=(",", ":"))


class Surrogate:
    def __init__(self, space, samples):
        import numpy as np

        self.np = np
        self.values = tune_eval.space_values(space)
        self.keys = list(self.values)
        finite = [s for s in samples.values() if math.isfinite(s)]
        cap = max(finite)
        self.best = min(finite)
        self.sampled = {k: (v if math.isfinite(v) else cap) for k, v in samples.items()}
        pts = [json.loads(k) for k in self.sampled]
        self.X = self.encode(pts)
        self.logt = np.log(np.array([self.sampled[canon(c)] for c in pts]))

    def encode(self, cfgs):
        np = self.np
        cols = []
        for k in self.keys:
            vals = self.values[k]
            if all(isinstance(x, int) for x in vals):
                lo, hi = min(vals), max(vals)
                v = np.array([c[k] for c in cfgs], dtype=float)
                if hi == lo:
                    cols.append(np.zeros(len(cfgs)))
                elif lo > 0 and hi >= 8 * lo:
                    cols.append((np.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)))
                else:
                    cols.append((v - lo) / (hi - lo))
            else:
                for x in vals:  # one-hot at 1/sqrt(2): a mismatch counts 1 in the squared distance
                    cols.append(np.array([1.0 if c[k] == x else 0.0 for c in cfgs]) / math.sqrt(2))
        return np.stack(cols, axis=1)

    def predict(self, cfgs):
        """Estimated seconds of each configuration: the inverse-distance-weighted geometric mean of its 5 nearest
        samples (a cut or failed sample counts as the slowest finished one)."""
        np = self.np
        est = []
        for lo in range(0, len(cfgs), 4096):
            Y = self.encode(cfgs[lo:lo + 4096])
            d2 = (Y * Y).sum(1)[:, None] + (self.X * self.X).sum(1)[None, :] - 2 * Y @ self.X.T
            d2 = np.maximum(d2, 0)
            near = np.argpartition(d2, 5, axis=1)[:, :5]
            dn = np.take_along_axis(d2, near, 1)
            w = 1.0 / (dn + 1e-3)
            est.extend(np.exp((w * self.logt[near]).sum(1) / w.sum(1)).tolist())
        return est

    def table(self, space):
        """The surrogate over every legal configuration: {key: seconds}; a sampled configuration keeps its sample."""
        cfgs = list(tune_eval.legal_configs(space))
        return {canon(c): self.sampled.get(canon(c), e) for c, e in zip(cfgs, self.predict(cfgs))}


def has_oracle(db, name):
    row = db.execute("SELECT id FROM programs WHERE name=?", (name,)).fetchone()
    return bool(row) and len(oracle_samples(db, row[0])) >= 100


def oracle_samples(db, pid):
    rows = db.execute(
        "SELECT c.config, m.seconds, m.status FROM measurements m JOIN configurations c ON c.id=m.configuration_id "
        "WHERE c.program_id=? AND m.origin='random' AND m.warmups=0", (pid,)).fetchall()
    out = {}
    for cfg, secs, status in rows:
        k = canon(json.loads(cfg))
        t = secs if status == "ok" and secs is not None else math.inf
        out[k] = min(out.get(k, math.inf), t)
    return out


def make_record(a, src, name, table):
    """A copy of the record: only oracle samples, and `name` answered by the surrogate everywhere."""
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, name + ".sqlite")
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(path + ext):
            os.remove(path + ext)
    dst = sqlite3.connect(path)
    src.backup(dst)
    dst.execute("PRAGMA journal_mode=DELETE")
    dst.executescript(
        "DELETE FROM repetitions; DELETE FROM searches;"
        "DELETE FROM measurements WHERE NOT (origin='random' AND warmups=0);")
    pid = dst.execute("SELECT id FROM programs WHERE name=?", (name,)).fetchone()[0]
    machine = dst.execute("SELECT machine_id FROM measurements LIMIT 1").fetchone()[0]
    dst.execute("DELETE FROM measurements WHERE configuration_id IN (SELECT id FROM configurations WHERE program_id=?)", (pid,))
    dst.execute("DELETE FROM configurations WHERE program_id=?", (pid,))
    dst.execute("DELETE FROM configurations WHERE id NOT IN (SELECT configuration_id FROM measurements)")
    rows = list(table.items())
    dst.executemany("INSERT INTO configurations(program_id, config) VALUES(?, ?)", [(pid, k) for k, _ in rows])
    ids = dict(dst.execute("SELECT config, id FROM configurations WHERE program_id=?", (pid,)).fetchall())
    # Two measurements per configuration (detail 'r0', 'r1'): a search that measures a configuration
    # again (MaSiF's confirmation) reads the second, which noisy() gives noise of its own.
    dst.executemany(
        "INSERT INTO measurements(configuration_id, machine_id, seconds, spread, warmups, status, detail, origin) "
        "VALUES(?, ?, ?, 0, 0, 'ok', ?, 'surrogate')", [(ids[k], machine, v, r) for k, v in rows for r in ("r0", "r1")])
    dst.commit()
    dst.close()
    return path


def noisy(path, table, sigma, seed):
    """What the searches of seed `seed` see: each measurement of a configuration is its surrogate time
    times exp(sigma * N(0, 1)), drawn per configuration, measurement and seed, with a spread of
    2.5 sigma. Returns {key: seconds} of the first measurements."""
    import random

    rng = random.Random(seed)
    db = sqlite3.connect(path)
    rows = db.execute("SELECT m.id, c.config, m.detail FROM measurements m JOIN configurations c ON c.id=m.configuration_id "
                      "WHERE m.origin='surrogate' ORDER BY m.id").fetchall()
    new = [(table[k] * math.exp(sigma * rng.gauss(0, 1)) if sigma > 0 else table[k], mid, k, d) for mid, k, d in rows]
    # The spread a measurement reports: about the range of the 3 runs whose median has noise sigma
    # (a run's noise is 1.5 sigma, and 3 runs span 1.7 times that), so MaSiF sizes its move margin and
    # its confirmations as it would on the machine.
    spread = 2.5 * sigma
    db.executemany("UPDATE measurements SET seconds=?, spread=? WHERE id=?", [(v, spread, mid) for v, mid, _, _ in new])
    db.execute("DELETE FROM searches")
    db.commit()
    db.close()
    return {k: v for v, _, k, d in new if d == "r0"}


def shuffle_features(path, name, seed):
    """Deals the feature vectors of every program but `name` out among those programs by a random
    permutation drawn from `seed` (the first call keeps the true vectors in a table of their own)."""
    import random

    db = sqlite3.connect(path)
    db.execute("CREATE TABLE IF NOT EXISTS true_features AS SELECT * FROM features")
    pids = [r[0] for r in db.execute(
        "SELECT DISTINCT f.program_id FROM true_features f JOIN programs p ON p.id=f.program_id WHERE p.name<>? "
        "ORDER BY f.program_id", (name,))]
    dealt = pids[:]
    random.Random(seed).shuffle(dealt)
    db.execute("DELETE FROM features WHERE program_id IN (%s)" % ",".join("?" * len(pids)), pids)
    for to, frm in zip(pids, dealt):
        db.execute("INSERT INTO features(program_id, name, value) SELECT ?, name, value FROM true_features "
                   "WHERE program_id=?", (to, frm))
    db.commit()
    db.close()


def restore_features(path):
    """Undoes shuffle_features: every program gets its true feature vector back (nothing to do when
    the record holds no shuffled features)."""
    db = sqlite3.connect(path)
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name='true_features'").fetchone():
        db.close()
        return
    db.executescript("DELETE FROM features; INSERT INTO features SELECT * FROM true_features; DROP TABLE true_features;")
    db.commit()
    db.close()


def this_machine(a):
    """The fingerprint tawa gives this machine (the record's rows must be on it to be answered)."""
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, "machine.sqlite")
    if os.path.exists(path):
        os.remove(path)
    subprocess.run([os.path.join(a.build, "tawa"), "tune", "--suite", a.suite, "--db", path, "--only", "mandelbrot",
                    "--bin", os.path.join(a.build, "bench", "skeletons"), "--method", "random", "--budget", "1",
                    "--dry-run"], capture_output=True, text=True)
    db = sqlite3.connect(path)
    fp = db.execute("SELECT fingerprint, description FROM machines").fetchone()
    db.close()
    return fp


def run_search(a, path, name, method, budget, seed):
    cmd = [os.path.join(a.build, "tawa"), "tune", "--suite", a.suite, "--db", path, "--only", name, "--leave-one-out",
           "--bin", os.path.join(a.build, "bench", "skeletons"), "--method", method, "--budget", str(budget),
           "--seed", str(seed), "--timeout", "1"]
    if a.neighbours:
        cmd += ["--neighbours", str(a.neighbours)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("tune-sim: failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    measured = [l for l in r.stdout.splitlines() if " evaluations, " in l]
    if measured and " 0 measured" not in measured[-1]:
        sys.exit("tune-sim: the search ran the program (a configuration missing from the surrogate): " + measured[-1])
    res = json.loads([l for l in r.stdout.splitlines() if l.strip()][-1])[name]
    return canon(res["config"]) if res["config"] else None


def nearest_neighbour(a, path, name):
    """tawa tune's nearest neighbour of NAME by the static features, and its distance (a dry run: nothing runs)."""
    cmd = [os.path.join(a.build, "tawa"), "tune", "--suite", a.suite, "--db", path, "--only", name, "--leave-one-out",
           "--bin", os.path.join(a.build, "bench", "skeletons"), "--dry-run"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    line = next((l for l in r.stdout.splitlines() if l.startswith("masif: neighbours:")), None)
    if r.returncode != 0 or line is None:
        sys.exit("tune-sim: --transfer: no neighbours from: %s\n%s%s" % (" ".join(cmd), r.stdout[-1500:], r.stderr[-1500:]))
    first = line.split(":", 2)[2].split(")")[0]  # " mandelbrot (distance 2.16"
    nb, _, dist = first.strip().partition(" (distance ")
    return nb, float(dist)


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):  # ties share their mean rank
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    sxy = sum((x - mx) * (y - my) for x, y in zip(rx, ry))
    sxx = sum((x - mx) ** 2 for x in rx)
    syy = sum((y - my) ** 2 for y in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def transfer(a, src, names):
    """--transfer: see the module's doc. Returns 0; prints one line per program and a summary."""
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, "transfer.sqlite")
    if os.path.exists(path):
        os.remove(path)
    dst = sqlite3.connect(path)
    src.backup(dst)
    # The record's rows count for this machine's tawa only under this machine's fingerprint.
    fp = this_machine(a)
    dst.execute("UPDATE machines SET fingerprint=?, description=? WHERE id=(SELECT machine_id FROM measurements LIMIT 1)", fp)
    dst.commit()
    dst.close()
    top, budget, pool, draws = 10, 45, 400, 40
    print("program    nearest (distance)    shared  spearman: finished, all  %d best of the neighbour here: median "
          "percentile, fastest / best here  best of %d of %d: random, screened by the neighbour" % (top, budget, pool))
    rhos, rhos_all, medians, gains = [], [], [], []
    for name in names:
        pid = src.execute("SELECT id FROM programs WHERE name=?", (name,)).fetchone()
        nb, dist = nearest_neighbour(a, path, name)
        nid = src.execute("SELECT id FROM programs WHERE name=?", (nb,)).fetchone()
        mine = oracle_samples(src, pid[0])
        theirs = oracle_samples(src, nid[0]) if nid else {}
        both = [k for k in mine if k in theirs]
        shared = [k for k in both if math.isfinite(mine[k]) and math.isfinite(theirs[k])]
        head = "%-10s %-12s (%5.2f) %7d" % (name, nb, dist, len(shared))
        if len(shared) < 20:
            print(head + "  n/a: fewer than 20 configurations sampled by both (different parameters)")
            continue
        # Finished in both, and every configuration both sampled with a cut or failed sample (inf) tied as the slowest:
        # the first sees only the region near the top (the oracle cut what was 1.5x slower than its best so far).
        rho = spearman([mine[k] for k in shared], [theirs[k] for k in shared])
        rho_all = spearman([mine[k] for k in both], [theirs[k] for k in both])
        rhos.append(rho)
        rhos_all.append(rho_all)
        finite_mine = sorted(mine.values())  # a failed or cut sample (inf) counts as slower than any
        best = min(v for v in finite_mine if math.isfinite(v))
        carried = [k for k in sorted((k for k in theirs if math.isfinite(theirs[k])), key=theirs.get)[:top] if k in mine]
        pct = sorted(100.0 * sum(v <= mine[k] for v in finite_mine) / len(finite_mine) for k in carried)
        # Screening: of POOL configurations drawn from the program's samples, the BUDGET the neighbour's surrogate
        # (its own samples, nearest-sample interpolation) calls fastest, against BUDGET drawn at random from the pool.
        space = json.load(open(os.path.join(a.suite, name, "SPACE.json")))
        keys = sorted(mine)
        guess = dict(zip(keys, Surrogate(space, theirs).predict([json.loads(k) for k in keys])))
        score = lambda ks: best / min(mine[k] for k in ks)  # 0 when every one was cut
        rnd, scr = [], []
        for d in range(draws):
            rng = random.Random(d)
            cand = rng.sample(keys, min(pool, len(keys)))
            rnd.append(score(rng.sample(cand, min(budget, len(cand)))))
            scr.append(score(sorted(cand, key=guess.get)[:budget]))
        gains.append(statistics.mean(scr) - statistics.mean(rnd))
        screen = "  %5.1f%% %5.1f%%" % (100 * statistics.mean(rnd), 100 * statistics.mean(scr))
        if pct:
            med = statistics.median(pct)
            medians.append(med)
            fastest = min(mine[k] for k in carried) / best
            print(head + "  %8.2f %5.2f  %5.1f%% (of %d), %.2fx" % (rho, rho_all, med, len(pct), fastest) + screen)
        else:
            print(head + "  %8.2f %5.2f  n/a: the program's oracle sampled none of them" % (rho, rho_all) + screen)
    if rhos:
        print("mean spearman %.2f finished, %.2f all, over %d program(s); median percentile of carried configurations %s "
              "(chance: 50%%)" % (statistics.mean(rhos), statistics.mean(rhos_all), len(rhos),
                                 "%.1f%%" % statistics.median(medians) if medians else "n/a"))
        print("screened minus random, best of %d of %d (mean of %d draws each): %+.1f points (standard error %.1f over "
              "%d programs)" % (budget, pool, draws, 100 * statistics.mean(gains),
                               100 * statistics.stdev(gains) / math.sqrt(len(gains)) if len(gains) > 1 else float("nan"),
                               len(gains)))
    return 0


def compare(a_path, b_path, only=""):
    A, B = json.load(open(a_path)), json.load(open(b_path))
    if only:
        missing = [n for n in only.split(",") if n not in A or n not in B]
        if missing:
            sys.exit("tune-sim: --compare: %s not in both files" % ", ".join(missing))
        A = {n: v for n, v in A.items() if n in only.split(",")}
    cols = [(ca, cb) for ca in next(iter(A.values())) for cb in next(iter(B.values()))
            if ca.split("@")[1] == cb.split("@")[1]]
    for ca, cb in cols:
        d = [100 * (y - x) for n in A if n in B for x, y in zip(A[n][ca], B[n][cb])]
        if len(d) < 2:
            continue
        se = statistics.stdev(d) / math.sqrt(len(d))
        print("%s - %s: %+5.1f points (standard error %.1f, %d pairs)" % (cb, ca, statistics.mean(d), se, len(d)))


def main():
    a = parse_args()
    if a.compare:
        return compare(*a.compare, only=a.programs)
    if not a.record:
        sys.exit("tune-sim: --record is required (or --compare A.json B.json)")
    src = sqlite3.connect(a.record)
    fp = this_machine(a)
    budgets = [int(b) for b in a.budgets.split(",")]
    methods = a.methods.split(",")
    suite = json.load(open(os.path.join(a.suite, "suite.json")))
    names = [p["name"] for p in suite["programs"]]
    if a.programs:
        names = [n for n in names if n in a.programs.split(",")]
    else:
        # Every suite program the record has an oracle of: an older record predates later programs.
        held = [n for n in names if has_oracle(src, n)]
        if not held:
            sys.exit("tune-sim: the record holds no suite program with 100 or more oracle samples")
        if len(held) < len(names):
            print("tune-sim: the record has no oracle of %s: replaying the %d it has"
                  % (", ".join(n for n in names if n not in held), len(held)), file=sys.stderr)
        names = held
    if a.transfer:
        return transfer(a, src, names)
    scores = {}
    per_seed = {}
    for name in names:
        pid = src.execute("SELECT id FROM programs WHERE name=?", (name,)).fetchone()
        if not pid:
            sys.exit("tune-sim: %s is not in the record" % name)
        space = json.load(open(os.path.join(a.suite, name, "SPACE.json")))
        samples = oracle_samples(src, pid[0])
        if len(samples) < 100:
            sys.exit("tune-sim: %s has %d oracle samples in the record (needs 100 or more)" % (name, len(samples)))
        sur = Surrogate(space, samples)
        path = os.path.join(a.work, name + ".sqlite")
        if a.reuse and os.path.exists(path):
            restore_features(path)  # a shuffled run that was stopped leaves its shuffle behind
            db = sqlite3.connect(path)
            table = dict(db.execute(
                "SELECT c.config, m.seconds FROM configurations c JOIN measurements m ON m.configuration_id=c.id "
                "WHERE m.origin='surrogate' AND m.detail='r0'").fetchall())
            db.execute("DELETE FROM searches")
            db.commit()
        else:
            table = sur.table(space)
            path = make_record(a, src, name, table)
            db = sqlite3.connect(path)
            db.execute("UPDATE machines SET fingerprint=?, description=? WHERE id=(SELECT machine_id FROM measurements LIMIT 1)", fp)
            db.commit()
        db.close()
        got = {(m, b): [] for m in methods for b in budgets}
        for s in range(1, a.seeds + 1):
            seen = noisy(path, table, a.noise, s) if a.noise > 0 else table
            if a.shuffle_features:
                shuffle_features(path, name, s)
            for m in methods:
                for b in budgets:
                    if m == "tpe":
                        r = tune_eval.tpe_minimize(space, b, s, lambda k: seen[canon(json.loads(k))])
                        key = canon(r["config"]) if r["config"] else None
                    else:
                        key = run_search(a, path, name, m, b, s)
                    got[(m, b)].append(sur.best / table[key] if key else 0.0)
        if a.noise > 0:
            noisy(path, table, 0, 0)
        if a.shuffle_features:
            restore_features(path)
        row = {k: statistics.mean(v) for k, v in got.items()}
        scores[name] = row
        per_seed[name] = got
        print("%-13s %s" % (name, "  ".join("%s@%d %5.1f%%" % (m, b, 100 * row[(m, b)]) for m in methods for b in budgets)),
              flush=True)
    if a.seeds > 1:
        # How far one seed's suite mean strays: the spread a one-seed evaluation of the real programs has
        # from the search's own randomness alone (before any measurement noise of its own).
        print("%-13s %s" % ("sd of 1 seed", "  ".join(
            "%s@%d %5.1f%%" % (m, b, 100 * statistics.stdev(
                statistics.mean(per_seed[n][(m, b)][s] for n in names) for s in range(a.seeds)))
            for m in methods for b in budgets)))
    print("%-13s %s" % ("mean", "  ".join("%s@%d %5.1f%%" % (m, b, 100 * statistics.mean(scores[n][(m, b)] for n in names))
                                          for m in methods for b in budgets)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({n: {"%s@%d" % k: v for k, v in per_seed[n].items()} for n in names}, f, indent=1)


if __name__ == "__main__":
    main()

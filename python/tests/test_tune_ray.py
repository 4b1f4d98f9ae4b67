"""tawa tune --ray on a local Ray cluster (ray.init(num_cpus=2), two logical GPUs declared): batches
run at once on actors that each hold a GPU, a worker killed mid-run loses nothing and records nothing
twice, a rerun measures nothing new, and one or two workers reach the same best of a replayed
landscape. The tuner is this build's tawa (TAWA_BIN, set by the test suite)."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest
import ray  # installed in the test environment by scripts/install-deps.sh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TAWA = os.environ.get("TAWA_BIN", os.path.join(ROOT, "build", "tawa"))
REPLAY = os.path.join(ROOT, "tests", "lit", "tune", "Inputs", "replay")
SPACE6 = os.path.join(ROOT, "tests", "lit", "tune", "Inputs", "workers", "SPACE.json")


@pytest.fixture(scope="module")
def cluster():
    assert os.access(TAWA, os.X_OK), "no tawa binary at %s (build it, or set TAWA_BIN)" % TAWA
    # Ray warns that a future version stops setting CUDA_VISIBLE_DEVICES for actors without GPUs.
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def tune(cluster, db, *args, ray_args=("--ray-gpus", "1")):
    cmd = [TAWA, "tune", "--db", str(db), "--ray", cluster, "--python", sys.executable, *ray_args, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def rows(db, sql):
    with sqlite3.connect(str(db)) as c:
        return c.execute(sql).fetchall()


def test_batches_run_at_once_one_actor_per_gpu(cluster, tmp_path):
    log = tmp_path / "log"
    out = tune(cluster, tmp_path / "t.db", "--program",
               "echo start $(date +%%s.%%N) >> %s; sleep 0.6; echo end $(date +%%s.%%N) >> %s; echo tawa-time: {x}" % (log, log),
               "--space", SPACE6, "--method", "exhaustive", "--budget", "6", "--reps", "1", "--warmups", "0", "--finalists", "0")
    assert "workers: 1 worker process(es), 2 slot(s)" in out
    assert "best 1 s after 6 evaluations (6 measured, 0 from the record)" in out
    events = []
    for line in log.read_text().split("\n"):
        if line:
            kind, t = line.split()
            events.append((float(t), 1 if kind == "start" else -1))
    now = peak = 0
    for _, d in sorted(events, key=lambda e: (e[0], e[1])):
        now += d
        peak = max(peak, now)
    assert peak == 2, "the two actors never measured at once"
    workers = [json.loads(w) for (w,) in rows(tmp_path / "t.db", "select worker from measurements")]
    assert len(workers) == 6
    assert {w["details"]["cuda_visible_devices"] for w in workers} == {"0", "1"}, workers
    assert {w["name"] for w in workers} == {"ray 0", "ray 1"}


def test_actor_killed_mid_run(cluster, tmp_path):
    db = tmp_path / "k.db"
    marker = tmp_path / "killed"
    # The program kills the actor process that runs it, once.
    out = tune(cluster, db, "--program",
               "if mkdir %s 2>/dev/null; then kill -9 $PPID; sleep 2; fi; echo tawa-time: {x}" % marker,
               "--space", SPACE6, "--method", "exhaustive", "--budget", "6", "--reps", "1", "--warmups", "0", "--finalists", "0")
    assert "lost (actor ray " in out and "died" in out, out
    assert "started again" in out, out
    assert "best 1 s after 6 evaluations (6 measured, 0 from the record)" in out, out
    assert rows(db, "pragma integrity_check") == [("ok",)]
    total, configs, ok = rows(db, "select count(*), count(distinct configuration_id), sum(status = 'ok') from measurements")[0]
    assert (total, configs, ok) == (6, 6, 6), "a configuration lost or recorded twice"


def test_rerun_measures_nothing_new(cluster, tmp_path):
    db = tmp_path / "r.db"
    args = ["--replay", os.path.join(REPLAY, "data.csv"), "--space", os.path.join(REPLAY, "SPACE.json"), "--budget", "14"]
    first = tune(cluster, db, *args)
    assert "(14 measured, 0 from the record)" in first, first
    again = tune(cluster, db, *args)
    assert "(0 measured, 14 from the record)" in again, again


@pytest.mark.parametrize("workers", ["1", "2"])
def test_one_or_two_workers_reach_the_same_best(cluster, tmp_path, workers):
    out = tune(cluster, tmp_path / "s.db", "--replay", os.path.join(REPLAY, "data.csv"), "--space",
               os.path.join(REPLAY, "SPACE.json"), "--budget", "14", ray_args=("--ray-workers", workers))
    last = out.strip().split("\n")[-1]
    assert json.loads(last) == {"bx": 64, "by": 2, "unroll": 2}, out
    assert "workers: 1 worker process(es), %s slot(s)" % workers in out

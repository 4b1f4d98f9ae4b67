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
OVERLAP = os.path.join(ROOT, "tests", "lit", "tune", "Inputs", "workers", "overlap.py")  # runs at most at once, from a log


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
    overlap = subprocess.run([sys.executable, OVERLAP, str(log)], capture_output=True, text=True, check=True).stdout
    assert overlap.strip() == "at most 2 at once", "the two actors never measured at once: " + overlap
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



def test_autotune_trials_on_ray(cluster, tmp_path, rng):
    """tawa.autotune(ray=True): the configurations measured as Ray tasks in other processes, the same
    choice as measuring here, each recorded once, and the launch right."""
    import importlib.util

    import numpy as np

    import tawa

    from test_autotune import KERNEL  # an autotuned GEMM: its kernel and configurations, tuned again here

    (tmp_path / "mm_ray.py").write_text(KERNEL)
    spec = importlib.util.spec_from_file_location("mm_ray", tmp_path / "mm_ray.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    kernel, configs = mod.mm.fn, mod.mm.configs
    M, N, K = 256, 64, 128
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    grid = lambda meta: (tawa.cdiv(M, meta["BM"]),)  # noqa: E731

    on_ray = tawa.autotune(configs, key=["M", "K"], record=str(tmp_path / "ray.db"), ray=True)(kernel)
    c = np.full((M, N), 9, np.float16)
    on_ray[grid](a, b, c, M, N, K)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.allclose(c.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.sqrt(K)), abs(c - ref).max()
    assert on_ray.measured == 3
    assert on_ray.trial_workers and all(pid != os.getpid() for _, pid in on_ray.trial_workers)

    here = tawa.autotune(configs, key=["M", "K"], record=str(tmp_path / "here.db"))(kernel)
    here[grid](a, b, np.empty_like(c), M, N, K)
    assert here.best[("256", "128")].kwargs == on_ray.best[("256", "128")].kwargs
    assert rows(tmp_path / "ray.db", "select count(*), count(distinct configuration_id) from measurements") == [(3, 3)]

    again = tawa.autotune(configs, key=["M", "K"], record=str(tmp_path / "ray.db"), ray=True)(kernel)
    again[grid](a, b, np.empty_like(c), M, N, K)
    assert again.measured == 0


def test_actor_that_keeps_dying_is_dropped(cluster, tmp_path):
    """An actor killed by every run of one configuration is started again twice, then dropped; the
    configuration, lost three times, is recorded as failed, and the others are measured."""
    db = tmp_path / "d.db"
    out = tune(cluster, db, "--program", "if [ {x} = 6 ]; then kill -9 $PPID; sleep 2; fi; echo tawa-time: {x}",
               "--space", SPACE6, "--method", "exhaustive", "--budget", "6", "--reps", "1", "--warmups", "0", "--finalists", "0",
               ray_args=("--ray-workers", "1"))
    assert "worker ray 0 dropped: it died 3 times" in out, out
    assert '{"x":6} failed (lost with its worker 3 times' in out, out
    assert "best 1 s after 6 evaluations" in out, out
    assert rows(db, "select count(*), sum(status = 'ok') from measurements") == [(6, 5)]

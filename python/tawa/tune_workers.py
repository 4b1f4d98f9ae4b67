"""Ray workers for ``tawa tune --ray ADDRESS``.

The tuner (the C++ ``tawa tune``, the only writer of the tuning record) starts this module as a child
process and speaks the worker protocol of src/tune/Workers.h with it over standard input and output:
it sends measurement jobs, one JSON object per line, and this process runs each on a Ray actor and
answers with the measurement as soon as it is back, in whatever order they finish.

Each actor holds ``--gpus-per-worker`` GPUs (Ray sets its CUDA_VISIBLE_DEVICES) or
``--cpus-per-worker`` CPUs, and runs jobs through the tawa package's C++ library
(``tawa._tawa.run_tune_job``): the same code a local ``tawa tune --serve-worker`` runs, so a
measurement means the same thing on either engine. An actor that dies (its node lost, its process
killed) loses the job it ran: the tuner is told (``lost``) and gives the job to another worker; the
actor is started again, and dropped after three deaths.

    python -m tawa.tune_workers --address auto --gpus-per-worker 1     # what tawa tune --ray auto --ray-gpus 1 runs
"""

import argparse
import collections
import json
import os
import queue
import sys
import threading

MAX_DEATHS = 3


class TuneWorker:
    """One Ray actor: measures jobs with tawa's C++ library on the resources Ray gave it."""

    def __init__(self, name):
        from tawa import _tawa

        self._tawa = _tawa
        self._identity = _tawa.tune_worker_identity(name)

    def identity(self):
        return json.loads(self._identity)

    def run(self, job_line):
        return self._tawa.run_tune_job(job_line, self._identity)


def _short(exc):
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m tawa.tune_workers",
        description="Run tawa tune's measurement jobs on Ray actors (the tuner starts this; see tawa tune --help).",
    )
    ap.add_argument("--address", required=True, help="the Ray cluster: auto, ray://HOST:PORT, HOST:PORT, or local (start one here)")
    ap.add_argument("--workers", type=int, default=0, help="actors to start (0: as many as the cluster's GPUs or CPUs allow)")
    ap.add_argument("--gpus-per-worker", type=float, default=0.0)
    ap.add_argument("--cpus-per-worker", type=float, default=1.0)
    ap.add_argument("--name", default="ray", help="the actors are named NAME 0, NAME 1, ...")
    args = ap.parse_args(argv)

    # The protocol owns standard output: whatever else prints (Ray, warnings) goes to standard error.
    channel = sys.stdout
    sys.stdout = sys.stderr

    def emit(obj):
        channel.write(json.dumps(obj) + "\n")
        channel.flush()

    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning, module="ray")
    import ray

    try:
        if args.address == "local":
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=args.address, log_to_driver=False, configure_logging=False)
    except Exception as e:  # noqa: BLE001 - any failure to connect is the user's to read
        emit({"message": "cannot connect to the Ray cluster at %s: %s" % (args.address, _short(e))})
        return 1

    res = ray.cluster_resources()
    gpus, cpus = args.gpus_per_worker, args.cpus_per_worker
    n = args.workers
    if n <= 0:
        n = int(res.get("GPU", 0) // gpus) if gpus > 0 else int(res.get("CPU", 1) // max(cpus, 1e-9))
    if n <= 0:
        emit({"message": "the Ray cluster has no room for a worker (%s; each needs %g GPU(s), %g CPU(s))" % (res, gpus, cpus)})
        return 1
    Actor = ray.remote(num_cpus=cpus, num_gpus=gpus, max_restarts=0)(TuneWorker)

    actors, deaths = {}, collections.Counter()

    def start(name):
        actors[name] = Actor.remote(name)

    names = ["%s %d" % (args.name, i) for i in range(n)]
    for name in names:
        start(name)
    try:
        identities = ray.get([actors[name].identity.remote() for name in names], timeout=300)
    except Exception as e:  # noqa: BLE001
        emit({"message": "the Ray actors did not start: %s" % _short(e)})
        return 1
    emit({"hello": identities, "slots": n})

    lines = queue.Queue()

    def read_input():
        for line in sys.stdin:
            if line.strip():
                lines.put(line)
        lines.put(None)

    threading.Thread(target=read_input, daemon=True).start()

    idle = list(names)
    jobs = collections.deque()
    pending = {}  # ObjectRef -> (job id, actor name)
    eof = False

    def drop(name, why):
        actors.pop(name, None)
        if name in idle:
            idle.remove(name)
        emit({"message": "worker %s dropped: %s" % (name, why)})
        emit({"slots": len(actors)})

    while not (eof and not pending and not jobs):
        block = not pending and not jobs and not eof
        while True:
            try:
                line = lines.get(block=block)
            except queue.Empty:
                break
            block = False
            if line is None:
                eof = True
                break
            msg = json.loads(line)
            if "drop" in msg:
                if msg["drop"] in actors:
                    ray.kill(actors[msg["drop"]])
                    drop(msg["drop"], "the tuner asked")
                continue
            jobs.append(msg)
        while jobs and idle:
            job = jobs.popleft()
            name = job.get("on") if job.get("on") in idle else idle[0]
            idle.remove(name)
            pending[actors[name].run.remote(json.dumps(job))] = (job["id"], name)
        if not pending:
            continue
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.05)
        for ref in ready:
            job_id, name = pending.pop(ref)
            try:
                emit(json.loads(ray.get(ref)))
                idle.append(name)
            except ray.exceptions.RayActorError as e:
                deaths[name] += 1
                if deaths[name] >= MAX_DEATHS:
                    # Said before the loss, so that the tuner has read it when the loss ends its search.
                    drop(name, "it died %d times" % deaths[name])
                    emit({"id": job_id, "lost": "actor %s died: %s" % (name, _short(e))})
                else:
                    emit({"id": job_id, "lost": "actor %s died: %s" % (name, _short(e))})
                    start(name)
                    try:
                        emit({"hello": ray.get(actors[name].identity.remote(), timeout=300)})
                        emit({"message": "worker %s died (%s); started again" % (name, _short(e))})
                        idle.append(name)
                    except Exception as e2:  # noqa: BLE001
                        drop(name, "it did not start again: %s" % _short(e2))
            except Exception as e:  # noqa: BLE001 - the job failed inside a live actor
                emit({"id": job_id, "lost": "job failed on %s: %s" % (name, _short(e))})
                idle.append(name)
        if not actors and (jobs or pending):
            for job_id, _ in pending.values():
                emit({"id": job_id, "lost": "no worker left"})
            for job in jobs:
                emit({"id": job["id"], "lost": "no worker left"})
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``@tawa.autotune(configs=[...], key=[...])``: Triton's autotuning interface, on tawa's tuner record.

For each new value of the ``key`` arguments the launcher measures every configuration once, keeps
the fastest, and launches with it. Measurements go into the SQLite record that ``tawa tune`` keeps
(``record=``, default ``$TAWA_CACHE_DIR/autotune.db`` or ``~/.cache/tawa/autotune.db``), so a restarted
process reuses what was tuned instead of tuning again.

What is measured: on CUDA tensors, the GPU time of each configuration (torch's CUDA events around
``GPU_REPS`` launches on torch's current stream after a warm-up; the median), recorded under the GPU's
name. On the CPU backends (exec, emu) a kernel's GPU time cannot be timed, so each configuration is
ranked by the modelled time of its profiled launch (tawa's cost model of an H200-class SM, as
``tawa.profile`` reports it), recorded under the device "tawa cost model (H200, modelled)" so that
modelled figures are never ranked with measured ones. Trial launches run on copies of the array
arguments: the caller's arrays see only the final launch.

With ``ray=True`` (or a cluster address, ``ray="auto"``) the configurations not in the record are
measured at once as Ray tasks, one CPU each, across the cluster (``ray.init`` is called when Ray is
not initialized yet); each task loads the kernel from its file, so the file must be readable on
every node. This process alone writes the record, in the order of ``configs``, each result once
(Ray runs a task again when its worker dies before answering). CUDA tensors are measured in this
process, on its GPU, whatever ``ray`` says.
"""

import json
import os
import threading

from . import _tawa
from .errors import TawaError
from .jit import JITFunction, _array, _on_gpu, cache_root, wrap
from .profiler import profile

MODEL_DEVICE = "tawa cost model (H200, modelled)"
GPU_WARMUP, GPU_REPS = 2, 10  # launches per configuration on a GPU: untimed, then timed


class Config:
    """One configuration: constexpr values (``kwargs``) and launch options, as ``triton.Config``."""

    def __init__(self, kwargs, num_warps=None, num_stages=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages

    def all_kwargs(self):
        out = dict(self.kwargs)
        if self.num_warps is not None:
            out["num_warps"] = self.num_warps
        if self.num_stages is not None:
            out["num_stages"] = self.num_stages
        return out

    def __repr__(self):
        return f"Config({self.all_kwargs()})"


def _config_of(c):
    """A tawa Config from a tawa.Config or a triton.Config (its kwargs, num_warps, num_stages)."""
    if isinstance(c, Config):
        return c
    if hasattr(c, "kwargs"):
        return Config(c.kwargs, getattr(c, "num_warps", None), getattr(c, "num_stages", None))
    raise TypeError(f"a configuration must be a tawa.Config or a triton.Config, got {type(c).__name__}")


def _default_record():
    d = cache_root()
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "autotune.db")


def _key_value(v):
    a = _array(v)
    if a is not None and not isinstance(a[0], str):
        return f"{a[1]}{list(getattr(v, 'shape', ()))}"
    return repr(v)


def _copy(v):
    if type(v).__name__ == "ndarray":
        return v.copy()
    if hasattr(v, "clone") and hasattr(v, "data_ptr"):
        return v.clone()
    return v


class Autotuner:
    """A kernel launched with the fastest of its configurations for each value of its key."""

    def __init__(self, fn, configs, key, record=None, ray=None):
        self.fn = fn if isinstance(fn, JITFunction) else wrap(fn)
        self.configs = [_config_of(c) for c in configs]
        if not self.configs:
            raise ValueError("tawa.autotune needs at least one configuration")
        self.key = list(key)
        self.record_path = record
        self.ray = ray
        self.trial_workers = set()  # with ray: the (host, pid) of the processes that measured
        self.best = {}  # key values -> Config
        self.measured = 0  # configurations measured by this process
        self._lock = threading.Lock()
        self.__name__ = self.fn.__name__

    def _record(self, device):
        return _tawa.TuneRecord(self.record_path or _default_record(), device)

    def _tune(self, grid, args, kwargs, keyvals, backend):
        name = f"{self.fn.path}:{self.fn.__name__}[{', '.join(f'{k}={v}' for k, v in zip(self.key, keyvals))}]"
        space = json.dumps([c.all_kwargs() for c in self.configs], sort_keys=True)
        gpu = backend == "cuda"
        rec = self._record(_gpu_name() if gpu else MODEL_DEVICE)
        prog = rec.program(name, "tawa.autotune", space)
        texts = [json.dumps(c.all_kwargs(), sort_keys=True) for c in self.configs]
        times = [rec.lookup(prog, text) for text in texts]
        missing = [i for i, t in enumerate(times) if t is None]
        if self.ray and missing and not gpu:
            new = self._measure_on_ray(grid, args, kwargs, [self.configs[i] for i in missing], backend)
        else:
            new = [self._measure(grid, args, kwargs, self.configs[i], backend) for i in missing]
        for i, t in zip(missing, new):
            rec.add(prog, texts[i], t, "tawa.autotune" + (" (gpu)" if gpu else " (ray)" if self.ray else ""),
                    "" if t != float("inf") else "the trial launch failed")
            self.measured += 1
            times[i] = t
        best = min(range(len(times)), key=lambda i: times[i])
        if times[best] == float("inf"):
            raise TawaError(f"{self.fn.path}:{self.fn.def_line}:1: error: every configuration of '{self.fn.__name__}' failed",
                            self.fn.path, self.fn.def_line, 1, f"every configuration of '{self.fn.__name__}' failed")
        return self.configs[best]

    def _measure(self, grid, args, kwargs, config, backend):
        trial_kwargs = dict(kwargs)
        trial_kwargs.update(config.all_kwargs())
        if backend == "cuda":
            return _gpu_seconds(self.fn, grid, args, trial_kwargs)
        return _modelled_seconds(self.fn, grid, args, trial_kwargs, backend)

    def _measure_on_ray(self, grid, args, kwargs, configs, backend):
        import ray

        if not ray.is_initialized():
            if isinstance(self.ray, str):
                ray.init(address=self.ray, log_to_driver=False)
            else:
                ray.init(log_to_driver=False)
        trial = ray.remote(num_cpus=1, max_retries=3)(_ray_trial)
        refs = []
        for c in configs:
            trial_kwargs = dict(kwargs)
            trial_kwargs.update(c.all_kwargs())
            refs.append(trial.remote(self.fn.path, self.fn.__name__, sorted(self.fn._dns, key=str), grid, list(args), trial_kwargs,
                                     backend))
        out = []
        for seconds, worker in ray.get(refs):
            self.trial_workers.add(worker)
            out.append(seconds)
        return out

    def _run(self, grid, args, kwargs):
        params = self.fn._signature()
        index = {p[0]: i for i, p in enumerate(params)}
        backend = kwargs.get("backend") or self.fn.backend or ("cuda" if _on_gpu(args, kwargs) else "exec")
        keyvals = []
        for k in self.key:
            if k in kwargs:
                keyvals.append(_key_value(kwargs[k]))
            elif k in index and index[k] < len(args):
                keyvals.append(_key_value(args[index[k]]))
            else:
                raise TypeError(f"tawa.autotune key '{k}' is not an argument of this launch of '{self.fn.__name__}'")
        keyvals = tuple(keyvals)
        config = self.best.get(keyvals)
        if config is None:
            with self._lock:
                config = self.best.get(keyvals)
                if config is None:
                    config = self._tune(grid, args, {k: v for k, v in kwargs.items() if k != "backend"}, keyvals, backend)
                    self.best[keyvals] = config
        return self.fn[grid](*args, **kwargs, **config.all_kwargs())

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self._run(grid, args, kwargs)

    def __repr__(self):
        return f"<tawa.Autotuner {self.__name__}: {len(self.configs)} configurations, key {self.key}>"


def _modelled_seconds(fn, grid, args, kwargs, backend):
    """The cost model's time of one trial launch of ``fn`` on copies of the arrays."""
    trial_args = [_copy(a) for a in args]
    trial_kwargs = {k: _copy(v) for k, v in kwargs.items()}
    with profile() as prof:
        fn[grid](*trial_args, backend=backend, **trial_kwargs)
    launch = prof.launches[0]
    if not launch.profiled:
        raise TawaError(f"{fn.path}:{fn.def_line}:1: error: tawa.autotune ranks configurations on the CPU by "
                        "the cost model's modelled time, which needs a warp-specialized kernel; "
                        f"'{fn.__name__}' has no tile.dot and no tensor descriptor",
                        fn.path, fn.def_line, 1, "the kernel has no warp-specialized form to model",
                        "launch it with fixed constexprs instead")
    return launch.report["kernel_us"] * 1e-6


def _gpu_name():
    import sys

    return sys.modules["torch"].cuda.get_device_name(0)


def _gpu_seconds(fn, grid, args, kwargs):
    """The GPU time of one configuration: GPU_WARMUP launches, then GPU_REPS each between two of
    torch's CUDA events on the current stream, on copies of the tensors; the median, in seconds.
    +inf when the configuration does not compile or launch (a located error of tawa's)."""
    import statistics
    import sys

    torch = sys.modules["torch"]
    trial_args = [_copy(a) for a in args]
    trial_kwargs = {k: _copy(v) for k, v in kwargs.items()}
    try:
        for _ in range(GPU_WARMUP):
            fn[grid](*trial_args, **trial_kwargs)
        ms = []
        for _ in range(GPU_REPS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn[grid](*trial_args, **trial_kwargs)
            end.record()
            end.synchronize()
            ms.append(start.elapsed_time(end))
    except TawaError:
        return float("inf")
    return statistics.median(ms) * 1e-3


def _ray_trial(path, name, do_not_specialize, grid, args, kwargs, backend):
    """A Ray task: one configuration's trial, the kernel loaded from its file on the worker."""
    import socket

    from .jit import load

    fn = load(path, name, do_not_specialize=do_not_specialize)
    return _modelled_seconds(fn, grid, args, kwargs, backend), (socket.gethostname(), os.getpid())


def autotune(configs, key, record=None, ray=None):
    """Decorates a ``@tawa.jit`` kernel (or a ``triton.jit`` one) to launch with the fastest of
    ``configs`` for each value of the ``key`` arguments (see the module's description); ``ray=True``
    or an address measures the configurations at once on a Ray cluster."""

    def deco(fn):
        return Autotuner(fn, configs, key, record, ray)

    return deco

"""``with tawa.profile() as prof:``: every tawa launch inside runs profiled per warp group.

Proton-like: the block's launches compute their results as usual, and each leaves a record with the
per-role summary (where the producer and the consumers were busy, waiting or issuing), the roofline
position, advice, and a Chrome trace (open it in https://ui.perfetto.dev). On the executor and the
emulator every figure is modelled by tawa's cost model of an H200-class SM, and says so. On CUDA
tensors the kernel is launched instrumented (its elected threads record tawa's scopes with clock64)
on torch's current stream and waited for: its figures are GPU 0's clock. A kernel with no
warp-specialized form (no tile.dot, no tensor descriptor) runs unprofiled and is listed so.
"""

import json
import os
import threading

_active = threading.local()


class Launch:
    """One profiled launch: ``kernel``, ``grid``, ``summary`` (text), ``report`` (the summary and
    advice as a dict), ``trace`` (Chrome trace JSON text; "" when not profiled) and ``profiled``."""

    def __init__(self, kernel, grid, summary, report, trace, profiled=True):
        self.kernel, self.grid, self.summary, self.report, self.trace, self.profiled = kernel, grid, summary, report, trace, profiled

    def __repr__(self):
        return f"<tawa profile of {self.kernel} grid {self.grid}{'' if self.profiled else ' (not profiled)'}>"


class profile:  # noqa: N801 - used as a function: with tawa.profile() as prof
    """Profiles the tawa launches made inside the ``with`` block (in this thread).

    ``trace_dir``: also write each launch's trace there as KERNEL.N.trace.json on exit.
    """

    def __init__(self, trace_dir=None):
        self.trace_dir = trace_dir
        self.launches = []

    def __enter__(self):
        self._outer = getattr(_active, "session", None)
        _active.session = self
        return self

    def __exit__(self, *exc):
        _active.session = self._outer
        if self.trace_dir is not None:
            os.makedirs(self.trace_dir, exist_ok=True)
            for n, launch in enumerate(self.launches):
                if launch.trace:
                    with open(os.path.join(self.trace_dir, f"{launch.kernel}.{n}.trace.json"), "w") as f:
                        f.write(launch.trace)
        return False

    @property
    def summary(self):
        """Every launch's summary, one after the other."""
        return "\n".join(f"== {l.kernel} grid {l.grid}\n{l.summary}" for l in self.launches)

    def _record(self, kernel, grid, summary, report_json, trace):
        self.launches.append(Launch(kernel, grid, summary, json.loads(report_json), trace))

    def _record_unprofiled(self, kernel, grid, why):
        self.launches.append(Launch(kernel, grid, why, {}, "", profiled=False))


def session():
    """The profile block the current thread is in, or None."""
    return getattr(_active, "session", None)

"""A stand-in for the few parts of torch that a tawa launch reads from CUDA tensors (dtype, device,
data_ptr(), shape, stride(), element_size(), numel(), is_contiguous(), clone(), cpu()) and torch.cuda
(current_stream(), Event, synchronize(), get_device_name()), for tests of the GPU
launch path on machines without torch or a GPU. install() puts it in sys.modules as "torch"."""
import sys
import types


class _Device:
    def __init__(self, kind, index):
        self.type, self.index = kind, index


class _Stream:
    def __init__(self, handle):
        self.cuda_stream = handle


class Tensor:
    """A tensor whose data_ptr() is a device address nobody reads (the driver is a recording fake)."""

    def __init__(self, ptr, dtype, shape, device="cuda", index=0, stride=None):
        self._ptr, self.dtype, self.shape = ptr, "torch." + dtype, tuple(shape)
        self.device = _Device(device, index)
        self._item = {"float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8, "int8": 1}[dtype]
        row_major, acc = [], 1
        for n in reversed(self.shape):
            row_major.insert(0, acc)
            acc *= n
        self._stride = tuple(stride or row_major)
        # torch keeps these as fields its C methods return; computed once here, so that timings of a
        # launch through this stand-in count little of its own cost
        self._numel = acc
        self._contiguous = all(s == r for s, r, n in zip(self._stride, row_major, self.shape) if n > 1)

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride

    def element_size(self):
        return self._item

    def numel(self):
        return self._numel

    def clone(self):
        """A copy at another fake address (256-byte aligned, as torch allocates)."""
        _next[0] += 1 << 24
        return Tensor(_next[0], self.dtype[len("torch."):], self.shape, self.device.type, self.device.index, self._stride)

    def cpu(self):
        """A host copy: this stand-in holds no data, so fresh random values (never zero) of its dtype."""
        import numpy as np

        host = np.random.default_rng().uniform(0.5, 1.5, size=self.shape).astype(self.dtype[len("torch."):])
        return host

    def is_contiguous(self):
        return self._contiguous


Tensor.__module__ = "torch"

_current = [0x5151]
_next = [1 << 44]  # where clones go
# What the CUDA events report, in ms, one value per elapsed_time() call in order (tests of tawa.autotune
# on CUDA tensors set it: nothing runs on this fake GPU to be timed).
elapsed = []


class _Event:
    def __init__(self, enable_timing=False):
        self.recorded = False

    def record(self, stream=None):
        self.recorded = True

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        assert self.recorded and end.recorded, "both events recorded"
        return elapsed.pop(0)


def set_stream(handle):
    """What torch.cuda.current_stream() answers from now on (torch.cuda.stream(s) in real torch)."""
    _current[0] = handle


def install():
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.cuda = types.SimpleNamespace(current_stream=lambda device=None: _Stream(_current[0]), Event=_Event,
                                       synchronize=lambda device=None: None,
                                       get_device_name=lambda device=None: "recording sm_90 test device")
    sys.modules["torch"] = torch
    return torch

"""Launching kernels Triton's way: ``kernel[grid](*args, BLOCK=..., num_warps=...)``.

A ``JITFunction`` holds a kernel's source location (its file, read by tawa's front end: no Python
of the kernel body ever runs, and Triton need not be installed). Each launch binds the arguments to
the kernel's parameters, computes the specialization key as Triton does (array dtypes and 16-byte
alignment, integer widths and 16-divisibility, integers equal to 1 and ``None`` as constants,
``do_not_specialize``, constexpr values, launch options), and looks the key up in memory, then on
disk (the specialized tile IR, checked against the source files it came from), before compiling.
A launch of common arguments seen before skips all of that: python/src/launcher.cpp keys it in C++
and launches the kernel chosen for it the first time.

Host arrays (numpy arrays, CPU torch tensors) run on the CPU executor (``backend="exec"``, the
default) or on the emulator of the CUDA kernel (``backend="emu"``); the arrays are updated in place.
CUDA tensors (torch, on cuda:0) launch on the GPU (``backend="cuda"``, chosen by them) on torch's
current stream, zero-copy: the launch only enqueues the kernel, as Triton's does.
"""

import hashlib
import json
import os
import re
import threading
import weakref

from . import _tawa
from . import profiler as _profiler
from .errors import TawaError

_NUMPY_DTYPES = {
    "float16": "fp16", "float32": "fp32", "float64": "fp64", "bfloat16": "bf16",
    "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "bool": "i1",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}
_TORCH_DTYPES = {"torch." + k: v for k, v in _NUMPY_DTYPES.items()}
_TORCH_BY_DTYPE = {}  # torch dtype objects seen, to their short names
# The spec's spelling of a dtype constant (tl.float16 ...), from Triton's short names.
_LONG_DTYPE = {
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "fp8e4nv": "float8e4nv",
    "fp8e5": "float8e5", "i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
}
# Launch options Triton takes that tawa reads; the tawa-only ones pick the backend and the passes.
_TRITON_OPTIONS = ("num_warps", "num_stages", "num_ctas")
_TAWA_OPTIONS = ("backend", "seed", "threads", "depth", "mma_depth", "consumers", "persistent", "ping_pong",
                 "keep_program_order", "shared_ring", "inject")
_BACKENDS = ("exec", "emu", "cuda")
_OPTIONS = frozenset(_TRITON_OPTIONS + _TAWA_OPTIONS)
_RUN_OPTIONS = frozenset(("backend", "seed", "threads"))  # how a launch runs, not what it compiles
_NO_OPTIONS = {}


class ArgumentError(TawaError, TypeError):
    """A launch whose arguments do not fit the kernel (located at the kernel's definition)."""


def cache_root():
    """tawa's cache folder: $TAWA_CACHE_DIR, else $XDG_CACHE_HOME/tawa or ~/.cache/tawa."""
    d = os.environ.get("TAWA_CACHE_DIR")
    if d:
        return d
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tawa")


def _cache_dir():
    return os.path.join(cache_root(), "python")


def _sha256_file(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


import numpy as _np

_NP_SCALARS = (_np.integer, _np.floating, _np.bool_)
_NUMPY_BY_DTYPE = {}
for _name, _short in _NUMPY_DTYPES.items():
    try:
        _NUMPY_BY_DTYPE[_np.dtype(_name)] = _short
    except TypeError:
        pass  # bfloat16 and fp8 exist only with ml_dtypes; their names are matched below


def _dtype_short(d):
    """Triton's short name of an array's dtype object (numpy's or torch's), or None."""
    if isinstance(d, _np.dtype):
        return _NUMPY_BY_DTYPE.get(d) or _NUMPY_DTYPES.get(d.name)
    short = _TORCH_BY_DTYPE.get(d)
    if short is None:
        short = _TORCH_DTYPES.get(str(d))
        if short is not None:
            _TORCH_BY_DTYPE[d] = short  # str(dtype) once per dtype object
    return short


def _array(x):
    """(address, dtype, elements, aligned, on_gpu) of an array (a host array, or a torch tensor on
    cuda:0), or None when x is not an array; an error tuple (kind, detail) for an array tawa cannot
    take.

    A strided view passes its base address and the extent its strides reach: the kernel reads it
    through the strides it is given, as Triton's kernels do.
    """
    t = type(x)
    if t is _np.ndarray:
        dtype = _dtype_short(x.dtype)
        if dtype is None:
            return ("unsupported", x.dtype.name)
        addr = x.__array_interface__["data"][0]
        if x.flags.c_contiguous and x.size:
            return (addr, dtype, x.size, not addr & 15, False)
        shape, strides, item = x.shape, x.strides, x.itemsize
        on_gpu = False
    elif t.__name__ in ("Tensor", "Parameter") and t.__module__.startswith("torch"):
        dtype = _dtype_short(x.dtype)
        if dtype is None:
            return ("unsupported", str(x.dtype))
        device = x.device
        on_gpu = device.type == "cuda"
        if on_gpu and device.index not in (None, 0):
            return ("device", f"cuda:{device.index}")
        if not on_gpu and device.type != "cpu":
            return ("device", device.type)
        addr = x.data_ptr()
        if x.is_contiguous():
            n = x.numel()
            if n:
                return (addr, dtype, n, not addr & 15, on_gpu)
        shape, item = tuple(x.shape), x.element_size()
        strides = tuple(s * item for s in x.stride())
    else:
        return None
    extent = 1
    for n, s in zip(shape, strides):
        if n == 0:
            return ("empty", None)
        if s < 0 or s % item:
            return ("strides", strides)
        extent += (n - 1) * (s // item)
    return (addr, dtype, extent, not addr & 15, on_gpu)


def _on_gpu(args, kwargs):
    """Whether a launch's arrays (descriptors' bases included) are CUDA tensors."""
    for v in list(args) + list(kwargs.values()):
        a = _array(v.base if _descriptor(v) else v)
        if a is not None and not isinstance(a[0], str) and a[4]:
            return True
    return False


class PointerArray(_np.ndarray):
    """An array of pointers: int64 elements holding the addresses of ``pointees`` (host arrays), as
    Triton's grouped GEMM reads its matrices (``tl.load(ptrs + g).to(tl.pointer_type(tl.float16))``).
    Made by :func:`pointer_array`; the launch gives the kernel each backend's own addresses of the
    pointees and copies them in and back like arguments. It keeps the pointees alive."""

    pointees = ()
    _pointee_args = ()  # each pointee's (address, dtype, elements), as a launch passes them

    def __array_finalize__(self, obj):
        self.pointees = getattr(obj, "pointees", ())
        self._pointee_args = getattr(obj, "_pointee_args", ())


def pointer_array(arrays):
    """The addresses of ``arrays`` (numpy arrays or CPU tensors, contiguous) as a
    :class:`PointerArray` to pass where a kernel takes a pointer to int64 addresses."""
    arrays = list(arrays)
    if not arrays:
        raise ArgumentError("pointer_array: give at least one array")
    infos = []
    for k, x in enumerate(arrays):
        a = _array(x)
        if a is None or isinstance(a[0], str):
            raise ArgumentError(f"pointer_array: item {k} is a {type(x).__name__}, not an array tawa takes"
                                + (f" ({a[0]}: {a[1]})" if a is not None else ""))
        if a[4]:
            raise ArgumentError(f"pointer_array: item {k} is a CUDA tensor; on the GPU pass a CUDA tensor of the "
                                "addresses itself: torch.tensor([t.data_ptr() for t in ts], device='cuda')")
        if not (getattr(x, "flags", None) is None or x.flags.c_contiguous):
            raise ArgumentError(f"pointer_array: item {k} is not contiguous; pass numpy.ascontiguousarray(x)")
        infos.append(a[:3])
    out = _np.array([a[0] for a in infos], dtype=_np.int64).view(PointerArray)
    out.pointees, out._pointee_args = tuple(arrays), tuple(infos)
    return out


class TensorDescriptor:
    """A host tensor descriptor, as Triton's ``triton.tools.tensor_descriptor.TensorDescriptor``:
    ``base`` (an array), its ``shape`` and ``strides`` (in elements) and the ``block_shape`` a load
    or store moves. Triton's own class is accepted as well (with torch tensors)."""

    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        self.base, self.shape, self.strides, self.block_shape, self.padding = base, list(shape), list(strides), list(block_shape), padding

    @staticmethod
    def from_tensor(base, block_shape):
        strides = [s // base.itemsize for s in base.strides] if hasattr(base, "itemsize") else list(base.stride())
        return TensorDescriptor(base, list(base.shape), strides, block_shape)

    def __repr__(self):
        return f"TensorDescriptor(shape={self.shape}, strides={self.strides}, block_shape={self.block_shape})"


def _descriptor(v):
    """True for a host tensor descriptor (tawa's or Triton's)."""
    return type(v).__name__ == "TensorDescriptor" and all(hasattr(v, a) for a in ("base", "shape", "strides", "block_shape"))


def _dtype_name(v):
    """Triton's short name of a dtype object (tawa.language or triton.language), else None."""
    if type(v).__name__ == "dtype" and isinstance(getattr(v, "name", None), str):
        return v.name
    return None


def _const_text(v):
    if v is None or isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    d = _dtype_name(v)
    if d is not None and d in _LONG_DTYPE:
        return "tl." + _LONG_DTYPE[d]
    if type(v).__name__ == "constexpr" and hasattr(v, "value"):
        return _const_text(v.value)
    return None


class CompiledKernel:
    """One specialization of a kernel: its stages, its resource report and its explanation.

    ``ir(stage)`` gives the tile IR as written ("tile"), warp-specialized ("ws") or with the arefs
    lowered ("nv"); ``cuda``, ``ptx``, ``cubin`` and ``resources`` are made on first use (PTX and
    cubin need the CUDA toolkit's compilers, not a GPU).
    """

    def __init__(self, kernel, spec, key, from_disk):
        self._k = kernel
        self.spec = spec
        self.key = key
        self.from_disk = from_disk
        self.name = kernel.name
        self.params = kernel.params
        self.last_run_seconds = None

    def ir(self, stage="tile"):
        return self._k.ir(stage)

    @property
    def asm(self):
        """Triton's `compiled.asm[...]`: "tile", "ws", "nv" (IR), "cuda", "ptx", "cubin", each made on
        first use."""
        return _Stages(self)

    @property
    def cuda(self):
        return self._k.cuda()

    @property
    def ptx(self):
        return self._k.ptx()

    @property
    def cubin(self):
        return self._k.cubin()

    @property
    def resources(self):
        return self._k.resources()

    @property
    def explanation(self):
        return self._k.explanation()

    @property
    def simt(self):
        return self._k.simt

    def __repr__(self):
        return f"<tawa.CompiledKernel {self.name} [{self.spec}]>"


class _Stages:
    """A read-only mapping from stage name to artifact, made on first use."""

    _NAMES = ("tile", "ws", "nv", "cuda", "ptx", "cubin")

    def __init__(self, ck):
        self._ck = ck

    def __getitem__(self, name):
        if name in ("tile", "ws", "nv"):
            return self._ck.ir(name)
        if name in ("cuda", "ptx", "cubin"):
            return getattr(self._ck, name)
        raise KeyError(f"{name!r}: the stages are {', '.join(self._NAMES)}")

    def __contains__(self, name):
        return name in self._NAMES

    def keys(self):
        return list(self._NAMES)

    def __iter__(self):
        return iter(self._NAMES)

    def __len__(self):
        return len(self._NAMES)


class JITFunction:
    """A kernel to launch as ``kernel[grid](*args, **kwargs)``; see ``tawa.jit``."""

    def __init__(self, fn, do_not_specialize=(), do_not_specialize_on_alignment=(), backend=None, path=None, name=None):
        import inspect

        self.fn = fn
        self.__name__ = name or fn.__name__
        self.__doc__ = fn.__doc__ if fn is not None else None
        self.path = os.path.abspath(path or inspect.getsourcefile(fn))
        self.def_line = fn.__code__.co_firstlineno if fn is not None else 1
        self._dns = set(do_not_specialize)
        self._dns_align = set(do_not_specialize_on_alignment)
        self.backend = backend
        self._params = None  # [(name, constexpr, has_default)], from the front end on first launch
        self._cache = {}
        self._launcher = None  # _tawa.Launcher: the launches seen, by their arguments' key, made on first launch
        self._lock = threading.Lock()
        self.compiles = 0  # specializations compiled (not found in memory or on disk)
        self.disk_hits = 0

    @property
    def backend(self):
        """The backend every launch of this kernel uses (None: "cuda" for CUDA tensors, else "exec")."""
        return self._backend_name

    @backend.setter
    def backend(self, backend):
        if backend is not None and backend not in _BACKENDS:
            raise ValueError(f"unknown backend {backend!r}: one of {', '.join(_BACKENDS)}")
        self._backend_name = backend
        self._launcher = None  # it launches with the backend it was made with

    # -- the parameters, as the front end reads them
    def _signature(self):
        if self._params is None:
            params = _tawa.signature(self.path, self.__name__)
            self._no_spec = [i in self._dns or p[0] in self._dns for i, p in enumerate(params)]
            self._no_align = [i in self._dns_align or p[0] in self._dns_align or self._no_spec[i] for i, p in enumerate(params)]
            self._const = [p[1] for p in params]
            self._index = {p[0]: i for i, p in enumerate(params)}
            self._params = params
        return self._params

    def _error(self, msg, hint="", cls=ArgumentError):
        text = f"{self.path}:{self.def_line}:1: error: {msg}" + (f"\n  hint: {hint}" if hint else "")
        return cls(text, self.path, self.def_line, 1, msg, hint)

    def _bind(self, args, kwargs):
        """The arguments in parameter order (_MISSING where none was given)."""
        params = self._signature()
        n = len(params)
        if len(args) > n:
            raise self._error(f"'{self.__name__}' takes {n} argument(s), got {len(args)}")
        bound = list(args)
        if len(bound) < n:
            bound += [_MISSING] * (n - len(bound))
        if kwargs:
            index = self._index
            for name, value in kwargs.items():
                i = index.get(name)
                if i is None:
                    raise self._error(f"'{self.__name__}' has no parameter '{name}'",
                                      "its parameters: " + ", ".join(p[0] for p in params))
                if bound[i] is not _MISSING:
                    raise self._error(f"'{self.__name__}' got two values for parameter '{name}'")
                bound[i] = value
        return bound

    # -- specialization
    def _specialize(self, bound):
        """(key, run args, on_gpu): the specialization key (one entry per parameter, None where the
        source gives the value), the argument list of the run (the non-constant parameters) and
        whether the arrays are CUDA tensors (all of them, or none)."""
        key, run_args, where = [], [], {}
        no_spec, no_align = self._no_spec, self._no_align
        for i, v in enumerate(bound):
            if v is _MISSING:
                name, is_const, has_default = self._params[i]
                if has_default or is_const:
                    # The front end takes the default from the source, or a constexpr's value from the
                    # kernel's triton.autotune / triton.heuristics decorators (a located error if none).
                    key.append(None)
                    continue
                raise self._error(f"missing argument for parameter '{name}' of '{self.__name__}'")
            if self._const[i]:
                text = _const_text(v)
                if text is None:
                    raise self._error(f"constexpr '{self._params[i][0]}' cannot take a {type(v).__name__}",
                                      "give an int, float, bool, str, None or a dtype")
                key.append(text)
                continue
            t = type(v)
            if t is not int and t is not float and t is not bool and t is not _np.ndarray and isinstance(v, _NP_SCALARS):
                v = v.item()  # a numpy scalar: the Python number it holds, as Triton reads it
                t = type(v)
            if t is int:
                if v == 1 and not no_spec[i]:
                    key.append("1")
                elif -2147483648 <= v <= 2147483647:
                    key.append(("i32", not v & 15 and not no_spec[i]))
                    run_args.append(v)
                elif 2**31 <= v < 2**32:  # as Triton types it
                    key.append(("u32", not v & 15 and not no_spec[i]))
                    run_args.append(v)
                elif -(2**63) <= v < 2**63:
                    key.append(("i64", not v & 15 and not no_spec[i]))
                    run_args.append(v)
                else:
                    raise self._error(f"integer argument '{self._params[i][0]}' = {v} does not fit in 64 bits")
                continue
            if t is PointerArray:  # the pointees go along, so each backend gives its own addresses
                a = _array(v.view(_np.ndarray))
                key.append((a[1], a[3] and not no_align[i], "*"))
                run_args.append(a[:3] + (v._pointee_args,))
                continue
            a = _array(v)
            if a is not None:
                if isinstance(a[0], str):
                    raise self._array_error(self._params[i][0], a)
                key.append((a[1], a[3] and not no_align[i], "*"))
                run_args.append(a[:3])
                where.setdefault(a[4], self._params[i][0])
            elif _descriptor(v):
                a = self._descriptor_arg(self._params[i][0], v)
                where.setdefault(a[4], self._params[i][0])
                # tawa makes the descriptor at the kernel's entry from these constants: its shape is part of the key
                key.append((a[1], tuple(v.block_shape), tuple(v.shape), "desc"))
                run_args.append(a[:3])
            elif t is bool:
                key.append("i1")
                run_args.append(int(v))
            elif t is float:
                key.append("fp32")
                run_args.append(v)
            elif isinstance(v, int):  # an int subclass (numpy integers are not; IntEnum is)
                key.append(("i64", False))
                run_args.append(int(v))
            elif v is None or _dtype_name(v) is not None:
                key.append(_const_text(v))
            else:
                raise self._error(f"argument '{self._params[i][0]}' is a {type(v).__module__}.{type(v).__name__}, "
                                  "which a kernel cannot take",
                                  "pass a numpy array, a torch tensor, an int, a float, a bool or None")
        if len(where) == 2:
            raise self._error(f"argument '{where[True]}' is a CUDA tensor but '{where[False]}' is a host array: a launch "
                              "runs on the GPU or on the CPU, not both", "move them to one device (.cuda() or .cpu())")
        return tuple(key), run_args, True in where

    def _descriptor_arg(self, name, d):
        """The base array of a host descriptor, after the checks tawa's row-major descriptors need."""
        a = _array(d.base)
        if a is None:
            raise self._error(f"descriptor '{name}': its base is a {type(d.base).__name__}, not an array")
        if isinstance(a[0], str):
            raise self._array_error(name, a)
        shape, strides, block = [int(x) for x in d.shape], [int(x) for x in d.strides], [int(x) for x in d.block_shape]
        if not (len(shape) == len(strides) == len(block)) or not shape:
            raise self._error(f"descriptor '{name}': shape {shape}, strides {strides} and block {block} differ in rank")
        if getattr(d, "padding", "zero") != "zero":
            raise self._error(f"descriptor '{name}': padding '{d.padding}' is not supported; out-of-bounds reads give zeros")
        row_major = [1] * len(shape)
        for j in range(len(shape) - 2, -1, -1):
            row_major[j] = row_major[j + 1] * shape[j + 1]
        if strides != row_major:
            raise self._error(f"descriptor '{name}': strides {strides} are not the row-major strides {row_major} of shape {shape}",
                              "tawa's host descriptors are row-major over their shape: pass a contiguous array, or make "
                              "the descriptor in the kernel (tl.make_tensor_descriptor) with the strides as arguments")
        size = 1
        for n in shape:
            size *= n
        if a[2] < size:
            raise self._error(f"descriptor '{name}': shape {shape} needs {size} elements, its base holds {a[2]}")
        if any(not 1 <= b <= 256 for b in block):
            raise self._error(f"descriptor '{name}': block {block} must be 1 to 256 in each dimension")
        return a

    def _spec_text(self, key):
        """The signature spec a key stands for (x:*fp16:16, n:i32, BLOCK=64, ...)."""
        spec = []
        for (name, is_const, _), k in zip(self._params, key):
            if k is None:
                continue
            if isinstance(k, tuple):
                if k[-1] == "desc":
                    spec.append(f"{name}:tensordesc<{k[0]}[{', '.join(map(str, k[1]))}]>[{', '.join(map(str, k[2]))}]")
                elif k[-1] == "*":
                    spec.append(f"{name}:*{k[0]}:16" if k[1] else f"{name}:*{k[0]}")
                else:
                    spec.append(f"{name}:{k[0]}")
            elif k in ("i1", "fp32") and not is_const:
                spec.append(f"{name}:{k}")
            else:
                spec.append(f"{name}={k}")
        return ", ".join(spec)

    def _array_error(self, name, a):
        kind, what = a
        if kind == "unsupported":
            return self._error(f"array argument '{name}' has dtype {what}, which tawa does not support",
                               "dtypes: " + ", ".join(sorted(_NUMPY_DTYPES)))
        if kind == "device":
            return self._error(f"tensor argument '{name}' lives on '{what}': tawa launches on host arrays (the executor "
                               "and the emulator) and on CUDA tensors of GPU 0 (cuda:0)",
                               "move it to cuda:0 (tensor.to('cuda:0')) or to the CPU (tensor.cpu())")
        if kind == "empty":
            return self._error(f"array argument '{name}' is empty")
        return self._error(f"array argument '{name}' has strides {what} (bytes): negative or not whole elements",
                           "pass a copy (numpy.ascontiguousarray)")

    def _compile(self, key, spec, opts):
        from . import __version__

        wsopts = (opts.get("depth", 0), opts.get("mma_depth", 1), opts.get("consumers", 0), opts.get("persistent", 0),
                  opts.get("ping_pong", True), opts.get("inject", ""), opts.get("keep_program_order", False),
                  opts.get("shared_ring", False))
        h = hashlib.sha256(json.dumps([__version__, os.path.abspath(self.path), self.__name__, spec, wsopts,
                                       _sha256_file(self.path)]).encode()).hexdigest()
        entry = os.path.join(_cache_dir(), h + ".json")
        kw = dict(depth=wsopts[0], mma_depth=wsopts[1], consumers=wsopts[2], persistent=wsopts[3], ping_pong=wsopts[4],
                  inject=wsopts[5], keep_program_order=wsopts[6], shared_ring=wsopts[7])
        try:
            with open(entry) as f:
                saved = json.load(f)
            if all(_sha256_file(p) == s for p, s in saved["files"].items()):
                self.disk_hits += 1
                return CompiledKernel(_tawa.Kernel.from_ir(saved["ir"], spec, **kw), spec, key, True)
        except (OSError, ValueError, KeyError, TypeError, TawaError):
            pass  # absent, stale or unreadable: compile again
        k = _tawa.Kernel.load(self.path, self.__name__, spec, **kw)
        self.compiles += 1
        text = k.ir("tile")
        files = {p: _sha256_file(p) for p in set(re.findall(r'loc\("((?:[^"\\]|\\.)*)":', text)) | {self.path}}
        try:
            os.makedirs(_cache_dir(), exist_ok=True)
            tmp = f"{entry}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w") as f:
                json.dump({"files": files, "ir": text}, f)
            os.replace(tmp, entry)
        except OSError:
            pass  # a read-only cache costs a compile next time, nothing else
        return CompiledKernel(k, spec, key, False)

    def _get(self, args, kwargs):
        names = [o for o in kwargs if o in _OPTIONS]
        opts = {o: kwargs.pop(o) for o in names} if names else _NO_OPTIONS
        if opts.get("num_ctas", 1) != 1:
            raise self._error("num_ctas other than 1 (thread-block clusters) is not supported")
        bound = self._bind(args, kwargs)
        key, run_args, on_gpu = self._specialize(bound)
        ckey = (key, tuple(sorted((o, v) for o, v in opts.items() if o not in _RUN_OPTIONS))) if opts else key
        ck = self._cache.get(ckey)
        if ck is None:
            with self._lock:
                ck = self._cache.get(ckey)
                if ck is None:
                    spec = self._spec_text(key)
                    for o in ("num_warps", "num_stages"):
                        if o in opts:
                            spec += f", {o}={int(opts[o])}"
                    ck = self._compile(key, spec, opts)
                    self._cache[ckey] = ck
        return ck, bound, run_args, opts, on_gpu

    def _grid(self, grid, bound, opts):
        if type(grid) is tuple and len(grid) == 3 and type(grid[0]) is int and type(grid[1]) is int and type(grid[2]) is int:
            return grid  # the common case, as is
        if callable(grid):
            meta = {p[0]: v for p, v in zip(self._params, bound) if v is not _MISSING}
            meta.update(opts)
            grid = grid(meta)
        g = (grid,) if isinstance(grid, (int, _np.integer)) else tuple(grid)
        if not 1 <= len(g) <= 3 or not all(isinstance(x, (int, _np.integer)) and not isinstance(x, bool) for x in g):
            raise self._error(f"grid must be 1 to 3 integers, got {grid!r}")
        g = tuple(int(x) for x in g)
        return g + (1,) * (3 - len(g))

    def _backend(self, opts, on_gpu):
        """The backend of a launch: the one asked for, which must suit where the arrays are."""
        backend = opts.get("backend") or self.backend or ("cuda" if on_gpu else "exec")
        if backend not in _BACKENDS:
            raise self._error(f"unknown backend {backend!r}", "one of " + ", ".join(_BACKENDS))
        if on_gpu and backend != "cuda":
            raise self._error(f"the arrays are CUDA tensors, which backend '{backend}' cannot read: it runs on the CPU",
                              "pass host copies (.cpu()) to run on the CPU, or leave the backend to the tensors")
        if backend == "cuda" and not on_gpu:
            raise self._error("backend 'cuda' launches on CUDA tensors, and these arrays are host arrays",
                              "move them to the GPU (tensor.cuda()), or run them on backend 'exec' or 'emu'")
        return backend

    def _run(self, grid, args, kwargs):
        ck, bound, run_args, opts, on_gpu = self._get(args, kwargs)  # kwargs: a fresh dict of this call
        g = self._grid(grid, bound, opts)
        backend = self._backend(opts, on_gpu)
        threads, seed = opts.get("threads", 0), opts.get("seed", 0)
        stream = _torch_stream() if backend == "cuda" else 0
        prof = _profiler.session()
        if prof is not None and not ck.simt:
            # On the GPU: the instrumented kernel on torch's stream, waited for (its clock measured).
            prof._record(ck.name, g, *ck._k.profile(backend, run_args, g, threads, seed, stream))
            return ck
        seconds, _ = ck._k.run(backend, run_args, g, threads, seed, stream)
        ck.last_run_seconds = None if backend == "cuda" else seconds  # on the GPU only enqueued, not timed
        if prof is not None:
            prof._record_unprofiled(ck.name, g, "not profiled: no tile.dot and no tensor descriptor, so no warp groups "
                                                "(the CUDA backend emits it as a SIMT kernel)")
        return ck

    def check(self, grid, *args, seeds=8, **kwargs):
        """Checks the warp-specialized pipeline on these arguments, which stay untouched: it runs under
        ``seeds`` interleavings of its warp groups (``backend="exec"``, the default: the lowered IR on
        the executor) or of its threads (``backend="emu"``: the emitted CUDA kernel) and is compared
        with the kernel as written. CUDA tensors are checked through host copies (.cpu()). Returns a
        one-line summary; a deadlock, race, out-of-bounds access or difference raises TawaError naming
        the seed and the source line."""
        if _on_gpu(args, kwargs):  # the pipeline runs on the CPU: on host copies of the tensors (check never writes them)
            params = self._signature()
            args = [self._host_copy(params[i][0] if i < len(params) else str(i), v) for i, v in enumerate(args)]
            kwargs = {k: self._host_copy(k, v) for k, v in kwargs.items()}
        ck, bound, run_args, opts, on_gpu = self._get(args, kwargs)
        g = self._grid(grid, bound, opts)
        return ck._k.check(self._backend(opts, on_gpu), run_args, g, seeds)

    def _host_copy(self, name, v):
        """A CUDA tensor's host copy (a descriptor's, its base's), for a check on the CPU."""
        if _descriptor(v):
            base = self._host_copy(name, v.base)
            return v if base is v.base else TensorDescriptor(base, v.shape, v.strides, v.block_shape, getattr(v, "padding", "zero"))
        a = _array(v)
        if a is None or isinstance(a[0], str) or not a[4]:
            return v
        if not v.is_contiguous():
            raise self._error(f"check copies CUDA tensors to the host, and '{name}' is a strided view, whose copy "
                              "would not keep its strides", "pass a contiguous tensor, or host copies of the arrays")
        return v.cpu()

    def _make_launcher(self):
        """The C++ launcher in front of _run (python/src/launcher.cpp): a launch whose arguments'
        key it has seen goes straight to the kernel _run chose for it; anything else to _run."""
        params = self._signature()
        flags = [(p[0], p[1], p[2], self._no_spec[i], self._no_align[i]) for i, p in enumerate(params)]
        self._launcher = _tawa.Launcher(flags, _OPTIONS, weakref.WeakMethod(self._run), _dtype_short, _profiler.session,
                                        _torch_stream, self._backend_name or "")
        return self._launcher

    def __getitem__(self, grid):
        return lambda *args, **kwargs: (self._launcher or self._make_launcher())(grid, args, kwargs)

    def run(self, *args, grid, **kwargs):
        return (self._launcher or self._make_launcher())(grid, args, kwargs)

    def warmup(self, *args, **kwargs):
        """Compiles the specialization these arguments select without launching; returns it."""
        kwargs.pop("grid", None)
        return self._get(args, dict(kwargs))[0]

    def specialization_key(self, *args, **kwargs):
        """The specialization key of a launch with these arguments (one entry per parameter)."""
        kwargs = {k: v for k, v in kwargs.items() if k not in _OPTIONS}
        return self._specialize(self._bind(args, kwargs))[0]

    def __call__(self, *args, **kwargs):
        raise TypeError(f"'{self.__name__}' is a kernel: launch it as {self.__name__}[grid](...)")

    def __repr__(self):
        return f"<tawa.JITFunction {self.__name__} from {self.path}>"


_raw_stream = []  # torch's raw current-stream getter, found on first use


def _torch_stream():
    """torch's current CUDA stream on cuda:0, as a CUstream handle (an int)."""
    if not _raw_stream:
        import sys

        torch = sys.modules.get("torch")  # CUDA tensors came from torch, so it is imported
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)  # what Triton's launcher reads
        _raw_stream.append(raw or (lambda device: int(torch.cuda.current_stream(device).cuda_stream)))
    return _raw_stream[0](0)


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def jit(fn=None, *, do_not_specialize=(), do_not_specialize_on_alignment=(), backend=None):
    """Decorates a kernel written as Triton writes it (``@tawa.jit`` or ``@tawa.jit(...)``)."""

    def make(f):
        return JITFunction(f, do_not_specialize, do_not_specialize_on_alignment, backend)

    return make(fn) if fn is not None else make


def load(path, name=None, backend=None, do_not_specialize=()):
    """A kernel read from a Python file without importing it (its module may need packages this
    process lacks): ``name`` picks the @triton.jit function (optional when the file has one)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    if name is None:
        names = _tawa.kernels(path)
        if len(names) != 1:
            raise TawaError(f"{path}:1:1: error: the file has {len(names)} kernels; name one ({', '.join(names)})", path, 1, 1,
                            f"the file has {len(names)} kernels; name one", ", ".join(names))
        name = names[0]
    else:
        _tawa.signature(path, name)  # a located TawaError now when there is no such kernel
    return JITFunction(None, do_not_specialize, (), backend, path=path, name=name)


def wrap(kernel, backend=None):
    """A tawa kernel from an existing ``triton.jit`` function. One wrapped by ``triton.autotune``
    becomes a tawa.autotune launcher over the same configurations and key; under
    ``triton.heuristics`` the front end reads the decorator from the source. Its
    ``do_not_specialize`` lists carry over."""
    if type(kernel).__name__ == "Autotuner" and hasattr(kernel, "configs") and hasattr(kernel, "keys"):
        # triton.autotune: tuned the same way, with tawa's record (see tawa.autotune)
        from .autotune import Autotuner

        return Autotuner(wrap(kernel.fn, backend), kernel.configs, kernel.keys)
    k, jf = kernel, None
    while not hasattr(k, "__code__") and hasattr(k, "fn"):
        if jf is None and hasattr(k, "do_not_specialize"):
            jf = k  # Triton's JITFunction (the autotuner and heuristics wrap it)
        k = k.fn
    if not hasattr(k, "__code__"):
        raise TypeError(f"tawa.wrap takes a triton.jit function (or an autotuned one), got {type(kernel).__name__}")
    if jf is None:
        return JITFunction(k, backend=backend)
    return JITFunction(k, list(jf.do_not_specialize or ()), list(getattr(jf, "do_not_specialize_on_alignment", None) or ()),
                       backend)

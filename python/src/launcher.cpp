// tawa._tawa.Launcher: the hot path of `kernel[grid](*args, **kwargs)`, in C++.
//
// python/tawa/jit.py's JITFunction._run is the launcher: it binds the arguments, computes the
// specialization key as Triton does, finds or compiles the kernel, picks the backend and runs. That
// takes a few microseconds of Python per launch. This class sits in front of it. A launch whose
// arguments are all of the common kinds -- Python ints, floats, bools and None, contiguous torch
// tensors and numpy arrays, constexprs given as ints, bools, None, floats or strings, and the options
// num_warps / num_stages -- is described here by a byte string holding every fact _specialize puts in
// its key (each array's dtype and 16-byte alignment, each integer's width and 16-divisibility and
// whether it is 1, each constexpr's value), where the arrays live, the options and the kernel's
// backend. A byte string seen before launches the CompiledKernel that _run chose for it, without
// entering Python. Everything else goes to _run: a first launch, a descriptor, an array of pointers,
// a strided view, a numpy scalar, a grid that is not integers, any other option, an argument error to
// report (with its located message), a launch inside tawa.profile(); what _run chose is then
// remembered under the byte string.
//
// Invariant: two launches with the same byte string have the same specialization key, options and
// backend in _run (the string records every input of those, never less), so the remembered kernel
// and backend are the ones _run would choose.
#include "launcher.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tawa/tawa.h>

namespace nb = nanobind;

namespace {

enum class ArrayKind : uint8_t { None, Torch, Numpy };

class Launcher {
 public:
  // `params`: (name, constexpr, has_default, do_not_specialize, do_not_specialize_on_alignment) per
  // parameter; `options`: the names _run takes as launch options; `slow`: a weakref.WeakMethod of JITFunction._run; `dtypeName`: a dtype object ->
  // Triton's short name or None; `profiling`: () -> the current tawa.profile session or None;
  // `stream`: () -> torch's current CUstream on cuda:0; `backend`: the kernel's own, "" for none.
  Launcher(const std::vector<std::tuple<std::string, bool, bool, bool, bool>>& params, nb::frozenset options, nb::object slow,
           nb::object dtypeName, nb::object profiling, nb::object stream, std::string backend)
      : options_(std::move(options)), slow_(std::move(slow)), dtypeName_(std::move(dtypeName)), profiling_(std::move(profiling)), stream_(std::move(stream)),
        backend_(std::move(backend)) {
    for (const auto& [name, isConst, hasDefault, noSpec, noAlign] : params) {
      params_.push_back({nb::str(name.c_str()), isConst, hasDefault, noSpec, noAlign || noSpec});
    }
  }

  nb::object launch(nb::handle grid, nb::tuple args, nb::dict kwargs) {
    const size_t n = params_.size();
    if (args.size() > n) return callSlow(grid, args, kwargs);
    Scratch s;  // on the stack: launches on other threads (the GIL is released while one runs) have their own
    s.bound.assign(n, nullptr);
    for (size_t i = 0; i < args.size(); ++i) s.bound[i] = args[i].ptr();
    s.key.reserve(64 + 16 * n);
    s.key += backend_;
    s.key += '|';
    for (auto [name, value] : kwargs) {
      // _run takes its options before binding parameters (a parameter of the same name included):
      // num_warps and num_stages go into the spec (hints for the passes); any other option to _run
      if (options_.contains(name)) {
        const char* opt = PyUnicode_AsUTF8(name.ptr());
        if (opt == nullptr || !PyLong_CheckExact(value.ptr()) || (std::strcmp(opt, "num_warps") != 0 && std::strcmp(opt, "num_stages") != 0))
          return callSlow(grid, args, kwargs);
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
        if (overflow) return callSlow(grid, args, kwargs);
        s.key += opt[4];  // 'w' or 's'
        put(s, static_cast<int64_t>(v));
        continue;
      }
      size_t i = 0;
      while (i < n && !params_[i].name.equal(name)) ++i;
      if (i == n || s.bound[i] != nullptr) return callSlow(grid, args, kwargs);  // unknown, or given twice: _run says so
      s.bound[i] = value.ptr();
    }
    s.key += '|';
    s.args.reserve(n);
    int where = 0;  // 1: host arrays, 2: CUDA tensors
    for (size_t i = 0; i < n; ++i)
      if (!describe(i, s, where)) return callSlow(grid, args, kwargs);
    if (where == 3) return callSlow(grid, args, kwargs);  // mixed: _run's error
    if (!profiling_().is_none()) return callSlow(grid, args, kwargs);

    auto hit = cache_.find(s.key);
    if (hit == cache_.end()) {
      nb::object ck = callSlow(grid, args, kwargs);
      tawa::Backend backend = where == 2 ? tawa::Backend::Cuda : tawa::Backend::Exec;
      if (backend_ == "emu") backend = tawa::Backend::Emu;
      if (backend_ == "cuda") backend = tawa::Backend::Cuda;
      nb::object k = ck.attr("_k");
      cache_.emplace(std::move(s.key), Entry{ck, k, &nb::cast<const tawa::Kernel&>(k), backend});
      return ck;
    }
    const Entry& e = hit->second;
    std::array<int64_t, 3> g{1, 1, 1};
    nb::object computed;  // a callable grid's result
    if (!gridOf(grid, g)) {
      if (!PyCallable_Check(grid.ptr())) return callSlow(grid, args, kwargs);
      nb::dict meta;
      for (size_t i = 0; i < n; ++i)
        if (s.bound[i] != nullptr) meta[params_[i].name] = nb::handle(s.bound[i]);
      for (auto [name, value] : kwargs)
        if (!meta.contains(name)) meta[name] = value;
      computed = nb::borrow(grid)(meta);
      if (!gridOf(computed, g)) return callSlow(computed, args, kwargs);  // _run reports (or converts) it
    }
    tawa::RunOptions ro;
    if (e.backend == tawa::Backend::Cuda) ro.stream = reinterpret_cast<void*>(nb::cast<uintptr_t>(stream_()));
    tawa::RunStats st;
    {
      nb::gil_scoped_release unlocked;
      st = e.k->run(e.backend, s.args, g, ro);
    }
    e.ck.attr("last_run_seconds") = e.backend == tawa::Backend::Cuda ? nb::none() : nb::cast(st.seconds);
    return e.ck;
  }

  size_t size() const { return cache_.size(); }

 private:
  struct Param {
    nb::str name;
    bool isConst, hasDefault, noSpec, noAlign;
  };
  struct Entry {
    nb::object ck, kobj;  // the CompiledKernel and its _tawa.Kernel (kept alive for k)
    const tawa::Kernel* k;
    tawa::Backend backend;
  };

  nb::object callSlow(nb::handle grid, nb::tuple args, nb::dict kwargs) {
    nb::object run = slow_();
    if (run.is_none()) throw nb::value_error("the kernel this launcher belonged to is gone");
    return run(grid, args, kwargs);
  }

  // One launch's binding (borrowed from its args and kwargs), key and run arguments.
  struct Scratch {
    std::vector<PyObject*> bound;
    std::string key;
    std::vector<tawa::Arg> args;
  };

  static void put(Scratch& s, int64_t v) { s.key.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static void put(Scratch& s, double v) { s.key.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static void put(Scratch& s, const char* text, size_t len) {
    put(s, static_cast<int64_t>(len));
    s.key.append(text, len);
  }

  // A grid of one to three Python ints (a tuple, or one int), as _run's _grid takes them.
  static bool gridOf(nb::handle grid, std::array<int64_t, 3>& g) {
    PyObject* o = grid.ptr();
    auto one = [](PyObject* x, int64_t& out) {
      if (!PyLong_CheckExact(x)) return false;
      int overflow = 0;
      out = PyLong_AsLongLongAndOverflow(x, &overflow);
      return overflow == 0;
    };
    if (PyLong_CheckExact(o)) return one(o, g[0]);
    if (!PyTuple_CheckExact(o)) return false;
    const Py_ssize_t len = PyTuple_GET_SIZE(o);
    if (len < 1 || len > 3) return false;
    for (Py_ssize_t i = 0; i < len; ++i)
      if (!one(PyTuple_GET_ITEM(o, i), g[i])) return false;
    return true;
  }

  // The short dtype name of a dtype object (cached per object; the objects are kept alive, so an
  // address is never reused by another dtype while cached), or nullptr.
  const std::string* dtypeOf(nb::handle array) {
    nb::object d = array.attr("dtype");
    auto it = dtypes_.find(d.ptr());
    if (it == dtypes_.end()) {
      nb::object name = dtypeName_(d);
      if (name.is_none()) return nullptr;
      it = dtypes_.emplace(d.ptr(), std::make_pair(d, nb::cast<std::string>(name))).first;
    }
    return &it->second.second;
  }

  ArrayKind kindOf(PyTypeObject* t) {
    auto it = kinds_.find(t);
    if (it != kinds_.end()) return it->second;
    ArrayKind kind = ArrayKind::None;
    nb::handle type(reinterpret_cast<PyObject*>(t));
    const std::string name = nb::cast<std::string>(type.attr("__name__"));
    nb::object mod = nb::getattr(type, "__module__", nb::none());
    const std::string module = nb::isinstance<nb::str>(mod) ? nb::cast<std::string>(mod) : "";
    if ((name == "Tensor" || name == "Parameter") && module.rfind("torch", 0) == 0) kind = ArrayKind::Torch;
    if (name == "ndarray" && module == "numpy") kind = ArrayKind::Numpy;
    kinds_.emplace(t, kind);
    Py_INCREF(t);  // kept: its address stays this type's
    return kind;
  }

  // Appends parameter i's part of the key and its run argument; false: leave this launch to _run.
  bool describe(size_t i, Scratch& s, int& where) {
    const Param& p = params_[i];
    PyObject* v = s.bound[i];
    if (v == nullptr) {
      s.key += 'M';
      return p.hasDefault || p.isConst;
    }
    const bool isBool = PyBool_Check(v), isInt = PyLong_CheckExact(v);
    if (p.isConst) {
      if (isBool) {
        s.key += v == Py_True ? "b1" : "b0";
      } else if (isInt) {
        int overflow = 0;
        const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) return false;
        s.key += 'c';
        put(s, static_cast<int64_t>(x));
      } else if (v == Py_None) {
        s.key += 'n';
      } else if (PyFloat_CheckExact(v)) {
        s.key += 'f';
        put(s, PyFloat_AS_DOUBLE(v));
      } else if (PyUnicode_CheckExact(v)) {
        Py_ssize_t len = 0;
        const char* text = PyUnicode_AsUTF8AndSize(v, &len);
        if (text == nullptr) {
          PyErr_Clear();
          return false;
        }
        s.key += 's';
        put(s, text, static_cast<size_t>(len));
      } else {
        return false;
      }
      return true;
    }
    if (isInt) {
      int overflow = 0;
      const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
      if (overflow) return false;
      if (x == 1 && !p.noSpec) {
        s.key += '1';  // a constant: no run argument
        return true;
      }
      s.key += x >= INT32_MIN && x <= INT32_MAX ? 'i' : x >= 0 && x <= UINT32_MAX ? 'u' : 'l';
      s.key += (x & 15) == 0 && !p.noSpec ? 'a' : '-';
      s.args.emplace_back(static_cast<int64_t>(x));
      return true;
    }
    if (isBool) {
      s.key += 'B';
      s.args.emplace_back(int64_t{v == Py_True});
      return true;
    }
    if (PyFloat_CheckExact(v)) {
      s.key += 'F';
      s.args.emplace_back(PyFloat_AS_DOUBLE(v));
      return true;
    }
    if (v == Py_None) {
      s.key += 'n';
      return true;
    }
    const ArrayKind kind = kindOf(Py_TYPE(v));
    if (kind == ArrayKind::None) return false;
    nb::handle h(v);
    const std::string* dtype = dtypeOf(h);
    if (dtype == nullptr) return false;
    uintptr_t addr = 0;
    int64_t elements = 0;
    bool gpu = false;
    if (kind == ArrayKind::Torch) {
      nb::object device = h.attr("device");
      const std::string type = nb::cast<std::string>(device.attr("type"));
      gpu = type == "cuda";
      if (!gpu && type != "cpu") return false;
      if (gpu) {
        nb::object index = device.attr("index");
        if (!index.is_none() && nb::cast<int64_t>(index) != 0) return false;
      }
      if (!nb::cast<bool>(h.attr("is_contiguous")())) return false;
      elements = nb::cast<int64_t>(h.attr("numel")());
      addr = nb::cast<uintptr_t>(h.attr("data_ptr")());
    } else {
      Py_buffer view;
      if (PyObject_GetBuffer(v, &view, PyBUF_STRIDES) != 0) {
        PyErr_Clear();
        return false;
      }
      const bool contiguous = PyBuffer_IsContiguous(&view, 'C') != 0;
      addr = reinterpret_cast<uintptr_t>(view.buf);
      elements = view.itemsize > 0 ? static_cast<int64_t>(view.len / view.itemsize) : 0;
      PyBuffer_Release(&view);
      if (!contiguous) return false;
    }
    if (elements <= 0) return false;
    where |= gpu ? 2 : 1;
    s.key += 'T';
    put(s, dtype->data(), dtype->size());
    s.key += (addr & 15) == 0 && !p.noAlign ? 'a' : '-';
    s.key += gpu ? 'g' : 'h';
    s.args.emplace_back(tawa::Array(reinterpret_cast<void*>(addr), *dtype, elements));
    return true;
  }

  std::vector<Param> params_;
  nb::frozenset options_;  // the launch options _run takes from the keyword arguments
  nb::object slow_, dtypeName_, profiling_, stream_;
  std::string backend_;
  std::unordered_map<std::string, Entry> cache_;
  std::unordered_map<PyObject*, std::pair<nb::object, std::string>> dtypes_;
  std::unordered_map<PyTypeObject*, ArrayKind> kinds_;
};

}  // namespace

void bindLauncher(nb::module_& m) {
  nb::class_<Launcher>(m, "Launcher")
      .def(nb::init<const std::vector<std::tuple<std::string, bool, bool, bool, bool>>&, nb::frozenset, nb::object, nb::object,
                    nb::object, nb::object, std::string>(),
           nb::arg("params"), nb::arg("options"), nb::arg("slow"), nb::arg("dtype_name"), nb::arg("profiling"), nb::arg("stream"), nb::arg("backend"))
      .def("__call__", &Launcher::launch, nb::arg("grid"), nb::arg("args"), nb::arg("kwargs"))
      .def_prop_ro("size", &Launcher::size, "launch keys remembered");
}

// tawa._tawa: the Python binding of the library API (include/tawa/tawa.h). Thin on purpose: argument
// binding, specialization and caching live in python/tawa/jit.py (launcher.cpp only remembers what
// it chose, for the launches it has seen); this file converts values and errors. A tawa::Error
// becomes tawa.errors.TawaError carrying the file, line, column, message and
// hint; the GIL is released while a kernel compiles or runs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tawa/tawa.h>

#include "launcher.h"

namespace nb = nanobind;

namespace {

// One launch argument: (address, dtype, elements) for an array, (address, dtype, elements, pointees)
// for an array of pointers (pointees: a tuple of array tuples), an int, or a float (bool is an int).
tawa::Arg toArg(nb::handle h, size_t index) {
  if (nb::isinstance<nb::tuple>(h)) {
    auto t = nb::cast<nb::tuple>(h);
    if (t.size() != 3 && t.size() != 4)
      throw nb::type_error(("argument " + std::to_string(index) + ": an array is (address, dtype, elements[, pointees])").c_str());
    tawa::Array a{reinterpret_cast<void*>(nb::cast<uintptr_t>(t[0])), nb::cast<std::string>(t[1]), nb::cast<int64_t>(t[2])};
    if (t.size() == 4)
      for (nb::handle p : nb::cast<nb::tuple>(t[3])) a.pointees.push_back(std::get<tawa::Array>(toArg(p, index)));
    return a;
  }
  if (nb::isinstance<nb::bool_>(h)) return int64_t{nb::cast<bool>(h) ? 1 : 0};
  if (nb::isinstance<nb::int_>(h)) return nb::cast<int64_t>(h);
  if (nb::isinstance<nb::float_>(h)) return nb::cast<double>(h);
  throw nb::type_error(("argument " + std::to_string(index) + ": expected an array tuple, an int or a float, got " +
                        nb::cast<std::string>(nb::str(h.type())))
                           .c_str());
}

tawa::Backend backendOf(const std::string& name) {
  if (name == "exec") return tawa::Backend::Exec;
  if (name == "emu") return tawa::Backend::Emu;
  if (name == "cuda") return tawa::Backend::Cuda;
  throw tawa::Error(tawa::Diagnostic{"", 0, 0, "unknown backend '" + name + "'",
                                     "exec (the CPU executor), emu (the CUDA kernel on the CPU emulator) or cuda (GPU 0)"});
}

tawa::Options options(int depth, int mmaDepth, int consumers, int persistent, bool pingPong, bool keepProgramOrder,
                      bool sharedRing, const std::string& inject) {
  tawa::Options o;
  o.depth = depth, o.mmaDepth = mmaDepth, o.consumers = consumers, o.persistent = persistent, o.pingPong = pingPong;
  o.keepProgramOrder = keepProgramOrder, o.sharedRing = sharedRing;
  o.inject = inject;
  return o;
}

std::vector<tawa::Arg> toArgs(nb::list args) {
  std::vector<tawa::Arg> a;
  a.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) a.push_back(toArg(args[i], i));
  return a;
}

// A launch's arguments, backend and options, converted while the GIL is held.
struct Launch {
  std::vector<tawa::Arg> args;
  tawa::Backend backend;
  tawa::RunOptions opt;
  Launch(const std::string& backendName, nb::list a, int threads, uint64_t seed, uintptr_t stream = 0)
      : args(toArgs(a)), backend(backendOf(backendName)) {
    opt.threads = threads, opt.seed = seed, opt.stream = reinterpret_cast<void*>(stream);
  }
};

}  // namespace

NB_MODULE(_tawa, m) {
  m.doc() = "tawa's library API (see tawa/__init__.py for the user-facing module)";
  // Kernels stay alive to the end when something that is never torn down holds them: torch.library's
  // operator registry holds tawa.custom_op's implementations. nanobind would list them as leaks at exit.
  nb::set_leak_warnings(false);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tawa::Error& e) {
      const auto& d = e.diagnostic();
      nb::object cls = nb::module_::import_("tawa.errors").attr("TawaError");
      nb::object exc = cls(e.what(), d.file, d.line, d.col, d.message, d.hint);
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });

  nb::class_<tawa::Kernel>(m, "Kernel")
      .def_static(
          "load",
          [](const std::string& path, const std::string& name, const std::string& spec, int depth, int mmaDepth, int consumers,
             int persistent, bool pingPong, bool keepProgramOrder, bool sharedRing, const std::string& inject) {
            nb::gil_scoped_release unlocked;
            return tawa::Kernel::load(path, name, spec,
                                      options(depth, mmaDepth, consumers, persistent, pingPong, keepProgramOrder, sharedRing, inject));
          },
          nb::arg("path"), nb::arg("name"), nb::arg("spec"), nb::arg("depth") = 0, nb::arg("mma_depth") = 1, nb::arg("consumers") = 0,
          nb::arg("persistent") = 0, nb::arg("ping_pong") = true, nb::arg("keep_program_order") = false,
          nb::arg("shared_ring") = false, nb::arg("inject") = "")
      .def_static(
          "from_ir",
          [](const std::string& text, const std::string& spec, int depth, int mmaDepth, int consumers, int persistent, bool pingPong,
             bool keepProgramOrder, bool sharedRing, const std::string& inject) {
            nb::gil_scoped_release unlocked;
            return tawa::Kernel::fromIR(text, spec,
                                        options(depth, mmaDepth, consumers, persistent, pingPong, keepProgramOrder, sharedRing, inject));
          },
          nb::arg("text"), nb::arg("spec"), nb::arg("depth") = 0, nb::arg("mma_depth") = 1, nb::arg("consumers") = 0,
          nb::arg("persistent") = 0, nb::arg("ping_pong") = true, nb::arg("keep_program_order") = false,
          nb::arg("shared_ring") = false, nb::arg("inject") = "")
      .def_prop_ro("name", &tawa::Kernel::name)
      .def_prop_ro("simt", &tawa::Kernel::simt)
      .def_prop_ro("params",
                   [](const tawa::Kernel& k) {
                     std::vector<std::tuple<std::string, bool, std::string>> out;
                     for (const auto& p : k.params()) out.emplace_back(p.name, p.pointer, p.dtype);
                     return out;
                   })
      .def("ir", [](const tawa::Kernel& k, const std::string& stage) {
             nb::gil_scoped_release unlocked;
             return k.ir(stage);
           }, nb::arg("stage") = "tile")
      .def("cuda", [](const tawa::Kernel& k) {
        nb::gil_scoped_release unlocked;
        return k.cuda();
      })
      .def("ptx", [](const tawa::Kernel& k) {
        nb::gil_scoped_release unlocked;
        return k.ptx();
      })
      .def("cubin",
           [](const tawa::Kernel& k) {
             std::string bytes;
             {
               nb::gil_scoped_release unlocked;
               bytes = k.cubin();
             }
             return nb::bytes(bytes.data(), bytes.size());
           })
      .def("resources", [](const tawa::Kernel& k) {
        nb::gil_scoped_release unlocked;
        return k.resources();
      })
      .def("explanation", &tawa::Kernel::explanation)
      .def(
          "run",
          [](const tawa::Kernel& k, const std::string& backend, nb::list args, std::array<int64_t, 3> grid, int threads, uint64_t seed,
             uintptr_t stream) {
            const Launch l(backend, args, threads, seed, stream);
            nb::gil_scoped_release unlocked;
            const tawa::RunStats st = k.run(l.backend, l.args, grid, l.opt);
            return std::make_tuple(st.seconds, st.compileSeconds);
          },
          nb::arg("backend"), nb::arg("args"), nb::arg("grid"), nb::arg("threads") = 0, nb::arg("seed") = 0, nb::arg("stream") = 0)
      .def(
          "check",
          [](const tawa::Kernel& k, const std::string& backend, nb::list args, std::array<int64_t, 3> grid, int seeds) {
            const Launch l(backend, args, 0, 0);
            nb::gil_scoped_release unlocked;
            return k.check(l.backend, l.args, grid, seeds).summary;
          },
          nb::arg("backend"), nb::arg("args"), nb::arg("grid"), nb::arg("seeds") = 8)
      .def(
          "profile",
          [](const tawa::Kernel& k, const std::string& backend, nb::list args, std::array<int64_t, 3> grid, int threads, uint64_t seed,
             uintptr_t stream) {
            const Launch l(backend, args, threads, seed, stream);
            nb::gil_scoped_release unlocked;
            tawa::ProfileReport r = k.profile(l.backend, l.args, grid, l.opt);
            return std::make_tuple(std::move(r.summary), std::move(r.json), std::move(r.trace));
          },
          nb::arg("backend"), nb::arg("args"), nb::arg("grid"), nb::arg("threads") = 0, nb::arg("seed") = 0, nb::arg("stream") = 0);

  nb::class_<tawa::TuneRecord>(m, "TuneRecord")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("path"), nb::arg("device") = "")
      .def("program", &tawa::TuneRecord::program, nb::arg("name"), nb::arg("kind"), nb::arg("space"))
      .def("lookup", &tawa::TuneRecord::lookup, nb::arg("program"), nb::arg("config"))
      .def("add", &tawa::TuneRecord::add, nb::arg("program"), nb::arg("config"), nb::arg("seconds"), nb::arg("origin"),
           nb::arg("detail") = "")
      .def("best", &tawa::TuneRecord::best, nb::arg("program"), nb::arg("top") = 1);

  bindLauncher(m);

  m.def("signature", [](const std::string& path, const std::string& kernel) {
    std::vector<std::tuple<std::string, bool, bool>> out;
    for (const auto& p : tawa::signature(path, kernel)) out.emplace_back(p.name, p.constexpr_, p.hasDefault);
    return out;
  });
  m.def("kernels", &tawa::kernels);
  m.def("set_primitives_dir", &tawa::setPrimitivesDir);
  m.def("version", &tawa::version);
  m.def("tune_worker_identity", &tawa::tuneWorkerIdentity, nb::arg("name"));
  m.def("run_tune_job", &tawa::runTuneJob, nb::arg("job"), nb::arg("identity"), nb::call_guard<nb::gil_scoped_release>());
}

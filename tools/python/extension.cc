// `retarget._retarget`: the C++ side of the Python package (tools/python/retarget/__init__.py is
// the API users call; docs/python.md). It exposes what the command line does, in process:
// modules from HLO text, protos or files; runs on every registered target; comparisons with the
// tolerances of `run --compare`; the portability report.
//
// Arrays cross the boundary as .npz/.npy bytes, the format of `--inputs` and `--output`, so the
// dtype rules are the command line's (bf16 and f8 travel as float32, complex as complex64/128;
// tools/io/npz.h). Errors: an hlo::Error becomes retarget.Error with the command line's
// `FILE:LINE:COL: error: …` text, a usage mistake (unknown target, config without the systolic
// target) a ValueError, std::bad_alloc a MemoryError. Long work releases the GIL; the
// backends run one call at a time (BackendTurn).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/evaluator.h"
#include "hlo/module_io.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/proto_io.h"
#include "hlo/verifier.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/systolic_backend.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"
#include "tools/io/npz.h"
#include "tools/report/report.h"
#include "tools/report/report_html.h"
#include "tools/retarget/backends.h"
#include "tools/retarget/cli.h"
#include "tools/retarget/report_setup.h"
#include "tools/retarget/run_support.h"
#include "tools/retarget/systolic_config.h"

namespace nb = nanobind;

namespace {

// A verified module and where it came from (the file named in error messages and reports).
struct PyModule {
  std::shared_ptr<const hlo::Module> module;
  std::string file;
};

// The backends, registered once per process, the same as the command line's.
const cli::Context& Context() {
  static targets::BackendRegistry* backends = [] {
    auto* registry = new targets::BackendRegistry;
    cli::RegisterBackends(*registry);
    return registry;
  }();
  static const cli::Context context{backends};
  return context;
}

PyModule Verified(std::unique_ptr<hlo::Module> module, std::string file) {
  hlo::Verify(*module);
  return PyModule{std::move(module), std::move(file)};
}

PyModule ParseText(const std::string& text, const std::string& file) {
  return Verified(hlo::ParseHloText(text, file), file);
}

PyModule ParseProto(nb::bytes bytes, const std::string& file) {
  return Verified(hlo::ReadHloProto(std::string_view(bytes.c_str(), bytes.size()), file), file);
}

PyModule LoadFile(const std::string& path) {
  hlo::LoadedModule loaded = hlo::LoadModule(path);
  return PyModule{std::move(loaded.module), path};
}

// The entry arguments from an .npz archive's bytes (arg0, arg1, … as `--inputs` reads them), or
// the standard random inputs of `random:SEED` when there are none.
std::vector<hlo::Literal> Arguments(const hlo::Module& module,
                                    const std::optional<nb::bytes>& npz, uint64_t seed) {
  if (!npz) return io::MakeRandomInputs(module, seed);
  std::vector<io::NpyArray> arrays =
      io::DecodeNpz(std::string_view(npz->c_str(), npz->size()), "inputs");
  return io::ArgumentsFromArrays(module, std::move(arrays), "inputs");
}

// The backend for `target`, or a systolic backend for `config`/`sets` (kept in `configured`).
targets::Backend& BackendFor(const std::string& target, const std::optional<std::string>& config,
                             const std::vector<std::string>& sets,
                             std::unique_ptr<targets::Backend>& configured) {
  const cli::Context& context = Context();
  if (!config && sets.empty()) return cli::FindBackend(context, target);
  if (target != "systolic") {
    throw cli::UsageError("config and sets describe the systolic target, not '" + target + "'");
  }
  configured = targets::MakeSystolicBackend(cli::SystolicRunConfig(config, sets),
                                            context.backends->Find("interp"));
  return *configured;
}

using NamedArrays = std::vector<std::pair<std::string, nb::bytes>>;

// Flattened results (out0, out1, … depth-first through tuples) as .npy bytes.
NamedArrays ToPython(const std::vector<io::NpyArray>& arrays) {
  NamedArrays named;
  for (const io::NpyArray& array : arrays) {
    const std::string npy = io::EncodeNpy(array.literal);
    named.emplace_back(array.name, nb::bytes(npy.data(), npy.size()));
  }
  return named;
}

struct RunResult {
  std::vector<io::NpyArray> outputs;
  targets::Profile profile;
};

// The backends are shared by the whole process and were written for one caller at a time (the
// command line): runs, comparisons and reports take turns, while other Python threads go on.
std::mutex& BackendTurn() {
  static std::mutex turn;
  return turn;
}

RunResult RunOn(const PyModule& module, targets::Backend& backend,
                const std::vector<hlo::Literal>& arguments) {
  cli::Heartbeat heartbeat("run on " + backend.name());
  std::unique_ptr<targets::Executable> executable = backend.Compile(*module.module);
  hlo::Literal result = executable->Run(arguments);
  return RunResult{io::FlattenOutputs(result), executable->profile()};
}

nb::tuple Run(const PyModule& module, const std::string& target,
              const std::optional<nb::bytes>& inputs, uint64_t seed,
              const std::optional<std::string>& config, const std::vector<std::string>& sets) {
  std::unique_ptr<targets::Backend> configured;
  targets::Backend& backend = BackendFor(target, config, sets, configured);
  std::vector<hlo::Literal> arguments = Arguments(*module.module, inputs, seed);
  RunResult result;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> turn(BackendTurn());
    result = RunOn(module, backend, arguments);
  }
  std::map<std::string, double> profile = result.profile.counters;
  profile["wall_ms"] = result.profile.wall_ms;
  return nb::make_tuple(ToPython(result.outputs), profile);
}

// `target` against `against` on the same inputs, with `run --compare`'s tolerances: the per-type
// defaults (of the narrowest float type an output is computed through) widened by sqrt of the
// longest reduction, unless rtol/atol are given.
std::map<std::string, nb::object> Compare(const PyModule& module, const std::string& target,
                                          const std::string& against,
                                          const std::optional<nb::bytes>& inputs, uint64_t seed,
                                          std::optional<double> rtol, std::optional<double> atol) {
  targets::Backend& tested = cli::FindBackend(Context(), target);
  targets::Backend& reference = cli::FindBackend(Context(), against);
  std::vector<hlo::Literal> arguments = Arguments(*module.module, inputs, seed);
  io::CompareResult comparison;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> turn(BackendTurn());
    RunResult expected = RunOn(module, reference, arguments);
    RunResult actual = RunOn(module, tested, arguments);
    std::optional<io::Tolerance> tolerance;
    if (rtol || atol) {
      tolerance = io::Tolerance{};
      if (rtol) tolerance->rtol = *rtol;
      if (atol) tolerance->atol = *atol;
    }
    const double scale = io::ReductionToleranceScale(io::LongestReduction(*module.module));
    const auto computed_through = io::OutputsComputedThroughNarrowerFloats(*module.module);
    comparison = io::CompareArrays(expected.outputs, actual.outputs,
                                   tolerance ? &*tolerance : nullptr, scale, &computed_through);
  }
  return {{"matched", nb::bool_(comparison.matched)},
          {"summary", nb::str(comparison.summary.c_str())},
          {"worst_array", nb::str(comparison.worst_array.c_str())},
          {"worst_index", nb::cast(comparison.worst_index)},
          {"worst_expected", nb::float_(comparison.worst_expected)},
          {"worst_actual", nb::float_(comparison.worst_actual)}};
}

// A finished report, kept so that its HTML page is only drawn when a notebook asks for it.
class PyReport {
 public:
  explicit PyReport(report::Report report) : report_(std::move(report)) {}
  std::string Json() const { return report::ReportToJson(report_); }
  std::string Table() const { return report::ReportToTable(report_); }
  std::string Html() const {
    nb::gil_scoped_release release;
    std::vector<std::string> warnings;  // a graph not drawn leaves its text in the page
    return report::ReportToHtml(report_, report::ReadChartJs(report::kDebianChartJs),
                                report::HtmlOptions{}, &warnings);
  }
  bool HasErrors() const { return report_.HasErrors(); }

 private:
  report::Report report_;
};

PyReport Report(const std::vector<std::pair<std::string, PyModule>>& models,
                const std::vector<std::string>& target_names,
                const std::optional<std::string>& config, const std::vector<std::string>& sets,
                const std::optional<std::string>& prices, bool estimate_only,
                std::optional<double> max_run_seconds) {
  cli::ReportRequest request;
  request.targets = target_names;
  request.config = config;
  request.sets = sets;
  request.prices_file = prices;
  request.estimate_only = estimate_only;
  request.graphs = true;
  if (max_run_seconds) request.budget.max_run_seconds = *max_run_seconds;
  const std::unique_ptr<cli::ReportSetup> setup = cli::PrepareReport(request, Context());
  report::Report result;
  result.systolic_config = setup->systolic_config;
  nb::gil_scoped_release release;
  std::lock_guard<std::mutex> turn(BackendTurn());
  for (const auto& [name, module] : models) {
    cli::Heartbeat heartbeat("report on " + name);
    result.models.push_back(cli::ReportOnModel(*setup, name, module.file, *module.module));
  }
  return PyReport(std::move(result));
}

std::vector<std::string> TargetNames() {
  std::vector<std::string> names;
  for (const auto& backend : Context().backends->backends()) names.push_back(backend->name());
  return names;
}

}  // namespace

NB_MODULE(_retarget, m) {
  m.doc() = "Retarget's compiler, targets and report (the API is the `retarget` package)";
  static nb::exception<hlo::Error> error(m, "Error", PyExc_RuntimeError);
  nb::register_exception_translator([](const std::exception_ptr& exception, void*) {
    try {
      std::rethrow_exception(exception);
    } catch (const hlo::Error& e) {
      PyErr_SetString(error.ptr(), hlo::FormatError(e).c_str());
    } catch (const cli::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  nb::class_<PyModule>(m, "Module")
      .def_prop_ro("name", [](const PyModule& self) { return self.module->name(); })
      .def_prop_ro("file", [](const PyModule& self) { return self.file; })
      .def("text", [](const PyModule& self) { return hlo::PrintModule(*self.module); })
      .def("proto",
           [](const PyModule& self) {
             const std::string bytes = hlo::WriteHloProto(*self.module);
             return nb::bytes(bytes.data(), bytes.size());
           })
      .def("parameter_shapes", [](const PyModule& self) {
        std::vector<std::string> shapes;
        for (const hlo::Instruction* parameter : self.module->entry()->parameters()) {
          shapes.push_back(parameter->shape().ToString(/*print_layout=*/false));
        }
        return shapes;
      });
  nb::class_<PyReport>(m, "Report")
      .def("json", &PyReport::Json)
      .def("table", &PyReport::Table)
      .def("html", &PyReport::Html)
      .def("has_errors", &PyReport::HasErrors);

  m.def("parse_text", &ParseText, nb::arg("text"), nb::arg("file"));
  m.def("parse_proto", &ParseProto, nb::arg("data"), nb::arg("file"));
  m.def("load_file", &LoadFile, nb::arg("path"));
  m.def("targets", &TargetNames);
  m.def("run", &Run, nb::arg("module"), nb::arg("target"), nb::arg("inputs").none(),
        nb::arg("seed"), nb::arg("config").none(), nb::arg("sets"));
  m.def("compare", &Compare, nb::arg("module"), nb::arg("target"), nb::arg("against"),
        nb::arg("inputs").none(), nb::arg("seed"), nb::arg("rtol").none(),
        nb::arg("atol").none());
  m.def("report", &Report, nb::arg("models"), nb::arg("targets"), nb::arg("config").none(),
        nb::arg("sets"), nb::arg("prices").none(), nb::arg("estimate_only"),
        nb::arg("max_run_seconds").none());
}

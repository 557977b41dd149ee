// `retarget run FILE --target T [...]`: load, compile for T, run (N times with --repeat), print a
// summary of the outputs and the timing line, optionally write outputs (.npz), compare with the
// reference interpreter (MATCHED / MISMATCH, exit 1 on mismatch) and write JSON statistics.
// Output files never replace FILE or the --inputs file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "compiler/cost_model.h"
#include "hlo/evaluator.h"
#include "hlo/module_io.h"
#include "hlo/collective_runtime.h"
#include "hlo/multi_device.h"
#include "simulator/trace.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/systolic_backend.h"
#include "tools/io/compare.h"
#include "tools/io/device_arrays.h"
#include "tools/io/inputs.h"
#include "tools/retarget/cli.h"
#include "tools/retarget/run_support.h"
#include "tools/retarget/systolic_config.h"

namespace cli {
namespace {

constexpr int64_t kMaxRepeat = 1000000;

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

struct RunOptions {
  std::string file;
  std::string target;
  std::string inputs = "random:0";
  std::optional<std::string> output, stats_json;
  std::optional<std::string> save_inputs;  // the arguments as an --inputs file
  bool compare = false;
  std::optional<io::Tolerance> tolerance;  // nullopt: the per-type defaults
  int64_t repeat = 1;
  // --target systolic only: the accelerator configuration and where to write its assembly.
  std::optional<std::string> config;
  std::vector<std::string> overrides;
  std::optional<std::string> emit_asm;
  std::optional<std::string> trace;
  std::optional<int64_t> max_iterations;  // trips per execution of one while loop
  std::optional<int64_t> devices;         // nullopt: the module's replicas x partitions
};

RunOptions ReadOptions(const ParsedArgs& args) {
  RunOptions options;
  options.file = args.positional[0];
  std::optional<std::string> target = args.Get("--target");
  if (!target) throw UsageError("--target is required (interp, cpu, gpu or systolic)");
  options.target = *target;
  options.inputs = args.Get("--inputs").value_or(options.inputs);
  options.output = args.Get("--output");
  options.save_inputs = args.Get("--save-inputs");
  options.stats_json = args.Get("--stats-json");
  if (std::optional<std::string> against = args.Get("--compare")) {
    if (*against != "interp") {
      throw UsageError("--compare supports only 'interp' (the reference), got '" + *against + "'");
    }
    options.compare = true;
  }
  if (args.Has("--rtol") || args.Has("--atol")) {
    io::Tolerance tolerance;  // an omitted one keeps the f32 default of compare.h
    if (auto rtol = args.Get("--rtol")) tolerance.rtol = ParseNonNegativeDouble("--rtol", *rtol);
    if (auto atol = args.Get("--atol")) tolerance.atol = ParseNonNegativeDouble("--atol", *atol);
    options.tolerance = tolerance;
  }
  if (auto repeat = args.Get("--repeat"))
    options.repeat = ParsePositiveInt("--repeat", *repeat, kMaxRepeat);
  if (auto trips = args.Get("--max-iterations"))
    options.max_iterations = ParsePositiveInt("--max-iterations", *trips, int64_t{1} << 62);
  if (auto devices = args.Get("--devices"))
    options.devices = ParsePositiveInt("--devices", *devices, hlo::kMaxDevices);
  options.config = args.Get("--config");
  if (auto it = args.all.find("--set"); it != args.all.end()) options.overrides = it->second;
  options.emit_asm = args.Get("--emit-asm");
  options.trace = args.Get("--trace");
  if ((options.config || !options.overrides.empty() || options.emit_asm || options.trace) &&
      options.target != "systolic") {
    throw UsageError("--config, --set, --emit-asm and --trace apply to --target systolic only");
  }
  return options;
}

// One line per output (a few values each); models with hundreds of outputs are cut short.
void PrintOutputs(const std::vector<io::NpyArray>& outputs) {
  constexpr size_t kMaxListed = 16;
  for (size_t i = 0; i < outputs.size() && i < kMaxListed; ++i) {
    std::cout << outputs[i].name << " = " << outputs[i].literal.ToString(8) << "\n";
  }
  if (outputs.size() > kMaxListed) {
    std::cout << "... " << outputs.size() - kMaxListed
              << " more outputs (--output FILE.npz writes all)\n";
  }
}

std::string OutputsJson(const std::vector<io::NpyArray>& outputs) {
  std::string list = "[";
  for (size_t i = 0; i < outputs.size(); ++i) {
    JsonObject entry;
    entry.Add("name", outputs[i].name).Add("shape", outputs[i].literal.shape().ToString(false));
    list += (i ? ", " : "") + entry.ToString();
  }
  return list + "]";
}

std::string FormatGiB(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

std::string FormatScale(double scale) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", scale);
  return text;
}

// "tolerance: out0, out2 are computed through bf16 values: bf16's defaults" (one line per
// narrower type), so a looser comparison is never silent.
void PrintNarrowerDefaults(const std::map<std::string, hlo::PrimitiveType>& computed_through) {
  std::map<hlo::PrimitiveType, std::vector<std::string>> by_type;
  for (const auto& [name, type] : computed_through) by_type[type].push_back(name);
  for (auto& [type, names] : by_type) {
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;  // out2 before out10
    });
    std::string list;
    for (size_t i = 0; i < names.size() && i < 8; ++i) list += (i ? ", " : "") + names[i];
    if (names.size() > 8) list += " and " + std::to_string(names.size() - 8) + " more";
    const std::string type_name(hlo::PrimitiveTypeName(type));
    std::cout << "tolerance: " << list << (names.size() == 1 ? " is" : " are")
              << " computed through " << type_name << " values: " << type_name
              << "'s defaults\n";
  }
}

// Each simulated chip's time of a multi-chip run (the accelerator's profile): the step takes
// as long as its slowest chip.
void PrintSimulatedDevices(const std::vector<std::unique_ptr<targets::Executable>>& executables) {
  auto percent = [](const std::map<std::string, double>& c, const char* part) {
    auto it = c.find(part);
    auto total = c.find("cycles");
    if (it == c.end() || total == c.end() || total->second <= 0) return 0.0;
    return 100 * it->second / total->second;
  };
  for (size_t d = 0; d < executables.size(); ++d) {
    const std::map<std::string, double> c = executables[d]->profile().counters;
    auto seconds = c.find("seconds");
    if (seconds == c.end()) return;
    std::cout << "device " << d << ": simulated " << seconds->second * 1e3 << " ms (links "
              << percent(c, "link_cycles") << " %, waiting for other chips "
              << percent(c, "collective_wait_cycles") << " %, host "
              << percent(c, "host_fallback_cycles") << " %)\n";
  }
}

// A run on several devices (hlo/multi_device.h): one executable and one thread per device,
// collectives meeting in process; inputs and outputs carry a leading dimension of the device
// count.
int RunOnDevices(const RunOptions& options, const hlo::Module& module, const hlo::DeviceGrid& grid,
                 targets::Backend& backend, const std::vector<std::string>& protected_inputs) {
  const int64_t n = grid.size();
  const std::string devices_text = std::to_string(n) + " (" + std::to_string(grid.replicas) +
                                   " replica(s) x " + std::to_string(grid.partitions) +
                                   " partition(s))";
  if (!backend.multi_device()) {
    throw hlo::Error("--target " + backend.name() + " runs one device, and this run has " +
                     devices_text + ": use another --target, or --devices 1 for device 0 alone");
  }
  std::vector<std::vector<hlo::Literal>> inputs =
      io::ResolveDeviceInputs(module, options.inputs, n);
  if (options.save_inputs) {
    std::vector<std::vector<io::NpyArray>> named;
    for (const auto& mine : inputs) named.push_back(io::FlattenInputs(module, mine));
    io::WriteNpz(*options.save_inputs, io::StackDevices(named));
    std::cout << "wrote " << *options.save_inputs << " (" << module.entry()->parameter_count()
              << " arguments, " << n << " devices)\n";
  }
  // Every device runs its own executable: one holds the buffers of one run.
  auto compile_start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<targets::Executable>> executables;
  {
    Heartbeat heartbeat("compiling for " + backend.name() + " (" + std::to_string(n) +
                        " devices)");
    executables = targets::CompileForDevices(backend, module, n);
  }
  const double compile_ms = MillisecondsSince(compile_start);
  std::vector<double> times_ms;
  std::vector<hlo::Literal> results;
  {
    Heartbeat heartbeat("running on " + backend.name() + ", " + std::to_string(n) + " devices");
    for (int64_t run = 0; run < options.repeat; ++run) {
      auto start = std::chrono::steady_clock::now();
      results = targets::RunAsDevices(executables, grid, inputs);
      times_ms.push_back(MillisecondsSince(start));
    }
  }
  std::vector<std::vector<io::NpyArray>> per_device;
  for (const hlo::Literal& result : results) per_device.push_back(io::FlattenOutputs(result));
  std::vector<io::NpyArray> outputs = io::StackDevices(per_device);
  Timing timing = Summarize(times_ms);
  std::cout << "module: " << module.name() << " (" << module.instruction_count()
            << " instructions), target: " << backend.name() << ", devices: " << devices_text
            << ", inputs: " << options.inputs << "\n";
  PrintOutputs(outputs);
  if (backend.name() != "interp") std::cout << "compile: " << compile_ms << " ms\n";
  std::cout << FormatTiming(timing, times_ms.size()) << std::endl;
  PrintSimulatedDevices(executables);
  if (options.output) {
    io::WriteNpz(*options.output, outputs);
    std::cout << "wrote " << *options.output << " (" << outputs.size() << " arrays, " << n
              << " devices)\n";
  }
  std::optional<io::CompareResult> comparison;
  if (options.compare) {
    hlo::EvaluatorOptions evaluator_options;
    evaluator_options.progress = EvaluatorProgress("interp reference, device 0 of " +
                                                   std::to_string(n));
    std::vector<hlo::Literal> reference =
        hlo::EvaluateOnDevices(module, grid, inputs, evaluator_options);
    std::vector<std::vector<io::NpyArray>> expected;
    for (const hlo::Literal& result : reference) expected.push_back(io::FlattenOutputs(result));
    const double scale = io::ReductionToleranceScale(io::LongestReduction(module));
    const auto computed_through = io::OutputsComputedThroughNarrowerFloats(module);
    if (!options.tolerance) PrintNarrowerDefaults(computed_through);
    comparison = io::CompareArrays(io::StackDevices(expected), outputs,
                                   options.tolerance ? &*options.tolerance : nullptr, scale,
                                   &computed_through);
    std::cout << comparison->summary << std::endl;
  }
  if (options.stats_json) {
    JsonObject stats;
    stats.Add("file", options.file).Add("module", module.name()).Add("target", backend.name());
    stats.Add("inputs", options.inputs).Add("devices", static_cast<double>(n));
    stats.Add("compile_ms", compile_ms);
    stats.Add("runs", static_cast<double>(times_ms.size())).Add("times_ms", times_ms);
    stats.Add("median_ms", timing.median_ms).Add("min_ms", timing.min_ms);
    stats.AddRaw("outputs", OutputsJson(outputs));
    if (comparison) {
      JsonObject compare;
      compare.Add("against", "interp").Add("matched", comparison->matched)
          .Add("summary", comparison->summary);
      stats.AddRaw("compare", compare.ToString());
    }
    WriteOutputFile(*options.stats_json, stats.ToString() + "\n", /*force=*/true,
                    protected_inputs);
  }
  return comparison && !comparison->matched ? kExitFailure : kExitOk;
}

}  // namespace

CommandSpec RunSpec() {
  CommandSpec spec;
  spec.name = "run";
  spec.arguments = "FILE";
  spec.summary = "execute a module on a target; optionally compare with the interpreter";
  spec.details =
      "Inputs are the entry parameters: random:SEED draws them deterministically (floats standard\n"
      "normal, except values the model needs positive (variances, divisors: [0.5,1.5)) and\n"
      "dot/convolution kernels (scaled by 1/sqrt(fan-in)); integers in [0,16) or in range for\n"
      "the dimension they index; pred a coin), or\n"
      "FILE.npz holds arg0, arg1, ... (tuple parameters arg0.0, arg0.1, ...). Outputs are named\n"
      "out0, out1, ... (the flattened result). --compare interp also runs the reference\n"
      "interpreter and prints MATCHED or MISMATCH with the worst element; a mismatch exits with "
      "1.\n"
      "Tolerance: |actual - expected| <= atol + rtol * |expected|; defaults per element type\n"
      "(f32 rtol 1e-5 atol 1e-6, f16 1e-3/1e-3, bf16 1e-2/1e-2, f64 1e-9/1e-12, integers exact),\n"
      "those of the narrowest float an output is computed through (an f32 result of values the\n"
      "module rounds to bf16 gets bf16's); giving --rtol or --atol applies to every array, the\n"
      "omitted one keeping the f32 default.\n"
      "A module written for several devices (replica_count x num_partitions in its header) runs\n"
      "on that many by default (interp and cpu), one thread per device, its collectives\n"
      "exchanging values (--devices N: N/num_partitions replicas; --devices 1: device 0\n"
      "alone). Every input and output entry then has a leading dimension of N, device d's\n"
      "array at index d; random:SEED draws different arrays per device.\n"
      "\nexamples:\n"
      "  retarget run examples/mlp.hlo --target interp --inputs random:0 --output out/mlp.npz\n"
      "  retarget run examples/mlp.hlo --target interp --compare interp --repeat 10\n";
  spec.min_positional = 1;
  spec.max_positional = 1;
  spec.flags = {
      {"--target", "T", "interp, cpu, gpu (host emulation without a GPU), systolic", "", /*required=*/true},
      {"--inputs", "SPEC", "random:SEED (default random:0) or FILE.npz / FILE.npy", ""},
      {"--output", "FILE.npz", "write the outputs (out0, out1, ...)", ""},
      {"--save-inputs", "FILE.npz",
       "write the arguments (arg0, arg1, ...) so --inputs FILE.npz reproduces the run", ""},
      {"--compare", "interp", "also run the reference interpreter and compare", ""},
      {"--rtol", "R", "relative tolerance for --compare", ""},
      {"--atol", "A", "absolute tolerance for --compare", ""},
      {"--repeat", "N", "run N times and report median and min time", ""},
      {"--devices", "N",
       "run N devices (default: the module's replica_count x num_partitions); interp, cpu", ""},
      {"--max-iterations", "N",
       "stop a while loop after N trips with an error naming it (default 4294967296)", ""},
      {"--stats-json", "OUT", "write timings, outputs and the comparison as JSON", ""},
      {"--config", "PRESET|FILE",
       "systolic: accelerator preset or config file (default: tpu-v1 with array.dtypes=int8,bf16,f32)",
       ""},
      {"--set", "K=V", "systolic: override one configuration key", "", false, true},
      {"--emit-asm", "OUT.sasm", "systolic: write the accelerator programs (.sasm)", ""},
      {"--trace", "OUT.json", "systolic: write the first run's timeline (Chrome trace JSON)", ""},
      {"--force", "", "replace output files that exist (inputs and FILE are never replaced)", ""},
  };
  return spec;
}

int RunRun(const ParsedArgs& args, const Context& context) {
  RunOptions options = ReadOptions(args);
  // One process, one run command: the limit holds for this command's loops on every target.
  if (options.max_iterations) hlo::GlobalLimits().max_while_iterations = *options.max_iterations;
  std::unique_ptr<targets::Backend> configured;  // systolic with --config / --set / --trace
  std::ostringstream trace_text;
  std::optional<simulator::ChromeTraceWriter> trace;
  if (options.config || !options.overrides.empty() || options.trace) {
    systolic::ArchConfig config = SystolicRunConfig(options.config, options.overrides);
    if (options.trace) trace.emplace(trace_text, config.clock_mhz, config.name);
    configured = targets::MakeSystolicBackend(config, context.backends->Find("interp"),
                                              trace ? &*trace : nullptr);
  }
  targets::Backend& backend = configured ? *configured : FindBackend(context, options.target);
  std::vector<std::string> protected_inputs = {options.file};
  if (options.inputs.rfind("random:", 0) != 0) protected_inputs.push_back(options.inputs);
  // Every file this run will write is checked now, not after a long compile and run: never an
  // input, and an existing file only with --force.
  for (const std::optional<std::string>* path : {&options.output, &options.save_inputs,
                                                 &options.stats_json, &options.emit_asm,
                                                 &options.trace}) {
    if (*path) CheckOutputFile(**path, args.Has("--force"), protected_inputs);
  }

  hlo::LoadedModule loaded = hlo::LoadModule(options.file);
  const hlo::Module& module = *loaded.module;
  const hlo::DeviceGrid grid = options.devices ? hlo::GridForDevices(module, *options.devices)
                                               : hlo::ModuleDeviceGrid(module);
  if (grid.size() > 1) return RunOnDevices(options, module, grid, backend, protected_inputs);
  std::vector<hlo::Literal> inputs = io::ResolveInputs(module, options.inputs);
  if (options.save_inputs) {
    // Written before compiling, so a compile that fails can still be reproduced elsewhere.
    io::WriteNpz(*options.save_inputs, io::FlattenInputs(module, inputs));
    std::cout << "wrote " << *options.save_inputs << " (" << inputs.size() << " arguments)\n";
  }

  auto compile_start = std::chrono::steady_clock::now();
  std::unique_ptr<targets::Executable> executable;
  {
    Heartbeat heartbeat("compiling for " + backend.name());
    executable = backend.Compile(module);
  }
  double compile_ms = MillisecondsSince(compile_start);
  if (options.emit_asm) {
    auto artifacts = executable->artifacts();
    WriteOutputFile(*options.emit_asm, artifacts["program.sasm"], /*force=*/true,
                    protected_inputs);
  }

  std::vector<double> times_ms;
  hlo::Literal result;
  {
    Heartbeat heartbeat("running on " + backend.name() + " (" + std::to_string(options.repeat) +
                        (options.repeat == 1 ? " run)" : " runs)"));
    for (int64_t run = 0; run < options.repeat; ++run) {
      auto start = std::chrono::steady_clock::now();
      result = executable->Run(inputs);
      times_ms.push_back(MillisecondsSince(start));
    }
  }
  std::vector<io::NpyArray> outputs = io::FlattenOutputs(result);
  if (options.trace) {
    WriteOutputFile(*options.trace, trace_text.str(), /*force=*/true, protected_inputs);
  }
  Timing timing = Summarize(times_ms);

  std::cout << "module: " << module.name() << " (" << module.instruction_count()
            << " instructions), target: " << backend.name() << ", inputs: " << options.inputs
            << "\n";
  if (executable->profile().counters.count("host_emulation") != 0) {
    std::cout << "note: no GPU in this process: the generated kernels ran by host emulation "
                 "(values are the GPU code's; times are not GPU times)\n";
  }
  PrintOutputs(outputs);
  // The interpreter does no compiling worth reporting (and its output is pinned by tests).
  if (backend.name() != "interp") std::cout << "compile: " << compile_ms << " ms\n";
  std::cout << FormatTiming(timing, times_ms.size()) << std::endl;

  if (options.output) {
    io::WriteNpz(*options.output, outputs);
    std::cout << "wrote " << *options.output << " (" << outputs.size() << " arrays)\n";
  }

  std::optional<io::CompareResult> comparison;
  if (options.compare) {
    // Evaluated directly rather than through the interp backend so that a long reference run
    // can report its progress (the Executable interface has no progress hook).
    hlo::EvaluatorOptions evaluator_options;
    evaluator_options.progress = EvaluatorProgress("interp reference");
    hlo::Literal reference = hlo::Evaluate(module, inputs, evaluator_options);
    // The per-type defaults widen with the longest sum in the module (compare.h); explicit
    // --rtol/--atol are used as given.
    const int64_t reduction = io::LongestReduction(module);
    const double scale = io::ReductionToleranceScale(reduction);
    if (!options.tolerance && scale > 1) {
      std::cout << "tolerance: the per-type defaults x " << FormatScale(scale)
                << " (sqrt of the longest reduction, " << reduction << " terms)\n";
    }
    const auto computed_through = io::OutputsComputedThroughNarrowerFloats(module);
    if (!options.tolerance) PrintNarrowerDefaults(computed_through);
    comparison = io::CompareArrays(io::FlattenOutputs(reference), outputs,
                                   options.tolerance ? &*options.tolerance : nullptr, scale,
                                   &computed_through);
    std::cout << comparison->summary << std::endl;
  }

  // What the whole command needed (inputs, both runs, the comparison): the figure that says
  // whether a model fits a machine.
  const double peak_bytes = PeakResidentBytes();
  double input_bytes = 0;
  for (const hlo::Literal& input : inputs) input_bytes += compiler::ShapeBytes(input.shape());
  std::cout << "peak memory: " << FormatGiB(peak_bytes) << " resident (inputs "
            << FormatGiB(input_bytes) << ")" << std::endl;

  if (options.stats_json) {
    JsonObject stats;
    stats.Add("file", options.file).Add("module", module.name()).Add("target", backend.name());
    stats.Add("inputs", options.inputs).Add("compile_ms", compile_ms);
    stats.Add("runs", static_cast<double>(times_ms.size())).Add("times_ms", times_ms);
    stats.Add("median_ms", timing.median_ms).Add("min_ms", timing.min_ms);
    stats.Add("peak_resident_bytes", peak_bytes).Add("input_bytes", input_bytes);
    stats.AddRaw("outputs", OutputsJson(outputs));
    // Backend counters; the cpu backend's "kernel_ms.<instruction>" are per-kernel times
    // averaged over the runs (targets/cpu/cpu_backend.h).
    JsonObject counters;
    for (const auto& [name, value] : executable->profile().counters) counters.Add(name, value);
    stats.AddRaw("counters", counters.ToString());
    // A simulated run's figures (cycles, clock_mhz, seconds, ...) also at the top level.
    if (backend.latency_source() == targets::LatencySource::kSimulated) {
      for (const auto& [name, value] : executable->profile().counters) stats.Add(name, value);
    }
    if (comparison) {
      JsonObject compare;
      compare.Add("against", "interp")
          .Add("matched", comparison->matched)
          .Add("summary", comparison->summary);
      stats.AddRaw("compare", compare.ToString());
    }
    WriteOutputFile(*options.stats_json, stats.ToString() + "\n", /*force=*/true, protected_inputs);
  }
  return comparison && !comparison->matched ? kExitFailure : kExitOk;
}

}  // namespace cli

// `retarget compile FILE --target T [...]`: runs the target's optimization pipeline
// (compiler::MakeTargetPipeline) and writes the optimized module as parseable HLO text — fusions
// printed as XLA does — which `retarget run --target interp` evaluates like any other module.
// Optionally: dumps after every pass, per-pass times, the fusion explanations, and statistics
// (owners, fusion coverage, kernels, peak memory, per-pass time) as JSON.
//
// Guarantees: flags are checked and output paths vetted before any work; OUT never replaces
// FILE and replaces an existing file only with --force; diagnostics (timing table, fusion
// explanations, progress) go to stderr so stdout stays a parseable module.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "compiler/ownership.h"
#include "compiler/target_pipelines.h"
#include "hlo/module_io.h"
#include "hlo/printer.h"
#include "tools/retarget/cli.h"
#include "tools/retarget/emit_files.h"
#include "tools/retarget/opt_support.h"
#include "tools/retarget/run_support.h"

#include "compiler/fusion/fusion.h"

namespace cli {
namespace {

// Emit kinds: hlo for every target, and what each backend says it emits (Backend::emit_kinds).
// A kind some backend emits but not this one is an error naming what this target can emit.
void CheckEmitKind(const std::string& kind, const std::string& target, const Context& context) {
  if (kind == "hlo") return;
  std::vector<std::string> own = {"hlo"};
  std::set<std::string> any = {"hlo"};
  for (const auto& backend : context.backends->backends()) {
    for (const std::string& k : backend->emit_kinds()) {
      any.insert(k);
      if (backend->name() == target) own.push_back(k);
    }
  }
  if (std::find(own.begin(), own.end(), kind) != own.end()) return;
  auto join = [](const auto& kinds) {
    std::string out;
    for (const std::string& k : kinds) out += (out.empty() ? "" : ", ") + k;
    return out;
  };
  if (any.count(kind)) {
    throw hlo::Error("--emit " + kind + " does not apply to --target " + target + " (it emits " +
                     join(own) + ")");
  }
  throw UsageError("--emit must be one of " + join(any) + ", got '" + kind + "'");
}

std::string FusionExplanations(const hlo::Module& module,
                               const compiler::TargetDescription& target) {
  return compiler::FormatFusionDecisions(compiler::ExplainFusion(module, target));
}

// compiler::ModuleStatsJson's object (fields in docs/ownership.md) with the CLI's context
// added in front: the input, the module and every pass run of the pipeline; before all of them
// the backend's own object when its Emit gave one (`emitted` with a stats_key).
std::string StatsJson(const std::string& file, const hlo::Module& module,
                      const compiler::TargetDescription& target,
                      const compiler::PipelineReport& report,
                      const targets::Emitted* emitted = nullptr) {
  std::map<std::string, double> pass_times_ms;
  for (const auto& [name, ms] : PassTimesByName(report)) pass_times_ms[name] = ms;
  JsonObject document;
  if (emitted != nullptr && !emitted->stats_key.empty()) {
    document.AddRaw(emitted->stats_key, emitted->stats_json);
  }
  document.Add("file", file)
      .Add("module", module.name())
      .Add("pipeline_ms", report.total_milliseconds)
      .Add("passes", PassRecordsJson(report));
  const nlohmann::ordered_json stats =
      compiler::ModuleStatsJson(compiler::AnalyzeOwnership(module, target), pass_times_ms);
  for (const auto& [key, value] : stats.items()) document.Add(key, value);
  return document.ToString() + "\n";
}

}  // namespace

CommandSpec CompileSpec() {
  CommandSpec spec;
  spec.name = "compile";
  spec.arguments = "FILE";
  spec.summary = "run a target's compiler pipeline, dumping after each pass";
  spec.details =
      "Runs the target's optimization pipeline (see --list-passes) and writes the optimized\n"
      "module as HLO text to stdout or OUT; `retarget run OUT --target interp` evaluates it.\n"
      "--dump-dir writes 00.input.hlo and NN.<pass>.hlo after every pass. --time-passes,\n"
      "--explain-fusion and progress go to stderr. --stats-json writes instruction counts by\n"
      "owner, fusion coverage, kernel count, peak buffer memory and per-pass times.\n"
      "--target cpu --emit llvm -o OUT.ll writes the kernels' LLVM IR before O3 (OUT.ll) and\n"
      "after (OUT.opt.ll); --emit obj -o OUT.o an object file with retarget_model_run and OUT.h\n"
      "declaring it; with --dump-dir D, each kernel's IR goes to D too.\n"
      "--target gpu -o OUT.rtgpu writes the GPU artifact (PTX, cubin when ptxas is installed,\n"
      "launch plan, arena offsets, constants); --emit ptx|llvm the kernels' PTX / LLVM IR;\n"
      "--dump-dir D also gets gpu.kernels.{ll,opt.ll,ptx} and gpu.codegen.json.\n"
      "--target systolic --emit asm writes the accelerator programs (.sasm) for the machine of\n"
      "`run --target systolic` (tpu-v1 with bf16/f32 matrix modes); for other machines use\n"
      "`run --target systolic --config ... --emit-asm OUT`.\n"
      "\nexamples:\n"
      "  retarget compile examples/mlp.hlo --target cpu -o out/mlp.cpu.hlo\n"
      "  retarget compile examples/mlp.hlo --target gpu --dump-dir out/dumps --time-passes\n"
      "  retarget compile examples/mlp.hlo --target systolic --stats-json out/stats.json\n";
  spec.min_positional = 0;  // FILE is optional with --list-passes only
  spec.max_positional = 1;
  spec.flags = {
      {"--target", "T", "interp, cpu, gpu or systolic", "", /*required=*/true},
      {"--dump-dir", "D", "write the module after every pass into D", ""},
      {"--emit", "KIND", "hlo (default); llvm, obj (cpu); llvm, ptx (gpu); asm (systolic)", ""},
      {"--output", "OUT", "write the optimized module to OUT instead of stdout", "-o"},
      {"--force", "", "replace OUT / the stats file if they exist (never FILE)", ""},
      {"--stats-json", "OUT", "owners, fusion coverage, kernels, peak memory, pass times", ""},
      {"--verify-each", "", "verify the module after every pass", ""},
      {"--disable-pass", "P", "skip pass P (repeatable; P may be a comma list)", ""},
      {"--list-passes", "", "print the target's pipeline and exit", ""},
      {"--time-passes", "", "print per-pass times on stderr", ""},
      {"--explain-fusion", "", "print why producer-consumer edges were left unfused", ""},
  };
  spec.flags[7].repeatable = true;  // --disable-pass
  return spec;
}

int RunCompile(const ParsedArgs& args, const Context& context) {
  const compiler::TargetDescription& target = TargetArgument(args);
  compiler::Pipeline pipeline = compiler::MakeTargetPipeline(target);
  if (args.Has("--list-passes")) {
    std::cout << pipeline.ListPasses();
    return kExitOk;
  }
  if (args.positional.empty()) throw UsageError("missing argument FILE");
  const std::string& input = args.positional[0];
  const std::string emit = args.Get("--emit").value_or("hlo");
  CheckEmitKind(emit, target.name, context);
  const bool force = args.Has("--force");
  std::optional<std::string> output = args.Get("--output");
  std::optional<std::string> stats_json = args.Get("--stats-json");
  if (output) CheckOutputPath(*output, input, force);
  if (stats_json) CheckOutputPath(*stats_json, input, force);

  compiler::PipelineOptions options;
  options.verify_each = args.Has("--verify-each");
  options.dump_dir = args.Get("--dump-dir").value_or("");
  options.disabled = CommaListFlag(args, "--disable-pass");

  hlo::LoadedModule loaded = hlo::LoadModule(input);
  // What the backend writes besides HLO: an --emit kind, or its whole artifact for
  // `-o OUT<artifact extension>` (Backend::Emit; emit_files.h writes the files).
  targets::Backend& backend = FindBackend(context, target.name);
  const std::string artifact = backend.artifact_extension();
  const bool writes_artifact = emit == "hlo" && output && !artifact.empty() &&
                               output->ends_with(artifact);
  const bool backend_emits = emit != "hlo" || writes_artifact;
  const std::string kind = writes_artifact ? "artifact" : emit;
  targets::Emitted emitted;
  auto emit_files = [&](const hlo::Module& module) {
    {
      Heartbeat heartbeat("generating " + kind + " for " + target.name + " from " + input);
      emitted = backend.Emit(module, kind, options.dump_dir);
    }
    return WriteEmitted(emitted, kind, input, output, options.dump_dir, force);
  };
  if (backend_emits && !backend.emits_optimized_module()) return emit_files(*loaded.module);
  compiler::PipelineReport report;
  {
    Heartbeat heartbeat("compiling " + input + " for " + target.name);
    report = pipeline.Run(*loaded.module, options);
  }
  const hlo::Module& module = *loaded.module;
  if (args.Has("--time-passes")) std::cerr << report.ToTable();
  if (args.Has("--explain-fusion")) std::cerr << FusionExplanations(module, target);
  if (backend_emits) {
    const int status = emit_files(module);
    if (stats_json) {
      WriteOutputFile(*stats_json, StatsJson(input, module, target, report, &emitted), force,
                      {input});
    }
    return status;
  }

  std::string text = hlo::PrintModule(module);
  if (output) {
    WriteOutputFile(*output, text, force, {input});
  } else {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) return kExitFailure;
  }
  if (stats_json) {
    WriteOutputFile(*stats_json, StatsJson(input, module, target, report), force, {input});
  }
  return kExitOk;
}

}  // namespace cli

// `retarget report FILE... [--targets cpu,gpu,systolic] [--json OUT] [--force]`: compiles every
// model for every target with the shared optimizer, and prints who owns what, the estimated
// latency / energy / cost, and the share carried across each pair of targets
// (docs/report-format.md).
//
// Guarantees: flags and the output path are checked before any work (an unknown target is a
// usage error listing the valid ones; an existing OUT is kept unless --force; OUT never replaces
// an input). A model that fails to load, or fails on one target, still gets its row with the
// error in its cells; the exit status is then 1, after the whole report has been written.
#include <filesystem>
#include <iostream>

#include "hlo/module_io.h"
#include "tools/report/report.h"
#include "tools/retarget/cmd_report.h"
#include "tools/retarget/opt_support.h"
#include "tools/retarget/run_support.h"

namespace cli {
namespace {

const std::vector<std::string>& ReportTargetNames() {
  static const std::vector<std::string> names = {"cpu", "gpu", "systolic"};
  return names;
}

// The --targets list, in the order given, without repeats; a UsageError lists the valid names.
std::vector<const compiler::TargetDescription*> TargetsArgument(const ParsedArgs& args) {
  std::string valid;
  for (const std::string& name : compiler::TargetNames()) valid += (valid.empty() ? "" : ", ") + name;
  std::vector<std::string> names = ReportTargetNames();
  if (std::optional<std::string> list = args.Get("--targets")) names = SplitCommaList(*list);
  if (names.empty()) throw UsageError("--targets needs at least one target (" + valid + ")");
  std::vector<const compiler::TargetDescription*> targets;
  for (const std::string& name : names) {
    const compiler::TargetDescription* target = compiler::FindTarget(name);
    if (target == nullptr) {
      throw UsageError("unknown target '" + name + "' (targets: " + valid + ")");
    }
    bool repeated = false;
    for (const auto* t : targets) repeated = repeated || t == target;
    if (!repeated) targets.push_back(target);
  }
  return targets;
}

std::string ErrorText(const std::exception& error, const std::string& file) {
  if (const auto* e = dynamic_cast<const hlo::Error*>(&error)) return hlo::FormatError(*e, file);
  return error.what();
}

}  // namespace

CommandSpec ReportSpec() {
  CommandSpec spec;
  spec.name = "report";
  spec.arguments = "FILE...";
  spec.summary = "the portability report across targets";
  spec.details =
      "For each model and target: compiles a copy with the target's pipeline, then reports\n"
      "instructions by owner (counts, shares of FLOPs), fusion coverage, kernels, custom-calls\n"
      "and whether each target supports them, latency estimated by the cost model, energy and\n"
      "cost per million inferences; and for each ordered pair of targets the share the shared\n"
      "compiler carries across (docs/report-format.md). A failure on one target is shown in\n"
      "its cell and makes the exit status 1. Not yet: --html (exit 1), measured/simulated\n"
      "latency, --prices, --config.\n"
      "\nexamples:\n"
      "  retarget report examples/mlp.hlo\n"
      "  retarget report a.hlo b.hlo --targets gpu,cpu --json out/report.json --force\n";
  spec.min_positional = 1;
  spec.max_positional = -1;
  spec.flags = {
      {"--targets", "LIST", "comma-separated targets (default cpu,gpu,systolic)", ""},
      {"--json", "OUT", "write the report as JSON to OUT (the table still goes to stdout)", ""},
      {"--force", "", "replace OUT if it exists (never an input FILE)", ""},
      {"--html", "OUT", "not available yet (the HTML page comes with a later slice)", ""},
  };
  return spec;
}

int RunReport(const ParsedArgs& args, const Context&) {
  const std::vector<const compiler::TargetDescription*> targets = TargetsArgument(args);
  if (args.Has("--html")) {
    throw hlo::Error("--html is not available yet in this build; use --json OUT "
                     "(docs/report-format.md)");
  }
  const bool force = args.Has("--force");
  std::optional<std::string> json = args.Get("--json");
  if (json) {
    RefuseToOverwriteInputs(*json, args.positional);
    std::error_code ec;
    if (!force && std::filesystem::exists(*json, ec)) {
      throw hlo::Error(*json + ": already exists (use --force to overwrite)");
    }
  }

  report::Report result;
  for (const std::string& file : args.positional) {
    const std::string name = std::filesystem::path(file).stem().string();
    try {
      hlo::LoadedModule loaded = hlo::LoadModule(file);
      Heartbeat heartbeat("report on " + file);
      result.models.push_back(report::BuildModelReport(name, file, *loaded.module, targets));
    } catch (const std::bad_alloc&) {
      result.models.push_back(report::FailedModelReport(name, file, "out of memory", targets));
    } catch (const std::exception& error) {
      result.models.push_back(
          report::FailedModelReport(name, file, ErrorText(error, file), targets));
    }
  }

  std::cout << report::ReportToTable(result);
  std::cout.flush();
  if (json) WriteOutputFile(*json, report::ReportToJson(result), force, args.positional);
  if (result.HasErrors()) {
    std::cerr << "retarget report: error: some models or targets failed (see their cells)\n";
    return kExitFailure;
  }
  return std::cout ? kExitOk : kExitFailure;
}

}  // namespace cli

// `retarget report FILE... [--targets cpu,gpu,systolic] [--config PRESET|FILE] [--set K=V]...
// [--prices FILE] [--json OUT] [--html OUT] [--force] [--max-run-seconds S] [--max-memory B]`:
// compiles every model for every target with the shared optimizer, and prints who owns what,
// the latency / energy / cost, and the share carried across each pair of targets
// (docs/report.md, docs/report-format.md).
//
// Guarantees: flags, the price file, the accelerator config and the output paths are checked
// before any work (an unknown target is a usage error listing the valid ones; an unknown preset
// lists the presets; an existing OUT is kept unless --force; OUT never replaces an input). A
// model that fails to load, or fails on one target, still gets its row with the error in its
// cells; the exit status is then 1, after the whole report has been written.
#include <filesystem>
#include <iostream>
#include <memory>

#include "hlo/module_io.h"
#include "tools/report/report.h"
#include "tools/report/report_html.h"
#include "tools/retarget/cmd_report.h"
#include "tools/retarget/opt_support.h"
#include "tools/retarget/report_setup.h"
#include "tools/retarget/run_support.h"

namespace cli {
namespace {

// An output path: never an input, never the other output, kept unless --force.
void CheckOutput(const std::optional<std::string>& path, const ParsedArgs& args) {
  if (path) CheckOutputFile(*path, args.Has("--force"), args.positional);
}

report::LatencyBudget BudgetArgument(const ParsedArgs& args) {
  report::LatencyBudget budget;
  if (auto seconds = args.Get("--max-run-seconds")) {
    budget.max_run_seconds = ParseNonNegativeDouble("--max-run-seconds", *seconds);
  }
  if (auto bytes = args.Get("--max-memory")) {
    budget.max_memory_bytes = ParsePositiveInt("--max-memory", *bytes, int64_t{1} << 50);
  }
  return budget;
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
      "and whether each target supports them, latency (labelled measured / simulated /\n"
      "estimated: cpu is measured on this machine, systolic simulated, gpu measured where a\n"
      "GPU and retarget-gpu-run are present; an estimate says why it was not measured),\n"
      "energy (estimated) and cost per million inferences from a price table; and for each\n"
      "ordered pair of targets the share the shared compiler carries across. A failure on one\n"
      "target is shown in its cell and makes the exit status 1. Guide: docs/report.md; figures\n"
      "and JSON schema: docs/report-format.md, docs/report.schema.json.\n"
      "\nexamples:\n"
      "  retarget report examples/mlp.hlo\n"
      "  retarget report a.hlo b.hlo --targets gpu,cpu --json out/report.json --force\n"
      "  retarget report examples/mlp.hlo --config gemmini --prices examples/prices.cfg\n"
      "  retarget report examples/mlp.hlo --html out/report.html\n";
  spec.min_positional = 1;
  spec.max_positional = -1;
  spec.flags = {
      {"--targets", "LIST", "comma-separated targets (default cpu,gpu,systolic)", ""},
      {"--config", "PRESET|FILE",
       "systolic column from a config: tpu-v1, gemmini, tpu-v4-mxu or a file", ""},
      {"--set", "KEY=VALUE", "override one accelerator config key (repeatable)", "", false, true},
      {"--prices", "FILE", "$/hour per target (key = value lines; defaults: examples/prices.cfg)",
       ""},
      {"--json", "OUT", "write the report as JSON to OUT (the table still goes to stdout)", ""},
      {"--html", "OUT", "write one self-contained HTML page (charts, tables, graphs) to OUT", ""},
      {"--force", "", "replace OUT if it exists (never an input FILE)", ""},
      {"--max-run-seconds", "S",
       "latency budget: models estimated slower keep the estimate (default 1)", ""},
      {"--max-memory", "BYTES",
       "latency budget: peak buffer bytes for a measured run (default 4 GiB)", ""},
      {"--estimate-only", "", "never run or simulate: every latency is the cost model's", ""},
  };
  return spec;
}

int RunReport(const ParsedArgs& args, const Context& context) {
  const std::optional<std::string> json = args.Get("--json"), html = args.Get("--html");
  if (json && html && *json == *html) throw UsageError("--json and --html name the same file");
  ReportRequest request;
  if (std::optional<std::string> list = args.Get("--targets")) {
    request.targets = SplitCommaList(*list);
  }
  request.budget = BudgetArgument(args);
  request.config = args.Get("--config");
  if (auto sets = args.all.find("--set"); sets != args.all.end()) request.sets = sets->second;
  request.prices_file = args.Get("--prices");
  request.estimate_only = args.Has("--estimate-only");
  request.graphs = html.has_value();
  const std::unique_ptr<ReportSetup> setup = PrepareReport(request, context);
  CheckOutput(json, args);
  CheckOutput(html, args);
  const std::string chart_js = html ? report::ReadChartJs(report::kDebianChartJs) : "";

  report::Report result;
  result.systolic_config = setup->systolic_config;
  for (const std::string& file : args.positional) {
    const std::string name = std::filesystem::path(file).stem().string();
    try {
      hlo::LoadedModule loaded = hlo::LoadModule(file);
      Heartbeat heartbeat("report on " + file);
      result.models.push_back(ReportOnModel(*setup, name, file, *loaded.module));
    } catch (const std::bad_alloc&) {
      result.models.push_back(report::FailedModelReport(name, file, "out of memory",
                                                        setup->targets));
    } catch (const std::exception& error) {
      result.models.push_back(
          report::FailedModelReport(name, file, ErrorText(error, file), setup->targets));
    }
  }

  std::cout << report::ReportToTable(result);
  std::cout.flush();
  const bool force = args.Has("--force");
  if (json) WriteOutputFile(*json, report::ReportToJson(result), force, args.positional);
  if (html) {
    std::vector<std::string> warnings;
    const std::string page = report::ReportToHtml(result, chart_js, report::HtmlOptions{}, &warnings);
    for (const std::string& warning : warnings) {
      std::cerr << "retarget report: warning: graph not rendered: " << warning << "\n";
    }
    WriteOutputFile(*html, page, force, args.positional);
  }
  if (result.HasErrors()) {
    std::cerr << "retarget report: error: some models or targets failed (see their cells)\n";
    return kExitFailure;
  }
  return std::cout ? kExitOk : kExitFailure;
}

}  // namespace cli

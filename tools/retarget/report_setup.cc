// PrepareReport / ReportOnModel: see report_setup.h.
#include "tools/retarget/report_setup.h"

#include "targets/descriptions.h"
#include "tools/report/arch_target.h"
#include "tools/report/graph_dot.h"
#include "tools/report/prices.h"
#include "tools/report/report_html.h"
#include "tools/retarget/report_latency.h"

namespace cli {
namespace {

// The targets by name, in the order given, without repeats.
std::vector<const compiler::TargetDescription*> ReportTargets(
    const std::vector<std::string>& names) {
  std::string valid;
  for (const std::string& name : targets::DescriptionNames()) {
    valid += (valid.empty() ? "" : ", ") + name;
  }
  if (names.empty()) throw UsageError("--targets needs at least one target (" + valid + ")");
  std::vector<const compiler::TargetDescription*> found;
  for (const std::string& name : names) {
    const compiler::TargetDescription* target = targets::FindDescription(name);
    if (target == nullptr) {
      throw UsageError("unknown target '" + name + "' (targets: " + valid + ")");
    }
    bool repeated = false;
    for (const auto* t : found) repeated = repeated || t == target;
    if (!repeated) found.push_back(target);
  }
  return found;
}

}  // namespace

std::unique_ptr<ReportSetup> PrepareReport(const ReportRequest& request, const Context& context) {
  auto setup = std::make_unique<ReportSetup>();
  setup->targets = ReportTargets(request.targets);
  std::optional<systolic::ArchConfig> config;
  if (request.config || !request.sets.empty()) {
    bool has_systolic = false;
    for (const auto* target : setup->targets) {
      has_systolic |= target == &targets::SystolicDescription();
    }
    if (!has_systolic) {
      throw UsageError("--config and --set describe the systolic target, which --targets does "
                       "not include");
    }
    config = systolic::LoadArchConfig(request.config.value_or("tpu-v1"), request.sets);
  }
  report::ReportOptions& options = setup->options;
  options.budget = request.budget;
  options.prices = request.prices_file ? report::LoadPrices(*request.prices_file)
                                       : report::DefaultPrices();
  if (request.graphs) options.graph_node_budget = report::kDefaultGraphNodeBudget;
  if (!request.estimate_only) options.latency = ReportLatencyHook(context, config);
  options.host_steps = ReportHostStepsHook(context, config);
  options.no_latency_note = "not run (--estimate-only)";
  if (config) {
    // The systolic column under a config is a derived copy of the built-in description.
    setup->configured_systolic = std::make_unique<compiler::TargetDescription>(
        report::SystolicTargetFromConfig(*config));
    for (auto*& target : setup->targets) {
      if (target == &targets::SystolicDescription()) target = setup->configured_systolic.get();
    }
    setup->systolic_config = config->name;
    for (const std::string& assignment : request.sets) {
      setup->systolic_config += " --set " + assignment;
    }
  }
  return setup;
}

report::ModelReport ReportOnModel(const ReportSetup& setup, const std::string& name,
                                  const std::string& file, const hlo::Module& module) {
  try {
    return report::BuildModelReport(name, file, module, setup.targets, setup.options);
  } catch (const std::bad_alloc&) {
    return report::FailedModelReport(name, file, "out of memory", setup.targets);
  } catch (const hlo::Error& error) {
    return report::FailedModelReport(name, file, hlo::FormatError(error, file), setup.targets);
  } catch (const std::exception& error) {
    return report::FailedModelReport(name, file, error.what(), setup.targets);
  }
}

}  // namespace cli

// Helpers of `retarget compile` / `retarget opt` (opt_support.h).
#include "tools/retarget/opt_support.h"

#include <filesystem>
#include <map>

#include "hlo/diagnostic.h"
#include "tools/retarget/run_support.h"
#include "targets/descriptions.h"

namespace cli {

const compiler::TargetDescription& TargetArgument(const ParsedArgs& args) {
  std::string names;
  for (const std::string& name : targets::DescriptionNames()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  std::optional<std::string> name = args.Get("--target");
  if (!name) throw UsageError("--target is required (" + names + ")");
  const compiler::TargetDescription* target = targets::FindDescription(*name);
  if (target == nullptr)
    throw UsageError("unknown target '" + *name + "' (targets: " + names + ")");
  return *target;
}

std::vector<std::string> SplitCommaList(const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::set<std::string> CommaListFlag(const ParsedArgs& args, const std::string& flag) {
  std::set<std::string> names;
  auto it = args.all.find(flag);
  if (it == args.all.end()) return names;
  for (const std::string& value : it->second) {
    for (std::string& name : SplitCommaList(value)) names.insert(std::move(name));
  }
  return names;
}

void CheckOutputPath(const std::string& output, const std::string& input, bool force) {
  RefuseToOverwriteInputs(output, {input});
  std::error_code ec;
  if (!force && std::filesystem::exists(output, ec)) {
    throw hlo::Error(output + ": already exists (use --force to overwrite)");
  }
}

std::vector<std::pair<std::string, double>> PassTimesByName(
    const compiler::PipelineReport& report) {
  std::vector<std::pair<std::string, double>> times;  // first-run order
  std::map<std::string, size_t> index;
  for (const compiler::PassRecord& record : report.passes) {
    auto [it, inserted] = index.emplace(record.name, times.size());
    if (inserted) times.emplace_back(record.name, 0.0);
    times[it->second].second += record.milliseconds;
  }
  return times;
}

nlohmann::ordered_json PassRecordsJson(const compiler::PipelineReport& report) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const compiler::PassRecord& record : report.passes) {
    list.push_back({{"name", record.name},
                    {"changed", record.changed},
                    {"skipped", record.skipped},
                    {"ms", hlo::JsonNumberValue(record.milliseconds)}});
  }
  return list;
}

}  // namespace cli

// Helpers shared by `retarget compile` and `retarget opt`: target and pass-list arguments,
// running a pipeline with the module's file named in its errors, and the JSON of a pipeline run.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/pipeline.h"
#include "compiler/target_description.h"
#include "tools/retarget/cli.h"

namespace cli {

// The TargetDescription named by --target; a UsageError lists the valid names.
const compiler::TargetDescription& TargetArgument(const ParsedArgs& args);

// "a,b,,c" -> {"a", "b", "c"}: empty items (doubled or trailing commas) are ignored.
std::vector<std::string> SplitCommaList(const std::string& list);

// Every value of a repeatable flag, each itself a comma list, as one set.
std::set<std::string> CommaListFlag(const ParsedArgs& args, const std::string& flag);

// Fails early (before any work) when OUT would be written over FILE, or exists without --force.
void CheckOutputPath(const std::string& output, const std::string& input, bool force);

// Per-pass times summed by pass name (a pass may run twice), e.g. for --stats-json.
std::vector<std::pair<std::string, double>> PassTimesByName(const compiler::PipelineReport& report);

// [{"name": ..., "changed": ..., "skipped": ..., "ms": ...}, ...]: every pass run, in order.
nlohmann::ordered_json PassRecordsJson(const compiler::PipelineReport& report);

}  // namespace cli

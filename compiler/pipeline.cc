// The pass pipeline (pipeline.h): runs passes in order and owns verification, honest-change
// checks, dumps, disabling and timing, so that no pass has to.
//
// Guarantees of Pipeline::Run:
//   * the input module is verified before the first pass (a module the verifier rejects never
//     reaches a pass);
//   * an unknown --disable-pass name is an hlo::Error listing the valid names, raised before any
//     pass runs (so a typo never silently runs the full pipeline);
//   * any hlo::Error a pass throws, and any verifier failure after it (verify_each), is rethrown
//     with the pass named and its position, keeping the original source location;
//   * with check_honest_change, a pass that reports "no change" but altered the printed module
//     is an error naming the pass and quoting the first differing line;
//   * dumps: NN.<pass>.hlo after each executed pass (NN = the pass's 1-based position in the
//     pipeline, so disabling one pass does not renumber the others) plus 00.input.hlo; files of
//     that form are ours and are overwritten, nothing else in the directory is touched.
// Pass time excludes verification, printing and dumping (they are test scaffolding).
#include "compiler/pipeline.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "compiler/pass_registry.h"
#include "hlo/diagnostic.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"

namespace compiler {
namespace {

// Valid names for --disable-pass: this pipeline's passes, and every registered pass (disabling
// a registered pass the target's pipeline happens not to contain is harmless, not a typo).
std::set<std::string> ValidPassNames(const std::vector<std::unique_ptr<Pass>>& passes) {
  std::set<std::string> names;
  for (const auto& pass : passes) names.insert(std::string(pass->name()));
  for (const PassEntry& entry : AllPasses()) names.insert(entry.name);
  return names;
}

void CheckDisabledNames(const std::set<std::string>& disabled,
                        const std::vector<std::unique_ptr<Pass>>& passes) {
  std::set<std::string> valid = ValidPassNames(passes);
  for (const std::string& name : disabled) {
    if (valid.count(name)) continue;
    std::string list;
    for (const std::string& v : valid) list += (list.empty() ? "" : ", ") + v;
    throw hlo::Error("--disable-pass: unknown pass '" + name + "'; valid passes: " + list);
  }
}

// "07" for position 7 of a pipeline shorter than 100 passes; wider if needed.
std::string DumpPrefix(size_t position, size_t pass_count) {
  int width = pass_count >= 100 ? static_cast<int>(std::to_string(pass_count).size()) : 2;
  std::string digits = std::to_string(position);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

void PrepareDumpDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw hlo::Error(dir + ": --dump-dir exists and is not a directory");
  }
  fs::create_directories(dir, ec);
  if (ec) throw hlo::Error(dir + ": cannot create dump directory (" + ec.message() + ")");
}

void WriteDump(const std::string& dir, const std::string& file, const std::string& text) {
  std::string path = (std::filesystem::path(dir) / file).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw hlo::Error(path + ": cannot write dump");
}

// The first line where two printed modules differ, for the honest-change error.
std::string FirstDifference(const std::string& before, const std::string& after) {
  size_t line = 1, start = 0;
  size_t n = std::min(before.size(), after.size());
  for (size_t i = 0; i < n && before[i] == after[i]; ++i) {
    if (before[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  auto line_at = [&](const std::string& text) {
    if (start >= text.size()) return std::string("<end of module>");
    size_t end = text.find('\n', start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  };
  return "line " + std::to_string(line) + ": before `" + line_at(before) + "`, after `" +
         line_at(after) + "`";
}

std::string PassLabel(size_t position, size_t count, std::string_view name) {
  return "pass " + std::to_string(position) + "/" + std::to_string(count) + " '" +
         std::string(name) + "'";
}

}  // namespace

Pipeline& Pipeline::Add(std::unique_ptr<Pass> pass) {
  passes_.push_back(std::move(pass));
  return *this;
}

std::string Pipeline::ListPasses() const {
  std::string out = "pipeline '" + name_ + "' (" + std::to_string(passes_.size()) + " passes):\n";
  for (size_t i = 0; i < passes_.size(); ++i) {
    std::string name(passes_[i]->name());
    std::string row = "  " + DumpPrefix(i + 1, passes_.size()) + "  " + name;
    if (row.size() < 40) row.resize(40, ' ');
    out += row + " " + std::string(passes_[i]->description()) + "\n";
  }
  return out;
}

PipelineReport Pipeline::Run(hlo::Module& module, const PipelineOptions& options) const {
  CheckDisabledNames(options.disabled, passes_);
  try {
    hlo::Verify(module);
  } catch (const hlo::Error& e) {
    throw hlo::Error(e.location(),
                     "input to pipeline '" + name_ + "' does not verify: " + e.message());
  }
  const bool dumping = !options.dump_dir.empty();
  if (dumping) {
    PrepareDumpDir(options.dump_dir);
    WriteDump(options.dump_dir, DumpPrefix(0, passes_.size()) + ".input.hlo",
              hlo::PrintModule(module));
  }

  PipelineReport report;
  const size_t count = passes_.size();
  for (size_t i = 0; i < count; ++i) {
    Pass& pass = *passes_[i];
    const size_t position = i + 1;
    PassRecord record;
    record.name = std::string(pass.name());
    if (options.disabled.count(record.name)) {
      record.skipped = true;
      if (options.progress) {
        std::cerr << "[" << name_ << "] " << PassLabel(position, count, pass.name())
                  << ": disabled\n";
      }
      report.passes.push_back(record);
      continue;
    }
    std::string before;
    if (options.check_honest_change) before = hlo::PrintModule(module);

    auto start = std::chrono::steady_clock::now();
    try {
      record.changed = pass.Run(module);
    } catch (const hlo::Error& e) {
      throw hlo::Error(e.location(),
                       PassLabel(position, count, pass.name()) + " failed: " + e.message());
    } catch (const std::bad_alloc&) {
      throw;  // reported as "out of memory" at the top
    } catch (const std::exception& e) {
      // A library exception escaping a pass is a pass bug; still name the pass, never crash.
      throw hlo::Error(PassLabel(position, count, pass.name()) + " failed: " + e.what());
    }
    record.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    report.total_milliseconds += record.milliseconds;

    if (options.verify_each) {
      try {
        hlo::Verify(module);
      } catch (const hlo::Error& e) {
        throw hlo::Error(e.location(), "module does not verify after " +
                                           PassLabel(position, count, pass.name()) + ": " +
                                           e.message());
      }
    }
    std::string after;
    if (options.check_honest_change && !record.changed) {
      after = hlo::PrintModule(module);
      if (after != before) {
        throw hlo::Error(PassLabel(position, count, pass.name()) +
                         " reported no change but modified the module (" +
                         FirstDifference(before, after) + ")");
      }
    }
    if (dumping) {
      if (after.empty()) after = hlo::PrintModule(module);
      WriteDump(options.dump_dir, DumpPrefix(position, count) + "." + record.name + ".hlo", after);
    }
    if (options.progress) {
      char ms[32];
      std::snprintf(ms, sizeof(ms), "%.2f ms", record.milliseconds);
      std::cerr << "[" << name_ << "] " << PassLabel(position, count, pass.name()) << ": "
                << (record.changed ? "changed" : "no change") << " (" << ms << ")\n";
    }
    report.passes.push_back(record);
  }
  return report;
}

std::string PipelineReport::ToTable() const {
  std::string out = "  #  pass                              changed        ms       %\n";
  char line[160];
  for (size_t i = 0; i < passes.size(); ++i) {
    const PassRecord& p = passes[i];
    const char* changed = p.skipped ? "disabled" : p.changed ? "yes" : "no";
    double share = total_milliseconds > 0 ? 100.0 * p.milliseconds / total_milliseconds : 0.0;
    std::snprintf(line, sizeof(line), "%3zu  %-32s  %-8s %9.3f  %6.1f\n", i + 1, p.name.c_str(),
                  changed, p.milliseconds, share);
    out += line;
  }
  std::snprintf(line, sizeof(line), "     %-32s  %-8s %9.3f  %6.1f\n", "total", "",
                total_milliseconds, 100.0);
  out += line;
  return out;
}

}  // namespace compiler

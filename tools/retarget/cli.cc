// Argument parsing, help text, safe output files and error reporting for the `retarget` CLI
// (cli.h). Nothing here knows about individual commands beyond their CommandSpec.
#include "tools/retarget/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "hlo/diagnostic.h"

namespace cli {
namespace {

const FlagSpec* FindFlag(const CommandSpec& spec, const std::string& name) {
  for (const FlagSpec& flag : spec.flags) {
    if (flag.name == name || (!flag.alias.empty() && flag.alias == name)) return &flag;
  }
  return nullptr;
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec) &&
         std::filesystem::equivalent(a, b, ec);
}

// Reads the file a located error names, for the caret line. Binary (proto) inputs have no lines.
std::string SourceFor(const hlo::SourceLocation& location) {
  if (!location.file || location.line == 0) return {};
  std::ifstream in(*location.file, std::ios::binary);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<std::string> ParsedArgs::Get(const std::string& flag) const {
  auto it = values.find(flag);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args) {
  ParsedArgs parsed;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      continue;
    }
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    const FlagSpec* flag = FindFlag(spec, name);
    if (flag == nullptr) throw UsageError("unknown option '" + name + "'");
    if (parsed.Has(flag->name) && !flag->repeatable) {
      throw UsageError("option " + flag->name + " given twice");
    }
    if (flag->value_name.empty()) {
      if (inline_value) throw UsageError("option " + flag->name + " takes no value");
      parsed.values[flag->name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size())
        throw UsageError("option " + flag->name + " needs a value (" + flag->value_name + ")");
      inline_value = args[++i];
    }
    parsed.values[flag->name] = *inline_value;
    if (flag->repeatable) parsed.all[flag->name].push_back(*inline_value);
  }
  if (parsed.help) return parsed;  // --help wins over missing arguments
  int count = static_cast<int>(parsed.positional.size());
  if (count < spec.min_positional) {
    throw UsageError("missing argument " + spec.arguments);
  }
  if (spec.max_positional >= 0 && count > spec.max_positional) {
    throw UsageError("unexpected argument '" +
                     parsed.positional[static_cast<size_t>(spec.max_positional)] + "'");
  }
  return parsed;
}

double ParseNonNegativeDouble(const std::string& flag, const std::string& value) {
  double result = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
      !std::isfinite(result) || result < 0) {
    throw UsageError(flag + " needs a non-negative number, got '" + value + "'");
  }
  return result;
}

int64_t ParsePositiveInt(const std::string& flag, const std::string& value, int64_t max) {
  int64_t result = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || result < 1 ||
      result > max) {
    throw UsageError(flag + " needs an integer from 1 to " + std::to_string(max) + ", got '" +
                     value + "'");
  }
  return result;
}

std::string Synopsis(const CommandSpec& spec) {
  std::string out = "retarget " + spec.name;
  if (!spec.arguments.empty()) out += " " + spec.arguments;
  for (const FlagSpec& flag : spec.flags) {
    out += flag.required ? " " : " [";
    out += flag.alias.empty() ? flag.name : flag.alias;
    if (!flag.value_name.empty()) out += " " + flag.value_name;
    if (!flag.required) out += "]";
  }
  return out;
}

std::string CommandHelp(const CommandSpec& spec) {
  std::string out = "usage: " + Synopsis(spec) + "\n\n" + spec.summary + "\n";
  if (!spec.flags.empty()) out += "\noptions:\n";
  for (const FlagSpec& flag : spec.flags) {
    std::string left = "  " + (flag.alias.empty() ? "" : flag.alias + ", ") + flag.name;
    if (!flag.value_name.empty()) left += " " + flag.value_name;
    if (left.size() < 26)
      left.resize(26, ' ');
    else
      left += "\n" + std::string(26, ' ');
    out += left + flag.help + "\n";
  }
  out += "  -h, --help              show this help\n";
  if (!spec.details.empty()) out += "\n" + spec.details;
  return out;
}

std::string ToolHelp(const std::vector<CommandSpec>& commands) {
  std::string out =
      "usage: retarget <command> [options]\n\n"
      "Retarget compiles XLA HLO modules for several targets and measures portability.\n\n"
      "commands:\n";
  for (const CommandSpec& spec : commands) {
    std::string name = "  " + spec.name;
    name.resize(std::max<size_t>(12, name.size() + 1), ' ');  // long names keep a space
    out += name + spec.summary + "\n";
  }
  out +=
      "\ntargets: interp (the reference interpreter), cpu (LLVM, x86-64), gpu (NVPTX for sm_90;\n"
      "run by host emulation where no GPU is present), systolic (the simulated accelerator)\n"
      "exit status: 0 success, 1 failure or mismatch, 2 usage error\n"
      "Run 'retarget <command> --help' for the options of a command; docs/cli.md has examples.\n";
  return out;
}

void RefuseToOverwriteInputs(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    if (SameFile(output, input)) {
      throw hlo::Error(output + ": refusing to write over the input file " + input);
    }
  }
}

void CheckOutputFile(const std::string& path, bool force,
                     const std::vector<std::string>& protected_inputs) {
  RefuseToOverwriteInputs(path, protected_inputs);
  std::error_code ec;
  if (!force && std::filesystem::exists(path, ec)) {
    throw hlo::Error(path + ": already exists (use --force to overwrite)");
  }
}

void WriteOutputFile(const std::string& path, const std::string& bytes, bool force,
                     const std::vector<std::string>& protected_inputs) {
  CheckOutputFile(path, force, protected_inputs);
  std::error_code ec;
  std::string temporary = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw hlo::Error(path + ": cannot write (" + std::strerror(errno) + ")");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      throw hlo::Error(path + ": write failed (disk full?)");
    }
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw hlo::Error(path + ": cannot write (" + ec.message() + ")");
  }
}

void ReportError(const std::exception& error) {
  if (const auto* located = dynamic_cast<const hlo::Error*>(&error)) {
    const hlo::SourceLocation& location = located->location();
    if (location.file && !location.file->empty() && location.line == 0 && location.column == 0) {
      std::cerr << *location.file << ": error: " << located->message() << "\n";  // whole file
      return;
    }
    if (location.file && !location.file->empty()) {
      std::cerr << hlo::FormatError(*located, {}, SourceFor(location));
      return;
    }
    std::cerr << "retarget: error: " << located->message() << "\n";
    return;
  }
  std::cerr << "retarget: error: " << error.what() << "\n";
}

targets::Backend& FindBackend(const Context& context, const std::string& name) {
  if (targets::Backend* backend = context.backends->Find(name)) return *backend;
  std::string available;
  for (const auto& backend : context.backends->backends()) {
    available += (available.empty() ? "" : ", ") + backend->name();
  }
  for (const std::string& known : KnownTargets()) {
    if (known == name) {
      throw hlo::Error("target '" + name +
                       "' is not built into this binary (available: " + available + ")");
    }
  }
  throw UsageError("unknown target '" + name + "' (targets: interp, cpu, gpu, systolic)");
}

}  // namespace cli

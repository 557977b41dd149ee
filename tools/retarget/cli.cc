// Argument parsing, help text, safe output files and error reporting for the `retarget` CLI
// (cli.h). Nothing here knows about individual commands beyond their CommandSpec.
#include "tools/retarget/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "hlo/diagnostic.h"

namespace cli {
namespace {

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

// CheckInlineValues has refused every inline value CLI11 would misread, so what CLI11 reports as
// ArgumentMismatch is an option missing its value; its message names the option ("--target: 1
// required TEXT missing"), which is how the flag is found for our own wording.
std::string MismatchMessage(const CommandSpec& spec, const std::string& what) {
  for (const FlagSpec& flag : spec.flags) {
    if (flag.value_name.empty()) continue;
    if (what.rfind(flag.name + ":", 0) == 0 ||
        (!flag.alias.empty() && what.rfind(flag.alias + ":", 0) == 0)) {
      return "option " + flag.name + " needs a value (" + flag.value_name + ")";
    }
  }
  return what;
}

// A word CLI11 left over that names an option: a dash and more, but not a negative number.
bool LooksLikeOption(const std::string& word) {
  return word.size() >= 2 && word[0] == '-' &&
         !(std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.');
}

// Inline values that CLI11 reads otherwise than docs/cli.md: `--option=` (CLI11 would take the
// next word as the value), `--switch=anything` (CLI11 accepts spellings of true and false) and
// `-o=FILE` (CLI11 would name the file "=FILE"). A word that is an option's separate value is
// skipped: `--set --force=1` sets "--force=1".
void CheckInlineValues(const CommandSpec& spec, std::span<const std::string> args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return;
    const size_t eq = arg.find('=');
    const bool long_form = arg.rfind("--", 0) == 0;
    const std::string name = long_form ? arg.substr(0, eq) : arg;
    if (long_form && name == "--help" && eq != std::string::npos) {
      throw UsageError("option --help takes no value");
    }
    for (const FlagSpec& flag : spec.flags) {
      if (!long_form && !flag.alias.empty() && eq == flag.alias.size() &&
          arg.rfind(flag.alias, 0) == 0) {
        throw UsageError("unknown option '" + arg + "'");
      }
      if (name != flag.name && name != flag.alias) continue;
      if (eq == std::string::npos || !long_form) {
        if (!flag.value_name.empty()) ++i;  // the next word is this option's value
      } else if (flag.value_name.empty()) {
        throw UsageError("option " + flag.name + " takes no value");
      } else if (eq + 1 == arg.size()) {
        throw UsageError("option " + flag.name + " needs a value (" + flag.value_name + ")");
      }
      break;
    }
  }
}

}  // namespace

std::optional<std::string> ParsedArgs::Get(const std::string& flag) const {
  auto it = values.find(flag);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

// CLI11 tokenizes; the rules and messages of docs/cli.md stay ours. Every flag is a CLI11 option
// that keeps all of its values (so "given twice" is ours to say); positional words and unknown
// options are left to `remaining()` word for word (CLI11 would split a bracketed word such as
// "[a,b]" bound to a container), so an unknown option before --help is still reported; and
// -h/--help is an ordinary flag (so it wins over missing positional arguments but not over
// mistakes).
ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args) {
  CheckInlineValues(spec, args);
  CLI::App app;
  app.set_help_flag();
  app.allow_extras(true);
  std::vector<std::vector<std::string>> values(spec.flags.size());
  std::vector<const CLI::Option*> options;
  for (size_t i = 0; i < spec.flags.size(); ++i) {
    const FlagSpec& flag = spec.flags[i];
    std::string names = flag.alias.empty() ? flag.name : flag.alias + "," + flag.name;
    if (flag.value_name.empty()) {
      options.push_back(app.add_flag(names)->disable_flag_override());
    } else {
      options.push_back(app.add_option(names, values[i])
                            ->expected(1)
                            ->allow_extra_args(false)
                            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll));
    }
  }
  const CLI::Option* help = app.add_flag("-h,--help");
  // This overload of parse() takes the words in reverse order (it pops them from the back).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ArgumentMismatch& error) {
    throw UsageError(MismatchMessage(spec, error.what()));
  } catch (const CLI::ParseError& error) {
    throw UsageError(error.what());
  }
  // remaining() keeps the words' order and the "--" that ends the options: before it, a word
  // that looks like an option is an unknown one; after it, every word is an argument.
  ParsedArgs parsed;
  bool options_ended = false;
  for (const std::string& word : app.remaining()) {
    if (!options_ended && word == "--") {
      options_ended = true;
      continue;
    }
    if (!options_ended && LooksLikeOption(word)) {
      throw UsageError("unknown option '" + word.substr(0, word.find('=')) + "'");
    }
    parsed.positional.push_back(word);
  }
  parsed.help = help->count() > 0;
  for (size_t i = 0; i < spec.flags.size(); ++i) {
    const FlagSpec& flag = spec.flags[i];
    if (options[i]->count() == 0) continue;
    if (options[i]->count() > 1 && !flag.repeatable) {
      throw UsageError("option " + flag.name + " given twice");
    }
    if (flag.value_name.empty()) {
      parsed.values[flag.name] = "";
      continue;
    }
    parsed.values[flag.name] = values[i].back();
    if (flag.repeatable) parsed.all[flag.name] = values[i];
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

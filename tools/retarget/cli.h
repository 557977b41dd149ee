// The `retarget` command line: command table, argument parsing, help text and the helpers every
// command shares (module loading, safe output files, error reporting).
//
// Exit status contract (docs/cli.md): 0 success; 1 a failure the input caused (bad file, numeric
// MISMATCH, unavailable command or target); 2 a usage error (unknown command or flag, missing or
// malformed argument). Errors are printed on stderr; results on stdout.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "targets/backend.h"

namespace cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// A command-line mistake: printed with the command's usage line, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FlagSpec {
  std::string name;        // "--target"
  std::string value_name;  // "T"; empty for a boolean flag
  std::string help;
  std::string alias;      // "-o" for "--output"; may be empty
  bool required = false;  // shown without brackets in the synopsis; the command checks it
  bool repeatable = false;  // may be given several times; every value is in ParsedArgs::all
};

struct CommandSpec {
  std::string name;       // "run"
  std::string arguments;  // positional part of the synopsis: "FILE"
  std::string summary;    // one line for the command list
  std::string details;    // paragraphs printed by --help after the flags
  int min_positional = 0;
  int max_positional = 0;  // -1: unbounded
  std::vector<FlagSpec> flags;
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // flag name -> value ("" for boolean flags)
  std::map<std::string, std::vector<std::string>> all;  // repeatable flags: every value in order
  bool help = false;

  bool Has(const std::string& flag) const { return values.count(flag) != 0; }
  std::optional<std::string> Get(const std::string& flag) const;
};

// Parses `args` (after the command name) against `spec`: `--flag value`, `--flag=value`,
// aliases, `--` ending the flags, `-h`/`--help`. Throws UsageError.
ParsedArgs ParseArgs(const CommandSpec& spec, std::span<const std::string> args);

// Numeric flag values; malformed values are usage errors.
double ParseNonNegativeDouble(const std::string& flag, const std::string& value);
int64_t ParsePositiveInt(const std::string& flag, const std::string& value, int64_t max);

std::string Synopsis(const CommandSpec& spec);  // "retarget run FILE --target T [...]"
std::string CommandHelp(const CommandSpec& spec);
std::string ToolHelp(const std::vector<CommandSpec>& commands);

// Everything a command needs from main().
struct Context {
  const targets::BackendRegistry* backends = nullptr;
};

// Writes `bytes` to `path` unless it exists (and `force` is false) or is the same file as one of
// `protected_inputs` (never overwritten, even with force). Writes a temporary file first and
// renames it, so a failure never leaves a half-written result. Throws hlo::Error.
void WriteOutputFile(const std::string& path, const std::string& bytes, bool force,
                     const std::vector<std::string>& protected_inputs);
// Throws hlo::Error when `output` names the same file as one of `inputs`.
void RefuseToOverwriteInputs(const std::string& output, const std::vector<std::string>& inputs);
// The checks WriteOutputFile makes before writing, for a command that checks every output before
// its work starts: never one of `protected_inputs`, and an existing file only with `force`.
void CheckOutputFile(const std::string& path, bool force,
                     const std::vector<std::string>& protected_inputs);

// Prints an hlo::Error as `FILE:LINE:COL: error: MESSAGE` with the source line and a caret when
// the error carries a location (reading the source from the file it names), as
// `FILE: error: MESSAGE` when it names only a file, else as `retarget: error: MESSAGE`.
void ReportError(const std::exception& error);

// Commands (cmd_*.cc). Each returns the exit status.
int RunVerify(const ParsedArgs& args, const Context& context);
int RunPrint(const ParsedArgs& args, const Context& context);
int RunRun(const ParsedArgs& args, const Context& context);
int RunCompare(const ParsedArgs& args, const Context& context);
int RunCompile(const ParsedArgs& args, const Context& context);  // cmd_compile.cc
int RunOpt(const ParsedArgs& args, const Context& context);      // cmd_opt.cc

CommandSpec VerifySpec();
CommandSpec PrintSpec();
CommandSpec RunSpec();
CommandSpec CompareSpec();
CommandSpec CompileSpec();
CommandSpec OptSpec();

// The targets of DESIGN.md, whether or not this build registers them.
inline const std::vector<std::string>& KnownTargets() {
  static const std::vector<std::string> targets = {"interp", "cpu", "gpu", "systolic"};
  return targets;
}
// The registered backend for `name`; UsageError for an unknown name, hlo::Error for a known
// target this build does not have.
targets::Backend& FindBackend(const Context& context, const std::string& name);

}  // namespace cli

// Diagnostics: every user-facing error in Retarget is an hlo::Error carrying a source location.
//
// Errors are reported as exceptions so that deeply nested parsing and evaluation code stays
// readable; every command catches them at the top (tools/retarget) and prints
//
//   FILE:LINE:COL: error: MESSAGE
//   <the source line>
//       ^
//
// and exits with status 1. Code paths must never abort() or let a std:: exception escape on bad
// input: convert to hlo::Error at the boundary where the location is known.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hlo {

// A position in an input file. line and column are 1-based; 0 means "unknown" (e.g. a proto
// input, where `column` is reused as the byte offset + 1 of the offending field).
struct SourceLocation {
  std::shared_ptr<const std::string> file;  // shared by all locations of one input
  uint32_t line = 0;
  uint32_t column = 0;
};

class Error : public std::runtime_error {
 public:
  Error(SourceLocation loc, std::string message)
      : std::runtime_error(message), loc_(std::move(loc)), message_(std::move(message)) {}
  explicit Error(std::string message) : Error(SourceLocation{}, std::move(message)) {}

  const SourceLocation& location() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation loc_;
  std::string message_;
};

// "FILE:LINE:COL: error: MESSAGE" plus, when `source` holds the text of the file, the offending
// line and a caret under the column. `fallback_file` names the input when the location has none.
std::string FormatError(const Error& error, std::string_view fallback_file = {},
                        std::string_view source = {});

// Limits that bound the work and memory bad input can cause. Parsing, verification and evaluation
// refuse shapes and allocations beyond them with a clear error instead of exhausting memory.
// 90 % of the physical memory (sysconf), or 1 TiB where that cannot be read.
int64_t DefaultLiveLiteralBudget();

struct Limits {
  int64_t max_elements_per_array = int64_t{1} << 32;     // 4 Gi elements
  int64_t max_bytes_per_allocation = int64_t{16} << 30;  // 16 GiB
  int64_t max_rank = 64;
  int64_t max_while_iterations = int64_t{1} << 32;
  // Elided constants (`constant({...})`) are the one parse-time allocation not bounded by the
  // size of the input file: their total per module is capped separately.
  int64_t max_elided_constant_bytes_per_module = int64_t{1} << 30;  // 1 GiB
  // All literal array data alive at once (the interpreter's values, inputs and outputs, every
  // copy): past it an allocation throws a clear error instead of the process being killed for
  // memory. Default: 90 % of the machine's physical memory (DefaultLiveLiteralBudget()).
  int64_t max_live_literal_bytes = DefaultLiveLiteralBudget();
};
Limits& GlobalLimits();

}  // namespace hlo

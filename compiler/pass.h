// A compiler pass: a name plus Run(Module&) -> changed.
//
// Contract every pass follows (the Pipeline checks it in tests and under --verify-each):
//   * Run returns true iff it modified the module; a pass that returns false leaves the module
//     identical (same printed text — checked by fingerprint in the golden tests).
//   * The module verifies after Run (hlo::Verify), and evaluates to the same results as before
//     on every input (within floating-point reassociation tolerance where a pass says so).
//   * A pass reads what it needs to know about the target from the TargetDescription it was
//     constructed with; it never asks which target it runs for.
// Each pass lives in its own .h/.cc/_test.cc; the header states its post-condition and what it
// deliberately does not do.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "hlo/ir.h"

namespace compiler {

class Pass {
 public:
  virtual ~Pass() = default;
  // Stable kebab-case name used by --disable-pass, dumps (NN.<name>.hlo) and --time-passes.
  virtual std::string_view name() const = 0;
  // One line for --list-passes.
  virtual std::string_view description() const = 0;
  virtual bool Run(hlo::Module& module) = 0;
};

}  // namespace compiler

// The pass pipeline: runs passes in order and owns the cross-cutting work.
//
//      Module (verified)
//          │
//          ▼
//   ┌─────────────────────────────────────────────────────────────┐
//   │ for each pass p (unless --disable-pass p):                  │
//   │    t0 = now; changed = p.Run(module); time[p] += now - t0   │
//   │    if verify_each:  hlo::Verify(module)  ── error names p   │
//   │    if dump_dir:     write NN.<p>.hlo (NN = 01, 02, ...)     │
//   └─────────────────────────────────────────────────────────────┘
//          │
//          ▼
//      Module (optimized)  +  PipelineReport (per-pass time, changed flags)
//
// A typical target pipeline (compiler/target_pipelines.cc assembles one per TargetDescription):
//
//   async-wrapper-expander → call-inliner → tuple-simplifier → batch-norm-expander
//     → algebraic-simplifier → constant-folding → cse → dce → dot-canonicalizer → dot-expander → conv-canonicalizer
//     → while-loop-invariant-hoisting → algebraic-simplifier → cse → dce
//     → fusion (output → input → loop → multi-output) → layout-assignment → dce
//     → (analyses, not passes: schedule → buffer assignment → ownership + cost model)
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/pass.h"
#include "hlo/ir.h"

namespace compiler {

struct PipelineOptions {
  bool verify_each = false;          // hlo::Verify after every pass (always on in tests)
  std::string dump_dir;              // when non-empty: NN.<pass>.hlo after each pass
  std::set<std::string> disabled;    // pass names to skip; unknown names are an error
  bool progress = false;             // one line per pass on stderr
  // After a pass that reports "no change", compare the printed module with the one before it
  // and fail (naming the pass) if they differ. Always on in tests.
  bool check_honest_change = false;
};

struct PassRecord {
  std::string name;
  bool changed = false;
  bool skipped = false;              // disabled
  double milliseconds = 0.0;
};

struct PipelineReport {
  std::vector<PassRecord> passes;
  double total_milliseconds = 0.0;
  std::string ToTable() const;       // the --time-passes table
};

class Pipeline {
 public:
  explicit Pipeline(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  Pipeline& Add(std::unique_ptr<Pass> pass);
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  // Names and descriptions, for --list-passes.
  std::string ListPasses() const;

  // Runs the passes. Throws hlo::Error when a disabled name is unknown (listing the valid
  // names), or when verification after a pass fails (the message names the pass).
  PipelineReport Run(hlo::Module& module, const PipelineOptions& options = {}) const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

}  // namespace compiler

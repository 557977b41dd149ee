// The reference evaluator: the numeric truth every backend is compared against.
//
// Implements the semantics written at the top of ir.h, op by op, with no optimization beyond
// what keeps whole models (ResNet-50 at batch 1) within seconds: dot and convolution use blocked
// loops over f32/f64 accumulators. Results are deterministic.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/literal.h"

namespace hlo {

// A custom-call implementation: operands in, result out (a tuple literal when the shape is one).
using CustomCallFn =
    std::function<Literal(const Instruction& call, std::span<const Literal* const> operands)>;

// Registry of custom-call targets the evaluator can run. Built explicitly (no static
// registration); RegisterBuiltinCustomCalls adds the ones Retarget ships (e.g. "TopK").
class CustomCallRegistry {
 public:
  void Register(std::string target, CustomCallFn fn) { fns_[std::move(target)] = std::move(fn); }
  const CustomCallFn* Find(const std::string& target) const {
    auto it = fns_.find(target);
    return it == fns_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, CustomCallFn> fns_;
};
void RegisterBuiltinCustomCalls(CustomCallRegistry& registry);

struct DeviceView;  // collective_runtime.h

struct EvaluatorOptions {
  const CustomCallRegistry* custom_calls = nullptr;  // nullptr: builtin ones only
  // The device this evaluation runs as in a multi-device run (multi_device.h); nullptr: the
  // only device, where every collective group has one member.
  const DeviceView* device = nullptr;
  // Called with (instructions evaluated, total in entry) for progress on long runs; may be empty.
  std::function<void(int64_t, int64_t)> progress;
  // A bound on the work, counted rather than timed: the elements of every instruction result,
  // summed over every loop iteration and call. Beyond it evaluation stops with an hlo::Error
  // that names this option. 0: unbounded.
  int64_t max_result_elements = 0;
};

// Evaluates the entry computation. `arguments` are the entry parameters in order (tuple
// parameters as tuple literals). Returns the root value. Throws hlo::Error naming the
// instruction on failure (unknown custom-call target, shape mismatch of an argument, ...).
Literal Evaluate(const Module& module, std::span<const Literal> arguments,
                 const EvaluatorOptions& options = {});

// Evaluates one computation with the given arguments.
Literal EvaluateComputation(const Computation& computation,
                            std::span<const Literal* const> arguments,
                            const EvaluatorOptions& options = {});

}  // namespace hlo

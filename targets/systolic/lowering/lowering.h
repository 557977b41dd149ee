// Lowering of an optimized module (the systolic pipeline's output) to a list of steps: straight-
// line accelerator programs and host-fallback instructions, over one DRAM layout.
//
//   entry instruction            becomes
//   while                        a loop step: on the device, or under host control (below)
//   conditional                  a branch step: on the device, or chosen by the host (below)
//   parameter / constant         a DRAM buffer (written before the first step)
//   tuple / get-tuple-element /  no code: the same DRAM buffers (bitcast and reshape need
//   reshape / bitcast / copy     default layouts, which is what the systolic pipeline assigns)
//   dot / output fusion          matrix-unit tiles + vector epilogue  (emit_matmul.h)
//   convolution (+ epilogue)     per-tap matmuls on the padded input tile (emit_conv.h)
//   elementwise / reduce /       vector-unit row tiles                (emit_vector.h)
//   loop or input fusion
//   transpose (+ reshapes)       strided DMA gather + contiguous store (emit_data_movement.h)
//   slice / concatenate / pad    strided DMA boxes through the unified buffer (emit_block_copy.h)
//   anything else, or any of     a host step: the instruction alone in a module that the host
//   the above that does not      backend runs on operands read from DRAM; its result is
//   fit (with the reason)        written back (transfers charged at the host link's bandwidth)
//
// Consecutive accelerator ops share one program (a segment). Ops alternate halves of the
// unified buffer and accumulators and are ordered by op-done tokens, not barriers: an op reads
// DRAM bytes an earlier op writes only after that op's stores completed, while its other loads
// (the next layer's weights) overlap the earlier op. A dot or convolution with a lone
// elementwise user is one op with it (the user is its epilogue); a dot's result whose only user
// is the next dot's lhs stays in the unified buffer (docs/systolic-lowering.md).
// A while is a loop step (LoopStep): condition and body are lowered like modules of their own.
// When both are accelerator programs only (their loops on the device too), the loop runs on
// the device: the condition's last program ends with ctrl.test on its predicate and the control
// unit's loop sequencer starts the body or leaves the loop on the flag, with no host round trip.
// Otherwise the host reads the predicate each iteration. A conditional is a branch step
// (BranchStep): on the device when every branch is accelerator programs only (ctrl.test or
// ctrl.index reads the selector at the end of the program before it), else chosen by the host.
//
// DRAM: dram_plan.h (values reuse the bytes of dead ones; padding reads from a zero region).
//
// Guarantees: every entry instruction is covered exactly once (native, host, loop or no code);
// Lower never aborts on unsupported input (it falls back); it throws hlo::Error only when the
// module's live buffers exceed dram.bytes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "compiler/target_description.h"
#include "hlo/ir.h"
#include "hlo/literal.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"
#include "targets/systolic/lowering/dram_plan.h"

namespace systolic::lowering {

struct AcceleratorStep {
  Program program;
  std::vector<std::string> ops;  // names of the HLO instructions it runs
  // The multiply-adds of its dots and convolutions as the model defines them (output elements
  // x contraction size), without the padding the array also computes: what achieved_tops and
  // mac_utilization count.
  int64_t useful_macs = 0;
};

struct HostStep {
  std::unique_ptr<hlo::Module> module;         // the instruction over parameters p0, p1, ...
  std::vector<std::vector<DramBuffer>> operands;  // per parameter, its array leaves
  std::vector<DramBuffer> result;              // the result's array leaves
  std::string instruction;                     // the original instruction's name
  std::string reason;                          // why it is not on the accelerator
  // The op itself has no accelerator program (its opcode, element types, attributes), as
  // opposed to a shape, a fusion or a size that does not fit: what the target's description
  // must then not call native (CheckHostStepsAgainst).
  bool no_instruction = false;
};

struct LoweredModule;

// A while loop: its condition and body, each lowered as a module of its own (accelerator
// segments; host steps where needed) on the loop state, which stays in the body's DRAM.
// On the device (`on_device`), the condition's last program ends with `ctrl.test` on its
// predicate and the control unit's loop sequencer reads the flag; otherwise the host reads the
// predicate each trip (one host-issued batch), and `host_reason` says why.
struct LoopStep {
  std::unique_ptr<hlo::Module> condition, body;  // each takes the loop state as parameter 0
  std::shared_ptr<const LoweredModule> lowered_condition, lowered_body;
  std::vector<DramBuffer> state;                 // the while's operand leaves
  std::vector<DramBuffer> result;                // the while's result leaves
  std::string instruction;
  bool on_device = false;
  std::string host_reason;  // why the host drives it ("" on the device)
};

// A conditional: the selector (pred: true runs branch 0, false branch 1; s32: that branch, the
// last one when out of range, as hlo/ evaluates it) picks a branch, lowered as a module of its
// own, which runs on its operand. On the device (`on_device`) the program before the step ends
// with ctrl.test (pred) or ctrl.index (s32) on the selector and the control unit's sequencer
// reads it; otherwise the host reads the selector, and `host_reason` says why.
struct BranchStep {
  std::vector<std::unique_ptr<hlo::Module>> branches;  // each takes its operand as parameter 0
  std::vector<std::shared_ptr<const LoweredModule>> lowered_branches;
  std::vector<DramBuffer> selector;
  std::vector<std::vector<DramBuffer>> operands;  // per branch
  std::vector<DramBuffer> result;
  std::string instruction;
  bool on_device = false;
  std::string host_reason;  // why the host chooses ("" on the device)
};

using Step = std::variant<AcceleratorStep, HostStep, LoopStep, BranchStep>;

struct LoweredModule {
  std::vector<Step> steps;
  std::vector<std::vector<DramBuffer>> parameters;  // per entry parameter, its array leaves
  std::vector<hlo::Shape> parameter_shapes;          // per entry parameter
  std::vector<std::pair<DramBuffer, hlo::Literal>> constants;
  std::vector<DramBuffer> result;  // leaves of the root, depth-first
  hlo::Shape result_shape;
  int64_t native_instructions = 0, host_instructions = 0;
  int64_t loops = 0;  // while and conditional steps
  int64_t device_loops = 0;  // of those, the ones the control unit's sequencer runs
  int64_t dram_bytes = 0;  // peak DRAM footprint
  std::string Assembly() const;  // every segment's .sasm, with a header comment per segment
};

LoweredModule Lower(const hlo::Module& optimized, const ArchConfig& config);

// Throws hlo::Error naming the instruction and its opcode when a host step of `lowered` (the
// lowering of `optimized`) is an op without accelerator program that `description` calls
// native: the portability report would count as carried across what the accelerator does not
// run. The systolic backend checks every module it lowers against targets::SystolicDescription.
void CheckHostStepsAgainst(const hlo::Module& optimized, const LoweredModule& lowered,
                           const compiler::TargetDescription& description);

// Every instruction the lowering of `optimized` runs on the host, by name, with its reason:
// the entry's host steps and those of every loop condition and body and every branch, each
// lowered as the backend lowers it. What the portability report counts as host fallback for
// the accelerator (compiler/ownership.h), so the report says what the lowering does.
std::map<std::string, std::string> HostStepReasons(const hlo::Module& optimized,
                                                   const ArchConfig& config);

// The module a host step runs: `inst` with its operands replaced by parameters (called
// computations are copied along).
std::unique_ptr<hlo::Module> HostStepModule(const hlo::Module& module, const hlo::Instruction& inst);
// `computation` (and what it calls) as the entry of a module of its own.
std::unique_ptr<hlo::Module> ComputationModule(const hlo::Module& module,
                                               const hlo::Computation& computation);

}  // namespace systolic::lowering

// RewriteBuilder: creates new instructions inside one computation for the rewriting passes
// (algebraic simplifier, dot/conv canonicalizers, batch-norm expander).
//
// Guarantees: every instruction it adds has a name unique within the computation (the hint plus
// a `.N` suffix when taken), the source location of the instruction it replaces, and a shape
// checked by hlo::InferShape (a bug in a rewrite surfaces as an hlo::Error, never as a silently
// ill-typed module). New instructions are appended; callers run SortTopologically() when
// added_any() is true. Building is O(1) per instruction after an O(n) scan of existing names,
// done on the first build (a builder that builds nothing costs nothing).
//
// It does not remove anything and does not replace uses: that is the pass's decision.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "hlo/ir.h"

namespace compiler {

class RewriteBuilder {
 public:
  explicit RewriteBuilder(hlo::Computation& computation);

  // Names and locations of new instructions derive from this one (the instruction being
  // rewritten); call before building its replacement.
  void set_origin(const hlo::Instruction* origin) { origin_ = origin; }

  // General form: `declared` carries the result type (and dims for reshape/broadcast/iota,
  // whose dims cannot be inferred); the final shape comes from hlo::InferShape.
  hlo::Instruction* Add(hlo::Opcode opcode, const hlo::Shape& declared,
                        const std::vector<hlo::Instruction*>& operands, hlo::Attrs attrs,
                        std::string_view name_hint = {},
                        const std::vector<hlo::Computation*>& called = {});

  hlo::Instruction* Unary(hlo::Opcode opcode, hlo::Instruction* x);
  hlo::Instruction* Binary(hlo::Opcode opcode, hlo::Instruction* a, hlo::Instruction* b);
  hlo::Instruction* Reshape(hlo::Instruction* x, const std::vector<int64_t>& dims);
  // result dim i = operand dim permutation[i]
  hlo::Instruction* Transpose(hlo::Instruction* x, const std::vector<int64_t>& permutation);
  // operand dim i -> result dim operand_to_result[i]
  hlo::Instruction* Broadcast(hlo::Instruction* x, const std::vector<int64_t>& result_dims,
                              const std::vector<int64_t>& operand_to_result);
  hlo::Instruction* Convert(hlo::Instruction* x, hlo::PrimitiveType type);
  // A scalar constant of `type` holding `value` (converted as `convert` would).
  hlo::Instruction* ScalarConstant(hlo::PrimitiveType type, double value);
  // `value` broadcast to `shape`'s type and dims.
  hlo::Instruction* Splat(const hlo::Shape& shape, double value);

  bool added_any() const { return added_any_; }

 private:
  std::string UniqueName(std::string_view base);

  hlo::Computation& computation_;
  std::unordered_set<std::string> names_;  // every name in the computation, once needed
  bool names_ready_ = false;
  const hlo::Instruction* origin_ = nullptr;
  bool added_any_ = false;
};

// The scalar `add` computation of each element type that a rewrite's reduces call, created
// once per module, ahead of every computation (so it is defined before any caller), named
// `<prefix><type>` (plus `.N` when that name is taken).
class ScalarAddComputations {
 public:
  ScalarAddComputations(hlo::Module& module, std::string prefix)
      : module_(module), prefix_(std::move(prefix)) {}
  hlo::Computation* Add(hlo::PrimitiveType type);

 private:
  hlo::Module& module_;
  std::string prefix_;
  std::map<hlo::PrimitiveType, hlo::Computation*> computations_;
};

// True if the instruction may be deleted once unused: pure ops only (no side-effecting
// custom-calls, collectives, rng, control flow or parameters).
bool IsRemovableWhenDead(const hlo::Instruction& instruction);

// Removes `start` and then, transitively, operands that became unused, as long as they are
// removable and not the root. Returns the number of instructions removed.
int64_t RemoveDeadChain(hlo::Computation& computation, std::vector<hlo::Instruction*> start);

}  // namespace compiler

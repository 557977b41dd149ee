// The HLO intermediate representation: Module -> Computation -> Instruction.
//
// ============================================================================================
// Semantics (the rules every pass, backend and the interpreter follow)
// ============================================================================================
// Values.    An instruction produces one value of its Shape: an array (element type + dims) or a
//            tuple of values. Instructions are pure except custom-call with side effects,
//            collectives, rng and infeed/outfeed-like ops; evaluation order inside a
//            computation is any topological order of the operand edges.
// Layouts.   A shape's layout (minor_to_major) describes physical placement only. Every
//            operation is defined on logical indices, so layouts never change a result — with
//            one exception: `bitcast`, which reinterprets the operand's physical buffer in the
//            result's layout (it is a reshape when both use the default layout).
//            Literals store data in logical row-major order regardless of layout.
// bf16/f16.  Arithmetic on bf16 and f16 is computed in f32 and rounded to nearest even when the
//            result is stored (so every intermediate instruction result is rounded), as XLA's
//            CPU and GPU backends do. Reductions accumulate in the reduction's own type: a bf16
//            reduce rounds after every combination (models usually convert to f32 first).
// Floats.    IEEE-754 with round-to-nearest-even; no flush-to-zero. maximum/minimum propagate
//            NaN (if either operand is NaN the result is NaN); max(-0, +0) may return either
//            zero. compare follows IEEE (NaN compares unequal to everything, NE is true) unless
//            type=TOTALORDER, where -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
//            clamp(lo, x, hi) = min(max(x, lo), hi): it propagates NaN, and a value equal to
//            a bound returns the bound. reduce-precision keeps NaN even with 0 mantissa bits.
//            No denormal flushing (XLA:CPU flushes them; results then differ in that range).
// Integers.  Two's complement, wrapping on overflow for add/subtract/multiply/negate/abs.
//            divide truncates toward zero; x/0 = -1 (all bits set) for signed and unsigned;
//            INT_MIN/-1 = INT_MIN. remainder has the sign of the dividend; x%0 = x;
//            INT_MIN%-1 = 0. Shifts by an amount >= bit width give 0 (shift-left,
//            shift-right-logical) or the sign fill (shift-right-arithmetic); the amount is
//            treated as unsigned. power with a negative integer exponent: 1^n = 1,
//            (-1)^n = ±1, else 0.
// convert.   float -> integer truncates toward zero and saturates at the target's bounds; NaN
//            becomes 0. integer -> integer wraps. anything -> pred is `!= 0`.
// Indices.   dynamic-slice / dynamic-update-slice clamp start indices so the slice stays in
//            bounds. gather clamps likewise; scatter skips updates whose window is out of bounds.
// Constants. `constant({...})` in a dump means the values were elided. The parser fills such a
//            constant deterministically (a hash of the instruction name seeds a generator: floats
//            uniform in [-1, 1), integers in [0, 8), pred alternating) and warns once per module;
//            ConstantAttrs::elided records it. Proto dumps carry real values.
// Shapes.    Every array is bounded by GlobalLimits() (diagnostic.h): a shape beyond it is an
//            error at parse/verify time, not an allocation failure later.
// ============================================================================================
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/diagnostic.h"
#include "hlo/opcodes.h"
#include "hlo/shape.h"

namespace hlo {

class Computation;
class Module;

// An attribute the IR keeps but does not interpret: printed back exactly as it was read.
// `value` is the raw text after `name=` (e.g. `{op_name="jit(f)/add" source_line=12}`).
struct OpaqueAttribute {
  std::string name;
  std::string value;
  bool operator==(const OpaqueAttribute&) const = default;
};

class Instruction {
 public:
  Instruction(std::string name, Opcode opcode, Shape shape)
      : name_(std::move(name)), opcode_(opcode), shape_(std::move(shape)) {}
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }

  // Operands. Use the setters so users() stays consistent.
  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_[static_cast<size_t>(i)]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(Instruction* operand);
  void SetOperand(int64_t i, Instruction* operand);
  void ClearOperands();
  // Instructions that use this one as an operand (one entry per use, in no particular order).
  const std::vector<Instruction*>& users() const { return users_; }
  // Makes every user of this instruction use `replacement` instead.
  void ReplaceAllUsesWith(Instruction* replacement);

  // Called computations, in the op's fixed order:
  //   reduce/reduce-window/scatter/map/sort/all-reduce/reduce-scatter/call: {to_apply}
  //   while: {condition, body}; conditional: branch computations in order
  //   (true_computation/false_computation are branches {0: true, 1: false} with a pred
  //   selector); fusion: {calls}; select-and-scatter: {select, scatter};
  //   custom-call: called_computations={...} (or to_apply=).
  const std::vector<Computation*>& called_computations() const { return called_; }
  std::vector<Computation*>& mutable_called_computations() { return called_; }

  // Typed attributes of the op family (see attributes.h).
  const Attrs& attrs() const { return attrs_; }
  void set_attrs(Attrs attrs) { attrs_ = std::move(attrs); }
  template <typename T>
  const T& attr() const { return std::get<T>(attrs_); }
  template <typename T>
  T& mutable_attr() { return std::get<T>(attrs_); }
  template <typename T>
  bool has_attr() const { return std::holds_alternative<T>(attrs_); }

  const std::vector<OpaqueAttribute>& opaque_attributes() const { return opaque_; }
  std::vector<OpaqueAttribute>& mutable_opaque_attributes() { return opaque_; }
  const OpaqueAttribute* FindOpaqueAttribute(std::string_view name) const;

  // Unique within the module; assigned by Module::AssignIds (used as the proto id).
  int64_t id() const { return id_; }
  void set_id(int64_t id) { id_ = id; }
  const SourceLocation& location() const { return loc_; }
  void set_location(SourceLocation loc) { loc_ = std::move(loc); }

  Computation* parent() const { return parent_; }

 private:
  friend class Computation;
  std::string name_;
  Opcode opcode_;
  Shape shape_;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Computation*> called_;
  Attrs attrs_;
  std::vector<OpaqueAttribute> opaque_;
  int64_t id_ = -1;
  SourceLocation loc_;
  Computation* parent_ = nullptr;
};

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Instructions in definition order (every operand is defined before its users once verified).
  const std::vector<std::unique_ptr<Instruction>>& instructions() const { return instructions_; }
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Removes an instruction that has no users. Its operands lose it as a user.
  void RemoveInstruction(Instruction* instruction);
  // Reorders instructions_ into a topological order (operands first), keeping the existing
  // relative order where possible. Throws hlo::Error on a cycle.
  void SortTopologically();

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // Parameters indexed by parameter number (filled by AddInstruction; gaps are nullptr).
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter(int64_t i) const { return parameters_[static_cast<size_t>(i)]; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }

  Instruction* FindInstruction(std::string_view name) const;

  bool is_entry() const { return is_entry_; }
  void set_is_entry(bool e) { is_entry_ = e; }
  Module* parent() const { return parent_; }
  const SourceLocation& location() const { return loc_; }
  void set_location(SourceLocation loc) { loc_ = std::move(loc); }

  // Opaque attributes printed after the computation name (rare; e.g. execution_thread=...).
  std::vector<OpaqueAttribute>& mutable_opaque_attributes() { return opaque_; }
  const std::vector<OpaqueAttribute>& opaque_attributes() const { return opaque_; }

 private:
  friend class Module;
  std::string name_;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  bool is_entry_ = false;
  Module* parent_ = nullptr;
  SourceLocation loc_;
  std::vector<OpaqueAttribute> opaque_;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Computations in definition order; callees are defined before callers once verified.
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  Computation* AddComputation(std::unique_ptr<Computation> computation);
  // Removes (and destroys) a computation no instruction calls any more; clears the entry if it
  // was the entry. Callers (DCE of unreachable computations, fusion) make sure nothing refers to it.
  void RemoveComputation(Computation* computation);
  // Like AddComputation, but places the new computation just before `before` (appends when
  // `before` is not in the module), so callees can stay defined before their callers.
  Computation* AddComputationBefore(std::unique_ptr<Computation> computation,
                                    const Computation* before);
  Computation* FindComputation(std::string_view name) const;
  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry);

  // Header attributes after `HloModule name,` other than the ones Retarget derives
  // (entry_computation_layout is recomputed when printing), kept verbatim.
  std::vector<OpaqueAttribute>& mutable_header_attributes() { return header_; }
  const std::vector<OpaqueAttribute>& header_attributes() const { return header_; }
  // The stack-frame tables (FileNames / FunctionNames / FileLocations / StackFrames), kept
  // verbatim where the dump had them: before the first computation (current XLA), after the last
  // (2026 dumps before that), or both.
  std::string& mutable_leading_tables() { return leading_; }
  const std::string& leading_tables() const { return leading_; }
  std::string& mutable_trailing_tables() { return trailing_; }
  const std::string& trailing_tables() const { return trailing_; }

  // Gives every instruction a unique id (0, 1, 2, … in computation/definition order).
  void AssignIds();
  // Deep copy.
  std::unique_ptr<Module> Clone() const;
  int64_t instruction_count() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  std::vector<OpaqueAttribute> header_;
  std::string leading_;
  std::string trailing_;
};

}  // namespace hlo

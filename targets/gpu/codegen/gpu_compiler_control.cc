// Control flow in GPU artifacts: while, conditional and call.
//
// Each called computation is lowered like an entry of its own (buffer assignment, arena layout
// past everything laid out so far, the same Lower walk) into a program of the manifest, with its
// parameters bound to the caller's slices instead of arena space of their own:
//   while        the loop state lives in the while's own slices S. The init value is copied
//                into S; the condition program reads S and writes the predicate; the body
//                program reads S and computes each root leaf straight into its slice of S
//                when nothing reads that leaf's old value afterwards (CarriedInPlace: a
//                counter, a scan's carry), and ends with copies of the other root leaves into
//                S (staged through scratch where a root leaf is another leaf's state slice, as
//                when the body swaps two leaves). The trip decision reads the predicate on the
//                device side of the artifact (gpu::WhileLoop).
//   conditional  each branch program reads its operand's slices and ends with copies of its
//                root into the conditional's result slices; the selector picks one
//                (gpu::Conditional, XLA's out-of-range rule).
//   call         the callee's steps inline in the caller's list, then the root copied into
//                the call's result slices.
// Guarantees: a program refers only to programs built before it (nested loops first), so the
// manifest's programs never recurse; no state slice is written while a later step of the body
// still reads its old value (CarriedInPlace's conditions; buffer assignment never places a
// temporary in a parameter's storage).
#include <algorithm>
#include <set>

#include "compiler/memory/value_sizes.h"
#include "targets/gpu/description.h"
#include "targets/gpu/codegen/gpu_compiler_internal.h"

namespace gpu::codegen::internal {
namespace {

bool Overlap(const gpu::Slice& a, const gpu::Slice& b) {
  return a.bytes > 0 && b.bytes > 0 && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

const hlo::Computation& Called(const Instruction& inst, size_t index) {
  const auto& called = inst.called_computations();
  if (index >= called.size() || called[index] == nullptr)
    Unsupported(inst, "a called computation is missing");
  return *called[index];
}

// Whether `user` computes element k of its result from element k of its operand `operand_index`
// alone (and that operand has the result's shape and layout), so that it may write its result
// over that operand: an elementwise op, or a loop fusion whose parameter reaches the root
// through elementwise ops only.
bool ReadsOperandElementwise(const Instruction& user, int64_t operand_index) {
  const hlo::Shape& operand = user.operand(operand_index)->shape();
  if (!operand.IsArray() || !user.shape().IsArray() || operand.dims != user.shape().dims ||
      operand.EffectiveMinorToMajor() != user.shape().EffectiveMinorToMajor()) {
    return false;
  }
  if (hlo::IsElementwise(user.opcode())) return true;
  if (user.opcode() != Opcode::kFusion ||
      user.attr<hlo::FusionAttrs>().kind != hlo::FusionKind::kLoop) {
    return false;
  }
  const hlo::Computation& fused = Called(user, 0);
  if (operand_index >= fused.parameter_count() || fused.parameter(operand_index) == nullptr)
    return false;
  std::vector<const Instruction*> pending = {fused.parameter(operand_index)};
  while (!pending.empty()) {
    const Instruction* value = pending.back();
    pending.pop_back();
    for (const Instruction* next : value->users()) {
      if (!hlo::IsElementwise(next->opcode()) || next->shape().dims != operand.dims) return false;
      pending.push_back(next);
    }
  }
  return true;
}

}  // namespace

// A body's root leaf i computed by an instruction P may be computed straight into the loop's
// state slice i (no copy per trip) when nothing reads state leaf i after P writes it: every
// other reader of the leaf comes before P in the body's schedule (the one LayOut uses), P reads
// it at most elementwise (ReadsOperandElementwise), no other root leaf passes the old value on
// (the final copies would read P's value), the leaf is not gathered into another tuple (read
// where that tuple is), and P computes one array and only that root leaf.
std::map<const Instruction*, std::vector<gpu::Slice>> ArtifactBuilder::CarriedInPlace(
    const hlo::Computation& body, const std::vector<gpu::Slice>& state,
    const std::vector<const Instruction*>& schedule) {
  std::map<const Instruction*, std::vector<gpu::Slice>> in_place;
  const Instruction* parameter = body.parameter(0);
  const Instruction* root = body.root();
  if (parameter == nullptr || root->opcode() != Opcode::kTuple ||
      root->operand_count() != static_cast<int64_t>(state.size()) ||
      !parameter->shape().IsTuple() || LeafCount(parameter->shape()) != state.size()) {
    return in_place;
  }
  for (const hlo::Shape& element : parameter->shape().tuple_shapes) {
    if (!element.IsArray()) return in_place;
  }
  // The values that are state leaf i: its get-tuple-elements and aliases of them.
  std::map<const Instruction*, size_t> leaf_of;
  for (const Instruction* user : parameter->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return in_place;  // the whole state read
    leaf_of[user] = static_cast<size_t>(user->attr<hlo::TupleIndexAttrs>().index);
  }
  for (const Instruction* inst : schedule) {
    if (compiler::memory::IsAliasing(*inst) && inst->operand_count() > 0) {
      if (auto it = leaf_of.find(inst->operand(0)); it != leaf_of.end()) leaf_of[inst] = it->second;
    }
  }
  std::map<const Instruction*, int64_t> position;
  for (size_t t = 0; t < schedule.size(); ++t) position[schedule[t]] = static_cast<int64_t>(t);
  // A leaf gathered into another tuple (a nested loop's init) is read wherever that tuple's
  // users read it: its producer keeps its copy.
  std::set<size_t> regathered;
  for (const auto& [value, leaf] : leaf_of) {
    for (const Instruction* user : value->users()) {
      if (user != root && user->opcode() == Opcode::kTuple) regathered.insert(leaf);
    }
  }
  std::map<const Instruction*, int> root_uses;
  for (const Instruction* operand : root->operands()) ++root_uses[operand];
  for (size_t i = 0; i < state.size(); ++i) {
    const Instruction* producer = root->operand(static_cast<int64_t>(i));
    if (regathered.count(i) || leaf_of.count(producer) || root_uses[producer] != 1 ||
        !producer->shape().IsArray() ||
        compiler::memory::IsAliasing(*producer) || producer->opcode() == Opcode::kConstant ||
        producer->opcode() == Opcode::kParameter || state[i].bytes == 0 ||
        producer->shape().dims != parameter->shape().tuple_shapes[i].dims ||
        producer->shape().EffectiveMinorToMajor() !=
            parameter->shape().tuple_shapes[i].EffectiveMinorToMajor()) {
      continue;
    }
    bool passed_on = false;  // another root leaf is the old value of leaf i
    for (int64_t j = 0; j < root->operand_count(); ++j) {
      auto it = leaf_of.find(root->operand(j));
      if (it != leaf_of.end() && it->second == i && static_cast<size_t>(j) != i) passed_on = true;
    }
    if (passed_on) continue;
    bool reads_elementwise_only = true;
    for (int64_t k = 0; k < producer->operand_count(); ++k) {
      auto it = leaf_of.find(producer->operand(k));
      if (it != leaf_of.end() && it->second == i && !ReadsOperandElementwise(*producer, k)) {
        reads_elementwise_only = false;
      }
    }
    const int64_t at = position.at(producer);
    bool read_later = false;  // a reader of leaf i other than the producer, after it
    for (const auto& [value, leaf] : leaf_of) {
      if (leaf != i) continue;
      for (const Instruction* user : value->users()) {
        if (user != root && user != producer && !leaf_of.count(user) && position.at(user) > at)
          read_later = true;
      }
    }
    if (reads_elementwise_only && !read_later) in_place[producer] = {state[i]};
  }
  return in_place;
}

std::vector<gpu::Slice> ArtifactBuilder::LowerComputationInto(
    const hlo::Computation& computation,
    const std::vector<std::vector<gpu::Slice>>& parameter_slices, std::vector<gpu::Step>& steps,
    const std::map<const Instruction*, std::vector<gpu::Slice>>& in_place,
    const compiler::BufferAssignment* assignment) {
  std::map<const Instruction*, std::vector<gpu::Slice>> bound = in_place;
  for (int64_t p = 0; p < computation.parameter_count(); ++p) {
    const Instruction* parameter = computation.parameter(p);
    if (parameter == nullptr || static_cast<size_t>(p) >= parameter_slices.size() ||
        LeafCount(parameter->shape()) != parameter_slices[static_cast<size_t>(p)].size()) {
      throw hlo::Error(computation.location(), "gpu backend: computation " + computation.name() +
                                                   " does not take what its caller passes");
    }
    bound[parameter] = parameter_slices[static_cast<size_t>(p)];
  }
  const std::vector<const Instruction*> schedule = LayOut(computation, bound, assignment);
  std::vector<gpu::Step>* caller = steps_;
  steps_ = &steps;
  for (const Instruction* inst : schedule) Lower(*inst);
  steps_ = caller;
  return Slices(*computation.root());
}

void ArtifactBuilder::CopyLeaves(const std::string& name, const std::vector<gpu::Slice>& from,
                                 const std::vector<gpu::Slice>& to,
                                 std::vector<gpu::Step>& steps) {
  if (from.size() != to.size())
    throw hlo::Error("gpu backend: " + name + " copies " + std::to_string(from.size()) +
                     " leaves into " + std::to_string(to.size()));
  std::vector<gpu::Slice> source = from;
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i] || from[i].bytes == 0) continue;
    for (size_t j = 0; j < to.size(); ++j) {
      if (j == i || !Overlap(from[i], to[j])) continue;
      source[i] = ScratchSlice(from[i].bytes);  // read before leaf j is overwritten
      steps.push_back({name + ".stage" + std::to_string(i), gpu::DeviceCopy{from[i], source[i]}});
      break;
    }
  }
  for (size_t i = 0; i < from.size(); ++i) {
    if (source[i] == to[i] || source[i].bytes == 0) continue;
    steps.push_back({name + "." + std::to_string(i), gpu::DeviceCopy{source[i], to[i]}});
  }
}

void ArtifactBuilder::LowerWhile(const Instruction& loop) {
  const std::vector<gpu::Slice> state = Slices(loop);
  CopyLeaves(loop.name() + ".init", Slices(*loop.operand(0)), state, *steps_);
  gpu::Manifest& manifest = result_.artifact.manifest;

  gpu::Program condition{loop.name() + ".condition", {}};
  const std::vector<gpu::Slice> predicate =
      LowerComputationInto(Called(loop, 0), {state}, condition.steps);
  if (predicate.size() != 1 || predicate[0].bytes != 1)
    Unsupported(loop, "the condition does not return one pred");
  manifest.programs.push_back(std::move(condition));
  const auto condition_index = static_cast<uint32_t>(manifest.programs.size() - 1);

  gpu::Program body{loop.name() + ".body", {}};
  const compiler::BufferAssignment body_buffers =
      compiler::AssignBuffers(Called(loop, 1), targets::GpuDescription());
  const std::vector<gpu::Slice> next = LowerComputationInto(
      Called(loop, 1), {state}, body.steps,
      CarriedInPlace(Called(loop, 1), state, body_buffers.schedule()), &body_buffers);
  CopyLeaves(loop.name() + ".next", next, state, body.steps);
  manifest.programs.push_back(std::move(body));
  const auto body_index = static_cast<uint32_t>(manifest.programs.size() - 1);

  steps_->push_back({loop.name(), gpu::WhileLoop{condition_index, body_index, predicate[0]}});
  AddOwner(loop, "loop");
}

void ArtifactBuilder::LowerConditional(const Instruction& conditional) {
  const hlo::Shape& selector_shape = conditional.operand(0)->shape();
  gpu::Conditional step;
  step.selector_dtype = selector_shape.type == hlo::PrimitiveType::kPred ? gpu::DType::kPred
                                                                          : gpu::DType::kS32;
  if (selector_shape.type != hlo::PrimitiveType::kPred &&
      selector_shape.type != hlo::PrimitiveType::kS32)
    Unsupported(conditional, "the selector is neither pred nor s32");
  step.selector = ArraySlice(*conditional.operand(0));
  const std::vector<gpu::Slice> result = Slices(conditional);
  gpu::Manifest& manifest = result_.artifact.manifest;
  const size_t branches = conditional.called_computations().size();
  for (size_t b = 0; b < branches; ++b) {
    const std::string name = conditional.name() + ".branch" + std::to_string(b);
    gpu::Program program{name, {}};
    const std::vector<gpu::Slice> root = LowerComputationInto(
        Called(conditional, b), {Slices(*conditional.operand(static_cast<int64_t>(b) + 1))},
        program.steps);
    CopyLeaves(name + ".result", root, result, program.steps);
    manifest.programs.push_back(std::move(program));
    step.branches.push_back(static_cast<uint32_t>(manifest.programs.size() - 1));
  }
  steps_->push_back({conditional.name(), std::move(step)});
  AddOwner(conditional, "branch");
}

void ArtifactBuilder::LowerCall(const Instruction& call) {
  std::vector<std::vector<gpu::Slice>> arguments;
  for (const Instruction* operand : call.operands()) arguments.push_back(Slices(*operand));
  const std::vector<gpu::Slice> root = LowerComputationInto(Called(call, 0), arguments, *steps_);
  CopyLeaves(call.name() + ".result", root, Slices(call), *steps_);
}

}  // namespace gpu::codegen::internal

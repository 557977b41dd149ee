// Control flow in GPU artifacts: while, conditional and call.
//
// Each called computation is lowered like an entry of its own (buffer assignment, arena layout
// past everything laid out so far, the same Lower walk) into a program of the manifest, with its
// parameters bound to the caller's slices instead of arena space of their own:
//   while        the loop state lives in the while's own slices S. The init value is copied
//                into S; the condition program reads S and writes the predicate; the body
//                program reads S and ends with copies of its root into S (staged through
//                scratch where a root leaf is another leaf's state slice, as when the body
//                swaps two leaves). The trip decision reads the predicate on the device side
//                of the artifact (gpu::WhileLoop).
//   conditional  each branch program reads its operand's slices and ends with copies of its
//                root into the conditional's result slices; the selector picks one
//                (gpu::Conditional, XLA's out-of-range rule).
//   call         the callee's steps inline in the caller's list, then the root copied into
//                the call's result slices.
// Guarantees: a program refers only to programs built before it (nested loops first), so the
// manifest's programs never recurse; the body never writes the state slices it reads before
// its final copies (buffer assignment never places a temporary in a parameter's storage).
#include <algorithm>

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

}  // namespace

std::vector<gpu::Slice> ArtifactBuilder::LowerComputationInto(
    const hlo::Computation& computation,
    const std::vector<std::vector<gpu::Slice>>& parameter_slices, std::vector<gpu::Step>& steps) {
  std::map<const Instruction*, std::vector<gpu::Slice>> bound;
  for (int64_t p = 0; p < computation.parameter_count(); ++p) {
    const Instruction* parameter = computation.parameter(p);
    if (parameter == nullptr || static_cast<size_t>(p) >= parameter_slices.size() ||
        LeafCount(parameter->shape()) != parameter_slices[static_cast<size_t>(p)].size()) {
      throw hlo::Error(computation.location(), "gpu backend: computation " + computation.name() +
                                                   " does not take what its caller passes");
    }
    bound[parameter] = parameter_slices[static_cast<size_t>(p)];
  }
  const std::vector<const Instruction*> schedule = LayOut(computation, bound);
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
  const std::vector<gpu::Slice> next = LowerComputationInto(Called(loop, 1), {state}, body.steps);
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

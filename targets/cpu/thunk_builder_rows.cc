// Input fusions as row kernels (row_kernel.h): a fusion whose reductions all reduce the output's
// minor-most physical dims of a value shaped like the output, and whose reduced values reach
// the outputs (and later reductions) only through elementwise ops, broadcasts and size-1
// reshapes that keep each reduced element on the row it was computed from. Then one kernel per
// row range computes the row's reductions into registers and the row's outputs; anything else
// (a transpose of a reduced value, a reduce root, a concatenate root) returns false and takes
// TryKernel's scratch-buffer path.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "targets/cpu/excess_precision.h"
#include "targets/cpu/kernel_emitter.h"
#include "targets/cpu/row_kernel.h"
#include "targets/cpu/thunk_builder.h"
#include "targets/cpu/thunk_builder_internal.h"

namespace cpu {

using builder_internal::ArrayLeaves;
using builder_internal::Describe;
using builder_internal::SameIteration;
using hlo::Instruction;
using hlo::Opcode;
using llvm_codegen::ElementalEmitter;
using llvm_codegen::ElementGenerator;

namespace {

// For one reduction R: which dim of a value carries each dim j of R's result (-1: R's dim j
// has extent 1, any index reads the same element).
using DimMap = std::vector<int64_t>;
// Per fusion value: the reductions it reads (directly or not) and through which dims.
using Tracking = std::map<const Instruction*, DimMap>;

// The dim map of a reshape/bitcast that only inserts or removes size-1 dims; nullopt otherwise.
std::optional<std::vector<int64_t>> SizeOneReshape(const hlo::Shape& in, const hlo::Shape& out) {
  std::vector<int64_t> in_dims, out_dims;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (in.dims[static_cast<size_t>(d)] != 1) in_dims.push_back(d);
  for (int64_t d = 0; d < out.rank(); ++d)
    if (out.dims[static_cast<size_t>(d)] != 1) out_dims.push_back(d);
  if (in_dims.size() != out_dims.size()) return std::nullopt;
  std::vector<int64_t> map(static_cast<size_t>(in.rank()), -1);
  for (size_t i = 0; i < in_dims.size(); ++i) {
    if (in.dims[static_cast<size_t>(in_dims[i])] != out.dims[static_cast<size_t>(out_dims[i])])
      return std::nullopt;
    map[static_cast<size_t>(in_dims[i])] = out_dims[i];
  }
  return map;
}

// The plan of a row kernel: the reductions (definition order) and the row geometry.
struct RowPlan {
  std::vector<const Instruction*> reductions;
  std::vector<int64_t> row_dims;  // logical dims not reduced (= each reduction's result dims)
  int64_t column_dims = 0;
};

// `root` is the fused root, or the operand of a root reshape that only drops size-1 dims;
// `output` is its shape as the kernel iterates it.
std::optional<RowPlan> PlanRows(const hlo::Computation& fused, const Instruction* root,
                                const hlo::Shape& output) {
  if (root->opcode() == Opcode::kConcatenate || root->opcode() == Opcode::kReduce)
    return std::nullopt;
  RowPlan plan;
  for (const auto& member : fused.instructions())
    if (member->opcode() == Opcode::kReduce) {  // never the root (rejected above)
      if (!member->shape().IsArray() || member->operand_count() != 2) return std::nullopt;
      plan.reductions.push_back(member.get());
    }
  if (plan.reductions.empty()) return std::nullopt;
  // Every reduction reduces exactly the minor-most physical dims of an output-shaped value.
  const std::vector<int64_t> minor_to_major = output.EffectiveMinorToMajor();
  std::set<int64_t> reduced;
  for (const Instruction* reduce : plan.reductions) {
    const auto& dims = reduce->attr<hlo::DimensionsAttrs>().dimensions;
    if (reduce->operand(0)->shape().dims != output.dims || dims.empty()) return std::nullopt;
    std::set<int64_t> these(dims.begin(), dims.end());
    if (!reduced.empty() && these != reduced) return std::nullopt;
    reduced = these;
  }
  plan.column_dims = static_cast<int64_t>(reduced.size());
  for (size_t i = 0; i < reduced.size(); ++i)
    if (!reduced.count(minor_to_major[i])) return std::nullopt;
  for (int64_t d = 0; d < output.rank(); ++d)
    if (!reduced.count(d)) plan.row_dims.push_back(d);

  // Track every reduced value forward; at each anchor (an output, a reduction's input) its
  // reduced elements must come from the anchor's own row.
  std::map<const Instruction*, Tracking> tracking;
  auto anchored = [&](const Instruction* value) {
    for (const auto& [reduce, map] : tracking[value])
      for (size_t j = 0; j < map.size(); ++j)
        if (map[j] >= 0 && map[j] != plan.row_dims[j]) return false;
    return value->shape().dims == output.dims;
  };
  for (const auto& member : fused.instructions()) {
    const Instruction* m = member.get();
    Tracking mine;
    bool reads_reduced = false;
    for (const Instruction* operand : m->operands()) reads_reduced |= !tracking[operand].empty();
    if (m->opcode() == Opcode::kReduce) {
      if (!tracking[m->operand(1)].empty()) return std::nullopt;  // a reduced init value
      if (!tracking[m->operand(0)].empty() && !anchored(m->operand(0))) return std::nullopt;
      DimMap identity;
      for (int64_t d = 0; d < m->shape().rank(); ++d)
        identity.push_back(m->shape().dims[static_cast<size_t>(d)] == 1 ? -1 : d);
      mine[m] = identity;
    } else if (!reads_reduced || (m == fused.root() && m->opcode() == Opcode::kTuple)) {
      // Nothing to track (a root tuple's elements are checked as outputs below).
    } else if (hlo::IsElementwise(m->opcode())) {
      for (const Instruction* operand : m->operands()) {
        if (operand->shape().dims != m->shape().dims && !tracking[operand].empty())
          return std::nullopt;
        for (const auto& [reduce, map] : tracking[operand]) {
          auto [it, inserted] = mine.emplace(reduce, map);
          if (!inserted && it->second != map) return std::nullopt;
        }
      }
    } else if (m->opcode() == Opcode::kBroadcast) {
      const auto& dims = m->attr<hlo::DimensionsAttrs>().dimensions;
      for (auto [reduce, map] : tracking[m->operand(0)]) {
        for (int64_t& d : map)
          if (d >= 0) d = dims.at(static_cast<size_t>(d));
        mine[reduce] = map;
      }
    } else if (m->opcode() == Opcode::kReshape || m->opcode() == Opcode::kBitcast) {
      auto reshape = SizeOneReshape(m->operand(0)->shape(), m->shape());
      if (!reshape) return std::nullopt;
      for (auto [reduce, map] : tracking[m->operand(0)]) {
        for (int64_t& d : map)
          if (d >= 0) d = (*reshape)[static_cast<size_t>(d)];
        mine[reduce] = map;
      }
    } else {
      return std::nullopt;  // a reduced value moved across rows (transpose, slice, ...)
    }
    tracking[m] = std::move(mine);
  }
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* element : root->operands())
      if (!anchored(element)) return std::nullopt;
  } else if (!anchored(root)) {
    return std::nullopt;
  }
  return plan;
}

// A reduce the row kernel combines itself: max/min of its two parameters on a float type
// that f32 holds exactly (the combination is exact, so accumulating in f32 changes nothing).
std::optional<RowCombiner> Combiner(const Instruction& reduce) {
  const hlo::PrimitiveType type = reduce.shape().type;
  if (type != hlo::PrimitiveType::kF32 && type != hlo::PrimitiveType::kBF16 &&
      type != hlo::PrimitiveType::kF16)
    return std::nullopt;
  const Instruction* combine = reduce.called_computations().at(0)->root();
  if (combine->operand_count() != 2 || combine->operand(0)->opcode() != Opcode::kParameter ||
      combine->operand(1)->opcode() != Opcode::kParameter ||
      combine->operand(0) == combine->operand(1))
    return std::nullopt;
  if (combine->opcode() == Opcode::kMaximum) return RowCombiner::kMaximum;
  if (combine->opcode() == Opcode::kMinimum) return RowCombiner::kMinimum;
  return std::nullopt;
}

// Transcendentals are worth keeping instead of recomputing (softmax's exp feeds the sum and
// the output); cheap ops are recomputed, which costs less than a store and a load.
bool WorthCaching(Opcode opcode) {
  switch (opcode) {
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kTanh:
    case Opcode::kPower:
    case Opcode::kErf:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kAtan2:
    case Opcode::kCbrt:
      return true;
    default:
      return false;
  }
}

// Values a row only computes once: an expensive, output-shaped value that reduction k's input
// reads and that the outputs or a later reduction read again. Maps it to k. The row kernel
// keeps it in a row buffer on the stack (RowLength elements, so only for rows of at most
// kMaxCachedRow elements).
constexpr int64_t kMaxCachedRow = 16384;
std::map<const Instruction*, size_t> RowCachedValues(const RowPlan& plan,
                                                     const Instruction* root,
                                                     const hlo::Shape& output) {
  std::map<const Instruction*, size_t> cached;
  if (RowLength(output, plan.column_dims) > kMaxCachedRow) return cached;
  // The values an anchor reads at its own element index: through elementwise ops only, which
  // evaluate their operands unconditionally (so the producer stores every element of the
  // row) and at the same index (so the consumer loads the element it would have computed).
  auto cone = [](std::vector<const Instruction*> stack) {
    std::set<const Instruction*> seen;
    while (!stack.empty()) {
      const Instruction* value = stack.back();
      stack.pop_back();
      if (!seen.insert(value).second || !hlo::IsElementwise(value->opcode())) continue;
      for (const Instruction* operand : value->operands()) stack.push_back(operand);
    }
    return seen;
  };
  std::vector<std::set<const Instruction*>> reduction_cones;
  for (const Instruction* reduce : plan.reductions)
    reduction_cones.push_back(cone({reduce->operand(0)}));
  const std::set<const Instruction*> output_cone =
      root->opcode() == Opcode::kTuple
          ? cone(std::vector<const Instruction*>(root->operands().begin(), root->operands().end()))
          : cone({root});
  for (size_t k = 0; k < reduction_cones.size(); ++k)
    for (const Instruction* value : reduction_cones[k]) {
      if (!WorthCaching(value->opcode()) || value->shape().dims != output.dims ||
          cached.count(value))
        continue;
      bool read_later = output_cone.count(value) > 0;
      for (size_t j = k + 1; j < reduction_cones.size(); ++j) read_later |= reduction_cones[j].count(value) > 0;
      if (read_later) cached[value] = k;
    }
  return cached;
}

// Wraps `compute` so that it stores the row's elements into a stack buffer while reduction
// `producer` runs (its row value is not yet known) and loads them back afterwards.
ElementGenerator CacheInRow(ElementalEmitter& emitter, ElementGenerator compute,
                            hlo::PrimitiveType type, const hlo::Shape& output,
                            int64_t column_dims, const std::vector<llvm::Value*>& row_values,
                            size_t producer) {
  llvm::IRBuilder<>& b = emitter.builder();
  llvm::Type* element = llvm_codegen::IrType(type, b.getContext());
  // Called from the factory, while the builder is in the kernel's entry block.
  llvm::Value* buffer =
      b.CreateAlloca(element, b.getInt64(RowLength(output, column_dims)), "row.cache");
  std::vector<int64_t> minor_to_major = output.EffectiveMinorToMajor();
  // Column dims, major first, and their extents.
  std::vector<int64_t> columns(minor_to_major.begin(), minor_to_major.begin() + column_dims);
  std::reverse(columns.begin(), columns.end());
  std::vector<int64_t> dims = output.dims;
  return [&b, compute, element, buffer, columns, dims, &row_values,
          producer](const llvm_codegen::IrIndex& index) -> llvm::Value* {
    llvm::Value* offset = b.getInt64(0);
    for (int64_t d : columns)
      offset = b.CreateAdd(b.CreateMul(offset, b.getInt64(dims[static_cast<size_t>(d)])),
                           index[static_cast<size_t>(d)]);
    llvm::Value* address = b.CreateInBoundsGEP(element, buffer, offset);
    if (row_values.at(producer) != nullptr) return b.CreateLoad(element, address);
    llvm::Value* value = compute(index);
    b.CreateStore(value, address);
    return value;
  };
}

}  // namespace

bool ThunkBuilder::TryRowKernel(const Instruction& inst, Scope& scope, const ValueLayout& output) {
  // bf16/f16 values stay in f32 between the fusion's ops (excess_precision.h).
  const std::optional<WidenedComputation> widened =
      WidenNarrowFloats(*inst.called_computations().at(0));
  const hlo::Computation& fused =
      widened ? *widened->computation : *inst.called_computations().at(0);
  std::vector<hlo::Shape> outputs = ArrayLeaves(inst.shape());
  for (const hlo::Shape& s : outputs)
    if (!s.IsArray()) return false;
  if (outputs.empty() || !SameIteration(outputs) || outputs[0].ElementCount() <= 0) return false;
  // A root reshape that only drops or adds size-1 dims (softmax's squeeze) keeps the row-major
  // bytes: iterate its operand's dims and store them in place.
  const Instruction* root = fused.root();
  if ((root->opcode() == Opcode::kReshape || root->opcode() == Opcode::kBitcast) &&
      outputs.size() == 1 && outputs[0].HasDefaultLayout() &&
      SizeOneReshape(root->operand(0)->shape(), root->shape())) {
    root = root->operand(0);
    outputs[0].dims = root->shape().dims;
    outputs[0].minor_to_major.clear();
    outputs[0].has_layout = false;
  }
  std::optional<RowPlan> plan = PlanRows(fused, root, outputs[0]);
  if (!plan) return false;

  RowKernelSpec spec;
  spec.name = KernelSymbol(module_, inst.name());
  spec.outputs = outputs;
  spec.column_dims = plan->column_dims;
  std::vector<int64_t> buffers;
  if (!scope.AppendArrayOperands(inst, spec.operands, buffers)) return false;
  std::vector<const ValueLayout*> output_leaves;
  CollectLeaves(output, output_leaves);
  for (const ValueLayout* leaf : output_leaves) buffers.push_back(leaf->buffer);

  const std::map<const Instruction*, size_t> cached = RowCachedValues(*plan, root, outputs[0]);
  auto make = [&](ElementalEmitter& emitter, std::vector<ElementGenerator> loads,
                  const std::vector<llvm::Value*>& row_values) {
    RowGenerators result;
    std::map<const Instruction*, ElementGenerator> generators;
    for (const auto& member : fused.instructions()) {
      const Instruction* m = member.get();
      if (m->opcode() == Opcode::kParameter) {
        generators[m] = loads.at(static_cast<size_t>(m->attr<hlo::ParameterAttrs>().number));
        continue;
      }
      if (m->opcode() == Opcode::kTuple) continue;  // the root: its elements are the outputs
      std::vector<ElementGenerator> operands;
      for (const Instruction* operand : m->operands()) {
        auto it = generators.find(operand);
        if (it == generators.end())
          throw hlo::Error("cpu backend: no element generator for " + Describe(*operand));
        operands.push_back(it->second);
      }
      auto position = std::find(plan->reductions.begin(), plan->reductions.end(), m);
      if (position == plan->reductions.end()) {
        generators[m] = emitter.MakeGenerator(*m, std::move(operands));
        if (auto it = cached.find(m); it != cached.end())
          generators[m] = CacheInRow(emitter, generators[m], m->shape().type, outputs[0],
                                     plan->column_dims, row_values, it->second);
        continue;
      }
      // Evaluated once per row at the row's index (projected onto the reduction's dims); every
      // consumer reads the row's register value (PlanRows checked they stay on the row).
      RowReduction reduction;
      reduction.combiner = Combiner(*m);
      if (reduction.combiner) {
        reduction.input = operands[0];
        reduction.init = operands[1];
      } else {
        ElementGenerator reduce = emitter.MakeGenerator(*m, std::move(operands));
        const std::vector<int64_t> row_dims = plan->row_dims;
        reduction.whole = [reduce, row_dims](const llvm_codegen::IrIndex& index) {
          llvm_codegen::IrIndex projected;
          for (int64_t d : row_dims) projected.push_back(index[static_cast<size_t>(d)]);
          return reduce(projected);
        };
      }
      result.reductions.push_back(std::move(reduction));
      const auto k = static_cast<size_t>(position - plan->reductions.begin());
      generators[m] = [&row_values, k](const llvm_codegen::IrIndex&) { return row_values.at(k); };
    }
    if (root->opcode() == Opcode::kTuple) {
      for (const Instruction* element : root->operands())
        result.outputs.push_back(generators.at(element));
    } else {
      result.outputs.push_back(generators.at(root));
    }
    return result;
  };
  try {
    EmitRowKernel(module_, spec, make);
  } catch (const hlo::Error&) {
    // Not emitted as a row kernel; TryKernel's general path decides (and falls back if needed).
    if (llvm::Function* f = module_.getFunction(spec.name)) f->eraseFromParent();
    return false;
  }
  // The thread pool splits flattened rows; each row's work is its reductions plus its outputs.
  hlo::Shape rows = hlo::Shape::Array(outputs[0].type, {RowCount(outputs[0], spec.column_dims),
                                                        RowLength(outputs[0], spec.column_dims)});
  AddKernelThunk(inst.name(), scope, spec.name, std::move(buffers), rows,
                 static_cast<int64_t>(plan->reductions.size()) + 1);
  result_.counters["kernels.row-fused"] += 1;
  return true;
}

}  // namespace cpu

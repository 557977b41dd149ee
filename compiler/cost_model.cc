// The cost model (rules in cost_model.h). One exhaustive switch assigns every opcode a work rule
// and a traffic rule, so adding an opcode forces a decision about its cost.
#include "compiler/cost_model.h"

#include <algorithm>
#include <cmath>

#include "hlo/custom_call_targets.h"

namespace compiler {
namespace {

using hlo::Opcode;

enum class WorkRule : uint8_t {
  kFree,              // no arithmetic
  kPerElement,        // 1 per output element
  kTranscendental,    // 1 per output element, also counted as a transcendental
  kDot,
  kConvolution,
  kReduce,            // input elements * reducer FLOPs per call
  kReduceWindow,
  kSelectAndScatter,
  kScatter,
  kSort,
  kTopK,
  kMap,
  kBatchNormInference,
  kBatchNormTraining,
  kBatchNormGrad,
  kAllReduce,
  kPerElementOfAllOutputs,  // rng: 1 per generated element
  kFft,                     // 5 N log2 N per transform (the radix-2 count)
  kFusion,
};

enum class Traffic : uint8_t {
  kNone,          // generates no code, moves nothing
  kWhole,         // reads every operand, writes the result
  kReadsResult,   // reads only what it returns (plus index operands): slice, gather
  kUpdateInPlace, // dynamic-update-slice: reads and writes the update
  kScatterInPlace,
};

struct Rule {
  WorkRule work;
  Traffic traffic;
};

Rule RuleFor(Opcode op) {
  switch (op) {
    // No code: values that exist without a kernel, and control flow whose bodies are costed
    // where the ownership analysis visits them.
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kAfterAll:
    case Opcode::kOptimizationBarrier:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    // The generic async wrapping: its computation is costed where it is visited (the pipelines
    // turn it into a call first).
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    // The -done half of an asynchronous collective: its -start carries the work.
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
      return {WorkRule::kFree, Traffic::kNone};
    // Data movement: no arithmetic, but memory traffic.
    case Opcode::kIota:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kCopy:
    case Opcode::kBitcastConvert:
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kTranspose:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCustomCall:  // opaque: the compiler cannot see its work
      return {WorkRule::kFree, Traffic::kWhole};
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kGather:
      return {WorkRule::kFree, Traffic::kReadsResult};
    case Opcode::kDynamicUpdateSlice:
      return {WorkRule::kFree, Traffic::kUpdateInPlace};
    // Elementwise arithmetic.
    case Opcode::kAbs:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kComplex:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kConvert:
    case Opcode::kFloor:
    case Opcode::kIsFinite:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReducePrecision:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kSign:
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kCompare:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
    case Opcode::kClamp:
    case Opcode::kSelect:
      return {WorkRule::kPerElement, Traffic::kWhole};
    case Opcode::kCbrt:
    case Opcode::kCos:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSin:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kAtan2:
    case Opcode::kPower:
      return {WorkRule::kTranscendental, Traffic::kWhole};
    case Opcode::kDot: return {WorkRule::kDot, Traffic::kWhole};
    case Opcode::kConvolution: return {WorkRule::kConvolution, Traffic::kWhole};
    case Opcode::kReduce: return {WorkRule::kReduce, Traffic::kWhole};
    case Opcode::kReduceWindow: return {WorkRule::kReduceWindow, Traffic::kWhole};
    case Opcode::kSelectAndScatter: return {WorkRule::kSelectAndScatter, Traffic::kWhole};
    case Opcode::kScatter: return {WorkRule::kScatter, Traffic::kScatterInPlace};
    case Opcode::kSort: return {WorkRule::kSort, Traffic::kWhole};
    case Opcode::kTopK: return {WorkRule::kTopK, Traffic::kWhole};
    case Opcode::kMap: return {WorkRule::kMap, Traffic::kWhole};
    case Opcode::kBatchNormInference: return {WorkRule::kBatchNormInference, Traffic::kWhole};
    case Opcode::kBatchNormTraining: return {WorkRule::kBatchNormTraining, Traffic::kWhole};
    case Opcode::kBatchNormGrad: return {WorkRule::kBatchNormGrad, Traffic::kWhole};
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
      return {WorkRule::kAllReduce, Traffic::kWhole};
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
      return {WorkRule::kPerElementOfAllOutputs, Traffic::kWhole};
    case Opcode::kFusion: return {WorkRule::kFusion, Traffic::kWhole};
    case Opcode::kFft: return {WorkRule::kFft, Traffic::kWhole};
  }
  return {WorkRule::kFree, Traffic::kWhole};  // unreachable: the switch is exhaustive
}

// Element count as a double (no overflow); tuples sum their leaves, tokens count 0.
double Elements(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double sum = 0;
    for (const hlo::Shape& element : shape.tuple_shapes) sum += Elements(element);
    return sum;
  }
  if (shape.IsToken()) return 0;
  double count = 1;
  for (int64_t d : shape.dims) count *= static_cast<double>(std::max<int64_t>(d, 0));
  return count;
}

// The first array leaf of a shape (reduce-window and friends return tuples when variadic).
const hlo::Shape& FirstArray(const hlo::Shape& shape) {
  if (shape.IsTuple() && !shape.tuple_shapes.empty()) return FirstArray(shape.tuple_shapes[0]);
  return shape;
}

double Dim(const hlo::Shape& shape, int64_t d) {
  if (d < 0 || d >= shape.rank()) return 0;  // unverified input: count nothing rather than crash
  return static_cast<double>(shape.dims[static_cast<size_t>(d)]);
}

double OperandElements(const hlo::Instruction& inst, int64_t i) {
  return i < inst.operand_count() ? Elements(inst.operand(i)->shape()) : 0;
}

double WindowVolume(const hlo::Window& window) {
  double volume = 1;
  for (const hlo::WindowDim& dim : window.dims) volume *= static_cast<double>(dim.size);
  return volume;
}

// Comparisons of a sort along a dimension of n elements: n * ceil(log2 n) per row.
double Log2Ceil(double n) { return n <= 1 ? 0 : std::ceil(std::log2(n)); }

double OperandBytes(const hlo::Instruction& inst, int64_t first, int64_t last) {
  double bytes = 0;
  for (int64_t i = std::max<int64_t>(first, 0); i < std::min(last, inst.operand_count()); ++i) {
    bytes += ShapeBytes(inst.operand(i)->shape());
  }
  return bytes;
}

}  // namespace

double ShapeBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    double sum = 0;
    for (const hlo::Shape& element : shape.tuple_shapes) sum += ShapeBytes(element);
    return sum;
  }
  return Elements(shape) * hlo::ByteSize(shape.type);
}

bool GeneratesNoCode(hlo::Opcode op) { return RuleFor(op).traffic == Traffic::kNone; }

bool IsTranscendental(hlo::Opcode op) { return RuleFor(op).work == WorkRule::kTranscendental; }

double CostModel::ReducerFlopsPerCall(const hlo::Instruction& inst, int64_t which) {
  const auto& called = inst.called_computations();
  const size_t index = static_cast<size_t>(which);
  if (index >= called.size() || called[index] == nullptr) return 1;
  // A call of the reducer costs at least one operation even if it only forwards a parameter.
  return std::max(1.0, ComputationWork(*called[index]).flops);
}

const InstructionCost& CostModel::ComputationWork(const hlo::Computation& computation) {
  auto [it, inserted] = computation_work_.try_emplace(&computation);
  if (!inserted) return it->second;  // memoized (or being computed: a cycle counts as 0)
  InstructionCost total;
  for (const auto& inst : computation.instructions()) {
    InstructionCost work = Work(*inst);
    total.flops += work.flops;
    total.transcendentals += work.transcendentals;
  }
  // The map is node-based: `it` stays valid across the insertions made by the recursion.
  it->second = total;
  return it->second;
}

InstructionCost CostModel::Work(const hlo::Instruction& inst) {
  InstructionCost cost;
  const double out = Elements(inst.shape());
  switch (RuleFor(inst.opcode()).work) {
    case WorkRule::kFree:
      break;
    case WorkRule::kPerElement:
      cost.flops = out;
      break;
    case WorkRule::kTranscendental:
      cost.flops = out;
      cost.transcendentals = out;
      break;
    case WorkRule::kDot: {
      if (!inst.has_attr<hlo::DotAttrs>() || inst.operand_count() < 1) break;
      double k = 1;
      for (int64_t d : inst.attr<hlo::DotAttrs>().dnums.lhs_contracting) {
        k *= Dim(inst.operand(0)->shape(), d);
      }
      cost.flops = 2 * out * k;
      break;
    }
    case WorkRule::kConvolution: {
      if (!inst.has_attr<hlo::ConvolutionAttrs>() || inst.operand_count() < 2) break;
      const auto& dnums = inst.attr<hlo::ConvolutionAttrs>().dnums;
      const hlo::Shape& kernel = inst.operand(1)->shape();
      double window = 1;
      for (int64_t d : dnums.kernel_spatial) window *= Dim(kernel, d);
      // The kernel's input-feature dimension already is input features / feature_group_count.
      cost.flops = 2 * out * window * Dim(kernel, dnums.kernel_input_feature);
      break;
    }
    case WorkRule::kReduce:
      cost.flops = OperandElements(inst, 0) * ReducerFlopsPerCall(inst);
      break;
    case WorkRule::kReduceWindow:
      if (!inst.has_attr<hlo::WindowAttrs>()) break;
      cost.flops = Elements(FirstArray(inst.shape())) *
                   WindowVolume(inst.attr<hlo::WindowAttrs>().window) * ReducerFlopsPerCall(inst);
      break;
    case WorkRule::kSelectAndScatter: {
      if (!inst.has_attr<hlo::WindowAttrs>()) break;
      const double source = OperandElements(inst, 1);
      cost.flops = source * WindowVolume(inst.attr<hlo::WindowAttrs>().window) *
                       ReducerFlopsPerCall(inst, 0) +
                   source * ReducerFlopsPerCall(inst, 1);
      break;
    }
    case WorkRule::kScatter: {
      const int64_t inputs = (inst.operand_count() - 1) / 2;  // inputs, indices, updates
      cost.flops = OperandElements(inst, inputs + 1) * ReducerFlopsPerCall(inst);
      break;
    }
    case WorkRule::kFft: {
      if (!inst.has_attr<hlo::FftAttrs>() || inst.operand_count() < 1) break;
      double length = 1;
      for (int64_t len : inst.attr<hlo::FftAttrs>().length) length *= static_cast<double>(len);
      const double transforms = length > 0 ? OperandElements(inst, 0) / length : 0;
      cost.flops = transforms * 5 * length * std::log2(std::max(length, 2.0));
      break;
    }
    case WorkRule::kSort: {
      if (!inst.has_attr<hlo::SortAttrs>() || inst.operand_count() < 1) break;
      const hlo::Shape& keys = inst.operand(0)->shape();
      cost.flops = Elements(keys) * Log2Ceil(Dim(keys, inst.attr<hlo::SortAttrs>().dimension)) *
                   ReducerFlopsPerCall(inst);
      break;
    }
    case WorkRule::kTopK: {
      const double k = inst.has_attr<hlo::TopKAttrs>()
                           ? static_cast<double>(inst.attr<hlo::TopKAttrs>().k) : 1;
      cost.flops = OperandElements(inst, 0) * std::max(1.0, Log2Ceil(k));
      break;
    }
    case WorkRule::kMap:
      cost.flops = out * ReducerFlopsPerCall(inst);
      break;
    case WorkRule::kBatchNormInference:
    case WorkRule::kBatchNormTraining:
    case WorkRule::kBatchNormGrad: {
      // Per element: inference (x-mean)*rsqrt*scale+offset = 4; training adds the mean and
      // variance passes (+3); grad about 9. One rsqrt per feature.
      const WorkRule rule = RuleFor(inst.opcode()).work;
      const double per_element = rule == WorkRule::kBatchNormInference ? 4
                                 : rule == WorkRule::kBatchNormTraining ? 7 : 9;
      cost.flops = per_element * OperandElements(inst, 0);
      if (inst.has_attr<hlo::BatchNormAttrs>() && inst.operand_count() > 0) {
        cost.transcendentals =
            Dim(inst.operand(0)->shape(), inst.attr<hlo::BatchNormAttrs>().feature_index);
        cost.flops += cost.transcendentals;
      }
      break;
    }
    case WorkRule::kAllReduce: {
      double in = 0;
      for (int64_t i = 0; i < inst.operand_count(); ++i) in += OperandElements(inst, i);
      cost.flops = in * ReducerFlopsPerCall(inst);
      break;
    }
    case WorkRule::kPerElementOfAllOutputs:
      cost.flops = out;
      break;
    case WorkRule::kFusion:
      if (!inst.called_computations().empty() && inst.called_computations()[0] != nullptr) {
        const InstructionCost& fused = ComputationWork(*inst.called_computations()[0]);
        cost.flops = fused.flops;
        cost.transcendentals = fused.transcendentals;
      }
      break;
  }
  return cost;
}

InstructionCost CostModel::Cost(const hlo::Instruction& inst) {
  if (inst.opcode() == hlo::Opcode::kCustomCall && inst.has_attr<hlo::CustomCallAttrs>() &&
      hlo::IsAnnotationCustomCall(inst.attr<hlo::CustomCallAttrs>().target)) {
    return {};  // an annotation for a later XLA pass moves and computes nothing
  }
  InstructionCost cost = Work(inst);
  const int64_t n = inst.operand_count();
  const double result = ShapeBytes(inst.shape());
  switch (RuleFor(inst.opcode()).traffic) {
    case Traffic::kNone:
      break;
    case Traffic::kWhole:
      cost.bytes_read = OperandBytes(inst, 0, n);
      cost.bytes_written = result;
      break;
    case Traffic::kReadsResult:
      cost.bytes_read = result + OperandBytes(inst, 1, n);
      cost.bytes_written = result;
      break;
    case Traffic::kUpdateInPlace:
      cost.bytes_read = OperandBytes(inst, 1, n);
      cost.bytes_written = OperandBytes(inst, 1, 2);
      break;
    case Traffic::kScatterInPlace: {
      const int64_t inputs = (n - 1) / 2;
      const double updates = OperandBytes(inst, inputs + 1, n);
      // The touched elements are read to be combined with the updates.
      cost.bytes_read = OperandBytes(inst, inputs, inputs + 1) + 2 * updates;
      cost.bytes_written = updates;
      break;
    }
  }
  return cost;
}

InstructionCost CostOf(const hlo::Instruction& instruction) {
  CostModel model;
  return model.Cost(instruction);
}

namespace {

// The contraction a kernel is built around, if any (the instruction itself or inside a fusion).
const hlo::Instruction* Contraction(const hlo::Instruction& inst) {
  if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) return &inst;
  if (inst.opcode() != Opcode::kFusion || inst.called_computations().empty() ||
      inst.called_computations()[0] == nullptr) {
    return nullptr;
  }
  for (const auto& fused : inst.called_computations()[0]->instructions()) {
    if (fused->opcode() == Opcode::kDot || fused->opcode() == Opcode::kConvolution) {
      return fused.get();
    }
  }
  return nullptr;
}

}  // namespace

double RooflineSeconds(const hlo::Instruction& instruction, const InstructionCost& cost,
                       const TargetDescription& target) {
  const PeakRates& peak = target.peak;
  double ops_per_second = peak.vector_ops_per_second;
  if (const hlo::Instruction* contraction = Contraction(instruction);
      contraction != nullptr && contraction->operand_count() > 0) {
    auto it = peak.matrix_ops_per_second.find(contraction->operand(0)->shape().type);
    if (it != peak.matrix_ops_per_second.end() && it->second > 0) ops_per_second = it->second;
  }
  const double compute = ops_per_second > 0 ? cost.flops / ops_per_second : 0;
  const double bytes = cost.bytes_read + cost.bytes_written;
  const double memory =
      peak.memory_bytes_per_second > 0 ? bytes / peak.memory_bytes_per_second : 0;
  return std::max(compute, memory) + peak.kernel_launch_seconds;
}

}  // namespace compiler

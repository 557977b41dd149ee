// Buffer assignment over the memory-minimizing schedule (see buffer_assignment.h for the model).
// Steps: schedule; define logical buffers and resolve aliases; compute last reads; merge
// in-place candidates into shared storage; pack temporaries best-fit; add callee peaks.
#include "compiler/memory/buffer_assignment.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "compiler/memory/heap_packing.h"
#include "compiler/memory/schedule.h"
#include "compiler/memory/value_sizes.h"

namespace compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// The array/token leaves of `shape`, depth-first, with their shape indices.
void Leaves(const hlo::Shape& shape, std::vector<int64_t>& index,
            std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>>& out) {
  if (!shape.IsTuple()) {
    out.emplace_back(index, &shape);
    return;
  }
  for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
    index.push_back(static_cast<int64_t>(i));
    Leaves(shape.tuple_shapes[i], index, out);
    index.pop_back();
  }
}

int64_t LeafCount(const hlo::Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const hlo::Shape& element : shape.tuple_shapes) count += LeafCount(element);
  return count;
}

// Ops whose callees run as separate steps with their own temporaries (see the header).
bool CalleesNeedMemory(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall ||
         op == Opcode::kCustomCall;
}

std::string IndexSuffix(const std::vector<int64_t>& index) {
  if (index.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(index[i]);
  }
  out += '}';
  return out;
}

}  // namespace

// Peaks of called computations, shared by the assigners of a module (memoized per callee).
struct CalleeMemo {
  std::unordered_map<const hlo::Computation*, int64_t> peaks;
  std::unordered_set<const hlo::Computation*> in_progress;  // detects a recursive call graph
};

class BufferAssigner {
 public:
  BufferAssigner(const TargetDescription& target, CalleeMemo& memo)
      : target_(target), memo_(memo) {}

  BufferAssignment Assign(const hlo::Computation& computation) {
    BufferAssignment result;
    result.schedule_ = ScheduleComputation(computation);
    const int64_t n = static_cast<int64_t>(result.schedule_.size());
    DefineBuffers(computation, result, n);
    ReuseInPlace(result);
    Pack(result, n);
    return result;
  }

 private:
  int64_t NewBuffer(BufferAssignment& result, const Instruction* inst, std::vector<int64_t> index,
                    const hlo::Shape& leaf, int64_t start, int64_t end) {
    LogicalBuffer buffer;
    buffer.instruction = inst;
    buffer.index = std::move(index);
    buffer.size = memory::ArrayBytes(leaf);
    buffer.live_start = start;
    buffer.live_end = end;
    result.buffers_.push_back(std::move(buffer));
    return static_cast<int64_t>(result.buffers_.size()) - 1;
  }

  // Creates the logical buffers, resolves aliasing ops to their operands' buffers, and
  // extends every buffer's live range to its last read.
  void DefineBuffers(const hlo::Computation& computation, BufferAssignment& result, int64_t n) {
    values_.clear();
    values_.reserve(result.schedule_.size());
    for (int64_t t = 0; t < n; ++t) {
      const Instruction* inst = result.schedule_[static_cast<size_t>(t)];
      std::vector<int64_t>& value = values_[inst];
      switch (inst->opcode()) {
        case Opcode::kTuple:
          for (const Instruction* operand : inst->operands()) {
            const std::vector<int64_t>& part = values_.at(operand);
            value.insert(value.end(), part.begin(), part.end());
          }
          break;
        case Opcode::kGetTupleElement: {
          const hlo::Shape& tuple = inst->operand(0)->shape();
          const int64_t index = inst->attr<hlo::TupleIndexAttrs>().index;
          if (!tuple.IsTuple() || index < 0 ||
              index >= static_cast<int64_t>(tuple.tuple_shapes.size())) {
            throw hlo::Error(inst->location(), "get-tuple-element index out of range");
          }
          int64_t first = 0;
          for (int64_t i = 0; i < index; ++i) {
            first += LeafCount(tuple.tuple_shapes[static_cast<size_t>(i)]);
          }
          const std::vector<int64_t>& whole = values_.at(inst->operand(0));
          const int64_t count = LeafCount(inst->shape());
          value.assign(whole.begin() + first, whole.begin() + first + count);
          break;
        }
        default:
          if (memory::IsAliasing(*inst)) {  // bitcast, opt-barrier, an annotation
            value = values_.at(inst->operand(0));
          } else {
            DefineOwnBuffers(result, inst, t, n, value);
          }
          break;
      }
      if (memory::IsAliasing(*inst)) continue;
      for (const Instruction* operand : inst->operands()) {
        for (int64_t b : values_.at(operand)) {
          LogicalBuffer& read = result.buffers_[static_cast<size_t>(b)];
          read.live_end = std::max(read.live_end, t);
        }
      }
    }
    if (computation.root() != nullptr) {
      for (int64_t b : values_.at(computation.root())) {
        result.buffers_[static_cast<size_t>(b)].live_end = n;  // live-out
      }
    }
  }

  void DefineOwnBuffers(BufferAssignment& result, const Instruction* inst, int64_t t, int64_t n,
                        std::vector<int64_t>& value) {
    std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>> leaves;
    std::vector<int64_t> index;
    Leaves(inst->shape(), index, leaves);
    const bool parameter = inst->opcode() == Opcode::kParameter;
    const bool constant = inst->opcode() == Opcode::kConstant;
    for (auto& [leaf_index, leaf] : leaves) {
      const std::string name = inst->name() + IndexSuffix(leaf_index);
      const int64_t b = NewBuffer(result, inst, std::move(leaf_index), *leaf,
                                  parameter || constant ? 0 : t, parameter || constant ? n : t);
      LogicalBuffer& buffer = result.buffers_[static_cast<size_t>(b)];
      if (parameter || constant) {
        buffer.allocation = static_cast<int64_t>(result.allocations_.size());
        result.allocations_.push_back(
            {parameter ? AllocationKind::kParameter : AllocationKind::kConstant, name,
             buffer.size});
        (parameter ? result.parameter_bytes_ : result.constant_bytes_) += buffer.size;
      }
      value.push_back(b);
    }
  }

  // The operands whose buffer `inst` may overwrite: every operand of an elementwise op
  // (except copy, which may change the layout), operand 0 of dynamic-update-slice.
  static std::vector<const Instruction*> InPlaceCandidates(const Instruction& inst) {
    if (inst.opcode() == Opcode::kDynamicUpdateSlice) return {inst.operand(0)};
    if (!hlo::IsElementwise(inst.opcode()) || inst.opcode() == Opcode::kCopy) return {};
    return {inst.operands().begin(), inst.operands().end()};
  }

  // Joins an op's result to the storage of an operand buffer that dies at this op.
  void ReuseInPlace(BufferAssignment& result) {
    storage_.assign(result.buffers_.size(), -1);
    for (size_t b = 0; b < storage_.size(); ++b) storage_[b] = static_cast<int64_t>(b);
    // storage_end_[s]: last position any buffer sharing storage s is live.
    std::vector<int64_t> storage_end(result.buffers_.size());
    for (size_t b = 0; b < storage_end.size(); ++b) storage_end[b] = result.buffers_[b].live_end;
    for (int64_t t = 0; t < static_cast<int64_t>(result.schedule_.size()); ++t) {
      const Instruction* inst = result.schedule_[static_cast<size_t>(t)];
      if (!inst->shape().IsArray()) continue;
      const std::vector<int64_t>& out = values_.at(inst);
      if (out.size() != 1) continue;
      const int64_t mine = out[0];
      LogicalBuffer& output = result.buffers_[static_cast<size_t>(mine)];
      for (const Instruction* operand : InPlaceCandidates(*inst)) {
        const std::vector<int64_t>& in = values_.at(operand);
        if (in.size() != 1 || !operand->shape().IsArray()) continue;
        const LogicalBuffer& source = result.buffers_[static_cast<size_t>(in[0])];
        const int64_t storage = storage_[static_cast<size_t>(in[0])];
        const bool temporary = source.allocation < 0;
        const bool same_placement =
            source.size == output.size && operand->shape().dims == inst->shape().dims &&
            operand->shape().EffectiveMinorToMajor() == inst->shape().EffectiveMinorToMajor();
        if (!temporary || !same_placement || source.live_end != t ||
            storage_end[static_cast<size_t>(storage)] != t) {
          continue;
        }
        storage_[static_cast<size_t>(mine)] = storage;
        storage_end[static_cast<size_t>(storage)] = output.live_end;
        output.shares_with = in[0];
        break;
      }
    }
  }

  void Pack(BufferAssignment& result, int64_t n) {
    // One heap block per storage: the union of its members' live ranges.
    std::unordered_map<int64_t, size_t> block_of_storage;
    std::vector<memory::HeapBlock> blocks;
    for (size_t b = 0; b < result.buffers_.size(); ++b) {
      const LogicalBuffer& buffer = result.buffers_[b];
      if (buffer.allocation >= 0) continue;  // parameter or constant
      auto [it, inserted] = block_of_storage.emplace(storage_[b], blocks.size());
      if (inserted) blocks.push_back({buffer.size, buffer.live_start, buffer.live_end});
      memory::HeapBlock& block = blocks[it->second];
      block.size = std::max(block.size, buffer.size);
      block.start = std::min(block.start, buffer.live_start);
      block.end = std::max(block.end, buffer.live_end);
    }
    memory::HeapPacking packing = memory::PackBestFit(blocks, n, target_.alignment_bytes);
    const int64_t temp_allocation = static_cast<int64_t>(result.allocations_.size());
    result.allocations_.push_back({AllocationKind::kTemp, "temp", packing.size});
    for (size_t b = 0; b < result.buffers_.size(); ++b) {
      LogicalBuffer& buffer = result.buffers_[b];
      if (buffer.allocation >= 0) continue;
      buffer.allocation = temp_allocation;
      buffer.offset = packing.offsets[block_of_storage.at(storage_[b])];
    }
    result.temp_bytes_ = packing.size;
    result.max_live_temp_bytes_ = packing.max_live_bytes;
    int64_t with_callees = packing.size;
    for (int64_t t = 0; t < n; ++t) {
      const Instruction* inst = result.schedule_[static_cast<size_t>(t)];
      if (!CalleesNeedMemory(inst->opcode())) continue;
      int64_t nested = 0;
      for (const hlo::Computation* callee : inst->called_computations()) {
        if (callee != nullptr) nested = std::max(nested, CalleePeak(*callee));
      }
      result.nested_peak_bytes_ = std::max(result.nested_peak_bytes_, nested);
      const int64_t top = packing.top_at_position[static_cast<size_t>(t)];
      with_callees = std::max(with_callees, top + nested);
    }
    result.peak_bytes_ = result.parameter_bytes_ + result.constant_bytes_ + with_callees;
  }

  // A callee's own peak: its temporaries, constants and callees (its parameters are the
  // caller's operands, already counted). Memoized per computation.
  int64_t CalleePeak(const hlo::Computation& callee) {
    if (auto it = memo_.peaks.find(&callee); it != memo_.peaks.end()) return it->second;
    if (!memo_.in_progress.insert(&callee).second) {
      throw hlo::Error(callee.location(), "computation '" + callee.name() + "' calls itself");
    }
    BufferAssignment assignment = BufferAssigner(target_, memo_).Assign(callee);
    memo_.in_progress.erase(&callee);
    const int64_t peak = assignment.peak_bytes() - assignment.parameter_bytes();
    memo_.peaks.emplace(&callee, peak);
    return peak;
  }

  const TargetDescription& target_;
  std::unordered_map<const Instruction*, std::vector<int64_t>> values_;
  std::vector<int64_t> storage_;  // buffer -> the buffer whose storage it uses
  CalleeMemo& memo_;
};

BufferAssignment AssignBuffers(const hlo::Module& module, const TargetDescription& target) {
  if (module.entry() == nullptr) {
    throw hlo::Error("module '" + module.name() + "' has no entry computation");
  }
  return AssignBuffers(*module.entry(), target);
}

BufferAssignment AssignBuffers(const hlo::Computation& computation,
                               const TargetDescription& target) {
  CalleeMemo memo;
  return BufferAssigner(target, memo).Assign(computation);
}

std::string BufferAssignment::ToString() const {
  std::string out;
  auto kind_name = [](AllocationKind kind) {
    switch (kind) {
      case AllocationKind::kParameter: return "parameter";
      case AllocationKind::kConstant: return "constant";
      case AllocationKind::kTemp: return "temp";
    }
    return "?";
  };
  for (size_t a = 0; a < allocations_.size(); ++a) {
    out += "allocation " + std::to_string(a) + " (" + kind_name(allocations_[a].kind) + ") " +
           allocations_[a].name + ": " + std::to_string(allocations_[a].size) + " bytes\n";
  }
  for (const LogicalBuffer& buffer : buffers_) {
    out += "  " + buffer.instruction->name() + IndexSuffix(buffer.index) + ": allocation " +
           std::to_string(buffer.allocation) + " offset " + std::to_string(buffer.offset) +
           " size " + std::to_string(buffer.size) + " live [" +
           std::to_string(buffer.live_start) + ", " + std::to_string(buffer.live_end) + "]";
    if (buffer.shares_with >= 0) {
      const LogicalBuffer& partner = buffers_[static_cast<size_t>(buffer.shares_with)];
      out += " in-place over " + partner.instruction->name() + IndexSuffix(partner.index);
    }
    out += "\n";
  }
  out += "parameters " + std::to_string(parameter_bytes_) + " + constants " +
         std::to_string(constant_bytes_) + " + temp " + std::to_string(temp_bytes_) +
         " (max live " + std::to_string(max_live_temp_bytes_) + ", largest callee " +
         std::to_string(nested_peak_bytes_) + ") -> peak " + std::to_string(peak_bytes_) +
         " bytes\n";
  return out;
}

}  // namespace compiler

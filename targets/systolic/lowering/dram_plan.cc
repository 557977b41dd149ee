// DramPlan (dram_plan.h): last uses, aliasing and the zero region.
#include "targets/systolic/lowering/dram_plan.h"

#include <algorithm>
#include <limits>

#include "targets/systolic/lowering/emit_conv.h"

namespace systolic::lowering {
namespace {

constexpr int64_t kDramAlignment = 256;
constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

// The largest padding region any convolution of `computation` (or of the fusions it calls)
// needs.
int64_t ZeroBytes(const hlo::Computation& computation) {
  int64_t bytes = 0;
  for (const auto& inst : computation.instructions()) {
    if (inst->opcode() == hlo::Opcode::kConvolution) bytes = std::max(bytes, ConvZeroBytes(*inst));
    if (inst->opcode() == hlo::Opcode::kFusion) {
      for (const hlo::Computation* called : inst->called_computations()) {
        bytes = std::max(bytes, ZeroBytes(*called));
      }
    }
  }
  return bytes;
}

}  // namespace

int64_t DramBuffer::bytes() const {
  return shape.ElementCount() * hlo::ByteSize(shape.type);
}

DramPlan::DramPlan(const hlo::Computation& entry, const ArchConfig& config)
    : dram_(config.dram_bytes, kDramAlignment) {
  int64_t position = 0;
  for (const auto& inst : entry.instructions()) {
    position_[inst.get()] = position;
    last_use_[inst.get()] = position;  // unused values die where they are defined
    for (const hlo::Instruction* operand : inst->operands()) last_use_[operand] = position;
    ++position;
  }
  last_use_[entry.root()] = kForever;
  if (int64_t bytes = ZeroBytes(entry); bytes > 0) zeros_ = dram_.Allocate(bytes, "zeros");
}

std::vector<DramBuffer> DramPlan::Allocate(const hlo::Instruction& inst) {
  std::vector<const hlo::Shape*> shapes;
  hlo::FlattenShape(inst.shape(), shapes);
  std::vector<DramBuffer> leaves;
  for (const hlo::Shape* shape : shapes) {
    DramBuffer buffer{0, *shape};
    buffer.address = dram_.Allocate(buffer.bytes(), inst.name());
    live_[buffer.address] = last_use_.at(&inst);
    leaves.push_back(buffer);
  }
  return leaves;
}

void DramPlan::Alias(const hlo::Instruction& inst, const std::vector<DramBuffer>& leaves) {
  for (const DramBuffer& leaf : leaves) {
    int64_t& last = live_.at(leaf.address);
    last = std::max(last, last_use_.at(&inst));
  }
}

void DramPlan::Retire(int64_t position) {
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->second <= position) {
      dram_.Free(it->first);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace systolic::lowering

// SegmentBuilder (segment_builder.h): op placement, op-done ordering, on-chip activations.
#include "targets/systolic/lowering/segment_builder.h"

#include <algorithm>
#include <limits>
#include <set>

#include "targets/systolic/lowering/conv_shape.h"
#include "targets/systolic/lowering/dispatch_order.h"
#include "targets/systolic/lowering/emit_conv.h"
#include "targets/systolic/lowering/emit_vector.h"

namespace systolic::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Whether `user` reads `value` as the lhs of a dot and only there: a dot, or an output fusion
// around one (a dot with its elementwise epilogue) whose lhs parameter `value` is.
bool TakesAsDotLhs(const Instruction& user, const Instruction& value) {
  if (user.opcode() == Opcode::kDot) {
    return user.operand(0) == &value && user.operand(1) != &value;
  }
  if (user.opcode() != Opcode::kFusion) return false;
  int64_t uses = 0;
  for (const Instruction* operand : user.operands()) uses += operand == &value;
  if (uses != 1) return false;
  for (const auto& inst : user.called_computations().at(0)->instructions()) {
    if (inst->opcode() != Opcode::kDot) continue;
    const Instruction* lhs = inst->operand(0);
    return lhs->opcode() == Opcode::kParameter &&
           user.operand(lhs->attr<hlo::ParameterAttrs>().number) == &value;
  }
  return false;
}

// Output elements x contraction size: a dot's contracting dimensions, a convolution's kernel
// elements per output feature (kh x kw x cin / groups).
int64_t UsefulMacs(const Instruction& contraction) {
  int64_t per_output = 1;
  if (contraction.opcode() == Opcode::kDot) {
    for (int64_t d : contraction.attr<hlo::DotAttrs>().dnums.lhs_contracting) {
      per_output *= contraction.operand(0)->shape().dims[static_cast<size_t>(d)];
    }
  } else {
    const hlo::Shape& kernel = contraction.operand(1)->shape();
    int64_t out_features = kernel.dims[static_cast<size_t>(
        contraction.attr<hlo::ConvolutionAttrs>().dnums.kernel_output_feature)];
    per_output = out_features > 0 ? kernel.ElementCount() / out_features : 0;
  }
  return contraction.shape().ElementCount() * per_output;
}

// `inst` with every local address (isa.def's Local fields) moved by the op's offsets.
systolic::Instruction Relocated(systolic::Instruction inst, uint64_t ub_offset,
                                uint64_t acc_offset) {
  if (ub_offset == 0 && acc_offset == 0) return inst;
  const InstrInfo& info = GetInstrInfo(inst.opcode);
  for (size_t f = 0; f < info.fields.size(); ++f) {
    if (info.fields[f].kind != FieldKind::kLocal) continue;
    inst.fields[f] += (inst.fields[f] & kAccumulatorBit) ? acc_offset : ub_offset;
  }
  return inst;
}

int64_t StashBytes(const Instruction& value) {
  return AlignUp(value.shape().ElementCount() * hlo::ByteSize(value.shape().type),
                 kLocalAlignment);
}

// HLO lists a user once per use; the stash counts the ops that read it.
int64_t DistinctUsers(const Instruction& value) {
  const auto& users = value.users();
  return static_cast<int64_t>(std::set<const Instruction*>(users.begin(), users.end()).size());
}

}  // namespace

int64_t SegmentBuilder::ResidentBytes() const {
  return config_.ub_bytes / 8 / kLocalAlignment * kLocalAlignment;
}
int64_t SegmentBuilder::UsableUb() const { return config_.ub_bytes - 2 * ResidentBytes(); }
int64_t SegmentBuilder::HalfUb() const {
  return UsableUb() / 2 / kLocalAlignment * kLocalAlignment;
}
int64_t SegmentBuilder::HalfAcc() const {
  return config_.acc_bytes / 2 / kLocalAlignment * kLocalAlignment;
}

ArchConfig SegmentBuilder::HalfConfig() const {
  ArchConfig half = config_;
  half.ub_bytes = HalfUb();
  half.acc_bytes = HalfAcc();
  return half;
}

ArchConfig SegmentBuilder::FullConfig() const {
  ArchConfig full = config_;
  full.ub_bytes = UsableUb();
  return full;
}

uint64_t SegmentBuilder::NextHalfUbOffset() const {
  return static_cast<uint64_t>(static_cast<int64_t>(ops_.size()) % 2 * HalfUb());
}

LocalOperands SegmentBuilder::PlanLocal(const RowProgram& program, const ExternalIndex& external,
                                        const std::vector<const Instruction*>& operands,
                                        const Instruction& value, bool is_root) const {
  LocalOperands local;
  if (!program.contraction) {
    // An elementwise computation reads stashed operands in place (its tiles are whole rows).
    for (size_t i = 0; i < operands.size(); ++i) {
      auto stashed = stash_.find(operands[i]);
      if (stashed != stash_.end()) {
        local.operand_rows[static_cast<int64_t>(i)] = stashed->second.local;
      }
    }
    return local;
  }
  const Instruction& contraction = *program.contraction;
  const bool is_conv = contraction.opcode() == Opcode::kConvolution;
  std::optional<int64_t> lhs = external(contraction.operand(0));
  std::optional<int64_t> rhs = external(contraction.operand(1));
  if (resident_ && lhs && rhs && operands[static_cast<size_t>(*lhs)] == resident_->value &&
      operands[static_cast<size_t>(*rhs)] != resident_->value) {
    // A dot reads column blocks, a convolution its own padded layout.
    if (!is_conv && !resident_->padded) local.lhs = resident_->local;
    if (is_conv && resident_->padded &&
        resident_->padded == ResidentConvInput(contraction, config_)) {
      local.lhs = resident_->local;
      local.lhs_padded = resident_->padded;
    }
  }
  if (is_root || !value.shape().IsArray() || value.shape().rank() == 0) return local;
  if (!is_conv) local.result_rows = StashSlot(value);
  if (local.result_rows || !stash_.empty()) return local;  // the resident area is the stash's
  const auto& users = value.users();
  const uint64_t region =
      static_cast<uint64_t>(UsableUb() + static_cast<int64_t>(ops_.size()) % 2 * ResidentBytes());
  if (is_conv) {
    // The next convolution's input, left in its padded layout (one column tile of whole pixels).
    if (users.size() != 1 || users[0]->opcode() != Opcode::kConvolution ||
        users[0]->operand(0) != &value || users[0]->operand(1) == &value ||
        value.shape().dims.back() > config_.array_cols ||
        !ResidentConvInput(contraction, config_)) {
      return local;
    }
    std::optional<PaddedActivation> layout = ResidentConvInput(*users[0], config_);
    if (layout && layout->bytes() <= ResidentBytes()) {
      local.result = region;
      local.result_padded = layout;
    }
    return local;
  }
  if (contraction.opcode() != Opcode::kDot) return local;
  const int64_t columns = value.shape().dims.back();
  // The copy is in blocks of this op's tn, which must be the next dot's tk.
  const bool same_blocks =
      std::min(columns, config_.array_cols) == std::min(columns, config_.array_rows);
  if (users.size() == 1 && same_blocks && TakesAsDotLhs(*users[0], value) &&
      value.shape().ElementCount() * hlo::ByteSize(value.shape().type) <= ResidentBytes()) {
    local.result = region;
  }
  return local;
}

// A dot's result is stashed when every user is elementwise (row_program.h: a loop fusion or
// an elementwise op, no contraction), no resident copy lives, and it fits what is left.
std::optional<uint64_t> SegmentBuilder::StashSlot(const Instruction& value) const {
  if (resident_ || value.users().empty()) return std::nullopt;
  for (const Instruction* user : value.users()) {
    const hlo::OpClass cls = hlo::OpcodeClass(user->opcode());
    const bool elementwise = cls == hlo::OpClass::kElementwiseUnary ||
                             cls == hlo::OpClass::kElementwiseBinary ||
                             cls == hlo::OpClass::kElementwiseTernary;
    bool row_fusion = user->opcode() == Opcode::kFusion;
    for (const hlo::Computation* called : user->called_computations()) {
      for (const auto& inst : called->instructions()) {
        if (inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution) {
          row_fusion = false;
        }
      }
    }
    if (!elementwise && !row_fusion) return std::nullopt;
  }
  const int64_t bytes = StashBytes(value);
  if (stash_used_ + bytes > 2 * ResidentBytes()) return std::nullopt;
  // Worth it only where DRAM is the bottleneck: the copy is a vmov per row of each column tile
  // (array.cols wide) on the vector unit; it saves the store and every user's load.
  const hlo::Shape& shape = value.shape();
  const int64_t columns = shape.rank() > 0 ? shape.dims.back() : 1;
  const int64_t rows = columns > 0 ? shape.ElementCount() / columns : 0;
  const int64_t tile = std::max<int64_t>(1, std::min(columns, config_.array_cols));
  const double copy_cycles =
      static_cast<double>(rows * ((columns + tile - 1) / tile)) *
      static_cast<double>((tile + config_.vector_lanes - 1) / config_.vector_lanes +
                          config_.vector_pipeline_depth);
  const double dram_cycles = static_cast<double>(bytes) *
                             static_cast<double>(1 + DistinctUsers(value)) /
                             (config_.dram_bandwidth_gbps * 1000 / config_.clock_mhz);
  if (copy_cycles >= dram_cycles) return std::nullopt;
  return static_cast<uint64_t>(UsableUb() + stash_used_);
}

void SegmentBuilder::AppendOp(const ProgramBuilder& op, const std::string& name, bool half,
                              const std::vector<DramBuffer>& writes,
                              const std::vector<const Instruction*>& contractions,
                              const LocalOperands& local, const Instruction& value) {
  for (const Instruction* contraction : contractions) useful_macs_ += UsefulMacs(*contraction);
  const int64_t index = static_cast<int64_t>(ops_.size());
  if (resident_) {
    if (local.lhs) {  // this op read the copy: nobody reads the value from DRAM
      const uint64_t dram = resident_->dram.address;
      builder_.EraseStores(resident_->begin, resident_->end, dram,
                           dram + static_cast<uint64_t>(resident_->dram.bytes()));
      previous_writes_.clear();
    }
    builder_.Wait(Unit::kVector, Unit::kMxu, 1);
  }
  const size_t begin = builder_.program().instructions.size();
  WaitOpsUpTo(half && previous_half_ ? index - 2 : index - 1);
  const size_t region = static_cast<size_t>(index % 2);
  if (local.result_padded && zero_halo_[region] != local.result_padded) {
    // An earlier op may still read the region, but only if one wrote it: a region's first
    // use in the segment zeroes its halo while the ops before it run (the first conv -> conv
    // handoff no longer waits for the previous layer to finish before its kernel loads).
    if (region_written_[region]) WaitOpsUpTo(index - 1);
    ZeroHalo(*local.result_padded, *local.result);
    zero_halo_[region] = local.result_padded;
  } else if (local.result && !local.result_padded) {
    zero_halo_[region].reset();  // column blocks overwrite the halo
  }
  if (local.result) region_written_[region] = true;
  const uint64_t parity = static_cast<uint64_t>(index % 2);
  ReplayInto(op, half ? parity * static_cast<uint64_t>(HalfUb()) : 0,
             half ? parity * static_cast<uint64_t>(HalfAcc()) : 0,
             [&](uint64_t load_begin, uint64_t load_end) {
               for (const DramBuffer& out : previous_writes_) {
                 uint64_t out_end = out.address + static_cast<uint64_t>(out.bytes());
                 if (load_begin < out_end && out.address < load_end) WaitOpsUpTo(index - 1);
               }
             });
  builder_.SignalOpDone();
  // Stashed operands this op read in place: once every user has, nobody reads the DRAM copy.
  std::set<uint64_t> read;
  for (const auto& [index, address] : local.operand_rows) read.insert(address);
  for (auto it = stash_.begin(); it != stash_.end();) {
    Stashed& stashed = it->second;
    if (!read.count(stashed.local) || --stashed.users_left > 0) {
      ++it;
      continue;
    }
    const uint64_t dram = stashed.dram.address;
    builder_.EraseStores(stashed.begin, stashed.end, dram,
                         dram + static_cast<uint64_t>(stashed.dram.bytes()));
    it = stash_.erase(it);
  }
  if (stash_.empty()) stash_used_ = 0;
  if (local.result_rows) {
    stash_[&value] = Stashed{*local.result_rows, DistinctUsers(value), begin,
                             builder_.program().instructions.size(), writes.at(0)};
    stash_used_ += StashBytes(value);
    zero_halo_[0].reset();  // the stash overwrites whatever halos the resident area held
    zero_halo_[1].reset();
    region_written_[0] = region_written_[1] = true;
  }
  resident_.reset();
  if (local.result) {
    builder_.Signal(Unit::kVector, Unit::kMxu, 1);
    resident_ = Resident{&value, *local.result, begin, builder_.program().instructions.size(),
                         writes.at(0), local.result_padded};
  }
  ops_.push_back(name);
  previous_half_ = half;
  previous_writes_ = writes;
}

// ConvZeroBytes of the consuming convolution covers one image's pad rows or pad columns.
void SegmentBuilder::ZeroHalo(const PaddedActivation& layout, uint64_t region) {
  ZeroPaddedHalo(builder_, layout, region, zeros_);
}

void SegmentBuilder::WaitOpsUpTo(int64_t op) {
  for (; ops_done_waited_ <= op; ++ops_done_waited_) builder_.WaitOpDone();
}

// The op was emitted assuming registers at their reset value (0): the segment's builder resets
// every configuration register first (a cfg.set only where an earlier op left a nonzero value:
// strides, a requantization's mode and scales, an iota's extents), then replays the op's
// instructions through its register cache.
// `before_load(begin, end)` is called before each dma.load with the DRAM bytes it may read:
// all of DRAM for a dma.gather or a load moved by a cfg.load-written load.dram_offset.
void SegmentBuilder::ReplayInto(const ProgramBuilder& op, uint64_t ub_offset,
                                uint64_t acc_offset,
                                const std::function<void(uint64_t, uint64_t)>& before_load) {
  int64_t row_stride = 0, plane_stride = 0;  // load.dram_* registers, as the op sets them
  bool dynamic = false;  // load.dram_offset written by cfg.load: a load may read anywhere
  for (ConfigRegister reg : AllConfigRegisters()) builder_.SetRegister(reg, 0);
  for (const systolic::Instruction& i : op.program().instructions) {
    if (i.opcode == systolic::Opcode::kCfgSet) {
      auto reg = static_cast<ConfigRegister>(i.get(CfgSetField::reg));
      auto value = static_cast<int64_t>(i.get(CfgSetField::value));
      if (reg == ConfigRegister::kLoadDramRowStride) row_stride = value;
      if (reg == ConfigRegister::kLoadDramPlaneStride) plane_stride = value;
      if (reg == ConfigRegister::kLoadDramOffset) dynamic = value != 0;
      builder_.SetRegister(reg, value);
      continue;
    }
    if (i.opcode == systolic::Opcode::kCfgLoad) {
      const systolic::Instruction moved = Relocated(i, ub_offset, acc_offset);
      const auto reg = static_cast<ConfigRegister>(moved.get(CfgLoadField::reg));
      if (reg == ConfigRegister::kLoadDramOffset) dynamic = true;
      builder_.LoadRegister(reg, moved.get(CfgLoadField::src));
      continue;
    }
    if (i.opcode == systolic::Opcode::kDmaGather ||
        (dynamic && i.opcode == systolic::Opcode::kDmaLoad)) {
      before_load(0, std::numeric_limits<uint64_t>::max());
    } else if (i.opcode == systolic::Opcode::kDmaLoad) {
      // isa.def: a zero stride means packed.
      const auto row_bytes = static_cast<int64_t>(i.get(DmaLoadField::row_bytes));
      const auto rows = static_cast<int64_t>(i.get(DmaLoadField::rows));
      const auto planes = static_cast<int64_t>(i.get(DmaLoadField::planes));
      const int64_t row = row_stride ? row_stride : row_bytes;
      const int64_t plane = plane_stride ? plane_stride : rows * row;
      const uint64_t begin = i.get(DmaLoadField::dram);
      const int64_t extent = (std::max<int64_t>(planes, 1) - 1) * plane +
                             (std::max<int64_t>(rows, 1) - 1) * row + row_bytes;
      before_load(begin, begin + static_cast<uint64_t>(extent));
    }
    builder_.Append(Relocated(i, ub_offset, acc_offset));
  }
}

AcceleratorStep SegmentBuilder::Finish() {
  if (resident_) builder_.Wait(Unit::kVector, Unit::kMxu, 1);
  WaitOpsUpTo(static_cast<int64_t>(ops_.size()) - 1);
  AcceleratorStep step;
  step.program = builder_.Take();
  HoistLoads(step.program, config_);
  step.ops = std::move(ops_);
  step.useful_macs = useful_macs_;
  ops_.clear();
  useful_macs_ = 0;
  ops_done_waited_ = 0;
  previous_half_ = false;
  previous_writes_.clear();
  resident_.reset();
  zero_halo_[0].reset();
  zero_halo_[1].reset();
  region_written_[0] = region_written_[1] = false;
  stash_.clear();
  stash_used_ = 0;
  return step;
}

}  // namespace systolic::lowering

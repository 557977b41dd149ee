// The static liveness pre-pass and the run-time occupancy counters (sim_liveness.h).
#include "simulator/sim_liveness.h"

#include <algorithm>
#include <array>
#include <map>

#include "simulator/isa/instruction_visitor.h"

namespace simulator {
namespace {

using systolic::ConfigRegister;
using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

// planes x rows x row_bytes at `local` (bit 25 selects the accumulators), strides in bytes.
struct Access {
  uint64_t local = 0;
  uint64_t row_bytes = 0, rows = 1, row_stride = 0;
  uint64_t planes = 1, plane_stride = 0;
};

// One memory's live definitions: disjoint byte ranges, each naming the instruction that wrote
// it. Reads update the writer's last reader (per definition, not per byte: reading any part of
// a result keeps all of it alive).
class LiveRanges {
 public:
  LiveRanges(std::vector<OccupancyDelta>& deltas, std::vector<int64_t>& last_reader,
             int64_t OccupancyDelta::*field)
      : deltas_(deltas), last_reader_(last_reader), field_(field) {}

  LiveRanges(const LiveRanges&) = delete;  // hint_ points into ranges_
  LiveRanges& operator=(const LiveRanges&) = delete;

  void Read(uint64_t begin, uint64_t end, size_t reader) {
    auto it = FirstEndingAfter(begin);
    for (; it != ranges_.end() && it->first < end; ++it) {
      last_reader_[it->second.writer] = static_cast<int64_t>(reader);
    }
    hint_ = it;
  }

  // Returns false when the memory holds more than kMaxLiveRanges ranges (analysis abandoned).
  bool Write(uint64_t begin, uint64_t end, size_t writer) {
    // The common case -- a result overwriting exactly one earlier definition (the same
    // accumulator rows, tile after tile) -- in one lookup. The general path below would split
    // nothing, release that one range, and put the same range back with the new writer.
    if (auto same = FirstEndingAfter(begin);
        same != ranges_.end() && same->first == begin && same->second.end == end) {
      Release(same->second.writer, static_cast<int64_t>(end - begin), writer);
      same->second.writer = writer;
      deltas_[writer].*field_ += static_cast<int64_t>(end - begin);
      hint_ = std::next(same);
      return ranges_.size() <= kMaxLiveRanges;
    }
    Split(begin);
    Split(end);
    auto it = ranges_.lower_bound(begin);
    while (it != ranges_.end() && it->first < end) {
      Release(it->second.writer, static_cast<int64_t>(it->second.end - it->first), writer);
      it = ranges_.erase(it);
    }
    hint_ = std::next(ranges_.emplace(begin, Range{end, writer}).first);  // the erased are gone
    deltas_[writer].*field_ += static_cast<int64_t>(end - begin);
    return ranges_.size() <= kMaxLiveRanges;
  }

  // End of the program: what was read dies at its last reader; the rest stays live.
  void Finish() {
    for (const auto& [begin, range] : ranges_) {
      const int64_t reader = last_reader_[range.writer];
      if (reader >= 0) deltas_[static_cast<size_t>(reader)].*field_ -= static_cast<int64_t>(range.end - begin);
    }
  }

 private:
  struct Range {
    uint64_t end;
    size_t writer;
  };
  // Bytes of `writer`'s definition overwritten by `overwriter`: they die at their last reader so
  // far, or at the overwriter if nobody read them.
  void Release(size_t writer, int64_t bytes, size_t overwriter) {
    const int64_t reader = last_reader_[writer];
    deltas_[reader >= 0 ? static_cast<size_t>(reader) : overwriter].*field_ -= bytes;
  }
  // The first range that ends after `at`: the one holding byte `at`, or else the next one. The
  // runs of an access, and successive accesses, mostly move forward through memory, so the search
  // starts where the previous one stopped (hint_) when every range before the hint ends at or
  // before `at` -- which makes walking forward from it exact -- and a few steps find the answer.
  std::map<uint64_t, Range>::iterator FirstEndingAfter(uint64_t at) {
    auto it = hint_;
    if (it == ranges_.begin() || std::prev(it)->second.end <= at) {
      for (int steps = 0; steps < 4; ++steps, ++it) {
        if (it == ranges_.end() || it->second.end > at) return it;
      }
    }
    it = ranges_.upper_bound(at);
    if (it != ranges_.begin() && std::prev(it)->second.end > at) --it;
    return it;
  }

  // Makes `at` a range boundary.
  void Split(uint64_t at) {
    auto it = ranges_.upper_bound(at);
    if (it == ranges_.begin()) return;
    --it;
    if (it->first < at && it->second.end > at) {
      ranges_.emplace(at, Range{it->second.end, it->second.writer});
      it->second.end = at;
    }
  }

  std::map<uint64_t, Range> ranges_;  // begin -> range
  // Where the last Read or Write stopped: any valid iterator of ranges_ (never an erased one).
  std::map<uint64_t, Range>::iterator hint_ = ranges_.end();
  std::vector<OccupancyDelta>& deltas_;
  std::vector<int64_t>& last_reader_;
  int64_t OccupancyDelta::*field_;
};

// Walks the program, turning each instruction into the accesses the units will make: one
// handler per row of isa.def (InstructionVisitor).
class Planner final : public systolic::InstructionVisitor<void> {
 public:
  Planner(const systolic::Program& program, const systolic::ArchConfig& config)
      : program_(program), config_(config) {
    plan_.at_completion.resize(program.instructions.size());
    last_reader_.assign(program.instructions.size(), -1);
  }

  LivenessPlan Run() {
    for (size_t i = 0; i < program_.instructions.size() && plan_.tracked; ++i) {
      const Instruction& inst = program_.instructions[i];
      if (inst.opcode == Opcode::kHalt) break;
      index_ = i;
      Visit(inst);
    }
    if (!plan_.tracked) return LivenessPlan{false, {}};
    ub_.Finish();
    acc_.Finish();
    return std::move(plan_);
  }

 private:
  uint64_t Reg(ConfigRegister reg) const { return registers_[static_cast<size_t>(reg)]; }
  static uint64_t Or(uint64_t stride, uint64_t packed) { return stride != 0 ? stride : packed; }
  static bool IsDtype(uint64_t raw) { return raw < systolic::DtypeSymbols().size(); }
  static uint64_t Bytes(uint64_t elements, uint64_t raw_dtype) {
    return elements * static_cast<uint64_t>(systolic::DtypeBytes(static_cast<Dtype>(raw_dtype)));
  }
  // A contiguous vector operand.
  static Access Flat(uint64_t local, uint64_t bytes) { return Access{local, bytes, 1, bytes}; }

  // Calls `fn(begin, end)` for each contiguous run of the access, clipped to its memory.
  template <class Fn>
  void ForEachRun(const Access& a, Fn fn) const {
    if (a.row_bytes == 0 || a.rows == 0 || a.planes == 0) return;
    const bool to_acc = (a.local & systolic::kAccumulatorBit) != 0;
    const auto capacity = static_cast<uint64_t>(to_acc ? config_.acc_bytes : config_.ub_bytes);
    const uint64_t base = a.local & (systolic::kAccumulatorBit - 1);
    auto emit = [&](uint64_t begin, uint64_t end) {
      end = std::min(end, capacity);
      if (begin < end) fn(begin, end);
    };
    const bool packed = a.row_stride == a.row_bytes && a.plane_stride == a.rows * a.row_bytes;
    if (packed || (a.rows == 1 && a.planes == 1)) {
      return emit(base, base + a.row_bytes * a.rows * a.planes);
    }
    if (a.rows * a.planes > static_cast<uint64_t>(kMaxRunsPerAccess)) {  // bounding span
      const uint64_t last = (a.planes - 1) * a.plane_stride + (a.rows - 1) * a.row_stride;
      return emit(base, base + last + a.row_bytes);
    }
    for (uint64_t p = 0; p < a.planes; ++p) {
      for (uint64_t r = 0; r < a.rows; ++r) {
        const uint64_t begin = base + p * a.plane_stride + r * a.row_stride;
        emit(begin, begin + a.row_bytes);
      }
    }
  }

  LiveRanges& Memory(const Access& a) {
    return (a.local & systolic::kAccumulatorBit) != 0 ? acc_ : ub_;
  }
  void Read(size_t i, const Access& a) {
    ForEachRun(a, [&](uint64_t b, uint64_t e) { Memory(a).Read(b, e, i); });
  }
  void Write(size_t i, const Access& a) {
    ForEachRun(a, [&](uint64_t b, uint64_t e) {
      if (!Memory(a).Write(b, e, i)) plan_.tracked = false;
    });
  }

  // A field of a vector instruction whose layout it shares with others (the Field enum of the
  // first instruction of its family), read without the opcode check of Instruction::get.
  template <class F>
  static uint64_t Field(const Instruction& inst, F f) {
    return inst.fields[static_cast<size_t>(f)];
  }
  // What an mxu.matmul or mxu.conv reads and where it writes; `valid` is false when the
  // weights tile is missing or the window is malformed (the instruction then touches nothing).
  struct MxuCompute {
    bool valid = false;
    Access input;
    uint64_t dst = 0, buf = 0, rows = 0, accumulate = 0;
  };

  // The reads and writes of each instruction of isa.def (of index_).
  void OnNop(const Instruction&) override {}  // no data
  void OnHalt(const Instruction&) override {}
  void OnSemSignal(const Instruction&) override {}
  void OnSemWait(const Instruction&) override {}
  void OnCfgSet(const Instruction& inst) override {
    const uint64_t reg = inst.get(systolic::CfgSetField::reg);
    if (reg < registers_.size()) registers_[reg] = inst.get(systolic::CfgSetField::value);
  }
  // The register's value is not known before the run; no register the plan reads (the local
  // strides) is loaded by the lowering, and a loaded one reads as "packed" here.
  void OnCfgLoad(const Instruction& inst) override {
    Read(index_, Access{inst.get(systolic::CfgLoadField::src), 4});
    const uint64_t reg = inst.get(systolic::CfgLoadField::reg);
    if (reg < registers_.size()) registers_[reg] = 0;
  }
  // Read DRAM bytes: nothing local.
  void OnCtrlTest(const Instruction&) override {}
  void OnCtrlIndex(const Instruction&) override {}
  void OnDmaLoad(const Instruction& inst) override { VisitDma(index_, inst); }
  void OnDmaStore(const Instruction& inst) override { VisitDma(index_, inst); }
  void OnDmaGather(const Instruction& inst) override {
    using F = systolic::DmaGatherField;
    const uint64_t rows = inst.get(F::rows), row_bytes = inst.get(F::row_bytes);
    Read(index_, Access{inst.get(F::index), rows * 4});
    Write(index_, Access{inst.get(F::local), row_bytes, rows,
                         Or(Reg(ConfigRegister::kLoadLocalRowStride), row_bytes)});
  }
  void OnDmaScatter(const Instruction& inst) override {
    using F = systolic::DmaScatterField;
    const uint64_t rows = inst.get(F::rows), row_bytes = inst.get(F::row_bytes);
    Read(index_, Access{inst.get(F::index), rows * 4});
    Read(index_, Access{inst.get(F::local), row_bytes, rows,
                        Or(Reg(ConfigRegister::kStoreLocalRowStride), row_bytes)});
  }
  void OnMxuLoadWeights(const Instruction& inst) override { VisitLoadWeights(index_, inst); }
  void OnMxuMatmul(const Instruction& inst) override {
    VisitMxuCompute(index_, MatmulAccess(inst));
  }
  void OnMxuConv(const Instruction& inst) override { VisitMxuCompute(index_, ConvAccess(inst)); }
  void OnVAdd(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVSub(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVMul(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVMax(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVMin(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVCmp(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVShl(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVShra(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVShrl(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVAnd(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVOr(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVXor(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVDiv(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVRem(const Instruction& inst) override { VisitVectorBinary(index_, inst); }
  void OnVSel(const Instruction& inst) override { VisitSelect(index_, inst); }
  void OnVMov(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVExp(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVRecip(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVRsqrt(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVTanh(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVSin(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVCos(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVLog(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVLog1p(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVExpm1(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVLogistic(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVErf(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVFloor(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVCeil(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVRound(const Instruction& inst) override { VisitVectorUnary(index_, inst); }
  void OnVFill(const Instruction& inst) override { VisitFill(index_, inst); }
  void OnVCvt(const Instruction& inst) override { VisitConvert(index_, inst); }
  void OnVRequant(const Instruction& inst) override { VisitConvert(index_, inst); }
  void OnVRedSum(const Instruction& inst) override { VisitReduce(index_, inst); }
  void OnVRedMax(const Instruction& inst) override { VisitReduce(index_, inst); }
  void OnVBcast(const Instruction& inst) override { VisitBroadcast(index_, inst); }
  void OnVBitonic(const Instruction& inst) override {
    using F = systolic::VBitonicField;
    const uint64_t count = Field(inst, F::count), dtype = Field(inst, F::dtype);
    if (!IsDtype(dtype)) return;
    Read(index_, Flat(Field(inst, F::keys), Bytes(count, dtype)));
    Write(index_, Flat(Field(inst, F::keys), Bytes(count, dtype)));
    if (Field(inst, F::has_payload) != 0) {
      const auto s32 = static_cast<uint64_t>(systolic::Dtype::kS32);
      Read(index_, Flat(Field(inst, F::payload), Bytes(count, s32)));
      Write(index_, Flat(Field(inst, F::payload), Bytes(count, s32)));
    }
  }
  void OnVTrans(const Instruction& inst) override {
    using F = systolic::VTransField;
    const uint64_t count = Field(inst, F::rows) * Field(inst, F::cols);
    const uint64_t dtype = Field(inst, F::dtype);
    if (!IsDtype(dtype)) return;
    Read(index_, Flat(Field(inst, F::src), Bytes(count, dtype)));
    Write(index_, Flat(Field(inst, F::dst), Bytes(count, dtype)));
  }
  void OnVIota(const Instruction& inst) override { VisitIota(index_, inst); }

  void VisitDma(size_t i, const Instruction& inst);
  void VisitLoadWeights(size_t i, const Instruction& inst);
  MxuCompute MatmulAccess(const Instruction& inst) const;
  MxuCompute ConvAccess(const Instruction& inst) const;
  void VisitMxuCompute(size_t i, const MxuCompute& compute);
  void VisitVectorBinary(size_t i, const Instruction& inst);
  void VisitSelect(size_t i, const Instruction& inst);
  void VisitVectorUnary(size_t i, const Instruction& inst);
  void VisitFill(size_t i, const Instruction& inst);
  void VisitIota(size_t i, const Instruction& inst);
  void VisitConvert(size_t i, const Instruction& inst);
  void VisitReduce(size_t i, const Instruction& inst);
  void VisitBroadcast(size_t i, const Instruction& inst);

  const systolic::Program& program_;
  const systolic::ArchConfig& config_;
  size_t index_ = 0;  // the instruction being visited
  LivenessPlan plan_;
  std::vector<int64_t> last_reader_;  // per writing instruction
  LiveRanges ub_{plan_.at_completion, last_reader_, &OccupancyDelta::ub};
  LiveRanges acc_{plan_.at_completion, last_reader_, &OccupancyDelta::acc};
  std::array<uint64_t, 32> registers_{};
  struct Tile {
    bool loaded = false;
    uint64_t k = 0, n = 0, dtype = 0;
  };
  std::array<Tile, 2> tiles_{};
};

void Planner::VisitDma(size_t i, const Instruction& inst) {
  const bool load = inst.opcode == Opcode::kDmaLoad;
  Access a;
  if (load) {
    using F = systolic::DmaLoadField;
    a.local = inst.get(F::local);
    a.row_bytes = inst.get(F::row_bytes), a.rows = inst.get(F::rows), a.planes = inst.get(F::planes);
    a.row_stride = Or(Reg(ConfigRegister::kLoadLocalRowStride), a.row_bytes);
    a.plane_stride = Or(Reg(ConfigRegister::kLoadLocalPlaneStride), a.rows * a.row_stride);
    return Write(i, a);
  }
  using F = systolic::DmaStoreField;
  a.local = inst.get(F::local);
  a.row_bytes = inst.get(F::row_bytes), a.rows = inst.get(F::rows), a.planes = inst.get(F::planes);
  a.row_stride = Or(Reg(ConfigRegister::kStoreLocalRowStride), a.row_bytes);
  a.plane_stride = Or(Reg(ConfigRegister::kStoreLocalPlaneStride), a.rows * a.row_stride);
  Read(i, a);
}

void Planner::VisitLoadWeights(size_t i, const Instruction& inst) {
  using F = systolic::MxuLoadWeightsField;
  const uint64_t k = inst.get(F::k), n = inst.get(F::n), dtype = inst.get(F::dtype);
  if (!IsDtype(dtype)) return;
  const uint64_t row = Bytes(n, dtype);
  Read(i, Access{inst.get(F::src), row, k, Or(Reg(ConfigRegister::kMxuSrcRowStride), row)});
  tiles_[inst.get(F::buf) & 1] = Tile{true, k, n, dtype};
}

Planner::MxuCompute Planner::MatmulAccess(const Instruction& inst) const {
  using F = systolic::MxuMatmulField;
  MxuCompute c;
  c.dst = inst.get(F::dst), c.buf = inst.get(F::buf) & 1;
  c.rows = inst.get(F::m), c.accumulate = inst.get(F::acc);
  const Tile& tile = tiles_[c.buf];
  if (!tile.loaded) return c;
  const uint64_t row = Bytes(tile.k, tile.dtype);
  c.input = Access{inst.get(F::src), row, c.rows, Or(Reg(ConfigRegister::kMxuSrcRowStride), row)};
  c.valid = true;
  return c;
}

Planner::MxuCompute Planner::ConvAccess(const Instruction& inst) const {
  using F = systolic::MxuConvField;
  MxuCompute c;
  c.dst = inst.get(F::dst), c.buf = inst.get(F::buf) & 1;
  c.accumulate = inst.get(F::acc);
  const uint64_t in_h = inst.get(F::in_h), in_w = inst.get(F::in_w), kh = inst.get(F::kh),
                 kw = inst.get(F::kw), stride = inst.get(F::stride);
  const Tile& tile = tiles_[c.buf];
  if (!tile.loaded || kh < 1 || kw < 1 || stride < 1 || in_h < kh || in_w < kw ||
      tile.k % (kh * kw) != 0) {
    return c;
  }
  const uint64_t cin = tile.k / (kh * kw);
  const uint64_t out_h = (in_h - kh) / stride + 1, out_w = (in_w - kw) / stride + 1;
  c.rows = out_h * out_w;
  // The image rows and columns any window touches.
  c.input = Access{inst.get(F::src), Bytes(((out_w - 1) * stride + kw) * cin, tile.dtype),
                   (out_h - 1) * stride + kh,
                   Or(Reg(ConfigRegister::kMxuSrcRowStride), Bytes(in_w * cin, tile.dtype))};
  c.valid = true;
  return c;
}

void Planner::VisitMxuCompute(size_t i, const MxuCompute& c) {
  if (!c.valid) return;
  const Tile& tile = tiles_[c.buf];
  const uint64_t dst_stride = Reg(ConfigRegister::kMxuDstRowStride);
  const Access output{c.dst, tile.n * 4, c.rows, Or(dst_stride, tile.n * 4)};
  Read(i, c.input);
  if (c.accumulate != 0) Read(i, output);
  Write(i, output);
}

void Planner::VisitVectorBinary(size_t i, const Instruction& inst) {
  using F = systolic::VAddField;  // shared layout of the binary ops
  const uint64_t count = Field(inst, F::count), dtype = Field(inst, F::dtype);
  if (!IsDtype(dtype)) return;
  Read(i, Flat(Field(inst, F::a), Bytes(count, dtype)));
  Read(i, Flat(Field(inst, F::b), Bytes(count, dtype)));
  const uint64_t out = inst.opcode == Opcode::kVCmp ? count : Bytes(count, dtype);
  Write(i, Flat(Field(inst, F::dst), out));
}

void Planner::VisitSelect(size_t i, const Instruction& inst) {
  using F = systolic::VSelField;
  const uint64_t count = Field(inst, F::count), dtype = Field(inst, F::dtype);
  if (!IsDtype(dtype)) return;
  Read(i, Flat(Field(inst, F::mask), count));
  Read(i, Flat(Field(inst, F::src), Bytes(count, dtype)));
  Read(i, Flat(Field(inst, F::dst), Bytes(count, dtype)));
  Write(i, Flat(Field(inst, F::dst), Bytes(count, dtype)));
}

void Planner::VisitVectorUnary(size_t i, const Instruction& inst) {
  using F = systolic::VMovField;  // shared layout of the unary ops
  const uint64_t count = Field(inst, F::count), dtype = Field(inst, F::dtype);
  if (!IsDtype(dtype)) return;
  Read(i, Flat(Field(inst, F::src), Bytes(count, dtype)));
  Write(i, Flat(Field(inst, F::dst), Bytes(count, dtype)));
}

void Planner::VisitFill(size_t i, const Instruction& inst) {
  using F = systolic::VFillField;
  if (!IsDtype(Field(inst, F::dtype))) return;
  Write(i, Flat(Field(inst, F::dst), Bytes(Field(inst, F::count), Field(inst, F::dtype))));
}

void Planner::VisitIota(size_t i, const Instruction& inst) {
  using F = systolic::VIotaField;
  if (!IsDtype(Field(inst, F::dtype))) return;
  Write(i, Flat(Field(inst, F::dst), Bytes(Field(inst, F::count), Field(inst, F::dtype))));
}

void Planner::VisitConvert(size_t i, const Instruction& inst) {
  using F = systolic::VCvtField;  // vrequant shares the layout
  const uint64_t count = Field(inst, F::count);
  if (!IsDtype(Field(inst, F::src_type)) || !IsDtype(Field(inst, F::dst_type))) return;
  Read(i, Flat(Field(inst, F::src), Bytes(count, Field(inst, F::src_type))));
  Write(i, Flat(Field(inst, F::dst), Bytes(count, Field(inst, F::dst_type))));
}

void Planner::VisitReduce(size_t i, const Instruction& inst) {
  using F = systolic::VRedSumField;  // vredmax shares the layout
  const uint64_t rows = Field(inst, F::rows), cols = Field(inst, F::cols);
  const uint64_t dtype = Field(inst, F::dtype);
  if (!IsDtype(dtype)) return;
  Read(i, Flat(Field(inst, F::src), Bytes(rows * cols, dtype)));
  Write(i, Flat(Field(inst, F::dst), Bytes(rows, dtype)));
}

void Planner::VisitBroadcast(size_t i, const Instruction& inst) {
  using F = systolic::VBcastField;
  const uint64_t rows = Field(inst, F::rows), cols = Field(inst, F::cols);
  const uint64_t dtype = Field(inst, F::dtype);
  if (!IsDtype(dtype)) return;
  Read(i, Flat(Field(inst, F::src), Bytes(Field(inst, F::per_row) != 0 ? rows : cols, dtype)));
  Write(i, Flat(Field(inst, F::dst), Bytes(rows * cols, dtype)));
}

}  // namespace

LivenessPlan PlanLiveness(const systolic::Program& program, const systolic::ArchConfig& config) {
  return Planner(program, config).Run();
}

void OccupancyCounters::Completed(size_t index, int64_t end_cycle) {
  if (!tracked() || index >= plan_->at_completion.size()) return;
  const OccupancyDelta& delta = plan_->at_completion[index];
  if (delta.ub != 0 || delta.acc != 0) pending_.push(Pending{end_cycle, delta});
}

void OccupancyCounters::Advance(int64_t cycle, TraceSink* trace) {
  while (!pending_.empty() && pending_.top().cycle < cycle) {
    // Everything completing in one cycle is one sample.
    const int64_t at = pending_.top().cycle;
    const int64_t ub_before = ub_, acc_before = acc_;
    while (!pending_.empty() && pending_.top().cycle == at) {
      ub_ += pending_.top().delta.ub;
      acc_ += pending_.top().delta.acc;
      pending_.pop();
    }
    ub_peak_ = std::max(ub_peak_, ub_);
    acc_peak_ = std::max(acc_peak_, acc_);
    if (trace == nullptr) continue;
    if (ub_ != ub_before) trace->Counter("ub_bytes_live", at, static_cast<double>(ub_));
    if (acc_ != acc_before) trace->Counter("acc_bytes_live", at, static_cast<double>(acc_));
  }
}

}  // namespace simulator

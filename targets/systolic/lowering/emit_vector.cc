// Vector-unit emission of row programs (emit_vector.h).
#include "targets/systolic/lowering/emit_vector.h"

#include <algorithm>

#include "targets/systolic/lowering/scratchpad.h"

namespace systolic::lowering {
namespace {

constexpr int64_t kMaxCount = int64_t{1} << 19;  // well inside the 20-bit count fields
constexpr int64_t kMaxRowsCols = 65535;          // 16-bit rows / cols fields

int64_t Bytes(Dtype d) { return DtypeBytes(d); }

// Emits `inst` once per chunk of at most kMaxCount elements; `at` moves every local address
// field by `start` elements of its own element size.
class VectorEmitter {
 public:
  explicit VectorEmitter(ProgramBuilder& builder) : b_(builder) {}

  void Binary(Opcode op, uint64_t dst, uint64_t a, uint64_t bsrc, int64_t count, Dtype dtype) {
    int64_t s = Bytes(dtype);
    for (int64_t i = 0; i < count; i += kMaxCount) {
      Instruction inst = MakeInstruction(op);
      int64_t n = std::min(kMaxCount, count - i);
      inst.fields[0] = dst + static_cast<uint64_t>(i * s);
      inst.fields[1] = a + static_cast<uint64_t>(i * s);
      inst.fields[2] = bsrc + static_cast<uint64_t>(i * s);
      inst.fields[3] = static_cast<uint64_t>(n);
      inst.fields[4] = static_cast<uint64_t>(dtype);
      b_.Append(inst);
    }
  }
  void Compare(uint64_t dst, uint64_t a, uint64_t bsrc, int64_t count, Dtype dtype,
               CompareDirection cmp) {
    int64_t s = Bytes(dtype);
    for (int64_t i = 0; i < count; i += kMaxCount) {
      Instruction inst = MakeInstruction(Opcode::kVCmp);
      inst.set(VCmpField::dst, dst + static_cast<uint64_t>(i));  // pred: 1 byte each
      inst.set(VCmpField::a, a + static_cast<uint64_t>(i * s));
      inst.set(VCmpField::b, bsrc + static_cast<uint64_t>(i * s));
      inst.set(VCmpField::count, static_cast<uint64_t>(std::min(kMaxCount, count - i)));
      inst.set(VCmpField::dtype, static_cast<uint64_t>(dtype));
      inst.set(VCmpField::cmp, static_cast<uint64_t>(cmp));
      b_.Append(inst);
    }
  }
  void Select(uint64_t dst, uint64_t mask, uint64_t src, int64_t count, Dtype dtype) {
    int64_t s = Bytes(dtype);
    for (int64_t i = 0; i < count; i += kMaxCount) {
      Instruction inst = MakeInstruction(Opcode::kVSel);
      inst.set(VSelField::dst, dst + static_cast<uint64_t>(i * s));
      inst.set(VSelField::mask, mask + static_cast<uint64_t>(i));
      inst.set(VSelField::src, src + static_cast<uint64_t>(i * s));
      inst.set(VSelField::count, static_cast<uint64_t>(std::min(kMaxCount, count - i)));
      inst.set(VSelField::dtype, static_cast<uint64_t>(dtype));
      b_.Append(inst);
    }
  }
  void Unary(Opcode op, uint64_t dst, uint64_t src, int64_t count, Dtype dtype) {
    int64_t s = Bytes(dtype);
    for (int64_t i = 0; i < count; i += kMaxCount) {
      Instruction inst = MakeInstruction(op);
      inst.fields[0] = dst + static_cast<uint64_t>(i * s);
      inst.fields[1] = src + static_cast<uint64_t>(i * s);
      inst.fields[2] = static_cast<uint64_t>(std::min(kMaxCount, count - i));
      inst.fields[3] = static_cast<uint64_t>(dtype);
      b_.Append(inst);
    }
  }
  void Fill(uint64_t dst, int64_t count, Dtype dtype, uint32_t bits) {
    int64_t s = Bytes(dtype);
    uint32_t mask = s >= 4 ? 0xffffffffu : ((1u << (8 * s)) - 1);
    for (int64_t i = 0; i < count; i += kMaxCount) {
      Instruction inst = MakeInstruction(Opcode::kVFill);
      inst.set(VFillField::dst, dst + static_cast<uint64_t>(i * s));
      inst.set(VFillField::count, static_cast<uint64_t>(std::min(kMaxCount, count - i)));
      inst.set(VFillField::dtype, static_cast<uint64_t>(dtype));
      inst.set(VFillField::value, bits & mask);
      b_.Append(inst);
    }
  }
  void Convert(uint64_t dst, uint64_t src, int64_t count, Dtype from, Dtype to) {
    for (int64_t i = 0; i < count; i += kMaxCount) {
      Instruction inst = MakeInstruction(Opcode::kVCvt);
      inst.set(VCvtField::dst, dst + static_cast<uint64_t>(i * Bytes(to)));
      inst.set(VCvtField::src, src + static_cast<uint64_t>(i * Bytes(from)));
      inst.set(VCvtField::count, static_cast<uint64_t>(std::min(kMaxCount, count - i)));
      inst.set(VCvtField::src_type, static_cast<uint64_t>(from));
      inst.set(VCvtField::dst_type, static_cast<uint64_t>(to));
      b_.Append(inst);
    }
  }
  // One pass from the s32 accumulators to s8/u8 with `quant`'s registers (every one written,
  // so nothing of an earlier requantization carries over).
  void Requantize(uint64_t dst, uint64_t src, int64_t count, Dtype from, Dtype to,
                  const Requantization& quant) {
    b_.SetRegister(ConfigRegister::kQuantMode, static_cast<uint32_t>(quant.mode));
    b_.SetRegister(ConfigRegister::kQuantScale, quant.scale_bits);
    b_.SetRegister(ConfigRegister::kQuantPostScale, quant.post_scale_bits);
    b_.SetRegister(ConfigRegister::kQuantMultiplier, static_cast<uint32_t>(quant.multiplier));
    b_.SetRegister(ConfigRegister::kQuantShift, quant.shift);
    b_.SetRegister(ConfigRegister::kQuantZeroPoint, static_cast<uint32_t>(quant.zero_point));
    b_.SetRegister(ConfigRegister::kQuantRelu, quant.relu ? 1 : 0);
    for (int64_t i = 0; i < count; i += kMaxCount) {
      Instruction inst = MakeInstruction(Opcode::kVRequant);
      inst.set(VRequantField::dst, dst + static_cast<uint64_t>(i * Bytes(to)));
      inst.set(VRequantField::src, src + static_cast<uint64_t>(i * Bytes(from)));
      inst.set(VRequantField::count, static_cast<uint64_t>(std::min(kMaxCount, count - i)));
      inst.set(VRequantField::src_type, static_cast<uint64_t>(from));
      inst.set(VRequantField::dst_type, static_cast<uint64_t>(to));
      b_.Append(inst);
    }
  }
  void Broadcast(uint64_t dst, uint64_t src, int64_t rows, int64_t cols, Dtype dtype,
                 bool per_row) {
    Instruction inst = MakeInstruction(Opcode::kVBcast);
    inst.set(VBcastField::dst, dst);
    inst.set(VBcastField::src, src);
    inst.set(VBcastField::rows, static_cast<uint64_t>(rows));
    inst.set(VBcastField::cols, static_cast<uint64_t>(cols));
    inst.set(VBcastField::dtype, static_cast<uint64_t>(dtype));
    inst.set(VBcastField::per_row, per_row ? 1 : 0);
    b_.Append(inst);
  }
  // dst[i] = src[0] for i < count, as column vectors of at most 65535 rows.
  void Splat(uint64_t dst, uint64_t src, int64_t count, Dtype dtype) {
    for (int64_t i = 0; i < count; i += kMaxRowsCols) {
      Broadcast(dst + static_cast<uint64_t>(i * Bytes(dtype)), src,
                std::min(kMaxRowsCols, count - i), 1, dtype, false);
    }
  }
  void Reduce(Opcode op, uint64_t dst, uint64_t src, int64_t rows, int64_t cols, Dtype dtype) {
    Instruction inst = MakeInstruction(op);
    inst.fields[0] = dst;
    inst.fields[1] = src;
    inst.fields[2] = static_cast<uint64_t>(rows);
    inst.fields[3] = static_cast<uint64_t>(cols);
    inst.fields[4] = static_cast<uint64_t>(dtype);
    b_.Append(inst);
  }

 private:
  ProgramBuilder& b_;
};

uint64_t Address(const TileBuffers& buffers, uint64_t set_base, int value, uint64_t dot_acc) {
  int64_t offset = buffers.offset[static_cast<size_t>(value)];
  return offset < 0 ? dot_acc : set_base + static_cast<uint64_t>(offset);
}

// DRAM offset (bytes) and shape of a value's tile: `rows` rows of `row_bytes`, `stride` apart.
struct DramBlock {
  int64_t offset, stride, row_bytes, rows;
};
DramBlock BlockOf(RowClass cls, int64_t inner, const Tile& tile, int64_t bytes) {
  switch (cls) {
    case RowClass::kFull:
      return {(tile.row0 * inner + tile.col0) * bytes, inner * bytes, tile.cols * bytes, tile.rows};
    case RowClass::kRow: return {tile.row0 * bytes, tile.rows * bytes, tile.rows * bytes, 1};
    case RowClass::kCol: return {tile.col0 * bytes, tile.cols * bytes, tile.cols * bytes, 1};
    case RowClass::kScalar: return {0, bytes, bytes, 1};
  }
  return {0, 0, 0, 0};
}

}  // namespace

std::optional<TileBuffers> PlanTileBuffers(const RowProgram& program, int64_t rows, int64_t cols,
                                           int64_t capacity) {
  size_t n = program.values.size();
  std::vector<int64_t> last_use(n, -1);
  for (size_t i = 0; i < program.ops.size(); ++i) {
    for (int src : program.ops[i].srcs) last_use[static_cast<size_t>(src)] = static_cast<int64_t>(i);
  }
  last_use[static_cast<size_t>(program.root)] = static_cast<int64_t>(program.ops.size());
  ScratchpadAllocator allocator(capacity, kLocalAlignment);
  TileBuffers buffers;
  buffers.offset.assign(n, -1);
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const RowOp& op = program.ops[i];
    const RowValue& value = program.values[static_cast<size_t>(op.dst)];
    if (!value.in_accumulators) {
      int64_t bytes = ClassElements(value.cls, rows, cols) * DtypeBytes(value.dtype);
      std::optional<int64_t> offset = allocator.Allocate(bytes);
      if (!offset) return std::nullopt;
      buffers.offset[static_cast<size_t>(op.dst)] = *offset;
      if (last_use[static_cast<size_t>(op.dst)] < 0) allocator.Free(*offset);  // never read
    }
    for (int src : op.srcs) {
      size_t s = static_cast<size_t>(src);
      // Loads are all issued before the compute starts: keep them until their last use.
      if (last_use[s] == static_cast<int64_t>(i) && buffers.offset[s] >= 0) {
        allocator.Free(buffers.offset[s]);
        last_use[s] = -2;  // freed (an op may name the same source twice)
      }
    }
  }
  buffers.footprint = AlignUp(std::max<int64_t>(allocator.peak(), 1), kLocalAlignment);
  return buffers;
}

void EmitTileLoads(ProgramBuilder& builder, const RowProgram& program, const TileBuffers& buffers,
                   uint64_t set_base, const Tile& tile, const std::vector<uint64_t>& params,
                   const std::map<int64_t, uint64_t>& on_chip) {
  for (const RowOp& op : program.ops) {
    if (op.kind != RowOpKind::kLoad || on_chip.count(op.param)) continue;
    const RowValue& value = program.values[static_cast<size_t>(op.dst)];
    int64_t bytes = DtypeBytes(value.dtype);
    DramBlock block = BlockOf(value.cls, program.inner, tile, bytes);
    builder.Load(params[static_cast<size_t>(op.param)] + static_cast<uint64_t>(block.offset),
                 block.stride, Address(buffers, set_base, op.dst, 0), block.row_bytes,
                 block.row_bytes, block.rows);
  }
}

void EmitTileCompute(ProgramBuilder& builder, const RowProgram& program,
                     const TileBuffers& buffers, uint64_t set_base, const Tile& tile,
                     uint64_t dot_acc, const std::map<int64_t, uint64_t>& on_chip) {
  VectorEmitter v(builder);
  if (!on_chip.empty() && tile.cols != program.inner) {
    throw hlo::Error("internal: on-chip operands need whole-row tiles");
  }
  // A loaded value whose operand is on chip is read in place: its tile lies where it would in
  // DRAM, relative to the copy's start.
  std::map<int, uint64_t> in_place;
  for (const RowOp& op : program.ops) {
    if (op.kind != RowOpKind::kLoad) continue;
    auto copy = on_chip.find(op.param);
    if (copy == on_chip.end()) continue;
    const RowValue& value = program.values[static_cast<size_t>(op.dst)];
    in_place[op.dst] = copy->second + static_cast<uint64_t>(
        BlockOf(value.cls, program.inner, tile, DtypeBytes(value.dtype)).offset);
  }
  auto addr = [&](int value) {
    auto found = in_place.find(value);
    return found != in_place.end() ? found->second : Address(buffers, set_base, value, dot_acc);
  };
  for (const RowOp& op : program.ops) {
    const RowValue& out = program.values[static_cast<size_t>(op.dst)];
    int64_t count = ClassElements(out.cls, tile.rows, tile.cols);
    uint64_t dst = addr(op.dst);
    auto src = [&](size_t i) { return addr(op.srcs[i]); };
    auto src_dtype = [&](size_t i) { return program.values[static_cast<size_t>(op.srcs[i])].dtype; };
    switch (op.kind) {
      case RowOpKind::kLoad:
      case RowOpKind::kMatmul:
        break;  // the load unit's and the matrix unit's work
      case RowOpKind::kFill:
        v.Fill(dst, count, out.dtype, op.bits);
        break;
      case RowOpKind::kBroadcast: {
        RowClass from = program.values[static_cast<size_t>(op.srcs[0])].cls;
        if (from == RowClass::kScalar) {
          v.Splat(dst, src(0), count, out.dtype);
        } else {
          v.Broadcast(dst, src(0), tile.rows, tile.cols, out.dtype, from == RowClass::kRow);
        }
        break;
      }
      case RowOpKind::kBinary:
        v.Binary(op.opcode, dst, src(0), src(1), count, out.dtype);
        break;
      case RowOpKind::kDivide:
        v.Unary(Opcode::kVRecip, dst, src(1), count, out.dtype);
        v.Binary(Opcode::kVMul, dst, src(0), dst, count, out.dtype);
        break;
      case RowOpKind::kUnary:
        v.Unary(op.opcode, dst, src(0), count, out.dtype);
        break;
      case RowOpKind::kSqrt:
        v.Unary(Opcode::kVRsqrt, dst, src(0), count, out.dtype);
        v.Unary(Opcode::kVRecip, dst, dst, count, out.dtype);
        break;
      case RowOpKind::kNegate:
        v.Fill(dst, count, out.dtype, 0);
        v.Binary(Opcode::kVSub, dst, dst, src(0), count, out.dtype);
        break;
      case RowOpKind::kAbs:
        v.Fill(dst, count, out.dtype, 0);
        v.Binary(Opcode::kVSub, dst, dst, src(0), count, out.dtype);
        v.Binary(Opcode::kVMax, dst, dst, src(0), count, out.dtype);
        break;
      case RowOpKind::kClamp:
        v.Binary(Opcode::kVMax, dst, src(1), src(0), count, out.dtype);
        v.Binary(Opcode::kVMin, dst, dst, src(2), count, out.dtype);
        break;
      case RowOpKind::kConvert:
        v.Convert(dst, src(0), count, src_dtype(0), out.dtype);
        break;
      case RowOpKind::kRequantize:
        v.Requantize(dst, src(0), count, src_dtype(0), out.dtype, op.quant);
        break;
      case RowOpKind::kCompare:
        // pred operands are bytes holding 0 or 1 (false < true, as XLA orders them): the
        // vector unit compares them as u8, it has no pred compare.
        v.Compare(dst, src(0), src(1), count,
                  src_dtype(0) == Dtype::kPred ? Dtype::kU8 : src_dtype(0), op.compare);
        break;
      case RowOpKind::kSelect:
        v.Unary(Opcode::kVMov, dst, src(2), count, out.dtype);
        v.Select(dst, src(0), src(1), count, out.dtype);
        break;
      case RowOpKind::kReduce:
        // pred: a max of the 0/1 bytes as u8 (an `or`; row_program.cc negates around it for
        // an `and`).
        v.Reduce(op.opcode, dst, src(0), tile.rows, tile.cols,
                 out.dtype == Dtype::kPred ? Dtype::kU8 : out.dtype);
        break;
      case RowOpKind::kReduceColumns: {
        // Row 0, then each further row combined in: increasing order, as the interpreter sums.
        const Dtype dtype = out.dtype == Dtype::kPred ? Dtype::kU8 : out.dtype;
        const uint64_t row_bytes = static_cast<uint64_t>(tile.cols * DtypeBytes(dtype));
        v.Unary(Opcode::kVMov, dst, src(0), tile.cols, dtype);
        for (int64_t r = 1; r < tile.rows; ++r) {
          v.Binary(op.opcode, dst, dst, src(0) + static_cast<uint64_t>(r) * row_bytes, tile.cols,
                   dtype);
        }
        break;
      }
      case RowOpKind::kPredicate:
        if (op.opcode == Opcode::kVCmp) {
          v.Compare(dst, src(0), src(1), count, Dtype::kU8, CompareDirection::kNe);
        } else {
          v.Binary(op.opcode, dst, src(0), src(1), count, Dtype::kU8);
        }
        break;
      case RowOpKind::kBitNot:
        v.Fill(dst, count, out.dtype, 0xffffffffu);
        v.Binary(Opcode::kVXor, dst, dst, src(0), count, out.dtype);
        break;
      case RowOpKind::kNot:
        v.Fill(dst, count, Dtype::kU8, 1);
        v.Binary(Opcode::kVSub, dst, dst, src(0), count, Dtype::kU8);
        break;
    }
  }
}

void EmitTileStore(ProgramBuilder& builder, const RowProgram& program, const TileBuffers& buffers,
                   uint64_t set_base, const Tile& tile, uint64_t result, uint64_t dot_acc) {
  const RowValue& root = program.values[static_cast<size_t>(program.root)];
  int64_t bytes = DtypeBytes(root.dtype);
  DramBlock block = BlockOf(root.cls, program.inner, tile, bytes);
  builder.Store(Address(buffers, set_base, program.root, dot_acc), block.row_bytes,
                result + static_cast<uint64_t>(block.offset), block.stride, block.row_bytes,
                block.rows);
}

void EmitTileCopyToLocal(ProgramBuilder& builder, const RowProgram& program,
                         const TileBuffers& buffers, uint64_t set_base, const Tile& tile,
                         uint64_t dot_acc, uint64_t dst) {
  const RowValue& root = program.values[static_cast<size_t>(program.root)];
  VectorEmitter v(builder);
  v.Unary(Opcode::kVMov, dst, Address(buffers, set_base, program.root, dot_acc),
          tile.rows * tile.cols, root.dtype);
}

void EmitTileCopyPiecesToLocal(ProgramBuilder& builder, const RowProgram& program,
                               const TileBuffers& buffers, uint64_t set_base, const Tile& tile,
                               uint64_t dot_acc, int64_t piece, uint64_t dst, int64_t dst_stride) {
  const RowValue& root = program.values[static_cast<size_t>(program.root)];
  const uint64_t src = Address(buffers, set_base, program.root, dot_acc);
  const int64_t bytes = DtypeBytes(root.dtype);
  VectorEmitter v(builder);
  for (int64_t done = 0, i = 0; done < tile.rows * tile.cols; done += piece, ++i) {
    v.Unary(Opcode::kVMov, dst + static_cast<uint64_t>(i * dst_stride),
            src + static_cast<uint64_t>(done * bytes),
            std::min(piece, tile.rows * tile.cols - done), root.dtype);
  }
}

std::optional<Dtype> RawDtype(int64_t bytes) {
  switch (bytes) {
    case 1: return Dtype::kU8;
    case 2: return Dtype::kBf16;
    case 4: return Dtype::kS32;
    default: return std::nullopt;
  }
}

void EmitBinary(ProgramBuilder& builder, Opcode op, uint64_t dst, uint64_t a, uint64_t b,
                int64_t count, Dtype dtype) {
  VectorEmitter(builder).Binary(op, dst, a, b, count, dtype);
}

void EmitConvert(ProgramBuilder& builder, uint64_t dst, uint64_t src, int64_t count, Dtype from,
                 Dtype to) {
  VectorEmitter(builder).Convert(dst, src, count, from, to);
}

void EmitBroadcastRows(ProgramBuilder& builder, uint64_t dst, uint64_t src, int64_t rows,
                       int64_t cols, Dtype dtype) {
  const auto row_bytes = static_cast<uint64_t>(cols * DtypeBytes(dtype));
  for (int64_t r = 0; r < rows; r += kMaxRowsCols) {
    VectorEmitter(builder).Broadcast(dst + static_cast<uint64_t>(r) * row_bytes, src,
                                     std::min(kMaxRowsCols, rows - r), cols, dtype,
                                     /*per_row=*/false);
  }
}

void EmitViota(ProgramBuilder& builder, uint64_t dst, int64_t count, Dtype dtype, int64_t start,
               int64_t inner, int64_t modulus) {
  builder.SetRegister(ConfigRegister::kIotaInner, inner);
  builder.SetRegister(ConfigRegister::kIotaModulus, modulus);
  Instruction inst = MakeInstruction(Opcode::kVIota);
  inst.set(VIotaField::dst, dst);
  inst.set(VIotaField::count, static_cast<uint64_t>(count));
  inst.set(VIotaField::dtype, static_cast<uint64_t>(dtype));
  inst.set(VIotaField::start, static_cast<uint64_t>(start));
  builder.Append(inst);
}

void EmitFill(ProgramBuilder& builder, uint64_t dst, int64_t count, Dtype dtype, uint32_t bits) {
  VectorEmitter(builder).Fill(dst, count, dtype, bits);
}

void EmitRequantize(ProgramBuilder& builder, uint64_t dst, uint64_t src, int64_t count,
                    Dtype from, Dtype to, const Requantization& quant) {
  VectorEmitter(builder).Requantize(dst, src, count, from, to, quant);
}

bool EmitRowFusion(ProgramBuilder& builder, const RowProgram& program, const ArchConfig& config,
                   const std::vector<uint64_t>& params, uint64_t result, std::string* why,
                   const std::map<int64_t, uint64_t>& on_chip) {
  const int64_t half = config.ub_bytes / 2;  // two buffer sets
  int64_t rows = std::min<int64_t>(program.outer, kMaxRowsCols);
  std::optional<TileBuffers> buffers;
  while (rows > 0 && !(buffers = PlanTileBuffers(program, rows, program.inner, half))) rows /= 2;
  if (!buffers) {
    if (why) {
      *why = "one row of " + std::to_string(program.inner) +
             " elements with its temporaries does not fit half of ub.bytes";
    }
    return false;
  }
  if (program.has_column_reduce && rows < program.outer) {
    if (why) *why = "column reduction over more rows than one tile holds";
    return false;
  }
  const int64_t tiles = (program.outer + rows - 1) / rows;
  for (int64_t t = 0; t < tiles; ++t) {
    Tile tile{t * rows, std::min(rows, program.outer - t * rows), 0, program.inner};
    uint64_t base = static_cast<uint64_t>((t % 2) * buffers->footprint);
    if (t >= 2) builder.Wait(Unit::kStore, Unit::kLoad);  // set t%2 was stored
    EmitTileLoads(builder, program, *buffers, base, tile, params, on_chip);
    builder.Signal(Unit::kLoad, Unit::kVector);
    builder.Wait(Unit::kLoad, Unit::kVector);
    EmitTileCompute(builder, program, *buffers, base, tile, 0, on_chip);
    builder.Signal(Unit::kVector, Unit::kStore);
    builder.Wait(Unit::kVector, Unit::kStore);
    EmitTileStore(builder, program, *buffers, base, tile, result, 0);
    if (t + 2 < tiles) builder.Signal(Unit::kStore, Unit::kLoad);
  }
  return true;
}

}  // namespace systolic::lowering

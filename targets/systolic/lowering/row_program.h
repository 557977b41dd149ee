// Row programs: the vector-unit form of an elementwise / row-reduction computation (a loop or
// input fusion, one unfused op, or the epilogue of a dot's or convolution's output fusion).
//
// The computation is viewed as a matrix of `outer` rows x `inner` columns (inner = the last
// dimension of its largest array, or the contraction's output features). Every value is one
// of four classes, which fixes how a tile of rows [r0, r0+rows) x columns [c0, c0+cols) of it
// is laid out, packed row-major, in the unified buffer:
//   kFull    outer x inner elements   (tile: rows x cols)
//   kRow     one element per row      (tile: rows)       e.g. a reduce over the last dimension
//   kCol     one element per column   (tile: cols)       e.g. a bias, a pooled channel
//   kScalar  one element              (tile: 1)
// Row-major linear order is what every op relies on, so reshape/bitcast/copy between values of
// equal element count are free (the same buffer).
//
// Reductions: over the last dimension (a row) anywhere; over every other dimension (a column)
// only when one tile holds all rows (EmitRowFusion checks), never in contraction epilogues.
//
// Guarantees of AnalyzeRows: it either returns a program whose every op the vector unit
// executes exactly as hlo/ir.h defines the HLO op (up to the documented rounding of divide and
// sqrt: a reciprocal (square root) and a multiply), or nullopt with the reason in `why` — the
// caller then runs the instruction on the host. Loads come first in `ops`, so a tile's loads can
// all be issued before its compute (double buffering).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "simulator/isa/isa.h"

namespace systolic::lowering {

enum class RowClass : uint8_t { kFull, kRow, kCol, kScalar };

enum class RowOpKind : uint8_t {
  kLoad,       // dst = tile of parameter `param` in dst's class
  kFill,       // dst[i] = bits (a scalar constant broadcast to dst's class)
  kBroadcast,  // dst = src broadcast: Row->Full (per row), Col->Full, Scalar->any
  kBinary,     // dst = a OP b; opcode is vadd/vsub/vmul/vmax/vmin
  kDivide,     // dst = a * (1 / b)
  kUnary,      // dst = OP(src); opcode is vexp/vtanh/vrsqrt/vmov
  kSqrt,       // dst = 1 / rsqrt(src)
  kNegate,     // dst = 0 - src
  kAbs,        // dst = max(src, 0 - src)
  kClamp,      // dst = min(max(x, lo), hi); srcs = {lo, x, hi}
  kConvert,    // dst = vcvt(src)
  kCompare,    // dst (pred) = a CMP b
  kSelect,     // dst = pred ? on_true : on_false; srcs = {pred, on_true, on_false}
  kReduce,     // dst (Row) = row sums / maxima of src (Full); opcode vredsum/vredmax
  kReduceColumns,  // dst (Col) = column sums / maxima of src (Full) over the tile's rows;
                   // opcode vadd/vmax, applied row after row (the tile must hold every row)
  kPredicate,  // pred logic on 0/1 bytes as u8: and = vmin, or = vmax, xor = vcmp ne
  kNot,        // dst = 1 - src (pred as u8)
  kMatmul,     // dst = the contraction's accumulators (emitted by emit_matmul / emit_conv)
  kRequantize,  // dst (s8/u8) = vrequant(src s32) with the registers of `quant`
  kBitNot,     // dst = src ^ all ones (integer not): vfill + vxor
};

// One vrequant's configuration registers (docs/isa.md `vrequant`): how a matched requantize
// idiom rescales its s32 source.
struct Requantization {
  enum class Mode : uint8_t { kFloat = 0, kFixedPointRound = 1, kFixedPointFloor = 2 };
  Mode mode = Mode::kFloat;
  uint32_t scale_bits = 0;       // kFloat: quant.scale (f32 bits)
  uint32_t post_scale_bits = 0;  // kFloat: quant.post_scale (f32 bits; 0: none)
  int32_t multiplier = 0;        // fixed point: quant.multiplier
  uint32_t shift = 0;            // fixed point: quant.shift
  int32_t zero_point = 0;        // quant.zero_point
  bool relu = false;             // quant.relu: the result is at least the zero point
};

struct RowValue {
  RowClass cls = RowClass::kFull;
  Dtype dtype = Dtype::kF32;
  bool in_accumulators = false;  // the contraction's result
};

struct RowOp {
  RowOpKind kind = RowOpKind::kLoad;
  int dst = -1;
  std::vector<int> srcs;
  Opcode opcode = Opcode::kNop;
  CompareDirection compare = CompareDirection::kEq;
  int64_t param = -1;  // kLoad: external operand index
  uint32_t bits = 0;   // kFill: the element's bit pattern
  Requantization quant;  // kRequantize
};

struct RowProgram {
  int64_t outer = 1, inner = 1;
  std::vector<RowValue> values;
  std::vector<RowOp> ops;
  int root = -1;
  // The dot or convolution of an output fusion, if any.
  const hlo::Instruction* contraction = nullptr;
  int contraction_value = -1;
  bool has_reduce = false;
  bool has_column_reduce = false;  // needs every row in one tile
  bool has_vector_work() const;  // anything besides loads and the matmul
};

// How an instruction outside the analyzed body maps to an external operand (a fusion parameter
// or an operand of an unfused op): its index, or nullopt when it belongs to the body.
using ExternalIndex = std::function<std::optional<int64_t>(const hlo::Instruction*)>;

// Where the analysis should read another instruction's value instead (nullptr: none). Used to
// analyze a producer and its consumer as one program: the consumer's parameter that stands for
// a dot's result is substituted by the dot (or by the root of the dot's output fusion).
using Substitution = std::function<const hlo::Instruction*(const hlo::Instruction*)>;

// Analyzes the computation rooted at `root`. `allow_dot` admits one dot or convolution
// (output fusions) whose operands are external. On failure, `*no_instruction` says whether an
// op has no vector-unit program at all (its opcode, element types or combiner: what
// native_ops.h answers) rather than one that does not fit this shape or context.
// `operand_value` (when given) names the instruction an external index stands for (the fused
// instruction's operand), so constants outside a fusion (a power's exponent) can be read.
using OperandValue = std::function<const hlo::Instruction*(int64_t)>;
std::optional<RowProgram> AnalyzeRows(const hlo::Instruction& root, const ExternalIndex& external,
                                      bool allow_dot, std::string* why,
                                      const Substitution& substitute = {},
                                      bool* no_instruction = nullptr,
                                      const OperandValue& operand_value = {});

std::optional<Dtype> IsaDtype(hlo::PrimitiveType type);
int64_t ClassElements(RowClass cls, int64_t rows, int64_t cols);

}  // namespace systolic::lowering

// AnalyzeRows (row_program.h): classifies each value of an elementwise / row-reduction
// computation into the four row classes and maps each HLO op to vector-unit ops.
#include "targets/systolic/lowering/row_program.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "hlo/literal.h"
#include "targets/systolic/lowering/requantize_pattern.h"
#include "targets/systolic/lowering/row_op_table.h"

namespace systolic::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;

// Thrown inside the analyzer; AnalyzeRows turns it into nullopt + reason.
struct Unsupported {
  std::string reason;
  bool no_instruction = false;  // the op itself has no vector-unit program (AnalyzeRows)
};

[[noreturn]] void Fail(std::string reason) { throw Unsupported{std::move(reason)}; }
[[noreturn]] void FailNoInstruction(std::string reason) {
  throw Unsupported{std::move(reason), true};
}

int64_t Count(const Instruction* inst) {
  if (!inst->shape().IsArray()) Fail(inst->name() + " is not an array");
  return inst->shape().ElementCount();
}

class Analyzer {
 public:
  Analyzer(const ExternalIndex& external, bool allow_dot, const Substitution& substitute,
           const OperandValue& operand_value)
      : external_(external),
        allow_dot_(allow_dot),
        substitute_(substitute),
        operand_value_(operand_value) {}

  RowProgram Run(const Instruction& root) {
    ChooseRowSpace(root);
    program_.root = Define(&root);
    std::stable_partition(program_.ops.begin(), program_.ops.end(),
                          [](const RowOp& op) { return op.kind == RowOpKind::kLoad; });
    return std::move(program_);
  }

 private:
  // outer x inner from the dot's result, else from the largest array reachable in the body.
  void ChooseRowSpace(const Instruction& root) {
    const Instruction* reference = nullptr;
    std::vector<const Instruction*> stack = {&root};
    std::map<const Instruction*, bool> seen;
    while (!stack.empty()) {
      const Instruction* inst = Resolve(stack.back());
      stack.pop_back();
      if (seen[inst]) continue;
      seen[inst] = true;
      if (!inst->shape().IsArray()) Fail(inst->name() + " is not an array");
      if (inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution) {
        reference = inst;
        break;
      }
      if (!reference || Count(inst) > Count(reference)) reference = inst;
      if (external_(inst)) continue;
      for (const Instruction* operand : inst->operands()) stack.push_back(operand);
    }
    const hlo::Shape& shape = reference->shape();
    program_.inner = shape.rank() == 0 ? 1 : shape.dims.back();
    if (program_.inner <= 0 || Count(reference) <= 0) Fail("empty arrays");
    program_.outer = Count(reference) / program_.inner;
    // The vector unit's rows and columns fields are 16 bits; a contraction's epilogue works on
    // the matrix unit's column tiles instead of whole rows.
    const bool contraction = reference->opcode() == Opcode::kDot ||
                             reference->opcode() == Opcode::kConvolution;
    if (program_.inner > 65535 && !contraction) Fail("rows longer than 65535 elements");
  }

  int64_t ClassCount(RowClass cls) const {
    return ClassElements(cls, program_.outer, program_.inner);
  }
  RowClass ClassByCount(const Instruction* inst) const {
    int64_t n = Count(inst);
    for (RowClass cls : {RowClass::kFull, RowClass::kRow, RowClass::kCol, RowClass::kScalar}) {
      if (ClassCount(cls) == n) return cls;
    }
    Fail(inst->name() + " (" + inst->shape().ToString(false) +
         ") is neither a row, a column nor the whole " + std::to_string(program_.outer) + "x" +
         std::to_string(program_.inner) + " matrix");
  }

  Dtype DtypeOf(const Instruction* inst) const {
    std::optional<Dtype> d = IsaDtype(inst->shape().type);
    if (!d) Fail("element type " + std::string(hlo::PrimitiveTypeName(inst->shape().type)));
    return *d;
  }

  int NewValue(RowClass cls, Dtype dtype, bool in_acc = false) {
    program_.values.push_back({cls, dtype, in_acc});
    return static_cast<int>(program_.values.size()) - 1;
  }
  int Emit(RowOp op) {
    program_.ops.push_back(std::move(op));
    return program_.ops.back().dst;
  }

  // The value of `inst` in class `cls` (external operands are loaded in whatever class the use
  // asks for; computed values must already have it).
  int Get(const Instruction* inst, RowClass cls) {
    if (std::optional<int64_t> index = external_(inst)) {
      if (Count(inst) != ClassCount(cls)) Fail("operand " + inst->name() + " does not fit its use");
      auto key = std::make_pair(*index, cls);
      if (auto it = loads_.find(key); it != loads_.end()) return it->second;
      RowOp op;
      op.kind = RowOpKind::kLoad;
      op.dst = NewValue(cls, DtypeOf(inst));
      op.param = *index;
      loads_[key] = op.dst;
      return Emit(op);
    }
    int value = Define(inst);
    // One element serves every role, and the whole matrix of a single row or column is that
    // row or column, element for element. A row and a column of the same length are not.
    const RowClass computed = program_.values[static_cast<size_t>(value)].cls;
    const bool same_elements =
        ClassCount(computed) == ClassCount(cls) &&
        (ClassCount(cls) == 1 || computed == RowClass::kFull || cls == RowClass::kFull);
    if (computed != cls && !same_elements) {
      Fail(inst->name() + " is used with a different row/column role than it was computed in");
    }
    return value;
  }

  // The class an elementwise result takes: that of its first computed operand.
  RowClass ElementwiseClass(const Instruction* inst) {
    for (const Instruction* operand : inst->operands()) {
      if (!external_(operand)) return program_.values[static_cast<size_t>(Define(operand))].cls;
    }
    return ClassByCount(inst);
  }

  // The instruction that computes `inst`'s value (itself unless substituted).
  const Instruction* Resolve(const Instruction* inst) const {
    while (substitute_) {
      const Instruction* next = substitute_(inst);
      if (!next || next == inst) break;
      inst = next;
    }
    return inst;
  }

  int Define(const Instruction* inst) {
    inst = Resolve(inst);
    if (auto it = defined_.find(inst); it != defined_.end()) return it->second;
    if (external_(inst)) return Get(inst, ClassByCount(inst));
    int value = DefineNew(inst);
    defined_[inst] = value;
    return value;
  }

  int DefineNew(const Instruction* inst) {
    Opcode op = inst->opcode();
    if (op == Opcode::kConstant) return DefineConstant(inst);
    if (op == Opcode::kReshape || op == Opcode::kBitcast || op == Opcode::kCopy) {
      if (op == Opcode::kBitcast && (!inst->shape().HasDefaultLayout() ||
                                     !inst->operand(0)->shape().HasDefaultLayout())) {
        Fail("bitcast between layouts");
      }
      if (inst->shape().type != inst->operand(0)->shape().type) Fail("bitcast-convert");
      return Define(inst->operand(0));
    }
    if (op == Opcode::kBroadcast) return DefineBroadcast(inst);
    if (op == Opcode::kReduce) return DefineReduce(inst);
    if (op == Opcode::kDot || op == Opcode::kConvolution) return DefineDot(inst);
    if (op == Opcode::kConvert) return DefineConvert(inst);
    if (op == Opcode::kPower) return DefinePower(inst);
    return DefineElementwise(inst);
  }

  int DefineConstant(const Instruction* inst) {
    if (Count(inst) != 1) Fail("non-scalar constant " + inst->name());
    return EmitFill(inst, RowClass::kScalar);
  }

  // vfill of a scalar constant's bit pattern into a value of class `cls`.
  int EmitFill(const Instruction* constant, RowClass cls) {
    const hlo::Literal& literal = constant->attr<hlo::ConstantAttrs>().literal;
    RowOp fill;
    fill.kind = RowOpKind::kFill;
    fill.dst = NewValue(cls, DtypeOf(constant));
    std::memcpy(&fill.bits, literal.bytes().data(), std::min<size_t>(4, literal.bytes().size()));
    return Emit(fill);
  }

  int DefineBroadcast(const Instruction* inst) {
    const Instruction* operand = inst->operand(0);
    const std::vector<int64_t>& dims = inst->attr<hlo::DimensionsAttrs>().dimensions;
    // Same count with dimensions in order: a reshape in disguise (out of order: a transpose).
    if (Count(operand) == Count(inst)) {
      if (!std::is_sorted(dims.begin(), dims.end())) Fail("transposing broadcast " + inst->name());
      return Define(operand);
    }
    RowClass cls = ClassByCount(inst);
    if (Count(operand) == 1) {
      if (operand->opcode() == Opcode::kConstant && !external_(operand)) {
        return EmitFill(operand, cls);  // vfill straight into the broadcast's class
      }
      return EmitBroadcast(inst, Get(operand, RowClass::kScalar), cls);
    }
    if (cls != RowClass::kFull) Fail("broadcast " + inst->name() + " into a row or column");
    const hlo::Shape& result = inst->shape();
    int64_t last = result.rank() - 1;
    // The result dimensions the operand's non-unit dimensions map to, in operand order.
    std::vector<int64_t> kept;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (operand->shape().dims[i] > 1) kept.push_back(dims[i]);
    }
    bool to_last_only = std::all_of(kept.begin(), kept.end(), [&](int64_t d) { return d == last; });
    if (to_last_only) return EmitBroadcast(inst, Get(operand, RowClass::kCol), cls);
    // Row -> full: the kept dimensions are, in order, every non-unit leading dimension.
    bool leading_only = std::is_sorted(kept.begin(), kept.end()) &&
                        std::find(kept.begin(), kept.end(), last) == kept.end();
    for (int64_t d = 0; d < last && leading_only; ++d) {
      bool is_kept = std::find(kept.begin(), kept.end(), d) != kept.end();
      if (!is_kept && result.dims[static_cast<size_t>(d)] != 1) leading_only = false;
    }
    if (!leading_only) Fail("broadcast " + inst->name() + " along a leading dimension");
    return EmitBroadcast(inst, Get(operand, RowClass::kRow), cls);
  }


  int EmitBroadcast(const Instruction* inst, int src, RowClass cls) {
    RowOp op;
    op.kind = RowOpKind::kBroadcast;
    op.srcs = {src};
    op.dst = NewValue(cls, DtypeOf(inst));
    return Emit(op);
  }

  int DefineReduce(const Instruction* inst) {
    if (inst->operand_count() != 2) Fail("variadic reduce");
    const Instruction* input = inst->operand(0);
    const Instruction* init = inst->operand(1);
    std::vector<int64_t> dims = inst->attr<hlo::DimensionsAttrs>().dimensions;
    std::sort(dims.begin(), dims.end());
    const int64_t rank = input->shape().rank();
    if (Count(input) == Count(inst) && init->opcode() == Opcode::kConstant) {
      // Every reduced dimension has one index: each result is combine(init, x). A max from
      // -inf and the pred reductions give x itself (a reshape); a sum adds the 0, which turns
      // a -0 into +0, as the interpreter's sum does.
      std::optional<VectorReducer> reducer = VectorReducerOf(*inst);
      if (!reducer) {
        FailNoInstruction("reduce " + inst->name() + " is not a sum from 0 or a max from -inf");
      }
      const int value = Define(input);
      if (*reducer != VectorReducer::kSum) return value;
      const RowClass cls = program_.values[static_cast<size_t>(value)].cls;
      RowOp add;
      add.kind = RowOpKind::kBinary;
      add.opcode = systolic::Opcode::kVAdd;
      add.srcs = {EmitFill(init, cls), value};
      add.dst = NewValue(cls, DtypeOf(inst));
      return Emit(add);
    }
    bool over_last = dims.size() == 1 && dims[0] == rank - 1;
    // Over every dimension but the last: column sums (e.g. global average pooling in NHWC).
    bool over_leading = rank >= 2 && !dims.empty() && dims.back() < rank - 1;
    for (int64_t d = 0; d + 1 < rank && over_leading; ++d) {
      bool reduced = std::binary_search(dims.begin(), dims.end(), d);
      if (!reduced && input->shape().dims[static_cast<size_t>(d)] != 1) over_leading = false;
    }
    if ((!over_last && !over_leading) || input->shape().dims.back() != program_.inner) {
      Fail("reduce " + inst->name() + " over other than the last dimension or all the others");
    }
    // The init value only selects the instruction (it must be the combiner's identity), so an
    // unfused reduce's constant operand serves as well as a fused one.
    if (init->opcode() != Opcode::kConstant) Fail("reduce init not a constant");
    std::optional<VectorReducer> reducer = VectorReducerOf(*inst);
    if (!reducer) {
      FailNoInstruction("reduce " + inst->name() + " is not a sum from 0 or a max from -inf");
    }
    RowOp op;
    op.kind = over_last ? RowOpKind::kReduce : RowOpKind::kReduceColumns;
    if (*reducer == VectorReducer::kSum) {
      op.opcode = over_last ? systolic::Opcode::kVRedSum : systolic::Opcode::kVAdd;
    } else {  // max, and the pred reductions as a max of 0/1 bytes
      op.opcode = over_last ? systolic::Opcode::kVRedMax : systolic::Opcode::kVMax;
    }
    // and(x) = not(or(not(x))): the vector unit reduces only by a max.
    const bool negated = *reducer == VectorReducer::kAnd;
    auto negate = [&](int value, RowClass cls) {
      RowOp not_op;
      not_op.kind = RowOpKind::kNot;
      not_op.srcs = {value};
      not_op.dst = NewValue(cls, Dtype::kPred);
      return Emit(not_op);
    };
    const int source = Get(input, RowClass::kFull);
    op.srcs = {negated ? negate(source, RowClass::kFull) : source};
    RowClass cls = over_last ? RowClass::kRow : RowClass::kCol;
    if (Count(inst) != ClassCount(cls)) Fail("reduce " + inst->name() + " result shape");
    op.dst = NewValue(cls, DtypeOf(inst));
    program_.has_reduce = true;
    program_.has_column_reduce |= !over_last;
    const int reduced = Emit(op);
    return negated ? negate(reduced, cls) : reduced;
  }

  int DefineDot(const Instruction* inst) {
    if (!allow_dot_ || program_.contraction) Fail("second contraction in one fusion");
    if (!external_(inst->operand(0)) || !external_(inst->operand(1))) {
      Fail("dot operands computed inside the fusion");
    }
    program_.contraction = inst;
    Dtype in = DtypeOf(inst->operand(0));
    Dtype accumulator = in == Dtype::kS8 ? Dtype::kS32 : Dtype::kF32;
    RowOp op;
    op.kind = RowOpKind::kMatmul;
    op.dst = NewValue(RowClass::kFull, accumulator, /*in_acc=*/true);
    program_.contraction_value = Emit(op);
    if (DtypeOf(inst) == accumulator) return program_.contraction_value;
    RowOp convert;
    convert.kind = RowOpKind::kConvert;
    convert.srcs = {program_.contraction_value};
    convert.dst = NewValue(RowClass::kFull, DtypeOf(inst));
    return Emit(convert);
  }

  int DefineConvert(const Instruction* inst) {
    const Instruction* operand = inst->operand(0);
    PrimitiveType from = operand->shape().type, to = inst->shape().type;
    if (from == to) return Define(operand);
    if (std::optional<RequantizePattern> requantize = MatchRequantize(*inst)) {
      return DefineRequantize(inst, *requantize);
    }
    auto outside = [this](const Instruction* x) { return external_(Resolve(x)).has_value(); };
    auto resolve = [this](const Instruction* x) { return Resolve(x); };
    if (std::optional<IntegerRequantizePattern> integer =
            MatchIntegerRequantize(*inst, outside, resolve)) {
      return EmitRequantize(inst, integer->value, integer->quant, integer->lo, integer->hi);
    }
    if (!VcvtMatchesConvert(from, to)) {
      FailNoInstruction("convert " + std::string(hlo::PrimitiveTypeName(from)) + " -> " +
           std::string(hlo::PrimitiveTypeName(to)));
    }
    RowClass cls = ElementwiseClass(inst);
    RowOp op;
    op.kind = RowOpKind::kConvert;
    op.srcs = {Get(operand, cls)};
    op.dst = NewValue(cls, DtypeOf(inst));
    return Emit(op);
  }

  // The f32 scalar constant `c` (possibly broadcast) that is finite, else nullopt.
  std::optional<float> FiniteScale(const Instruction* c) {
    c = Resolve(c);
    if (c->opcode() == Opcode::kBroadcast && !external_(c)) c = Resolve(c->operand(0));
    if (external_(c) || c->opcode() != Opcode::kConstant || c->shape().type != PrimitiveType::kF32 ||
        Count(c) != 1) {
      return std::nullopt;
    }
    float value;
    std::memcpy(&value, c->attr<hlo::ConstantAttrs>().literal.bytes().data(), sizeof value);
    if (!std::isfinite(value)) return std::nullopt;
    return value;
  }

  // `x` as vrequant's float rescale of an s32 value v, before rounding:
  //   convert<f32>(v) * a                       quant.scale a
  //   maximum(<that>, 0)                        + quant.relu (ReLU before rounding)
  //   <either> * b, b > 0                       + quant.post_scale b (AQT: dequantize by a,
  //                                               requantize by b, each product rounded)
  // with a, b finite scalar constants in either operand order. The maximum commutes with the
  // positive b, the rounding and the zero point 0, so it is vrequant's ReLU after rounding.
  std::optional<std::pair<const Instruction*, Requantization>> ScaledAccumulator(
      const Instruction* x, int depth = 0) {
    x = Resolve(x);
    if (external_(x) || depth > 2) return std::nullopt;
    if (x->opcode() == Opcode::kMaximum) {
      for (int side = 0; side < 2; ++side) {
        std::optional<float> zero = FiniteScale(x->operand(1 - side));
        if (!zero || *zero != 0.0f) continue;
        auto inner = ScaledAccumulator(x->operand(side), depth + 1);
        if (!inner || inner->second.relu || inner->second.post_scale_bits != 0) continue;
        inner->second.relu = true;
        return inner;
      }
      return std::nullopt;
    }
    if (x->opcode() != Opcode::kMultiply) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const Instruction* operand = Resolve(x->operand(side));
      std::optional<float> scale = FiniteScale(x->operand(1 - side));
      if (!scale) continue;
      if (!external_(operand) && operand->opcode() == Opcode::kConvert &&
          operand->operand(0)->shape().type == PrimitiveType::kS32) {
        Requantization quant;
        std::memcpy(&quant.scale_bits, &*scale, sizeof quant.scale_bits);
        return std::make_pair(operand->operand(0), quant);
      }
      if (!(*scale > 0.0f)) continue;  // a post-scale must keep the sign (and not read as none)
      auto inner = ScaledAccumulator(operand, depth + 1);
      if (!inner || inner->second.post_scale_bits != 0) continue;
      std::memcpy(&inner->second.post_scale_bits, &*scale, sizeof inner->second.post_scale_bits);
      return inner;
    }
    return std::nullopt;
  }

  // vrequant of `source` with `quant`, then max lo / min hi in the narrow type where the clamp
  // bounds are not already implied: saturation gives the type's range, quant.relu a lower bound
  // of the zero point.
  int EmitRequantize(const Instruction* inst, const Instruction* source, Requantization quant,
                     double lo, double hi) {
    const Dtype to = DtypeOf(inst);
    const double type_lo = to == Dtype::kS8 ? -128 : 0, type_hi = to == Dtype::kS8 ? 127 : 255;
    RowClass cls = external_(source) ? ClassByCount(source)
                                     : program_.values[static_cast<size_t>(Define(source))].cls;
    // A lower bound at the zero point is the activation unit's fused ReLU: no fill and vmax.
    if (lo == quant.zero_point && lo > type_lo) quant.relu = true;
    RowOp requantize;
    requantize.kind = RowOpKind::kRequantize;
    requantize.srcs = {Get(source, cls)};
    requantize.quant = quant;
    requantize.dst = NewValue(cls, to);
    int value = Emit(requantize);
    auto bound = [&](double b, systolic::Opcode opcode) {
      RowOp fill;
      fill.kind = RowOpKind::kFill;
      fill.dst = NewValue(cls, to);
      fill.bits = static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int>(b)));
      RowOp op;
      op.kind = RowOpKind::kBinary;
      op.opcode = opcode;
      op.srcs = {value, Emit(fill)};
      op.dst = NewValue(cls, to);
      value = Emit(op);
    };
    if (lo > (quant.relu ? std::max<double>(type_lo, quant.zero_point) : type_lo)) {
      bound(lo, systolic::Opcode::kVMax);
    }
    if (hi < type_hi) bound(hi, systolic::Opcode::kVMin);
    return value;
  }

  // convert<s8|u8>(clamp(lo, round(f32(v) * c), hi)) with v s32 and c a finite constant (and
  // AQT's second scale and ReLU, ScaledAccumulator) is vrequant (the products in f32, round
  // half to even, saturate to the type) followed by the bounds inside the type's range: one
  // pass out of the accumulators instead of five f32 passes. Exact: saturating to the type's
  // range and then clamping to [lo, hi] inside it equals clamping first; no NaN can arise
  // from an integer and finite scales.
  std::optional<int> DefineScaledRequantize(const Instruction* inst,
                                            const RequantizePattern& pattern) {
    auto scaled = ScaledAccumulator(pattern.value);
    if (!scaled) return std::nullopt;
    return EmitRequantize(inst, scaled->first, scaled->second, pattern.lo, pattern.hi);
  }

  // vcvt(min(max(x, lo), hi)) for requantize_pattern.h's idiom.
  int DefineRequantize(const Instruction* inst, const RequantizePattern& pattern) {
    if (std::optional<int> fast = DefineScaledRequantize(inst, pattern)) return *fast;
    RowClass cls = external_(pattern.value)
                       ? ClassByCount(pattern.value)
                       : program_.values[static_cast<size_t>(Define(pattern.value))].cls;
    int x = Get(pattern.value, cls);
    auto fill = [&](double bound) {
      RowOp op;
      op.kind = RowOpKind::kFill;
      op.dst = NewValue(cls, Dtype::kF32);
      float value = static_cast<float>(bound);
      std::memcpy(&op.bits, &value, sizeof(value));
      return Emit(op);
    };
    RowOp clamp;
    clamp.kind = RowOpKind::kClamp;
    clamp.srcs = {fill(pattern.lo), x, fill(pattern.hi)};
    clamp.dst = NewValue(cls, Dtype::kF32);
    return EmitConvert(Emit(clamp), cls, DtypeOf(inst));
  }

  // power(x, 2) = x * x (one rounding, as a correctly rounded power has); power(x, -0.5) is
  // vrsqrt within its documented rounding, on x + 0 (so -0 gives +inf, as power does) and with
  // -inf mapped to +0 (rsqrt would give NaN). Other exponents have no vector-unit program.
  int DefinePower(const Instruction* inst) {
    const Dtype dtype = DtypeOf(inst);
    const Instruction* source = nullptr;
    std::optional<double> exponent = ScalarFloatConstant(inst->operand(1), &source);
    if (!exponent && operand_value_) {
      // A fusion parameter: the constant may be the fused instruction's operand.
      if (std::optional<int64_t> index = external_(Resolve(source))) {
        exponent = ScalarFloatConstant(operand_value_(*index));
      }
    }
    if (!IsVectorFloat(dtype) || !exponent || !VectorPowerExponent(*exponent)) {
      FailNoInstruction("power " + inst->name() + " whose exponent is not the constant 2 or -0.5");
    }
    const Instruction* base = inst->operand(0);
    const RowClass cls = external_(base)
                             ? ClassByCount(inst)
                             : program_.values[static_cast<size_t>(Define(base))].cls;
    const int x = Get(base, cls);
    auto emit = [&](RowOpKind kind, systolic::Opcode opcode, std::vector<int> srcs, Dtype type) {
      RowOp op;
      op.kind = kind;
      op.opcode = opcode;
      op.srcs = std::move(srcs);
      op.dst = NewValue(cls, type);
      return Emit(op);
    };
    if (*exponent == 2.0) return emit(RowOpKind::kBinary, systolic::Opcode::kVMul, {x, x}, dtype);
    auto fill = [&](uint32_t bits) {
      RowOp op;
      op.kind = RowOpKind::kFill;
      op.bits = bits;
      op.dst = NewValue(cls, dtype);
      return Emit(op);
    };
    const int zero = fill(0);
    const int plus_zero = emit(RowOpKind::kBinary, systolic::Opcode::kVAdd, {x, zero}, dtype);
    const int root = emit(RowOpKind::kUnary, systolic::Opcode::kVRsqrt, {plus_zero}, dtype);
    const uint32_t minus_inf = dtype == Dtype::kF32 ? 0xff800000u
                               : dtype == Dtype::kBf16 ? 0xff80u
                                                       : 0xfc00u;
    RowOp compare;
    compare.kind = RowOpKind::kCompare;
    compare.compare = CompareDirection::kEq;
    compare.srcs = {x, fill(minus_inf)};
    compare.dst = NewValue(cls, Dtype::kPred);
    const int is_minus_inf = Emit(compare);
    return emit(RowOpKind::kSelect, systolic::Opcode::kNop, {is_minus_inf, zero, root}, dtype);
  }

  int DefineElementwise(const Instruction* inst) {
    Dtype dtype = DtypeOf(inst);
    std::string why;
    std::optional<RowOp> mapped = ElementwiseRowOp(*inst, dtype, &why);
    if (!mapped) FailNoInstruction(why);
    RowOp row = *mapped;
    for (const Instruction* operand : inst->operands()) {
      if (Count(operand) != Count(inst)) Fail("implicit broadcast in " + inst->name());
    }
    RowClass cls = ElementwiseClass(inst);
    for (const Instruction* operand : inst->operands()) row.srcs.push_back(Get(operand, cls));
    // divide and sqrt take two vector ops; in bf16/f16 each would round, so they run in f32
    // and round once at the end, as hlo/ir.h computes 16-bit floats.
    bool two_steps = row.kind == RowOpKind::kDivide || row.kind == RowOpKind::kSqrt;
    if (two_steps && dtype != Dtype::kF32) {
      for (int& src : row.srcs) src = EmitConvert(src, cls, Dtype::kF32);
      row.dst = NewValue(cls, Dtype::kF32);
      return EmitConvert(Emit(row), cls, dtype);
    }
    row.dst = NewValue(cls, dtype);
    return Emit(row);
  }

  int EmitConvert(int src, RowClass cls, Dtype to) {
    RowOp convert;
    convert.kind = RowOpKind::kConvert;
    convert.srcs = {src};
    convert.dst = NewValue(cls, to);
    return Emit(convert);
  }

  const ExternalIndex& external_;
  bool allow_dot_;
  const Substitution& substitute_;
  const OperandValue& operand_value_;
  RowProgram program_;
  std::map<const Instruction*, int> defined_;
  std::map<std::pair<int64_t, RowClass>, int> loads_;
};

}  // namespace

bool RowProgram::has_vector_work() const {
  return std::any_of(ops.begin(), ops.end(), [](const RowOp& op) {
    return op.kind != RowOpKind::kLoad && op.kind != RowOpKind::kMatmul;
  });
}

std::optional<RowProgram> AnalyzeRows(const hlo::Instruction& root, const ExternalIndex& external,
                                      bool allow_dot, std::string* why,
                                      const Substitution& substitute, bool* no_instruction,
                                      const OperandValue& operand_value) {
  try {
    return Analyzer(external, allow_dot, substitute, operand_value).Run(root);
  } catch (const Unsupported& u) {
    if (why) *why = u.reason;
    if (no_instruction) *no_instruction = u.no_instruction;
    return std::nullopt;
  }
}

}  // namespace systolic::lowering

// The vector unit's elementwise data effects (functional.h) and the dispatch of every v*
// instruction to its family: elementwise here, conversions in functional_vector_convert.cc,
// row reductions and broadcast in functional_vector_rows.cc.
//
// Arithmetic: integers in int64 and wrapped to the dtype when stored; bf16/f16/f32 in f32 and
// rounded to nearest even when stored (hlo/ir.h's rule); vmax/vmin propagate NaN and order
// -0 < +0; vcmp follows IEEE (NaN compares false except ne).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/functional_vector_internal.h"

namespace simulator {
namespace vector_internal {

using systolic::Dtype;
using systolic::Instruction;
using systolic::Opcode;

std::string Mnemonic(const Instruction& inst) {
  return std::string(systolic::GetInstrInfo(inst.opcode).mnemonic);
}

Dtype CheckedDtype(const Instruction& inst, uint64_t raw, DtypeClass allowed, const char* field) {
  if (raw >= systolic::DtypeSymbols().size()) {
    throw hlo::Error(Mnemonic(inst) + ": " + field + " " + std::to_string(raw) +
                     " is not a dtype");
  }
  const Dtype dtype = static_cast<Dtype>(raw);
  bool ok = false;
  const char* wanted = "";
  switch (allowed) {
    case DtypeClass::kAny: ok = true; break;
    case DtypeClass::kNumeric: ok = dtype != Dtype::kPred; wanted = "a numeric dtype"; break;
    case DtypeClass::kFloat: ok = IsFloatDtype(dtype); wanted = "bf16, f16 or f32"; break;
    case DtypeClass::kInteger: ok = IsIntegerDtype(dtype); wanted = "s8, u8 or s32"; break;
  }
  if (!ok) {
    throw hlo::Error(Mnemonic(inst) + ": " + field + " " +
                     std::string(systolic::DtypeName(dtype)) + " is not supported (needs " +
                     wanted + ")");
  }
  return dtype;
}

std::vector<uint8_t> ReadOperand(Memories& memories, uint64_t address, int64_t count,
                                 Dtype dtype) {
  const uint64_t length = static_cast<uint64_t>(count) * systolic::DtypeBytes(dtype);
  std::span<const uint8_t> data =
      memories.Local(address).Read(Memories::LocalOffset(address), length);
  return std::vector<uint8_t>(data.begin(), data.end());
}

OperandBytes::OperandBytes(Memories& memories, uint64_t address, int64_t count, Dtype dtype,
                           uint64_t dst_address, uint64_t dst_bytes, bool same_start_ok) {
  const uint64_t length = static_cast<uint64_t>(count) * systolic::DtypeBytes(dtype);
  std::span<const uint8_t> data =
      memories.Local(address).Read(Memories::LocalOffset(address), length);
  const bool same_memory = ((address ^ dst_address) & systolic::kAccumulatorBit) == 0;
  const uint64_t begin = Memories::LocalOffset(address), dst = Memories::LocalOffset(dst_address);
  const bool overlap = same_memory && begin < dst + dst_bytes && dst < begin + length;
  if (overlap && !(same_start_ok && begin == dst)) {
    copy_.assign(data.begin(), data.end());
    data_ = copy_.data();
  } else {
    data_ = data.data();
  }
}

std::span<uint8_t> WriteOperand(Memories& memories, uint64_t address, int64_t count,
                                Dtype dtype) {
  const uint64_t length = static_cast<uint64_t>(count) * systolic::DtypeBytes(dtype);
  return memories.Local(address).Write(Memories::LocalOffset(address), length);
}

uint64_t AdvanceAddress(uint64_t address, uint64_t bytes) {
  const uint64_t offset = Memories::LocalOffset(address) + bytes;
  if (offset >= systolic::kAccumulatorBit) {
    throw hlo::Error("local address offset " + std::to_string(offset) +
                     " is beyond the 25-bit local address range");
  }
  return (address & systolic::kAccumulatorBit) | offset;
}

float FloatMax(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;  // equal zeros: +0 is the larger
  return a > b ? a : b;
}

float FloatMin(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

namespace {

// vshl vshra vshrl vand vor vxor on `dtype`'s bits (hlo/ir.h's integer rules: the amount is
// unsigned; one >= the width shifts everything out, leaving 0 or the sign fill).
int64_t IntBitwise(Opcode op, Dtype dtype, int64_t a, int64_t b) {
  const int bits = 8 * systolic::DtypeBytes(dtype);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t amount = static_cast<uint64_t>(b) & mask;
  const uint64_t unsigned_a = static_cast<uint64_t>(a) & mask;
  switch (op) {
    case Opcode::kVShl:
      return amount >= static_cast<uint64_t>(bits) ? 0 : static_cast<int64_t>(unsigned_a << amount);
    case Opcode::kVShrl:
      return amount >= static_cast<uint64_t>(bits) ? 0 : static_cast<int64_t>(unsigned_a >> amount);
    case Opcode::kVShra: {  // the top bit of the dtype fills, unsigned dtypes included
      const int64_t signed_a = static_cast<int64_t>(unsigned_a << (64 - bits)) >> (64 - bits);
      return signed_a >> std::min<uint64_t>(amount, 63);
    }
    case Opcode::kVAnd: return a & b;
    case Opcode::kVOr: return a | b;
    case Opcode::kVXor: return a ^ b;
    default: break;
  }
  throw hlo::Error("vector unit: not a bitwise opcode");
}

bool IsBitwise(Opcode op) {
  return op == Opcode::kVShl || op == Opcode::kVShra || op == Opcode::kVShrl ||
         op == Opcode::kVAnd || op == Opcode::kVOr || op == Opcode::kVXor;
}

// vdiv and vrem: integers only (HLO's rules, hlo/evaluator_elementwise_int.cc).
bool IsIntegerOnly(Opcode op) {
  return IsBitwise(op) || op == Opcode::kVDiv || op == Opcode::kVRem;
}

int64_t IntBinary(Opcode op, int64_t a, int64_t b) {
  switch (op) {
    case Opcode::kVAdd: return a + b;
    case Opcode::kVSub: return a - b;
    case Opcode::kVMul: return a * b;  // |s32 * s32| < 2^63: exact, wrapped on store
    case Opcode::kVMax: return a > b ? a : b;
    case Opcode::kVMin: return a < b ? a : b;
    // In 64 bits, MIN / -1 is 2^31 (or 2^7), which wraps back to MIN on store; MIN % -1 is 0.
    case Opcode::kVDiv: return b == 0 ? -1 : a / b;
    case Opcode::kVRem: return b == 0 ? a : a % b;
    default: break;
  }
  throw hlo::Error("vector unit: not an arithmetic opcode");
}

float FloatBinary(Opcode op, float a, float b) {
  switch (op) {
    case Opcode::kVAdd: return a + b;
    case Opcode::kVSub: return a - b;
    case Opcode::kVMul: return a * b;
    case Opcode::kVMax: return FloatMax(a, b);
    case Opcode::kVMin: return FloatMin(a, b);
    default: break;
  }
  throw hlo::Error("vector unit: not an arithmetic opcode");
}

template <class T>
bool Compare(systolic::CompareDirection direction, T a, T b) {
  switch (direction) {
    case systolic::CompareDirection::kEq: return a == b;
    case systolic::CompareDirection::kNe: return a != b;
    case systolic::CompareDirection::kLt: return a < b;
    case systolic::CompareDirection::kLe: return a <= b;
    case systolic::CompareDirection::kGt: return a > b;
    case systolic::CompareDirection::kGe: return a >= b;
  }
  return false;
}

// f32 vadd / vsub / vmul / vmax / vmin without the per-element dtype dispatch of the general
// loop in Binary: the same one f32 operation (or the same FloatMax / FloatMin) per element, so
// the results are identical (the vector unit's hottest case: docs/perf.md "Accelerator simulator
// speed"). False when it does not apply.
bool BinaryF32(Opcode op, const uint8_t* a, const uint8_t* b, std::span<uint8_t> out,
               int64_t count) {
  if constexpr (std::endian::native != std::endian::little) return false;  // memory is LE
  auto run = [&](auto operation) {
    for (int64_t i = 0; i < count; ++i) {
      float x, y;
      std::memcpy(&x, &a[i * 4], 4);
      std::memcpy(&y, &b[i * 4], 4);
      const float result = operation(x, y);
      std::memcpy(&out[i * 4], &result, 4);
    }
    return true;
  };
  switch (op) {
    case Opcode::kVAdd: return run([](float x, float y) { return x + y; });
    case Opcode::kVSub: return run([](float x, float y) { return x - y; });
    case Opcode::kVMul: return run([](float x, float y) { return x * y; });
    case Opcode::kVMax: return run([](float x, float y) { return FloatMax(x, y); });
    case Opcode::kVMin: return run([](float x, float y) { return FloatMin(x, y); });
    default: return false;
  }
}

// vadd vsub vmul vmax vmin vcmp, and on integers vshl vshra vshrl vand vor vxor vdiv vrem:
// dst[i] = a[i] OP b[i].
void Binary(const Instruction& inst, Memories& memories) {
  using F = systolic::VAddField;  // every binary op shares VAdd's leading fields
  static_assert(static_cast<int>(systolic::VCmpField::dtype) == static_cast<int>(F::dtype));
  const auto field = [&](F f) { return inst.fields[static_cast<size_t>(f)]; };
  const bool bitwise = IsBitwise(inst.opcode);
  const Dtype dtype = CheckedDtype(
      inst, field(F::dtype),
      IsIntegerOnly(inst.opcode) ? DtypeClass::kInteger : DtypeClass::kNumeric);
  const int64_t count = static_cast<int64_t>(field(F::count));
  const int bytes = systolic::DtypeBytes(dtype);
  // vcmp writes 1-byte results from wider operands: read in place only when disjoint.
  const bool compare = inst.opcode == Opcode::kVCmp;
  const uint64_t dst_bytes = static_cast<uint64_t>(count) * (compare ? 1 : bytes);
  const uint64_t dst = field(F::dst);
  const OperandBytes a_bytes(memories, field(F::a), count, dtype, dst, dst_bytes, !compare);
  const OperandBytes b_bytes(memories, field(F::b), count, dtype, dst, dst_bytes, !compare);
  const uint8_t* a = a_bytes.data();
  const uint8_t* b = b_bytes.data();
  if (compare) {
    const uint64_t raw = inst.get(systolic::VCmpField::cmp);
    if (raw >= systolic::CompareSymbols().size()) {
      throw hlo::Error("vcmp: cmp " + std::to_string(raw) + " is not a comparison direction");
    }
    const auto direction = static_cast<systolic::CompareDirection>(raw);
    std::span<uint8_t> out = WriteOperand(memories, field(F::dst), count, Dtype::kPred);
    for (int64_t i = 0; i < count; ++i) {
      const uint8_t* x = &a[i * bytes];
      const uint8_t* y = &b[i * bytes];
      out[i] = IsFloatDtype(dtype)
                   ? Compare(direction, LoadFloat(dtype, x), LoadFloat(dtype, y))
                   : Compare(direction, LoadInt(dtype, x), LoadInt(dtype, y));
    }
    return;
  }
  std::span<uint8_t> out = WriteOperand(memories, field(F::dst), count, dtype);
  if (dtype == Dtype::kF32 && BinaryF32(inst.opcode, a, b, out, count)) return;
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* x = &a[i * bytes];
    const uint8_t* y = &b[i * bytes];
    if (IsFloatDtype(dtype)) {
      StoreFloat(dtype, &out[i * bytes],
                 FloatBinary(inst.opcode, LoadFloat(dtype, x), LoadFloat(dtype, y)));
    } else if (bitwise) {
      StoreIntWrapping(dtype, &out[i * bytes],
                       IntBitwise(inst.opcode, dtype, LoadInt(dtype, x), LoadInt(dtype, y)));
    } else {
      StoreIntWrapping(dtype, &out[i * bytes],
                       IntBinary(inst.opcode, LoadInt(dtype, x), LoadInt(dtype, y)));
    }
  }
}

// vsel: dst[i] = mask[i] != 0 ? src[i] : dst[i]. dst is read in full (it is an operand).
void Select(const Instruction& inst, Memories& memories) {
  using F = systolic::VSelField;
  const Dtype dtype = CheckedDtype(inst, inst.get(F::dtype), DtypeClass::kAny);
  const int64_t count = static_cast<int64_t>(inst.get(F::count));
  const std::vector<uint8_t> mask = ReadOperand(memories, inst.get(F::mask), count, Dtype::kPred);
  const std::vector<uint8_t> src = ReadOperand(memories, inst.get(F::src), count, dtype);
  std::vector<uint8_t> result = ReadOperand(memories, inst.get(F::dst), count, dtype);
  const int bytes = systolic::DtypeBytes(dtype);
  for (int64_t i = 0; i < count; ++i) {
    if (mask[i] != 0) std::memcpy(&result[i * bytes], &src[i * bytes], bytes);
  }
  std::span<uint8_t> out = WriteOperand(memories, inst.get(F::dst), count, dtype);
  std::copy(result.begin(), result.end(), out.begin());
}

float Transcendental(Opcode op, float x) {
  switch (op) {
    case Opcode::kVExp: return std::exp(x);
    case Opcode::kVRecip: return 1.0f / x;
    case Opcode::kVRsqrt: return 1.0f / std::sqrt(x);  // two f32 roundings
    case Opcode::kVTanh: return std::tanh(x);
    case Opcode::kVSin: return std::sin(x);
    case Opcode::kVCos: return std::cos(x);
    case Opcode::kVLog: return std::log(x);
    case Opcode::kVLog1p: return std::log1p(x);
    case Opcode::kVExpm1: return std::expm1(x);
    // For very negative x, exp overflows to inf and the result is +0.
    case Opcode::kVLogistic: return 1.0f / (1.0f + std::exp(-x));
    case Opcode::kVErf: return std::erf(x);
    case Opcode::kVFloor: return std::floor(x);
    case Opcode::kVCeil: return std::ceil(x);
    case Opcode::kVRound: return std::round(x);
    default: break;
  }
  throw hlo::Error("vector unit: not a transcendental opcode");
}

// vmov (any dtype, a byte copy) and the float ops vexp vrecip vrsqrt vtanh vsin vcos vlog
// vlog1p vexpm1 vlogistic verf vfloor vceil vround (computed in f32, rounded once to the dtype).
void Unary(const Instruction& inst, Memories& memories) {
  using F = systolic::VMovField;  // the unary ops share VMov's fields
  const auto field = [&](F f) { return inst.fields[static_cast<size_t>(f)]; };
  const bool copy = inst.opcode == Opcode::kVMov;
  const Dtype dtype =
      CheckedDtype(inst, field(F::dtype), copy ? DtypeClass::kAny : DtypeClass::kFloat);
  const int64_t count = static_cast<int64_t>(field(F::count));
  const int bytes = systolic::DtypeBytes(dtype);
  const uint64_t length = static_cast<uint64_t>(count) * bytes;
  const OperandBytes src_bytes(memories, field(F::src), count, dtype, field(F::dst), length,
                               /*same_start_ok=*/true);
  const uint8_t* src = src_bytes.data();
  std::span<uint8_t> out = WriteOperand(memories, field(F::dst), count, dtype);
  if (copy) {
    // In place at the same start there is nothing to move; otherwise src is disjoint or a copy.
    if (length > 0 && out.data() != src) std::memcpy(out.data(), src, length);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    StoreFloat(dtype, &out[i * bytes],
               Transcendental(inst.opcode, LoadFloat(dtype, &src[i * bytes])));
  }
}

// vfill: the low DtypeBytes(dtype) bytes of `value` (pred: 0 or 1 only).
void Fill(const Instruction& inst, Memories& memories) {
  using F = systolic::VFillField;
  const Dtype dtype = CheckedDtype(inst, inst.get(F::dtype), DtypeClass::kAny);
  const uint64_t value = inst.get(F::value);
  if (dtype == Dtype::kPred && value > 1) {
    throw hlo::Error("vfill: a pred value must be 0 or 1, got " + std::to_string(value));
  }
  const int64_t count = static_cast<int64_t>(inst.get(F::count));
  std::span<uint8_t> out = WriteOperand(memories, inst.get(F::dst), count, dtype);
  const int bytes = systolic::DtypeBytes(dtype);
  if (count == 0) return;
  // The first element, then doubling copies of what is already filled (the same bytes as a
  // StoreBits per element, without the per-element call).
  StoreBits(dtype, out.data(), static_cast<uint32_t>(value));
  for (size_t filled = static_cast<size_t>(bytes); filled < out.size(); filled *= 2) {
    std::memcpy(out.data() + filled, out.data(), std::min(filled, out.size() - filled));
  }
}

// viota: each element's row-major index, divided by iota.inner, modulo iota.modulus, stored as
// dtype (integers exactly, floats rounded to nearest even).
void Iota(const Instruction& inst, const RegisterFile& registers, Memories& memories) {
  using F = systolic::VIotaField;
  const Dtype dtype = CheckedDtype(inst, inst.get(F::dtype), DtypeClass::kNumeric);
  const uint64_t inner = registers[static_cast<size_t>(systolic::ConfigRegister::kIotaInner)];
  const uint64_t modulus = registers[static_cast<size_t>(systolic::ConfigRegister::kIotaModulus)];
  if (inner == 0 || modulus == 0) {
    throw hlo::Error("viota: iota.inner and iota.modulus must be nonzero (got " +
                     std::to_string(inner) + ", " + std::to_string(modulus) + ")");
  }
  const int64_t count = static_cast<int64_t>(inst.get(F::count));
  const uint64_t start = inst.get(F::start);
  std::span<uint8_t> out = WriteOperand(memories, inst.get(F::dst), count, dtype);
  const int bytes = systolic::DtypeBytes(dtype);
  for (int64_t k = 0; k < count; ++k) {
    const uint64_t index = start + static_cast<uint64_t>(k);
    const int64_t value = static_cast<int64_t>(index / inner % modulus);
    if (IsFloatDtype(dtype)) {
      StoreFloat(dtype, &out[k * bytes], static_cast<float>(value));
    } else {
      StoreIntWrapping(dtype, &out[k * bytes], value);
    }
  }
}

}  // namespace

void ExecuteIota(const Instruction& inst, const RegisterFile& registers, Memories& memories) {
  Iota(inst, registers, memories);
}
void ExecuteBinary(const Instruction& inst, Memories& memories) { Binary(inst, memories); }
void ExecuteSelect(const Instruction& inst, Memories& memories) { Select(inst, memories); }
void ExecuteUnary(const Instruction& inst, Memories& memories) { Unary(inst, memories); }
void ExecuteFill(const Instruction& inst, Memories& memories) { Fill(inst, memories); }

}  // namespace vector_internal

}  // namespace simulator

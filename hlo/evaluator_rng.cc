// Random-number ops, deterministic so that runs and backends can be compared.
//
// Guarantees: rng draws from a SplitMix64 stream seeded by a hash of the instruction name, so
// the same module gives the same values on every run (and on every iteration of a loop):
// uniform floats in [a, b), uniform integers in [a, b) (a when b <= a), normal via Box-Muller
// with mean a and standard deviation b. rng-bit-generator derives its stream from the state
// operand and returns (next state, random bits); rng-get-and-update-state returns values
// derived from the instruction name.
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "hlo/evaluator_family.h"
#include "hlo/evaluator_types.h"

namespace hlo::eval {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

uint64_t HashBytes(const void* data, size_t size, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

void FillRandomBytes(Literal& literal, SplitMix64& generator) {
  auto bytes = literal.mutable_bytes();
  for (size_t i = 0; i < bytes.size(); i += 8) {
    uint64_t word = generator.Next();
    std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, bytes.size() - i));
  }
  if (literal.shape().type == PrimitiveType::kPred) {
    for (uint8_t& b : bytes) b &= 1;
  }
}

Literal Rng(const Instruction& inst, Operands operands) {
  if (operands.size() != 2 || operands[0]->element_count() != 1 ||
      operands[1]->element_count() != 1) {
    throw Error("rng takes two scalar operands");
  }
  Literal result = MakeResult(inst);
  SplitMix64 generator(HashBytes(inst.name().data(), inst.name().size()));
  const double a = operands[0]->GetAsDouble(0);
  const double b = operands[1]->GetAsDouble(0);
  const bool normal = inst.attr<RngAttrs>().distribution == RngDistribution::kNormal;
  const bool floating = IsFloating(inst.shape().type);
  const int64_t ia = operands[0]->GetAsInt64(0);
  const int64_t ib = operands[1]->GetAsInt64(0);
  for (int64_t i = 0; i < result.element_count(); ++i) {
    if (normal) {
      const double u1 = 1.0 - generator.Unit();  // (0, 1]: log stays finite
      const double u2 = generator.Unit();
      result.SetFromDouble(i, a + b * std::sqrt(-2.0 * std::log(u1)) *
                                      std::cos(2.0 * std::numbers::pi * u2));
    } else if (floating) {
      result.SetFromDouble(i, a + (b - a) * generator.Unit());
    } else {
      const uint64_t span = ib > ia ? static_cast<uint64_t>(ib) - static_cast<uint64_t>(ia) : 0;
      result.SetFromInt64(i, span == 0 ? ia : ia + static_cast<int64_t>(generator.Next() % span));
    }
  }
  return result;
}

Literal RngBitGenerator(const Instruction& inst, Operands operands) {
  const Shape& shape = inst.shape();
  if (operands.size() != 1 || !shape.IsTuple() || shape.tuple_shapes.size() != 2) {
    throw Error("rng-bit-generator takes a state and returns (state, bits)");
  }
  const Literal& state = *operands[0];
  SplitMix64 generator(HashBytes(state.bytes().data(), state.bytes().size()));
  Literal next_state(shape.tuple_shapes[0]);
  Literal bits(shape.tuple_shapes[1]);
  if (IsFloating(bits.shape().type)) {
    throw Error("rng-bit-generator produces integer bits, not " + bits.shape().ToString(false));
  }
  FillRandomBytes(bits, generator);
  FillRandomBytes(next_state, generator);
  std::vector<Literal> elements;
  elements.push_back(std::move(next_state));
  elements.push_back(std::move(bits));
  return Literal::Tuple(std::move(elements));
}

}  // namespace

Literal EvaluateRandom(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kRng: return Rng(inst, operands);
    case Opcode::kRngBitGenerator: return RngBitGenerator(inst, operands);
    case Opcode::kRngGetAndUpdateState: {
      Literal result = MakeResult(inst);
      if (!result.shape().IsArray()) throw Error("rng-get-and-update-state returns an array");
      SplitMix64 generator(HashBytes(inst.name().data(), inst.name().size()));
      FillRandomBytes(result, generator);
      return result;
    }
    default:
      throw Error("'" + std::string(OpcodeName(inst.opcode())) + "' is not a random-number op");
  }
}

}  // namespace hlo::eval

#include "tests/llvm/elemental_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>

#include "hlo/evaluator.h"
#include "tests/llvm/jit_harness.h"

namespace llvm_test {

std::vector<double> EdgeValues(hlo::PrimitiveType type) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (hlo::IsFloating(type)) {
    return {0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            3.0,
            1e-3,
            -7.25,
            100.0,
            -100.0,
            65504.0,
            70000.0,
            3.4e38,
            -3.4e38,
            1.17549435e-38,
            1e-40,
            -1e-45,
            inf,
            -inf,
            nan,
            -nan,
            88.5,
            -87.0,
            1e10,
            -1e-10,
            0.75,
            std::numbers::pi,
            1e-300,
            1e300};
  }
  if (type == hlo::PrimitiveType::kPred) return {0, 1};
  const int width = hlo::BitWidth(type);
  const double min = hlo::IsSignedInteger(type) ? -std::ldexp(1.0, width - 1) : 0.0;
  const double max =
      hlo::IsSignedInteger(type) ? std::ldexp(1.0, width - 1) - 1 : std::ldexp(1.0, width) - 1;
  return {0,
          1,
          -1,
          2,
          -2,
          3,
          7,
          -7,
          8,
          15,
          16,
          31,
          32,
          33,
          63,
          64,
          65,
          100,
          127,
          128,
          255,
          -128,
          min,
          max,
          min + 1,
          max - 1,
          static_cast<double>(width),
          static_cast<double>(width - 1)};
}

hlo::Literal MakeInput(const hlo::Shape& shape, int pair_axis, uint64_t seed,
                       double max_magnitude) {
  hlo::Literal literal(shape);
  const std::vector<double> edges = EdgeValues(shape.type);
  const int64_t n = static_cast<int64_t>(edges.size());
  std::mt19937_64 random(seed);
  const hlo::PrimitiveType type = shape.type;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (i < n * n) {
      const double value = edges[static_cast<size_t>(pair_axis == 0 ? i / n : i % n)];
      if (hlo::IsFloating(type)) {
        double v = value;
        if (max_magnitude > 0 && std::isfinite(v) && std::fabs(v) > max_magnitude)
          v = std::fmod(v, max_magnitude);
        literal.SetFromDouble(i, v);
      } else if (type == hlo::PrimitiveType::kU64 && value >= 9.2e18) {
        literal.mutable_data<uint64_t>()[static_cast<size_t>(i)] =
            std::numeric_limits<uint64_t>::max();
      } else if (value >= 9.2e18 || value <= -9.2e18) {
        // 2^63 as a double is outside int64: the edge it stands for is the type's own extreme.
        literal.SetFromInt64(i, value > 0 ? std::numeric_limits<int64_t>::max()
                                          : std::numeric_limits<int64_t>::min());
      } else {
        literal.SetFromInt64(i, static_cast<int64_t>(value));
      }
      continue;
    }
    if (hlo::IsFloating(type)) {
      // Half uniform in [-4, 4], half log-uniform magnitudes with a random sign.
      std::uniform_real_distribution<double> uniform(-4.0, 4.0);
      std::uniform_real_distribution<double> exponent(-20.0, 20.0);
      double v =
          (random() & 1) ? uniform(random) : std::exp(exponent(random)) * ((random() & 2) ? 1 : -1);
      if (max_magnitude > 0 && std::fabs(v) > max_magnitude) v = std::fmod(v, max_magnitude);
      literal.SetFromDouble(i, v);
    } else if (type == hlo::PrimitiveType::kPred) {
      literal.SetFromInt64(i, static_cast<int64_t>(random() & 1));
    } else {
      uint64_t bits = random();
      // Small values are more interesting for shifts and powers: mix both.
      literal.SetFromInt64(
          i, (bits & 3) == 0 ? static_cast<int64_t>(bits >> 58) - 32 : static_cast<int64_t>(bits));
    }
  }
  return literal;
}

std::string ElementText(const hlo::Literal& literal, int64_t i) {
  std::ostringstream out;
  const hlo::PrimitiveType type = literal.shape().type;
  if (hlo::IsFloating(type)) {
    out.precision(9);
    out << literal.GetAsDouble(i);
    uint64_t bits = 0;
    std::memcpy(&bits, literal.bytes().data() + i * hlo::ByteSize(type),
                static_cast<size_t>(hlo::ByteSize(type)));
    out << " (0x" << std::hex << bits << ")";
  } else if (type == hlo::PrimitiveType::kU64) {
    out << literal.data<uint64_t>()[static_cast<size_t>(i)];
  } else {
    out << literal.GetAsInt64(i);
  }
  return out.str();
}

namespace {

void CompareArrays(const hlo::Literal& expected, const hlo::Literal& actual, int64_t max_ulp,
                   const std::string& what, std::ostringstream& report, int& reported) {
  const hlo::PrimitiveType type = expected.shape().type;
  const int64_t size = hlo::ByteSize(type);
  for (int64_t i = 0; i < expected.element_count() && reported < 8; ++i) {
    bool ok;
    if (hlo::IsFloating(type)) {
      ok = UlpDistance(type, expected.GetAsDouble(i), actual.GetAsDouble(i)) <= max_ulp;
    } else {
      ok = std::memcmp(expected.bytes().data() + i * size, actual.bytes().data() + i * size,
                       static_cast<size_t>(size)) == 0;
    }
    if (!ok) {
      report << what << "[" << i << "]: interpreter " << ElementText(expected, i) << ", emitter "
             << ElementText(actual, i) << "\n";
      ++reported;
    }
  }
}

}  // namespace

std::string CompareWithInterpreter(const hlo::Module& module,
                                   std::span<const hlo::Literal> arguments, int64_t max_ulp) {
  hlo::Literal expected = hlo::Evaluate(module, arguments);
  hlo::Literal actual = RunEntry(module, arguments);
  std::ostringstream report;
  int reported = 0;
  if (expected.IsTuple()) {
    const hlo::Computation& entry = *module.entry();
    for (size_t k = 0; k < expected.elements().size(); ++k) {
      std::string name = "output " + std::to_string(k);
      const hlo::Instruction* root = entry.root();
      if (root->opcode() == hlo::Opcode::kTuple) {
        const hlo::Instruction* element = root->operand(static_cast<int64_t>(k));
        name = element->name() + " (" + std::string(hlo::OpcodeName(element->opcode())) + ")";
      }
      CompareArrays(expected.elements()[k], actual.elements()[k], max_ulp, name, report, reported);
    }
  } else {
    CompareArrays(expected, actual, max_ulp, "result", report, reported);
  }
  return report.str();
}

}  // namespace llvm_test

// Result comparison (compare.h). Floats: |actual - expected| <= atol + rtol * |expected|, NaN
// matches NaN of either sign, an infinity matches only the same infinity. Integers and pred must
// be equal; two tokens are equal (a token has no value). Every mismatching element is counted;
// the reported worst element is the one whose error is largest relative to its allowance, in the
// first mismatching array.
//
// Default tolerances (DefaultTolerance), chosen from each type's precision with room for a
// different summation order on another backend:
//   f64  rtol 1e-9  atol 1e-12     f32  rtol 1e-5  atol 1e-6
//   f16  rtol 1e-3  atol 1e-3      bf16 rtol 1e-2  atol 1e-2      integers, pred: exact
//   c64/c128 as f32/f64 on the modulus of the difference; 8-/4-bit floats one ulp (2^-mantissa)
#include "tools/io/compare.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "hlo/minifloat.h"

namespace io {
namespace {

std::string FormatNumber(double value) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", value);
  return buf;
}

std::string FormatIndex(const std::vector<int64_t>& index) {
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) out += (i ? "," : "") + std::to_string(index[i]);
  return out + "]";
}

std::vector<int64_t> Unflatten(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    index[k] = dims[k] ? linear % dims[k] : 0;
    linear = dims[k] ? linear / dims[k] : 0;
  }
  return index;
}

// 0 when `error` is within `allowance`, else error / allowance (infinite for a zero allowance).
double ErrorOverAllowance(double error, double allowance) {
  if (error <= allowance) return 0;
  return allowance > 0 ? error / allowance : std::numeric_limits<double>::infinity();
}

// How far out of tolerance one element is: 0 when within, otherwise error / allowance
// (infinite for NaN/inf disagreements and for any difference when the allowance is zero).
double FloatBadness(double expected, double actual, const Tolerance& tol) {
  if (std::isnan(expected) || std::isnan(actual)) {
    return std::isnan(expected) && std::isnan(actual) ? 0 : std::numeric_limits<double>::infinity();
  }
  if (std::isinf(expected) || std::isinf(actual)) {
    return expected == actual ? 0 : std::numeric_limits<double>::infinity();
  }
  return ErrorOverAllowance(std::fabs(actual - expected),
                            tol.atol + tol.rtol * std::fabs(expected));
}

// Complex values: the modulus of the difference against atol + rtol x |expected| (NaN or inf in
// either part must agree part by part).
double ComplexBadness(std::complex<double> expected, std::complex<double> actual,
                      const Tolerance& tol) {
  const bool special = !std::isfinite(expected.real()) || !std::isfinite(expected.imag()) ||
                       !std::isfinite(actual.real()) || !std::isfinite(actual.imag());
  if (special) {
    return std::max(FloatBadness(expected.real(), actual.real(), tol),
                    FloatBadness(expected.imag(), actual.imag(), tol));
  }
  return ErrorOverAllowance(std::abs(actual - expected),
                            tol.atol + tol.rtol * std::abs(expected));
}

// Exact comparison for integers and pred; badness is the absolute difference.
double IntegerBadness(const hlo::Literal& e, const hlo::Literal& a, int64_t i) {
  if (e.shape().type == hlo::PrimitiveType::kU64) {
    uint64_t x = static_cast<uint64_t>(e.GetAsInt64(i)), y = static_cast<uint64_t>(a.GetAsInt64(i));
    return x == y ? 0 : static_cast<double>(x > y ? x - y : y - x);
  }
  int64_t x = e.GetAsInt64(i), y = a.GetAsInt64(i);
  return x == y ? 0 : std::fabs(static_cast<double>(x) - static_cast<double>(y));
}

struct ArrayOutcome {
  int64_t mismatches = 0;
  int64_t worst = -1;  // linear index of the worst element
  double worst_badness = 0;
  Tolerance tolerance;
};

ArrayOutcome CompareOne(const hlo::Literal& expected, const hlo::Literal& actual,
                        const Tolerance& tolerance) {
  ArrayOutcome outcome{0, -1, 0, tolerance};
  const bool floating = hlo::IsFloating(expected.shape().type);
  const bool complex = hlo::IsComplex(expected.shape().type);
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    double badness = 0;
    if (complex) {
      badness = ComplexBadness(expected.GetComplex(i), actual.GetComplex(i), tolerance);
    } else if (floating) {
      badness = FloatBadness(expected.GetAsDouble(i), actual.GetAsDouble(i), tolerance);
    } else {
      badness = IntegerBadness(expected, actual, i);
    }
    if (badness == 0) continue;
    ++outcome.mismatches;
    if (outcome.worst < 0 || badness > outcome.worst_badness) {
      outcome.worst = i;
      outcome.worst_badness = badness;
    }
  }
  return outcome;
}

}  // namespace

Tolerance DefaultTolerance(hlo::PrimitiveType type) {
  using hlo::PrimitiveType;
  switch (type) {
    case PrimitiveType::kF64: return {1e-9, 1e-12};
    case PrimitiveType::kF32: return {1e-5, 1e-6};
    case PrimitiveType::kF16: return {1e-3, 1e-3};
    case PrimitiveType::kBF16: return {1e-2, 1e-2};
    case PrimitiveType::kC64:
    case PrimitiveType::kC128: return DefaultTolerance(hlo::ComplexComponentType(type));
    // The 8- and 4-bit floats: one unit in the last place, 2^-mantissa_bits, relative and
    // absolute (f8e4m3fn: 0.125; f8e8m0fnu: a factor of two).
    RETARGET_MINIFLOAT_CASES: {
      const double ulp = std::ldexp(1.0, -hlo::MinifloatFormatOf(type)->mantissa_bits);
      return {ulp, ulp};
    }
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    case PrimitiveType::kPred:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
    case PrimitiveType::kTuple:
    case PrimitiveType::kToken: return {0, 0};
  }
  return {0, 0};
}

int64_t LongestReduction(const hlo::Module& module) {
  auto product = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
    int64_t n = 1;
    for (int64_t d : which)
      if (d >= 0 && d < static_cast<int64_t>(dims.size())) n *= std::max<int64_t>(dims[d], 1);
    return n;
  };
  int64_t longest = 1;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      int64_t length = 1;
      switch (inst->opcode()) {
        case hlo::Opcode::kDot:
          if (!inst->has_attr<hlo::DotAttrs>()) break;
          length = product(inst->operand(0)->shape().dims,
                           inst->attr<hlo::DotAttrs>().dnums.lhs_contracting);
          break;
        case hlo::Opcode::kReduce:
          if (!inst->has_attr<hlo::DimensionsAttrs>()) break;
          length = product(inst->operand(0)->shape().dims,
                           inst->attr<hlo::DimensionsAttrs>().dimensions);
          break;
        case hlo::Opcode::kConvolution: {
          if (!inst->has_attr<hlo::ConvolutionAttrs>()) break;
          const auto& attrs = inst->attr<hlo::ConvolutionAttrs>();
          const auto& kernel = inst->operand(1)->shape().dims;
          length = product(kernel, attrs.dnums.kernel_spatial) *
                   product(kernel, {attrs.dnums.kernel_input_feature});
          break;
        }
        case hlo::Opcode::kReduceWindow:
          if (!inst->has_attr<hlo::WindowAttrs>()) break;
          for (const hlo::WindowDim& w : inst->attr<hlo::WindowAttrs>().window.dims)
            length *= std::max<int64_t>(w.size, 1);
          break;
        default:
          break;
      }
      longest = std::max(longest, length);
    }
  }
  return longest;
}

namespace {

// Where a narrower float value is only read or moved rather than produced: parameters and
// constants, copies, and the data-movement class of the opcode table (hlo/opcodes.def).
bool MovesOnly(hlo::Opcode opcode) {
  return opcode == hlo::Opcode::kParameter || opcode == hlo::Opcode::kConstant ||
         opcode == hlo::Opcode::kCopy ||
         hlo::OpcodeClass(opcode) == hlo::OpClass::kDataMovement;
}

// The less precise of two float types by their default tolerance; nullopt stands for none.
std::optional<hlo::PrimitiveType> Narrower(std::optional<hlo::PrimitiveType> a,
                                           std::optional<hlo::PrimitiveType> b) {
  if (!a) return b;
  if (!b) return a;
  return DefaultTolerance(*b).rtol > DefaultTolerance(*a).rtol ? b : a;
}

// The narrowest float type an instruction produces in its result (tuple leaves included),
// counting only values an operation computes.
std::optional<hlo::PrimitiveType> ProducedFloat(const hlo::Instruction& inst) {
  if (MovesOnly(inst.opcode())) return std::nullopt;
  std::optional<hlo::PrimitiveType> narrowest;
  std::vector<const hlo::Shape*> pending = {&inst.shape()};
  while (!pending.empty()) {
    const hlo::Shape* shape = pending.back();
    pending.pop_back();
    if (shape->IsTuple()) {
      for (const hlo::Shape& element : shape->tuple_shapes) pending.push_back(&element);
    } else if (shape->IsArray() && hlo::IsFloating(shape->type) &&
               shape->type != hlo::PrimitiveType::kF64 && shape->type != hlo::PrimitiveType::kF32) {
      narrowest = Narrower(narrowest, shape->type);
    }
  }
  return narrowest;
}

class NarrowestFloats {
 public:
  // Through `inst` and everything it depends on in its computation and the computations it calls.
  std::optional<hlo::PrimitiveType> Through(const hlo::Instruction& root) {
    std::optional<hlo::PrimitiveType> narrowest;
    std::set<const hlo::Instruction*> seen;
    std::vector<const hlo::Instruction*> pending = {&root};
    while (!pending.empty()) {
      const hlo::Instruction* inst = pending.back();
      pending.pop_back();
      if (!seen.insert(inst).second) continue;
      narrowest = Narrower(narrowest, ProducedWithCallees(*inst));
      for (const hlo::Instruction* operand : inst->operands()) pending.push_back(operand);
    }
    return narrowest;
  }

 private:
  // Every instruction of `computation` and of what it calls (memoized: reducers and loop bodies
  // are shared).
  std::optional<hlo::PrimitiveType> InComputation(const hlo::Computation& computation) {
    if (auto it = memo_.find(&computation); it != memo_.end()) return it->second;
    memo_[&computation] = std::nullopt;  // a cycle cannot occur in HLO; this guards anyway
    std::optional<hlo::PrimitiveType> narrowest;
    for (const auto& inst : computation.instructions()) {
      narrowest = Narrower(narrowest, ProducedWithCallees(*inst));
    }
    memo_[&computation] = narrowest;
    return narrowest;
  }

  // What `inst` produces and everything the computations it calls produce.
  std::optional<hlo::PrimitiveType> ProducedWithCallees(const hlo::Instruction& inst) {
    std::optional<hlo::PrimitiveType> narrowest = ProducedFloat(inst);
    for (const hlo::Computation* called : inst.called_computations()) {
      narrowest = Narrower(narrowest, InComputation(*called));
    }
    return narrowest;
  }

  std::map<const hlo::Computation*, std::optional<hlo::PrimitiveType>> memo_;
};

// The leaves of `inst`'s result in FlattenOutputs' order, each with the instruction that
// produces it when a tuple instruction says so (else `inst` itself stands for every leaf).
void ResultLeaves(const hlo::Instruction& inst, const hlo::Shape& shape,
                  std::vector<std::pair<const hlo::Instruction*, const hlo::Shape*>>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back({&inst, &shape});
    return;
  }
  for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
    const bool split = inst.opcode() == hlo::Opcode::kTuple &&
                       i < static_cast<size_t>(inst.operand_count());
    const hlo::Instruction& producer = split ? *inst.operand(static_cast<int64_t>(i)) : inst;
    ResultLeaves(producer, split ? producer.shape() : shape.tuple_shapes[i], leaves);
  }
}

}  // namespace

std::map<std::string, hlo::PrimitiveType> OutputsComputedThroughNarrowerFloats(
    const hlo::Module& module) {
  std::map<std::string, hlo::PrimitiveType> result;
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) return result;
  std::vector<std::pair<const hlo::Instruction*, const hlo::Shape*>> leaves;
  ResultLeaves(*entry->root(), entry->root()->shape(), leaves);
  NarrowestFloats analysis;
  std::map<const hlo::Instruction*, std::optional<hlo::PrimitiveType>> through;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const auto [producer, shape] = leaves[i];
    if (!shape->IsArray() || !hlo::IsFloating(shape->type)) continue;
    if (!through.count(producer)) through[producer] = analysis.Through(*producer);
    const std::optional<hlo::PrimitiveType> narrow = through[producer];
    if (narrow && DefaultTolerance(*narrow).rtol > DefaultTolerance(shape->type).rtol) {
      result["out" + std::to_string(i)] = *narrow;
    }
  }
  return result;
}

double ReductionToleranceScale(int64_t length) {
  return std::sqrt(static_cast<double>(std::max<int64_t>(length, 1)));
}

CompareResult CompareArrays(const std::vector<NpyArray>& expected,
                            const std::vector<NpyArray>& actual, const Tolerance* tolerance,
                            double default_scale,
                            const std::map<std::string, hlo::PrimitiveType>* computed_through) {
  CompareResult result;
  std::map<std::string, const NpyArray*> by_name;
  for (const NpyArray& a : actual) by_name[a.name] = &a;
  std::vector<std::string> problems;  // structural mismatches, reported in order
  int64_t total_elements = 0, total_mismatches = 0;
  bool have_worst = false;
  std::string worst_text;

  for (const NpyArray& e : expected) {
    auto it = by_name.find(e.name);
    if (it == by_name.end()) {
      problems.push_back(e.name + " is missing");
      continue;
    }
    const hlo::Literal& a = it->second->literal;
    by_name.erase(it);
    const hlo::Shape& es = e.literal.shape();
    // A token carries no value (ir.h): two tokens are equal, and count no elements. A token
    // against an array still fails the shape check below.
    if (es.IsToken() && a.shape().IsToken()) continue;
    if (!es.IsArray() || !a.shape().IsArray() || es.type != a.shape().type ||
        es.dims != a.shape().dims) {
      problems.push_back(e.name + ": expected " + es.ToString(false) + ", got " +
                         a.shape().ToString(false));
      continue;
    }
    total_elements += e.literal.element_count();
    Tolerance tol = tolerance ? *tolerance : DefaultTolerance(es.type);
    if (!tolerance && computed_through != nullptr) {
      if (auto narrow = computed_through->find(e.name); narrow != computed_through->end()) {
        const Tolerance wider = DefaultTolerance(narrow->second);
        tol = {std::max(tol.rtol, wider.rtol), std::max(tol.atol, wider.atol)};
      }
    }
    if (!tolerance) {
      tol.rtol *= default_scale;
      tol.atol *= default_scale;
    }
    ArrayOutcome outcome = CompareOne(e.literal, a, tol);
    if (outcome.mismatches == 0) continue;
    total_mismatches += outcome.mismatches;
    if (have_worst) continue;
    have_worst = true;
    result.worst_array = e.name;
    result.worst_index = Unflatten(outcome.worst, es.dims);
    result.worst_expected = e.literal.GetAsDouble(outcome.worst);
    result.worst_actual = a.GetAsDouble(outcome.worst);
    worst_text = e.name + FormatIndex(result.worst_index) + ": expected ";
    if (hlo::IsComplex(es.type)) {  // both parts, and the modulus the tolerance applies to
      const std::complex<double> expected_value = e.literal.GetComplex(outcome.worst);
      const std::complex<double> actual_value = a.GetComplex(outcome.worst);
      auto text = [](std::complex<double> v) {
        return "(" + FormatNumber(v.real()) + ", " + FormatNumber(v.imag()) + ")";
      };
      worst_text += text(expected_value) + ", got " + text(actual_value) + " (|diff| " +
                    FormatNumber(std::abs(actual_value - expected_value)) + ", allowed " +
                    FormatNumber(tol.atol + tol.rtol * std::abs(expected_value)) + ")";
    } else {
      worst_text +=
          FormatNumber(result.worst_expected) + ", got " + FormatNumber(result.worst_actual);
    }
    if (hlo::IsFloating(es.type)) {
      worst_text +=
          " (|diff| " + FormatNumber(std::fabs(result.worst_actual - result.worst_expected)) +
          ", allowed " + FormatNumber(tol.atol + tol.rtol * std::fabs(result.worst_expected)) +
          " = atol " + FormatNumber(tol.atol) + " + rtol " + FormatNumber(tol.rtol) +
          " * |expected|)";
    }
  }
  for (const auto& [name, array] : by_name) problems.push_back(name + " is unexpected");

  result.matched = problems.empty() && total_mismatches == 0;
  if (result.matched) {
    result.summary = "MATCHED (" + std::to_string(expected.size()) + " arrays, " +
                     std::to_string(total_elements) + " elements)";
    return result;
  }
  result.summary = "MISMATCH";
  if (have_worst) {
    result.summary += " " + worst_text + "; " + std::to_string(total_mismatches) + " of " +
                      std::to_string(total_elements) + " elements differ";
  }
  bool first = !have_worst;
  for (const std::string& problem : problems) {
    result.summary += (first ? " " : "; ") + problem;
    first = false;
  }
  return result;
}

}  // namespace io

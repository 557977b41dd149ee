#include "bench/bench_util.h"

#include <fstream>
#include <random>
#include <sstream>

#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace bench {
namespace {

hlo::Literal MakeArgument(const hlo::Shape& shape, std::mt19937_64& rng) {
  if (shape.IsTuple()) {
    std::vector<hlo::Literal> elements;
    for (const hlo::Shape& element : shape.tuple_shapes) elements.push_back(MakeArgument(element, rng));
    return hlo::Literal::Tuple(std::move(elements));
  }
  hlo::Literal literal(shape);
  if (!shape.IsArray() || !hlo::IsFloating(shape.type)) return literal;  // zeros
  std::uniform_real_distribution<float> uniform(0.5f, 1.5f);
  if (shape.type == hlo::PrimitiveType::kF32) {
    for (float& value : literal.mutable_data<float>()) value = uniform(rng);
  } else {
    for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetFromDouble(i, uniform(rng));
  }
  return literal;
}

int64_t Product(const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
  int64_t product = 1;
  for (int64_t d : which) product *= dims[static_cast<size_t>(d)];
  return product;
}

double InstructionFlops(const hlo::Instruction& inst) {
  const hlo::Shape& result = inst.shape();
  if (!result.IsArray()) return 0;
  const double outputs = static_cast<double>(result.ElementCount());
  // Only two opcodes do contraction work, so an if-chain reads better than a 100-case switch.
  if (inst.opcode() == hlo::Opcode::kDot) {
    // Each output element is a dot product over the contracting dimensions.
    const auto& dnums = inst.attr<hlo::DotAttrs>().dnums;
    return 2.0 * outputs *
           static_cast<double>(Product(inst.operand(0)->shape().dims, dnums.lhs_contracting));
  }
  if (inst.opcode() == hlo::Opcode::kConvolution) {
    // Each output element sums kernel window x kernel input features (the kernel's input
    // feature dimension is already divided by feature_group_count).
    const auto& dnums = inst.attr<hlo::ConvolutionAttrs>().dnums;
    const auto& kernel = inst.operand(1)->shape().dims;
    const double window = static_cast<double>(Product(kernel, dnums.kernel_spatial));
    return 2.0 * outputs * window *
           static_cast<double>(kernel[static_cast<size_t>(dnums.kernel_input_feature)]);
  }
  return 0;
}

double ComputationFlops(const hlo::Computation& computation, int depth) {
  if (depth > 64) return 0;  // defensive: verified modules have no call cycles
  double flops = 0;
  for (const auto& inst : computation.instructions()) {
    flops += InstructionFlops(*inst);
    if (inst->opcode() == hlo::Opcode::kCall || inst->opcode() == hlo::Opcode::kFusion) {
      for (const hlo::Computation* callee : inst->called_computations()) {
        flops += ComputationFlops(*callee, depth + 1);
      }
    }
  }
  return flops;
}

}  // namespace

std::string CorpusPath(const std::string& file) {
  return std::string(RETARGET_CORPUS_DIR) + "/" + file;
}

std::string ReadFileOrThrow(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hlo::Error(path + ": cannot open");
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::unique_ptr<hlo::Module> ParseAndVerify(const std::string& text, const std::string& name) {
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  std::unique_ptr<hlo::Module> module = hlo::ParseHloText(text, name, quiet);
  hlo::Verify(*module);
  return module;
}

std::vector<hlo::Literal> MakeArguments(const hlo::Module& module, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<hlo::Literal> arguments;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    if (parameter == nullptr) throw hlo::Error("entry parameters are not dense");
    arguments.push_back(MakeArgument(parameter->shape(), rng));
  }
  return arguments;
}

double ContractionFlops(const hlo::Module& module) {
  return module.entry() ? ComputationFlops(*module.entry(), 0) : 0;
}

}  // namespace bench

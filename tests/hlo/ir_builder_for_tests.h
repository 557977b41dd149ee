// A tiny helper for building HLO IR by hand in the shape-inference and verifier tests, so those
// tests do not depend on the text parser.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "hlo/shape_inference.h"
#include "hlo/verifier.h"

namespace verifier_test {

inline hlo::Shape F32(std::vector<int64_t> dims) {
  return hlo::Shape::Array(hlo::PrimitiveType::kF32, std::move(dims));
}
inline hlo::Shape S32(std::vector<int64_t> dims) {
  return hlo::Shape::Array(hlo::PrimitiveType::kS32, std::move(dims));
}
inline hlo::Shape BF16(std::vector<int64_t> dims) {
  return hlo::Shape::Array(hlo::PrimitiveType::kBF16, std::move(dims));
}
inline hlo::Shape Pred(std::vector<int64_t> dims) {
  return hlo::Shape::Array(hlo::PrimitiveType::kPred, std::move(dims));
}

// Builds one computation of a module. Instruction locations are line = order of creation, so
// tests can check that an error points at the right instruction.
class ComputationBuilder {
 public:
  ComputationBuilder(hlo::Module& module, std::string name) {
    computation_ = module.AddComputation(std::make_unique<hlo::Computation>(std::move(name)));
  }
  hlo::Computation* computation() const { return computation_; }

  hlo::Instruction* Param(int64_t number, hlo::Shape shape, std::string name = "") {
    // Spelled this way because g++ 12 warns spuriously (-Wrestrict) on `"p" + std::to_string`.
    std::string label = name.empty() ? std::to_string(number).insert(0, 1, 'p') : name;
    return Add(std::move(label), hlo::Opcode::kParameter, std::move(shape), {},
               hlo::ParameterAttrs{number});
  }

  hlo::Instruction* Add(std::string name, hlo::Opcode opcode, hlo::Shape shape,
                        std::vector<hlo::Instruction*> operands, hlo::Attrs attrs = {},
                        std::vector<hlo::Computation*> called = {}) {
    auto inst = std::make_unique<hlo::Instruction>(std::move(name), opcode, std::move(shape));
    for (hlo::Instruction* op : operands) inst->AppendOperand(op);
    inst->set_attrs(std::move(attrs));
    inst->mutable_called_computations() = std::move(called);
    inst->set_location(hlo::SourceLocation{file_, ++line_, 3});
    hlo::Instruction* raw = computation_->AddInstruction(std::move(inst));
    computation_->set_root(raw);  // the last instruction is the root unless changed
    return raw;
  }

 private:
  hlo::Computation* computation_;
  std::shared_ptr<const std::string> file_ = std::make_shared<const std::string>("test.hlo");
  uint32_t line_ = 0;
};

// A scalar binary computation (lhs, rhs) -> lhs op rhs, e.g. the usual add reducer.
inline hlo::Computation* AddBinaryComputation(hlo::Module& module, std::string name,
                                              hlo::PrimitiveType type,
                                              hlo::Opcode opcode = hlo::Opcode::kAdd) {
  ComputationBuilder b(module, std::move(name));
  auto* x = b.Param(0, hlo::Shape::Scalar(type), "x");
  auto* y = b.Param(1, hlo::Shape::Scalar(type), "y");
  hlo::Shape result = hlo::Shape::Scalar(opcode == hlo::Opcode::kCompare ? hlo::PrimitiveType::kPred
                                                                         : type);
  hlo::Attrs attrs;
  if (opcode == hlo::Opcode::kCompare) attrs = hlo::CompareAttrs{hlo::ComparisonDirection::kGt};
  b.Add("r", opcode, result, {x, y}, attrs);
  return b.computation();
}

// Expects `fn` to throw hlo::Error whose message contains `needle`; returns the error's line.
template <typename Fn>
uint32_t ExpectErrorContaining(Fn&& fn, const std::string& needle) {
  try {
    fn();
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find(needle), std::string::npos)
        << "message: " << e.message() << "\nexpected to contain: " << needle;
    return e.location().line;
  }
  ADD_FAILURE() << "no hlo::Error thrown; expected one containing: " << needle;
  return 0;
}

}  // namespace verifier_test

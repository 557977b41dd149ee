// Helpers shared by the proto I/O tests: building modules by hand (without the text parser) and
// comparing two modules field by field, so a failure names the first difference.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"

namespace proto_test {

// Adds instructions to one computation with terse calls.
struct ComputationBuilder {
  hlo::Computation* computation;

  hlo::Instruction* Add(const std::string& name, hlo::Opcode opcode, hlo::Shape shape,
                        std::vector<hlo::Instruction*> operands = {},
                        hlo::Attrs attrs = hlo::NoAttrs{}) {
    auto inst = std::make_unique<hlo::Instruction>(name, opcode, std::move(shape));
    inst->set_attrs(std::move(attrs));
    for (hlo::Instruction* operand : operands) inst->AppendOperand(operand);
    return computation->AddInstruction(std::move(inst));
  }
  hlo::Instruction* Parameter(const std::string& name, int64_t number, hlo::Shape shape) {
    return Add(name, hlo::Opcode::kParameter, std::move(shape), {}, hlo::ParameterAttrs{number});
  }
};

inline hlo::Computation* NewComputation(hlo::Module& module, const std::string& name) {
  return module.AddComputation(std::make_unique<hlo::Computation>(name));
}

inline std::vector<std::string> Names(const std::vector<hlo::Instruction*>& instructions) {
  std::vector<std::string> names;
  for (const hlo::Instruction* i : instructions) names.push_back(i->name());
  return names;
}

inline std::vector<std::string> Names(const std::vector<hlo::Computation*>& computations) {
  std::vector<std::string> names;
  for (const hlo::Computation* c : computations) names.push_back(c->name());
  return names;
}

// Everything the IR holds except ids and source locations.
inline void ExpectSameModule(const hlo::Module& expected, const hlo::Module& actual) {
  EXPECT_EQ(expected.name(), actual.name());
  EXPECT_EQ(expected.header_attributes(), actual.header_attributes());
  EXPECT_EQ(expected.leading_tables(), actual.leading_tables());
  EXPECT_EQ(expected.trailing_tables(), actual.trailing_tables());
  ASSERT_EQ(expected.computations().size(), actual.computations().size());
  ASSERT_NE(actual.entry(), nullptr);
  EXPECT_EQ(expected.entry()->name(), actual.entry()->name());
  for (size_t c = 0; c < expected.computations().size(); ++c) {
    const hlo::Computation& ec = *expected.computations()[c];
    const hlo::Computation& ac = *actual.computations()[c];
    SCOPED_TRACE("computation " + ec.name());
    EXPECT_EQ(ec.name(), ac.name());
    EXPECT_EQ(ec.is_entry(), ac.is_entry());
    EXPECT_EQ(ec.opaque_attributes(), ac.opaque_attributes());
    ASSERT_NE(ac.root(), nullptr);
    EXPECT_EQ(ec.root()->name(), ac.root()->name());
    ASSERT_EQ(ec.instructions().size(), ac.instructions().size());
    for (size_t i = 0; i < ec.instructions().size(); ++i) {
      const hlo::Instruction& ei = *ec.instructions()[i];
      const hlo::Instruction& ai = *ac.instructions()[i];
      SCOPED_TRACE("instruction " + ei.name());
      EXPECT_EQ(ei.name(), ai.name());
      EXPECT_EQ(ei.opcode(), ai.opcode());
      EXPECT_EQ(ei.shape(), ai.shape()) << ei.shape().ToString() << " vs " << ai.shape().ToString();
      EXPECT_TRUE(ei.attrs() == ai.attrs()) << "typed attributes differ";
      EXPECT_EQ(ei.opaque_attributes(), ai.opaque_attributes());
      EXPECT_EQ(Names(ei.operands()), Names(ai.operands()));
      EXPECT_EQ(Names(ei.called_computations()), Names(ai.called_computations()));
    }
  }
}

}  // namespace proto_test

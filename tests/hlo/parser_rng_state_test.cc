// XLA's `rng-get-and-update-state(), delta=N` (xla/hlo/parser/hlo_parser.cc reads `delta` as an
// int64): the parser accepts it, keeps it verbatim (the IR has no typed field for it) and the
// printer writes it back; a non-integer value and `delta` on another opcode are errors.
#include <gtest/gtest.h>

#include <string>

#include "hlo/diagnostic.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace {

std::unique_ptr<hlo::Module> Parse(const std::string& root_line) {
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  return hlo::ParseHloText("HloModule m\n\nENTRY e {\n" + root_line + "\n}\n", "rng.hlo", quiet);
}

std::string ErrorOf(const std::string& root_line) {
  try {
    Parse(root_line);
  } catch (const hlo::Error& e) {
    return std::to_string(e.location().line) + ":" + std::to_string(e.location().column) + " " +
           e.message();
  }
  return "no error";
}

TEST(ParserRngState, DeltaIsAcceptedKeptAndPrintedBack) {
  auto module = Parse("  ROOT s = u64[2] rng-get-and-update-state(), delta=4096");
  const hlo::Instruction& root = *module->entry()->root();
  EXPECT_EQ(root.opcode(), hlo::Opcode::kRngGetAndUpdateState);
  const hlo::OpaqueAttribute* delta = root.FindOpaqueAttribute("delta");
  ASSERT_NE(delta, nullptr);
  EXPECT_EQ(delta->value, "4096");
  const std::string printed = hlo::PrintInstruction(root);
  EXPECT_NE(printed.find("rng-get-and-update-state(), delta=4096"), std::string::npos) << printed;
  // The printed module parses to the same attribute (round trip).
  auto again = hlo::ParseHloText(hlo::PrintModule(*module), "again.hlo", {});
  ASSERT_NE(again->entry()->root()->FindOpaqueAttribute("delta"), nullptr);
  EXPECT_EQ(again->entry()->root()->FindOpaqueAttribute("delta")->value, "4096");
}

TEST(ParserRngState, DeltaIsOptional) {
  auto module = Parse("  ROOT s = u64[2] rng-get-and-update-state()");
  EXPECT_EQ(module->entry()->root()->FindOpaqueAttribute("delta"), nullptr);
}

TEST(ParserRngState, NonIntegerDeltaIsAnErrorAtTheValue) {
  // Line 4, column 53: the value after `delta=`.
  const std::string error = ErrorOf("  ROOT s = u64[2] rng-get-and-update-state(), delta=many");
  EXPECT_NE(error.find("4:53 "), std::string::npos) << error;
  EXPECT_NE(error.find("integer"), std::string::npos) << error;
}

TEST(ParserRngState, DeltaOnAnotherOpcodeIsStillUnknown) {
  const std::string error = ErrorOf("  ROOT s = u32[] replica-id(), delta=1");
  EXPECT_NE(error.find("unknown attribute 'delta'"), std::string::npos) << error;
}

}  // namespace

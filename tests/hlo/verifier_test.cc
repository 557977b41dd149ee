// The verifier: structural checks on IR built by hand (one negative test per check, asserting the
// message and the location), then HLO text: every corpus file verifies, gemma verifies quickly,
// and one negative text test per check.
#include <gtest/gtest.h>

#include <chrono>

#include "hlo/parser.h"
#include "tests/hlo/ir_builder_for_tests.h"
#include "tests/test_support.h"

namespace {

using namespace hlo;
using namespace verifier_test;

// entry(p0: f32[2], p1: f32[2]) = add(p0, p1)
struct SmallModule {
  Module module{"m"};
  ComputationBuilder entry{module, "entry"};
  Instruction* p0 = entry.Param(0, F32({2}));
  Instruction* p1 = entry.Param(1, F32({2}));
  Instruction* sum = entry.Add("sum", Opcode::kAdd, F32({2}), {p0, p1});
  SmallModule() { module.set_entry(entry.computation()); }
};

TEST(Verifier, AcceptsAWellFormedModule) {
  SmallModule s;
  EXPECT_NO_THROW(Verify(s.module));
}

TEST(Verifier, DeclaredShapeMustMatchInferred) {
  SmallModule s;
  s.sum->mutable_shape() = F32({3});
  uint32_t line = ExpectErrorContaining([&] { Verify(s.module); },
                                        "sum: shape f32[3] does not match the inferred shape f32[2]");
  EXPECT_EQ(line, 3u);
}

TEST(Verifier, LayoutsMayDifferButMustBePermutations) {
  SmallModule s;
  s.p0->mutable_shape() = F32({2});
  s.p0->mutable_shape().has_layout = true;
  s.p0->mutable_shape().minor_to_major = {0};
  EXPECT_NO_THROW(Verify(s.module));
  Module m("m");
  ComputationBuilder b(m, "entry");
  auto* x = b.Param(0, F32({2, 3}));
  auto* t = b.Add("t", Opcode::kNegate, F32({2, 3}), {x});
  t->mutable_shape().has_layout = true;
  t->mutable_shape().minor_to_major = {0, 1};  // column-major: fine
  m.set_entry(b.computation());
  EXPECT_NO_THROW(Verify(m));
  t->mutable_shape().minor_to_major = {1, 1};
  ExpectErrorContaining([&] { Verify(m); }, "t: layout {1,1} of f32[2,3] is not a permutation");
  t->mutable_shape().minor_to_major = {0};
  ExpectErrorContaining([&] { Verify(m); }, "t: layout {0} of f32[2,3] is not a permutation");
}

TEST(Verifier, WrongArity) {
  SmallModule s;
  s.sum->AppendOperand(s.p0);
  ExpectErrorContaining([&] { Verify(s.module); }, "sum: expects 2 operands, got 3");
}

TEST(Verifier, MissingRootAndEntry) {
  Module m("m");
  ExpectErrorContaining([&] { Verify(m); }, "module 'm' has no entry computation");
  ComputationBuilder b(m, "entry");
  b.Param(0, F32({}));
  b.computation()->set_root(nullptr);
  m.set_entry(b.computation());
  ExpectErrorContaining([&] { Verify(m); }, "computation 'entry': has no root instruction");
}

TEST(Verifier, DuplicateNames) {
  SmallModule s;
  s.sum->set_name("p1");
  ExpectErrorContaining([&] { Verify(s.module); }, "p1: name is used twice in computation 'entry'");
  SmallModule t;
  ComputationBuilder other(t.module, "entry");
  other.Param(0, F32({}));
  ExpectErrorContaining([&] { Verify(t.module); }, "name is used twice in module 'm'");
}

TEST(Verifier, OperandFromAnotherComputation) {
  SmallModule s;
  ComputationBuilder other(s.module, "other");
  auto* q = other.Param(0, F32({2}), "q");
  other.Add("neg", Opcode::kNegate, F32({2}), {s.p0});
  (void)q;
  ExpectErrorContaining([&] { Verify(s.module); },
                        "neg: operand 0 'p0' is not defined in computation 'other'");
}

TEST(Verifier, CycleOfOperandsAndUseBeforeDefinition) {
  Module m("m");
  ComputationBuilder b(m, "entry");
  auto* x = b.Param(0, F32({2}));
  auto* a = b.Add("a", Opcode::kNegate, F32({2}), {x});
  auto* c = b.Add("c", Opcode::kNegate, F32({2}), {a});
  m.set_entry(b.computation());
  a->SetOperand(0, c);  // a -> c -> a
  ExpectErrorContaining([&] { Verify(m); }, "is part of a cycle of operands");
  // An out-of-order use that is not a cycle is reported as such.
  Module m2("m2");
  ComputationBuilder b2(m2, "entry");
  auto* y = b2.Param(0, F32({2}));
  auto* first = b2.Add("first", Opcode::kNegate, F32({2}), {y});
  auto* second = b2.Add("second", Opcode::kNegate, F32({2}), {y});
  first->SetOperand(0, second);
  m2.set_entry(b2.computation());
  ExpectErrorContaining([&] { Verify(m2); }, "first: uses an operand before it is defined");
}

TEST(Verifier, ParameterNumbersMustBeDense) {
  Module m("m");
  ComputationBuilder b(m, "entry");
  b.Param(0, F32({}));
  auto* p2 = b.Param(2, F32({}));
  (void)p2;
  m.set_entry(b.computation());
  ExpectErrorContaining([&] { Verify(m); }, "parameter numbers are not dense: parameter 1");
  Module m2("m2");
  ComputationBuilder b2(m2, "entry");
  b2.Param(0, F32({}), "a");
  b2.Param(0, F32({}), "b");
  m2.set_entry(b2.computation());
  ExpectErrorContaining([&] { Verify(m2); }, "a: parameter number 0 is out of range or used twice");
}

TEST(Verifier, AbsurdShapeIsRejectedNotAllocated) {
  Module m("m");
  ComputationBuilder b(m, "entry");
  auto* big = b.Param(0, F32({1000000, 1000000}), "big");
  b.Add("neg", Opcode::kNegate, F32({1000000, 1000000}), {big});
  m.set_entry(b.computation());
  ExpectErrorContaining([&] { Verify(m); }, "big: array f32[1000000,1000000] has too many elements");
  Module m2("m2");
  ComputationBuilder b2(m2, "entry");
  b2.Param(0, F32({-1}), "neg");
  m2.set_entry(b2.computation());
  ExpectErrorContaining([&] { Verify(m2); }, "neg: shape f32[-1] has a negative dimension");
}

TEST(Verifier, CalleeMustBeInModuleAndNotEntry) {
  SmallModule s;
  Module elsewhere("x");
  Computation* foreign = AddBinaryComputation(elsewhere, "foreign", PrimitiveType::kF32);
  s.entry.Add("c", Opcode::kCall, F32({}), {s.p0, s.p1}, {}, {foreign});
  ExpectErrorContaining([&] { Verify(s.module); }, "c: calls a computation that is not in the module");
  SmallModule t;
  t.entry.Add("c", Opcode::kCall, F32({2}), {t.p0, t.p1}, {}, {t.entry.computation()});
  ExpectErrorContaining([&] { Verify(t.module); }, "c: calls the entry computation 'entry'");
}

TEST(Verifier, CallGraphCycle) {
  Module m("m");
  ComputationBuilder a(m, "a");
  auto* pa = a.Param(0, F32({}));
  ComputationBuilder b(m, "b");
  auto* pb = b.Param(0, F32({}));
  b.Add("cb", Opcode::kCall, F32({}), {pb}, {}, {a.computation()});
  a.Add("ca", Opcode::kCall, F32({}), {pa}, {}, {b.computation()});
  ComputationBuilder entry(m, "entry");
  auto* x = entry.Param(0, F32({}));
  entry.Add("c", Opcode::kCall, F32({}), {x}, {}, {a.computation()});
  m.set_entry(entry.computation());
  ExpectErrorContaining([&] { Verify(m); }, "which forms a cycle in the call graph");
}

TEST(Verifier, OnlyCallersCallComputations) {
  SmallModule s;
  Computation* add = AddBinaryComputation(s.module, "add", PrimitiveType::kF32);
  s.sum->mutable_called_computations().push_back(add);
  ExpectErrorContaining([&] { Verify(s.module); }, "sum: add does not call computations");
}

TEST(Verifier, BadCalleeSignatureInsideVerify) {
  Module m("m");
  Computation* add = AddBinaryComputation(m, "add", PrimitiveType::kS32);
  ComputationBuilder b(m, "entry");
  auto* x = b.Param(0, F32({4}));
  auto* z = b.Param(1, F32({}));
  b.Add("r", Opcode::kReduce, F32({}), {x, z}, DimensionsAttrs{{0}}, {add});
  m.set_entry(b.computation());
  uint32_t line = ExpectErrorContaining(
      [&] { Verify(m); }, "r: to_apply computation 'add' parameter 0 has shape s32[] but f32[]");
  EXPECT_EQ(line, 3u);
}

// ----- From HLO text ---------------------------------------------------------------------------

std::unique_ptr<Module> Parse(const std::string& text) { return ParseHloText(text, "test.hlo"); }

TEST(VerifierText, EveryCorpusFileVerifies) {
  const auto files = testing_support::CorpusFiles();
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const std::string text = testing_support::ReadFile(testing_support::CorpusPath(file));
    try {
      ParseOptions quiet;
      quiet.warn = [](const std::string&) {};
      auto module = ParseHloText(text, file, quiet);
      Verify(*module);
    } catch (const Error& e) {
      ADD_FAILURE() << FormatError(e, file);
    }
  }
}

TEST(VerifierText, GemmaVerifiesQuickly) {
  const std::string file = "gemma3_1b_flax_call.hlo";
  ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  auto module =
      ParseHloText(testing_support::ReadFile(testing_support::CorpusPath(file)), file, quiet);
  ASSERT_GT(module->instruction_count(), 9000);
  const auto start = std::chrono::steady_clock::now();
  Verify(*module);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("verify_ms", std::to_string(seconds * 1e3));
  EXPECT_LT(seconds, 0.1) << "verifying " << module->instruction_count() << " instructions";
}

// The error must point at the line of the offending instruction (line 4 below: the header is
// line 1, the entry line 2).
void ExpectTextError(const std::string& body, const std::string& needle, uint32_t line) {
  std::unique_ptr<Module> module;
  try {
    module = Parse(body);
  } catch (const Error& e) {
    FAIL() << "parser rejected the test input: " << FormatError(e);
  }
  const uint32_t got = ExpectErrorContaining([&] { Verify(*module); }, needle);
  EXPECT_EQ(got, line) << body;
}

// As above where either of two lines is a correct answer (e.g. which call of a cycle is met
// first depends on the order computations are visited in).
void ExpectTextErrorAtOneOf(const std::string& body, const std::string& needle, uint32_t line_a,
                            uint32_t line_b) {
  auto module = Parse(body);
  const uint32_t got = ExpectErrorContaining([&] { Verify(*module); }, needle);
  EXPECT_TRUE(got == line_a || got == line_b) << "line " << got << "\n" << body;
}

// For inputs the parser may already refuse (it resolves names while reading): whichever stage
// rejects the input must say what is wrong.
void ExpectParseOrVerifyError(const std::string& body, const std::string& needle) {
  ExpectErrorContaining([&] { Verify(*Parse(body)); }, needle);
}

TEST(VerifierText, WrongArity) {
  ExpectParseOrVerifyError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT n = f32[2] add(a)
}
)",
                           "expects 2 operands, got 1");
}

TEST(VerifierText, UndefinedCallee) {
  ExpectParseOrVerifyError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT c = f32[2] call(a), to_apply=nowhere
}
)",
                           "nowhere");
}

TEST(VerifierText, ShapeMismatch) {
  ExpectTextError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3] parameter(1)
  ROOT add.3 = f32[2,3] add(a, b)
}
)",
                  "add.3: operand 1 has shape f32[3] but f32[2,3] was expected", 5);
}

TEST(VerifierText, DeclaredShapeWrong) {
  ExpectTextError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT t = f32[2,3] transpose(a), dimensions={1,0}
}
)",
                  "t: shape f32[2,3] does not match the inferred shape f32[3,2]", 4);
}

TEST(VerifierText, BadReducerSignature) {
  ExpectTextError(R"(HloModule m
add {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
ENTRY e {
  a = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add
}
)",
                  "r: to_apply computation 'add' takes 1 parameters but 2 were expected", 9);
}

TEST(VerifierText, WhileBodyMustReturnItsParameterShape) {
  ExpectTextError(R"(HloModule m
cond {
  c = s32[] parameter(0)
  ROOT lt = pred[] compare(c, c), direction=LT
}
body {
  b = s32[] parameter(0)
  ROOT f = f32[] convert(b)
}
ENTRY e {
  i = s32[] parameter(0)
  ROOT w = s32[] while(i), condition=cond, body=body
}
)",
                  "w: body computation 'body' returns f32[] but s32[] was expected", 12);
}

TEST(VerifierText, CallGraphCycle) {
  ExpectTextErrorAtOneOf(R"(HloModule m
f {
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=g
}
g {
  y = f32[] parameter(0)
  ROOT d = f32[] call(y), to_apply=f
}
ENTRY e {
  a = f32[] parameter(0)
  ROOT r = f32[] call(a), to_apply=f
}
)",
                  "which forms a cycle in the call graph", 4, 8);
}

TEST(VerifierText, AbsurdShape) {
  ExpectTextError(R"(HloModule m
ENTRY e {
  ROOT a = f32[1000000,1000000] parameter(0)
}
)",
                  "a: array f32[1000000,1000000] has too many elements", 3);
}

TEST(VerifierText, ConditionalBranchCountForPredIndex) {
  ExpectTextError(R"(HloModule m
b0 {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = pred[] parameter(0)
  a = f32[] parameter(1)
  ROOT c = f32[] conditional(p, a, a, a), branch_computations={b0, b0, b0}
}
)",
                  "c: has 3 branch computations but a pred index needs exactly 2", 9);
}

}  // namespace

// Round trip over the real XLA corpus: print -> parse -> print is a fixed point for every file,
// parse(print(m)) keeps every instruction, shape, attribute and constant bit, and the largest
// model parses fast enough for interactive use.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "tests/test_support.h"

namespace {

std::unique_ptr<hlo::Module> ParseQuietly(const std::string& text, const std::string& name) {
  hlo::ParseOptions options;
  options.warn = [](const std::string&) {};
  return hlo::ParseHloText(text, name, options);
}

// Structural equality of two modules, reported instruction by instruction.
void ExpectSameModule(const hlo::Module& a, const hlo::Module& b) {
  EXPECT_EQ(a.name(), b.name());
  EXPECT_EQ(a.header_attributes(), b.header_attributes());
  EXPECT_EQ(a.leading_tables(), b.leading_tables());
  EXPECT_EQ(a.trailing_tables(), b.trailing_tables());
  ASSERT_EQ(a.computations().size(), b.computations().size());
  ASSERT_TRUE(a.entry() && b.entry());
  EXPECT_EQ(a.entry()->name(), b.entry()->name());
  for (size_t c = 0; c < a.computations().size(); ++c) {
    const hlo::Computation& ca = *a.computations()[c];
    const hlo::Computation& cb = *b.computations()[c];
    ASSERT_EQ(ca.name(), cb.name());
    ASSERT_EQ(ca.instructions().size(), cb.instructions().size()) << ca.name();
    ASSERT_TRUE(ca.root() && cb.root());
    EXPECT_EQ(ca.root()->name(), cb.root()->name());
    for (size_t i = 0; i < ca.instructions().size(); ++i) {
      const hlo::Instruction& x = *ca.instructions()[i];
      const hlo::Instruction& y = *cb.instructions()[i];
      ASSERT_EQ(x.name(), y.name());
      EXPECT_EQ(x.opcode(), y.opcode()) << x.name();
      EXPECT_TRUE(x.shape().Equal(y.shape())) << x.name() << ": " << x.shape().ToString() << " vs "
                                               << y.shape().ToString();
      EXPECT_TRUE(x.attrs() == y.attrs()) << x.name();  // ConstantAttrs compares bits
      EXPECT_EQ(x.opaque_attributes(), y.opaque_attributes()) << x.name();
      ASSERT_EQ(x.operand_count(), y.operand_count()) << x.name();
      for (int64_t k = 0; k < x.operand_count(); ++k) {
        EXPECT_EQ(x.operand(k)->name(), y.operand(k)->name()) << x.name();
      }
      ASSERT_EQ(x.called_computations().size(), y.called_computations().size()) << x.name();
      for (size_t k = 0; k < x.called_computations().size(); ++k) {
        EXPECT_EQ(x.called_computations()[k]->name(), y.called_computations()[k]->name());
      }
    }
  }
}

class CorpusRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusRoundTrip, PrintParsePrintIsAFixedPoint) {
  std::string path = testing_support::CorpusPath(GetParam());
  std::string text = testing_support::ReadFile(path);
  ASSERT_FALSE(text.empty()) << path;
  std::unique_ptr<hlo::Module> original;
  try {
    original = ParseQuietly(text, path);
  } catch (const hlo::Error& e) {
    FAIL() << hlo::FormatError(e, path, text);
  }
  std::string first = hlo::PrintModule(*original);
  std::unique_ptr<hlo::Module> reparsed;
  try {
    reparsed = ParseQuietly(first, "printed");
  } catch (const hlo::Error& e) {
    FAIL() << hlo::FormatError(e, "printed", first);
  }
  std::string second = hlo::PrintModule(*reparsed);
  EXPECT_EQ(first, second);
  ExpectSameModule(*original, *reparsed);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRoundTrip, ::testing::ValuesIn(testing_support::CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(CorpusRoundTripTest, CorpusIsNotEmpty) {
  EXPECT_GE(testing_support::CorpusFiles().size(), 10u);
}

TEST(ParserPerformanceTest, GemmaParsesQuickly) {
  std::string text = testing_support::ReadFile(testing_support::CorpusPath("gemma3_1b_flax_call.hlo"));
  ASSERT_GT(text.size(), 1000000u);
  double best = 1e9;
  for (int run = 0; run < 3; ++run) {
    auto start = std::chrono::steady_clock::now();
    auto module = ParseQuietly(text, "gemma");
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, seconds);
    EXPECT_GT(module->instruction_count(), 9000);
  }
#ifdef NDEBUG
  EXPECT_LT(best, 0.3) << "parse took " << best << " s";
#else
  EXPECT_LT(best, 3.0) << "parse took " << best << " s (debug build)";
#endif
}

}  // namespace

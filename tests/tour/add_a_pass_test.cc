// The "add a pass" checklist (docs/add-a-pass.md), exercised two ways:
//   - A small pass written exactly as the checklist says (below: double-negation-elimination),
//     given a registry row of the same form as compiler/pass_registry.cc's, looked up by name
//     and run through compiler::Pipeline with verification after every pass and the
//     honest-"changed" check: its effect is checked on real values, and a pass that breaks the
//     module or lies about "changed" is caught by the pipeline with the pass named.
//   - For EVERY registered pass, the things the checklist makes a pass author do: a kebab-case
//     name equal to the registry key (step 4), a one-line description (step 1), a header that
//     states its post-condition (step 1), and golden cases under tests/golden/<name>/ (step 6).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "compiler/pass.h"
#include "compiler/pass_registry.h"
#include "compiler/pipeline.h"
#include "compiler/target_description.h"
#include "hlo/diagnostic.h"
#include "hlo/evaluator.h"
#include "hlo/printer.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace {

namespace fs = std::filesystem;

// ---- Step 1-2: the pass (header comment + class; in a real pass, compiler/passes/*.h/.cc) ----

// double-negation-elimination: negate(negate(x)) -> x.
//
// Post-condition: no instruction of any computation uses a negate whose operand is a negate;
// the inner and outer negates are left for dce when they lose their last user.
// Does NOT: fold negate(constant) (constant-folding does) or rewrite subtract(0, x).
class DoubleNegationElimination : public compiler::Pass {
 public:
  explicit DoubleNegationElimination(const compiler::TargetDescription& /*target*/) {}
  std::string_view name() const override { return "double-negation-elimination"; }
  std::string_view description() const override { return "rewrite negate(negate(x)) to x"; }
  bool Run(hlo::Module& module) override {
    bool changed = false;
    for (const auto& computation : module.computations()) {
      for (const auto& inst : computation->instructions()) {
        if (inst->opcode() != hlo::Opcode::kNegate) continue;
        hlo::Instruction* inner = inst->operand(0);
        if (inner->opcode() != hlo::Opcode::kNegate) continue;
        hlo::Instruction* x = inner->operand(0);
        if (inst->users().empty() && computation->root() != inst.get()) continue;
        inst->ReplaceAllUsesWith(x);
        if (computation->root() == inst.get()) computation->set_root(x);
        changed = true;  // true exactly when something changed (honest "changed")
      }
    }
    return changed;
  }
};

// ---- Step 4: the registry row, in the form compiler/pass_registry.cc uses ----
// The tour cannot edit the production table, so it looks names up in that table plus its own
// row, exactly as compiler::MakePass does.
const std::vector<compiler::PassEntry>& TourPasses() {
  static const std::vector<compiler::PassEntry> passes = [] {
    std::vector<compiler::PassEntry> all = compiler::AllPasses();
    all.push_back({"double-negation-elimination", [](const compiler::TargetDescription& t) {
                     return std::make_unique<DoubleNegationElimination>(t);
                   }});
    return all;
  }();
  return passes;
}

std::unique_ptr<compiler::Pass> MakeTourPass(const std::string& name,
                                             const compiler::TargetDescription& target) {
  for (const compiler::PassEntry& entry : TourPasses()) {
    if (entry.name == name) return entry.make(target);
  }
  throw hlo::Error("unknown pass '" + name + "'");
}

compiler::Pipeline PipelineOf(const std::vector<std::string>& names) {
  compiler::Pipeline pipeline("tour");
  for (const std::string& name : names) {
    pipeline.Add(MakeTourPass(name, targets::CpuDescription()));
  }
  return pipeline;
}

compiler::PipelineOptions TestOptions() {
  compiler::PipelineOptions options;
  options.verify_each = true;           // "always on in tests" (pipeline.h)
  options.check_honest_change = true;
  return options;
}

constexpr const char* kModule = R"(
HloModule double_negation
ENTRY e {
  x = f32[3] parameter(0)
  n1 = f32[3] negate(x)
  n2 = f32[3] negate(n1)
  one = f32[3] constant({1, 1, 1})
  ROOT r = f32[3] add(n2, one)
}
)";

std::vector<float> Values(const hlo::Literal& literal) {
  std::span<const float> data = literal.data<float>();
  return {data.begin(), data.end()};
}

TEST(TourAddAPass, Steps1To5_RunsByNameWithDceAndKeepsTheValues) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kModule);
  std::vector<hlo::Literal> inputs;
  inputs.emplace_back(hlo::Shape::Array(hlo::PrimitiveType::kF32, {3}));
  const float x[] = {1.5f, -2.0f, 0.0f};
  std::copy(std::begin(x), std::end(x), inputs[0].mutable_data<float>().begin());

  compiler::PipelineReport report =
      PipelineOf({"double-negation-elimination", "dce"}).Run(*module, TestOptions());
  ASSERT_EQ(report.passes.size(), 2u);
  EXPECT_EQ(report.passes[0].name, "double-negation-elimination");
  EXPECT_TRUE(report.passes[0].changed);
  EXPECT_TRUE(report.passes[1].changed) << "dce removes the two dead negates";

  // The effect: no negate left, root = add(x, one); values by hand: x + 1.
  for (const auto& inst : module->entry()->instructions()) {
    EXPECT_NE(inst->opcode(), hlo::Opcode::kNegate) << hlo::PrintModule(*module);
  }
  EXPECT_EQ(module->entry()->root()->operand(0)->name(), "x");
  EXPECT_EQ(Values(hlo::Evaluate(*module, inputs)), (std::vector<float>{2.5f, -1.0f, 1.0f}));

  // Run again: nothing to do, and "no change" is honest.
  compiler::PipelineReport second =
      PipelineOf({"double-negation-elimination"}).Run(*module, TestOptions());
  EXPECT_FALSE(second.passes[0].changed);
}

TEST(TourAddAPass, Step7_DisablingThePassByNameSkipsIt) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kModule);
  compiler::PipelineOptions options = TestOptions();
  options.disabled = {"double-negation-elimination"};
  compiler::PipelineReport report =
      PipelineOf({"double-negation-elimination", "dce"}).Run(*module, options);
  EXPECT_TRUE(report.passes[0].skipped);
  EXPECT_FALSE(report.passes[1].changed) << "nothing is dead without the rewrite";
  EXPECT_NE(module->entry()->FindInstruction("n2"), nullptr);
}

// A pass that breaks the module: the pipeline's verification names it.
class BreaksShapes : public compiler::Pass {
 public:
  std::string_view name() const override { return "breaks-shapes"; }
  std::string_view description() const override { return "sets a wrong result shape"; }
  bool Run(hlo::Module& module) override {
    module.entry()->root()->mutable_shape() = hlo::Shape::Array(hlo::PrimitiveType::kF32, {4});
    return true;
  }
};

// A pass that changes the module but reports no change.
class LiesAboutChanged : public compiler::Pass {
 public:
  std::string_view name() const override { return "lies-about-changed"; }
  std::string_view description() const override { return "renames the root, returns false"; }
  bool Run(hlo::Module& module) override {
    module.entry()->root()->set_name("renamed");
    return false;
  }
};

TEST(TourAddAPass, Step2_ThePipelineVerifiesAfterEveryPassAndChecksChanged) {
  {
    std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kModule);
    compiler::Pipeline pipeline("tour");
    pipeline.Add(std::make_unique<BreaksShapes>());
    try {
      pipeline.Run(*module, TestOptions());
      ADD_FAILURE() << "verification after the pass did not run";
    } catch (const hlo::Error& e) {
      EXPECT_NE(std::string(e.what()).find("breaks-shapes"), std::string::npos) << e.what();
    }
  }
  {
    std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kModule);
    compiler::Pipeline pipeline("tour");
    pipeline.Add(std::make_unique<LiesAboutChanged>());
    try {
      pipeline.Run(*module, TestOptions());
      ADD_FAILURE() << "the honest-change check did not run";
    } catch (const hlo::Error& e) {
      EXPECT_NE(std::string(e.what()).find("lies-about-changed"), std::string::npos) << e.what();
    }
  }
}

TEST(TourAddAPass, Step4_UnknownNamesListTheValidOnes) {
  try {
    compiler::MakePass("no-such-pass", targets::CpuDescription());
    ADD_FAILURE() << "an unknown pass name was accepted";
  } catch (const hlo::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pass 'no-such-pass'; valid passes: "),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dce"), std::string::npos);
  }
}

// ---- Every registered pass follows the checklist ----

std::string Source(const std::string& relative) {
  return testing_support::ReadFile(std::string(RETARGET_SOURCE_DIR) + "/" + relative);
}

// The header under compiler/passes or compiler/fusion that defines `name()` as `name`.
std::string HeaderDefining(const std::string& name) {
  for (const char* dir : {"compiler/passes", "compiler/fusion"}) {
    for (const auto& file : fs::directory_iterator(std::string(RETARGET_SOURCE_DIR) + "/" + dir)) {
      if (file.path().extension() != ".h") continue;
      const std::string text = testing_support::ReadFile(file.path().string());
      if (text.find("return \"" + name + "\";") != std::string::npos) return file.path().string();
    }
  }
  return "";
}

TEST(TourAddAPass, EveryRegisteredPassFollowsTheChecklist) {
  const std::regex kebab("[a-z]+(-[a-z]+)*");
  std::set<std::string> seen;
  for (const compiler::PassEntry& entry : compiler::AllPasses()) {
    SCOPED_TRACE("pass '" + entry.name + "'");
    EXPECT_TRUE(seen.insert(entry.name).second) << "add-a-pass.md step 4: duplicate row";
    EXPECT_TRUE(std::regex_match(entry.name, kebab)) << "add-a-pass.md step 1: kebab-case name";
    std::unique_ptr<compiler::Pass> pass = entry.make(targets::CpuDescription());
    EXPECT_EQ(pass->name(), entry.name)
        << "add-a-pass.md step 4: the registry key must be the pass's name()";
    EXPECT_FALSE(pass->description().empty()) << "add-a-pass.md step 1: description()";
    EXPECT_EQ(pass->description().find('\n'), std::string::npos)
        << "add-a-pass.md step 1: description() is one line";

    const std::string header = HeaderDefining(entry.name);
    if (header.empty()) {
      ADD_FAILURE() << "add-a-pass.md step 1: no header in compiler/passes or compiler/fusion "
                       "defines name() as \"" << entry.name << "\"";
    } else {
      EXPECT_NE(testing_support::ReadFile(header).find("Post-condition"), std::string::npos)
          << "add-a-pass.md step 1: " << header << " must state the post-condition";
    }

    const fs::path golden = fs::path(RETARGET_SOURCE_DIR) / "tests/golden" / entry.name;
    int cases = 0;
    if (fs::is_directory(golden)) {
      for (const auto& file : fs::directory_iterator(golden)) {
        if (file.path().extension() != ".hlo") continue;
        ++cases;
        const std::string text = testing_support::ReadFile(file.path().string());
        EXPECT_NE(text.find("// RUN: passes="), std::string::npos)
            << "add-a-pass.md step 6: " << file.path() << " has no RUN line";
        EXPECT_NE(text.find("CHECK"), std::string::npos)
            << "add-a-pass.md step 6: " << file.path() << " has no CHECK lines (bless it)";
      }
    }
    EXPECT_GE(cases, 1) << "add-a-pass.md step 6: add golden cases in tests/golden/" << entry.name;
  }
  // The pipelines pick passes up by name from the same registry (step 4).
  EXPECT_NE(Source("compiler/target_pipelines.cc").find("\"dce\""), std::string::npos);
}

}  // namespace

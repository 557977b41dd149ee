// Tests of the optimizer infrastructure: Pipeline (order, disabling, verify-each, honest-change
// detection, dumps, the time table), the target descriptions (HandlingFor rules and the numbers
// behind them, recomputed here from their sources) and MakeTargetPipeline's assembly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "compiler/pass_registry.h"
#include "compiler/pipeline.h"
#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace {

using compiler::OpHandling;
using hlo::Opcode;
using hlo::PrimitiveType;

constexpr const char* kModule = R"(
HloModule infra
ENTRY main {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  ROOT e = f32[2] exponential(n)
}
)";

// Appends its name to a shared log; reports `changed` without touching the module.
class LoggingPass : public compiler::Pass {
 public:
  LoggingPass(std::string name, std::vector<std::string>* log)
      : name_(std::move(name)), log_(log) {}
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "logs that it ran"; }
  bool Run(hlo::Module&) override {
    log_->push_back(name_);
    return false;
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
};

// Renames the root: a real change. `honest` decides whether it admits it.
class RenamingPass : public compiler::Pass {
 public:
  RenamingPass(std::string name, bool honest) : name_(std::move(name)), honest_(honest) {}
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "renames the root"; }
  bool Run(hlo::Module& module) override {
    module.entry()->root()->set_name("renamed");
    return honest_;
  }

 private:
  std::string name_;
  bool honest_;
};

// Gives the root a shape its operand cannot produce: the verifier must catch it.
class ShapeBreakingPass : public compiler::Pass {
 public:
  std::string_view name() const override { return "break-shape"; }
  std::string_view description() const override { return "corrupts a shape"; }
  bool Run(hlo::Module& module) override {
    module.entry()->root()->mutable_shape() = hlo::Shape::Array(PrimitiveType::kF32, {5});
    return true;
  }
};

class ThrowingPass : public compiler::Pass {
 public:
  std::string_view name() const override { return "thrower"; }
  std::string_view description() const override { return "throws"; }
  bool Run(hlo::Module&) override { throw hlo::Error("cannot handle this"); }
};

compiler::PipelineOptions VerifyEach() {
  compiler::PipelineOptions options;
  options.verify_each = true;
  return options;
}
compiler::PipelineOptions Disabled(std::set<std::string> names) {
  compiler::PipelineOptions options;
  options.disabled = std::move(names);
  return options;
}
compiler::PipelineOptions HonestChange() {
  compiler::PipelineOptions options;
  options.check_honest_change = true;
  return options;
}
compiler::PipelineOptions DumpTo(std::string dir, std::set<std::string> disabled = {}) {
  compiler::PipelineOptions options;
  options.dump_dir = std::move(dir);
  options.disabled = std::move(disabled);
  return options;
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const hlo::Error& e) {
    return e.message();
  }
  return "<no error>";
}

TEST(Pipeline, RunsPassesInOrderAndReportsEach) {
  std::vector<std::string> log;
  compiler::Pipeline pipeline("test");
  pipeline.Add(std::make_unique<LoggingPass>("first", &log))
      .Add(std::make_unique<RenamingPass>("second", true))
      .Add(std::make_unique<LoggingPass>("third", &log));
  auto module = testing_support::ParseAndVerify(kModule);
  compiler::PipelineReport report = pipeline.Run(*module, VerifyEach());
  EXPECT_EQ(log, (std::vector<std::string>{"first", "third"}));
  ASSERT_EQ(report.passes.size(), 3u);
  EXPECT_EQ(report.passes[0].name, "first");
  EXPECT_FALSE(report.passes[0].changed);
  EXPECT_TRUE(report.passes[1].changed);
  EXPECT_EQ(module->entry()->root()->name(), "renamed");
  double sum = 0;
  for (const auto& p : report.passes) sum += p.milliseconds;
  EXPECT_DOUBLE_EQ(report.total_milliseconds, sum);

  std::string table = report.ToTable();
  EXPECT_NE(table.find("first"), std::string::npos);
  EXPECT_NE(table.find("total"), std::string::npos);
  std::string list = pipeline.ListPasses();
  EXPECT_NE(list.find("pipeline 'test' (3 passes)"), std::string::npos) << list;
  EXPECT_NE(list.find("02  second"), std::string::npos) << list;
  EXPECT_NE(list.find("renames the root"), std::string::npos) << list;
}

TEST(Pipeline, DisabledPassIsSkippedAndRecorded) {
  std::vector<std::string> log;
  compiler::Pipeline pipeline("test");
  pipeline.Add(std::make_unique<LoggingPass>("a", &log))
      .Add(std::make_unique<LoggingPass>("b", &log))
      .Add(std::make_unique<LoggingPass>("a", &log));
  auto module = testing_support::ParseAndVerify(kModule);
  compiler::PipelineReport report = pipeline.Run(*module, Disabled({"a"}));
  EXPECT_EQ(log, (std::vector<std::string>{"b"}));  // both runs of "a" are skipped
  EXPECT_TRUE(report.passes[0].skipped);
  EXPECT_FALSE(report.passes[1].skipped);
  EXPECT_TRUE(report.passes[2].skipped);
  EXPECT_NE(report.ToTable().find("disabled"), std::string::npos);
}

TEST(Pipeline, UnknownDisabledNameListsValidNamesAndRunsNothing) {
  std::vector<std::string> log;
  compiler::Pipeline pipeline("test");
  pipeline.Add(std::make_unique<LoggingPass>("alpha", &log))
      .Add(std::make_unique<LoggingPass>("beta", &log));
  auto module = testing_support::ParseAndVerify(kModule);
  std::string message = ErrorOf([&] { pipeline.Run(*module, Disabled({"alpah"})); });
  EXPECT_NE(message.find("unknown pass 'alpah'"), std::string::npos) << message;
  EXPECT_NE(message.find("valid passes:"), std::string::npos) << message;
  EXPECT_NE(message.find("alpha"), std::string::npos) << message;
  EXPECT_NE(message.find("beta"), std::string::npos) << message;
  EXPECT_TRUE(log.empty());
  // A registered pass this pipeline does not contain is a valid (harmless) name.
  if (!compiler::AllPasses().empty()) {
    const std::string registered = compiler::AllPasses().front().name;
    EXPECT_NE(message.find(registered), std::string::npos) << message;
    EXPECT_NO_THROW(pipeline.Run(*module, Disabled({registered})));
  }
}

TEST(Pipeline, VerifyEachNamesTheBreakingPass) {
  compiler::Pipeline pipeline("test");
  std::vector<std::string> log;
  pipeline.Add(std::make_unique<LoggingPass>("fine", &log))
      .Add(std::make_unique<ShapeBreakingPass>());
  auto module = testing_support::ParseAndVerify(kModule);
  std::string message = ErrorOf([&] { pipeline.Run(*module, VerifyEach()); });
  EXPECT_NE(message.find("does not verify after pass 2/2 'break-shape'"), std::string::npos)
      << message;
  // Without verify_each the corruption goes unnoticed by the pipeline (the caller verifies).
  auto again = testing_support::ParseAndVerify(kModule);
  EXPECT_NO_THROW(pipeline.Run(*again, {}));
}

TEST(Pipeline, InvalidInputNeverReachesAPass) {
  std::vector<std::string> log;
  compiler::Pipeline pipeline("test");
  pipeline.Add(std::make_unique<LoggingPass>("a", &log));
  // negate of f32[2] declared as f32[3]: parses, but does not verify.
  auto module = hlo::ParseHloText(R"(
HloModule bad
ENTRY main {
  p = f32[2] parameter(0)
  ROOT n = f32[3] negate(p)
}
)",
                                  "bad.hlo");
  hlo::SourceLocation location;
  try {
    pipeline.Run(*module, {});
    ADD_FAILURE() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("does not verify"), std::string::npos) << e.message();
    location = e.location();
  }
  EXPECT_TRUE(log.empty());
  ASSERT_TRUE(location.file);
  EXPECT_EQ(*location.file, "bad.hlo");
  EXPECT_EQ(location.line, 5u);  // the negate's line, kept from the verifier
}

TEST(Pipeline, DishonestNoChangeIsCaughtAndNamed) {
  compiler::Pipeline pipeline("test");
  pipeline.Add(std::make_unique<RenamingPass>("liar", /*honest=*/false));
  auto module = testing_support::ParseAndVerify(kModule);
  std::string message = ErrorOf([&] { pipeline.Run(*module, HonestChange()); });
  EXPECT_NE(message.find("pass 1/1 'liar' reported no change but modified the module"),
            std::string::npos)
      << message;
  // The first differing line is quoted: line 5 of the printed module (header, blank, ENTRY, p, n,
  // root).
  EXPECT_NE(message.find("ROOT e = "), std::string::npos) << message;
  EXPECT_NE(message.find("ROOT renamed = "), std::string::npos) << message;
  // An honest pass making the same change passes the check.
  compiler::Pipeline honest("test");
  honest.Add(std::make_unique<RenamingPass>("truthful", /*honest=*/true));
  auto other = testing_support::ParseAndVerify(kModule);
  EXPECT_NO_THROW(honest.Run(*other, HonestChange()));
}

TEST(Pipeline, ErrorsThrownByAPassNameIt) {
  compiler::Pipeline pipeline("test");
  pipeline.Add(std::make_unique<ThrowingPass>());
  auto module = testing_support::ParseAndVerify(kModule);
  EXPECT_EQ(ErrorOf([&] { pipeline.Run(*module, {}); }),
            "pass 1/1 'thrower' failed: cannot handle this");
}

class DumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("retarget_infra_dump_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(DumpTest, WritesNumberedFilesAfterEachExecutedPass) {
  std::vector<std::string> log;
  compiler::Pipeline pipeline("test");
  pipeline.Add(std::make_unique<RenamingPass>("rename", true))
      .Add(std::make_unique<LoggingPass>("skipped", &log))
      .Add(std::make_unique<LoggingPass>("last", &log));
  auto module = testing_support::ParseAndVerify(kModule);
  std::string input_text = hlo::PrintModule(*module);
  pipeline.Run(*module, DumpTo((dir_ / "nested").string(), {"skipped"}));

  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "nested")) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  // Numbered by position in the pipeline, so disabling "skipped" does not renumber "last".
  EXPECT_EQ(files, (std::vector<std::string>{"00.input.hlo", "01.rename.hlo", "03.last.hlo"}));
  EXPECT_EQ(testing_support::ReadFile((dir_ / "nested" / "00.input.hlo").string()), input_text);
  std::string after = testing_support::ReadFile((dir_ / "nested" / "01.rename.hlo").string());
  EXPECT_NE(after.find("ROOT renamed = f32[2]{0} exponential(n)"), std::string::npos) << after;
  // The dump is a module again.
  EXPECT_NO_THROW(testing_support::ParseAndVerify(after));
}

TEST_F(DumpTest, DumpDirThatIsAFileIsAnError) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  compiler::Pipeline pipeline("test");
  auto module = testing_support::ParseAndVerify(kModule);
  std::string message = ErrorOf([&] { pipeline.Run(*module, DumpTo((dir_ / "file").string())); });
  EXPECT_NE(message.find("is not a directory"), std::string::npos) << message;
}

// ---------------------------------------------------------------------------------------------
// Target descriptions.

OpHandling Handling(const compiler::TargetDescription& t, Opcode op, PrimitiveType type,
                    std::string* library = nullptr) {
  std::string ignored;
  return t.HandlingFor(op, type, library ? library : &ignored);
}

TEST(TargetDescription, HandlingForAppliesTypesOtherwiseAndDefault) {
  compiler::TargetDescription t;
  t.default_handling = OpHandling::kNative;
  t.op_rules[Opcode::kDot] = {
      OpHandling::kLibrary, "Lib", {PrimitiveType::kF32}, OpHandling::kHostFallback};
  std::string library = "stale";
  EXPECT_EQ(t.HandlingFor(Opcode::kDot, PrimitiveType::kF32, &library), OpHandling::kLibrary);
  EXPECT_EQ(library, "Lib");
  EXPECT_EQ(t.HandlingFor(Opcode::kDot, PrimitiveType::kF16, &library), OpHandling::kHostFallback);
  EXPECT_EQ(library, "");  // a fallback names no library
  EXPECT_EQ(t.HandlingFor(Opcode::kAdd, PrimitiveType::kF16, &library), OpHandling::kNative);
  EXPECT_EQ(library, "");
  EXPECT_EQ(t.HandlingFor(Opcode::kAdd, PrimitiveType::kF16, nullptr), OpHandling::kNative);
}

TEST(TargetDescription, FindTargetAndNames) {
  EXPECT_EQ(targets::DescriptionNames(),
            (std::vector<std::string>{"interp", "cpu", "gpu", "systolic"}));
  for (const std::string& name : targets::DescriptionNames()) {
    const compiler::TargetDescription* t = targets::FindDescription(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->name, name);
    EXPECT_FALSE(t->supports_collectives) << name;  // single device everywhere
    // TransformerEngine ships CUDA kernels only: known to the gpu registry alone (issue 8).
    EXPECT_EQ(t->custom_calls.count("te_fused_attn_forward_ffi"), name == "gpu" ? 1u : 0u) << name;
    EXPECT_GT(t->price_per_hour_usd, 0) << name;
    EXPECT_GT(t->peak.memory_bytes_per_second, 0) << name;
    EXPECT_GT(t->peak.host_link_bytes_per_second, 0) << name;
  }
  EXPECT_EQ(targets::FindDescription("tpu"), nullptr);
  EXPECT_EQ(targets::FindDescription(""), nullptr);
  EXPECT_EQ(&targets::CpuDescription(), targets::FindDescription("cpu"));  // one instance per process
}

TEST(TargetDescription, InterpGeneratesEverythingAndFusesNothing) {
  const auto& t = targets::InterpDescription();
  EXPECT_TRUE(t.fusion_kinds.empty());
  EXPECT_TRUE(t.contraction_epilogues.empty());
  for (Opcode op : {Opcode::kDot, Opcode::kConvolution, Opcode::kGather, Opcode::kSort}) {
    EXPECT_EQ(Handling(t, op, PrimitiveType::kBF16), OpHandling::kGenerated);
  }
}

TEST(TargetDescription, CpuUsesItsGemmForFloatContractions) {
  const auto& t = targets::CpuDescription();
  std::string library;
  EXPECT_EQ(Handling(t, Opcode::kDot, PrimitiveType::kF32, &library), OpHandling::kLibrary);
  EXPECT_EQ(library, "retarget-sgemm");
  EXPECT_EQ(Handling(t, Opcode::kConvolution, PrimitiveType::kBF16, &library),
            OpHandling::kLibrary);
  EXPECT_EQ(library, "retarget-sgemm");
  EXPECT_EQ(Handling(t, Opcode::kDot, PrimitiveType::kS32, &library), OpHandling::kGenerated);
  EXPECT_EQ(library, "");
  EXPECT_EQ(Handling(t, Opcode::kGather, PrimitiveType::kF32), OpHandling::kGenerated);
  EXPECT_EQ(t.preferred_conv_dim_labels, "b01f_01io->b01f");
  EXPECT_TRUE(t.fusion_kinds.count(hlo::FusionKind::kOutput));
  EXPECT_TRUE(t.contraction_epilogues.count(compiler::Epilogue::kRelu));
  EXPECT_FALSE(t.contraction_epilogues.count(compiler::Epilogue::kGelu));
  // 2 cores x 2 FMA ports x (512 / 32) lanes x 2 FLOP per FMA x 2.3 GHz.
  EXPECT_DOUBLE_EQ(t.peak.matrix_ops_per_second.at(PrimitiveType::kF32), 294.4e9);
}

TEST(TargetDescription, GpuMapsToNvidiaLibraries) {
  const auto& t = targets::GpuDescription();
  std::string library;
  EXPECT_EQ(Handling(t, Opcode::kDot, PrimitiveType::kBF16, &library), OpHandling::kLibrary);
  EXPECT_EQ(library, "cuBLASLt");
  EXPECT_EQ(Handling(t, Opcode::kConvolution, PrimitiveType::kF32, &library), OpHandling::kLibrary);
  EXPECT_EQ(library, "cuDNN");
  // No generated convolution kernel: an integer convolution does not compile for the GPU.
  EXPECT_EQ(Handling(t, Opcode::kConvolution, PrimitiveType::kS32), OpHandling::kHostFallback);
  // Integer dots are a generated multiply-reduce (dot-expander), not cuBLASLt's int8 IMMA.
  EXPECT_EQ(Handling(t, Opcode::kDot, PrimitiveType::kS8, &library), OpHandling::kGenerated);
  EXPECT_EQ(t.custom_calls.at("__cublas$gemm").handling, OpHandling::kLibrary);
  EXPECT_EQ(t.custom_calls.at("__cublas$gemm").library, "cuBLAS");
  EXPECT_EQ(t.custom_calls.at("TopK").handling, OpHandling::kGenerated);
  EXPECT_TRUE(t.multi_output_fusion);
  EXPECT_TRUE(t.contraction_epilogues.count(compiler::Epilogue::kGelu));
  // Datasheet: 141 GB at 4.8 TB/s; dense BF16 tensor rate is half the 1,979 TFLOPS sparse one.
  EXPECT_EQ(t.device_memory_bytes, 141'000'000'000);
  EXPECT_DOUBLE_EQ(t.peak.memory_bytes_per_second, 4.8e12);
  EXPECT_NEAR(t.peak.matrix_ops_per_second.at(PrimitiveType::kBF16), 1979e12 / 2, 1e12);
}

TEST(TargetDescription, SystolicRunsContractionsNativelyAndFallsBackForTheRest) {
  const auto& t = targets::SystolicDescription();
  for (PrimitiveType type : {PrimitiveType::kS8, PrimitiveType::kBF16, PrimitiveType::kF32}) {
    EXPECT_EQ(Handling(t, Opcode::kDot, type), OpHandling::kNative);
    EXPECT_EQ(Handling(t, Opcode::kConvolution, type), OpHandling::kNative);
  }
  EXPECT_EQ(Handling(t, Opcode::kDot, PrimitiveType::kF64), OpHandling::kHostFallback);
  EXPECT_EQ(Handling(t, Opcode::kAdd, PrimitiveType::kBF16), OpHandling::kNative);
  EXPECT_EQ(Handling(t, Opcode::kExp, PrimitiveType::kF64), OpHandling::kHostFallback);
  EXPECT_EQ(Handling(t, Opcode::kReduce, PrimitiveType::kF32), OpHandling::kNative);
  EXPECT_EQ(Handling(t, Opcode::kReshape, PrimitiveType::kF32), OpHandling::kNative);
  // Data movement is DMA programs, row gathers and scatters (an embedding lookup and its
  // gradient) index-driven DMA.
  // Sorts and top-k the vector unit's bitonic network.
  for (Opcode op : {Opcode::kSlice, Opcode::kDynamicSlice, Opcode::kDynamicUpdateSlice,
                    Opcode::kGather, Opcode::kScatter, Opcode::kSort, Opcode::kTopK}) {
    EXPECT_EQ(Handling(t, op, PrimitiveType::kF32), OpHandling::kNative) << hlo::OpcodeName(op);
  }
  for (Opcode op : {Opcode::kSelectAndScatter, Opcode::kMap, Opcode::kCustomCall}) {
    EXPECT_EQ(Handling(t, op, PrimitiveType::kF32), OpHandling::kHostFallback)
        << hlo::OpcodeName(op);
  }
  EXPECT_EQ(t.custom_calls.at("TopK").handling, OpHandling::kHostFallback);
  // TPU v1: 65,536 MACs x 2 ops x 700 MHz ~ 92 TOPS; 24 MiB unified buffer; 34 GB/s.
  EXPECT_NEAR(t.peak.matrix_ops_per_second.at(PrimitiveType::kS8), 92e12, 0.5e12);
  EXPECT_EQ(t.on_chip_memory_bytes, 24 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(t.peak.memory_bytes_per_second, 34e9);
}

TEST(TargetDescription, OwnerNames) {
  EXPECT_EQ(compiler::OwnerName(compiler::Owner::kNoCode), "no-code");
  EXPECT_EQ(compiler::OwnerName(compiler::Owner::kLibrary), "library");
  EXPECT_EQ(compiler::OwnerName(compiler::Owner::kUnsupportedCustomCall),
            "unsupported-custom-call");
  EXPECT_EQ(compiler::OwnerName(compiler::Owner::kCollective), "collective");
}

// ---------------------------------------------------------------------------------------------
// Target pipelines.

std::vector<std::string> PassNames(const compiler::Pipeline& pipeline) {
  std::vector<std::string> names;
  for (const auto& pass : pipeline.passes()) names.emplace_back(pass->name());
  return names;
}

bool Registered(const std::string& name) {
  for (const auto& entry : compiler::AllPasses()) {
    if (entry.name == name) return true;
  }
  return false;
}

ptrdiff_t IndexOf(const std::vector<std::string>& names, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : it - names.begin();
}

TEST(TargetPipelines, AssembledFromRegisteredPassesPerTarget) {
  for (const std::string& target_name : targets::DescriptionNames()) {
    const compiler::TargetDescription& target = *targets::FindDescription(target_name);
    compiler::Pipeline pipeline = compiler::MakeTargetPipeline(target);
    EXPECT_EQ(pipeline.name(), target_name);
    std::vector<std::string> names = PassNames(pipeline);
    for (const std::string& name : names) EXPECT_TRUE(Registered(name)) << name;
    bool has_fusion = IndexOf(names, "loop-fusion") >= 0 || IndexOf(names, "input-fusion") >= 0 ||
                      IndexOf(names, "output-fusion") >= 0;
    if (target.fusion_kinds.empty()) {
      EXPECT_FALSE(has_fusion) << target_name;
    }
    if (Registered("loop-fusion") && !target.fusion_kinds.empty()) {
      EXPECT_TRUE(has_fusion) << target_name;
    }
    EXPECT_EQ(IndexOf(names, "multi-output-fusion") >= 0,
              Registered("multi-output-fusion") && target.multi_output_fusion && has_fusion)
        << target_name;
    // Order of pipeline.h's diagram where both passes exist.
    auto before = [&](const std::string& a, const std::string& b) {
      ptrdiff_t ia = IndexOf(names, a), ib = IndexOf(names, b);
      if (ia >= 0 && ib >= 0) {
        EXPECT_LT(ia, ib) << a << " before " << b << " on " << target_name;
      }
    };
    before("call-inliner", "algebraic-simplifier");
    before("dot-canonicalizer", "output-fusion");
    before("output-fusion", "input-fusion");
    before("input-fusion", "loop-fusion");
    before("loop-fusion", "multi-output-fusion");
    // The async wrapping becomes a call first, so that the call-inliner flattens it too.
    before("async-wrapper-expander", "call-inliner");
    if (Registered("async-wrapper-expander")) {
      EXPECT_EQ(names.front(), "async-wrapper-expander");
    }
    if (Registered("dce")) {
      EXPECT_EQ(names.back(), "dce");
    }
  }
}

}  // namespace

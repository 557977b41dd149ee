// Report figures on small modules whose owners are known by construction (dot+bias+relu,
// softmax, a TransformerEngine custom-call, an all-reduce), with latency, energy and cost
// recomputed here from the published rates of the targets, and the isolation of a failing target.
#include <gtest/gtest.h>

#include "compiler/target_pipelines.h"
#include "hlo/module_io.h"
#include "tests/report/report_test_util.h"

namespace {

using report_test::Cell;
using report_test::NonZero;
using report_test::Pair;
using report_test::ReportOf;
using report_test::Targets;
using Counts = std::map<std::string, int64_t>;

const std::vector<std::string> kThree = {"cpu", "gpu", "systolic"};

TEST(ReportTest, DotBiasReluIsLockedInLibrariesOnCpuAndGpu) {
  const report::ModelReport model = ReportOf(report_test::kDotBiasRelu, Targets(kThree));
  EXPECT_EQ(model.instructions, 5);
  EXPECT_EQ(model.flops, 1024 + 64 + 64);
  // Output fusion puts the bias add and relu into the library call's epilogue.
  EXPECT_EQ(NonZero(Cell(model, "cpu")), (Counts{{"library", 5}}));
  EXPECT_EQ(NonZero(Cell(model, "gpu")), (Counts{{"library", 5}}));
  EXPECT_EQ(NonZero(Cell(model, "systolic")), (Counts{{"native", 5}}));
  for (const report::TargetCell& cell : model.targets) {
    EXPECT_FALSE(cell.error) << cell.target;
    EXPECT_EQ(cell.kernels, 1) << cell.target;
    EXPECT_EQ(cell.fusion_coverage, 1.0) << cell.target;
    EXPECT_EQ(cell.latency_source, "estimated");
    EXPECT_TRUE(cell.custom_calls.empty());
  }
  EXPECT_EQ(Cell(model, "gpu").flops_share.at("library"), 1.0);
  EXPECT_EQ(Cell(model, "gpu").by_hand,
            (std::vector<report::HandSupplied>{{"library", "cuBLASLt", 5}}));
  EXPECT_EQ(Cell(model, "cpu").by_hand,
            (std::vector<report::HandSupplied>{{"library", "retarget-sgemm", 5}}));
  EXPECT_TRUE(Cell(model, "systolic").by_hand.empty());
  // Every instruction is in a library on one side of each pair: nothing is carried.
  for (const report::CarriedAcross& pair : model.carried_across) {
    EXPECT_EQ(pair.instructions, 0.0) << pair.from << "->" << pair.to;
    EXPECT_EQ(pair.flops, 0.0);
  }
  EXPECT_EQ(model.carried_across.size(), 6u);  // 3 targets: 3 * 2 ordered pairs

  // Systolic: one fused kernel of 1152 FLOPs at the f32 MXU rate (256*256 MACs * 2 * 700 MHz
  // / 16) and 960 bytes ((32 + 128 + 16 + 64) floats) over 34 GB/s DDR3, plus 10 us to issue.
  const report::TargetCell& systolic = Cell(model, "systolic");
  const double mxu_f32 = 256.0 * 256.0 * 2 * 700e6 / 16;
  const double seconds = std::max(1152 / mxu_f32, 960 / 34e9) + 10e-6;
  EXPECT_NEAR(systolic.latency_ms, seconds * 1000, 1e-12);
  // 40 W busy over the int8 MAC rate per FLOP, 20 pJ/bit of DDR3, 28 W idle for the duration.
  const double joules =
      1152 * 40.0 / (256.0 * 256.0 * 2 * 700e6) + 960 * 8 * 20e-12 + 28 * seconds;
  ASSERT_TRUE(systolic.energy_mj);
  EXPECT_NEAR(*systolic.energy_mj, joules * 1000, 1e-12);
  ASSERT_TRUE(systolic.cost_per_1m_usd);
  EXPECT_NEAR(*systolic.cost_per_1m_usd, seconds / 3600 * 1.20 * 1e6, 1e-12);
}

TEST(ReportTest, SoftmaxIsCarriedAcrossEveryPair) {
  const report::ModelReport model = ReportOf(report_test::kSoftmax, Targets(kThree));
  EXPECT_EQ(model.instructions, 7);
  EXPECT_EQ(model.flops, 80);
  EXPECT_EQ(NonZero(Cell(model, "cpu")), (Counts{{"generated", 7}}));
  EXPECT_EQ(NonZero(Cell(model, "gpu")), (Counts{{"generated", 7}}));
  EXPECT_EQ(NonZero(Cell(model, "systolic")), (Counts{{"native", 7}}));
  EXPECT_EQ(Cell(model, "systolic").flops_share.at("native"), 1.0);
  EXPECT_EQ(Cell(model, "gpu").bytes_share.at("generated"), 1.0);
  for (const report::CarriedAcross& pair : model.carried_across) {
    EXPECT_EQ(pair.instructions, 1.0) << pair.from << "->" << pair.to;
    EXPECT_EQ(pair.flops, 1.0);
    EXPECT_FALSE(pair.error);
  }
  // GPU: one kernel; 80 FLOPs at 33.5e12/s is far below 128 bytes at 4.8 TB/s; + 3 us launch.
  const report::TargetCell& gpu = Cell(model, "gpu");
  EXPECT_EQ(gpu.kernels, 1);
  EXPECT_NEAR(gpu.latency_ms, (128 / 4.8e12 + 3e-6) * 1000, 1e-9);
}

TEST(ReportTest, TransformerEngineAttentionIsGpuOnlyAndNotCarriedAcross) {
  // The issue's case: one te_fused_attn_forward_ffi. TransformerEngine ships CUDA kernels only:
  // a library call on gpu, unknown to cpu and systolic.
  const report::ModelReport model = ReportOf(report_test::kTeAttention, Targets(kThree));
  EXPECT_EQ(model.instructions, 2);
  for (const report::TargetCell& cell : model.targets) {
    const bool gpu = cell.target == "gpu";
    EXPECT_EQ(cell.owners.at(gpu ? "library" : "unsupported"), 1) << cell.target;
    EXPECT_EQ(cell.owners_original.at(gpu ? "library" : "unsupported"), 1) << cell.target;
    EXPECT_EQ(cell.owners_original.at(cell.target == "systolic" ? "native" : "generated"), 1);
    ASSERT_EQ(cell.custom_calls.size(), 1u);
    EXPECT_EQ(cell.custom_calls[0].target, "te_fused_attn_forward_ffi");
    EXPECT_EQ(cell.custom_calls[0].count, 1);
    EXPECT_EQ(cell.custom_calls[0].supported, gpu) << cell.target;
    EXPECT_EQ(cell.custom_calls[0].owner, gpu ? "library" : "unsupported");
    EXPECT_EQ(cell.custom_calls[0].library, gpu ? "TransformerEngine" : "");
    EXPECT_EQ(cell.by_hand, (std::vector<report::HandSupplied>{
                                gpu ? report::HandSupplied{"library", "TransformerEngine", 1}
                                    : report::HandSupplied{"unsupported",
                                                           "te_fused_attn_forward_ffi", 1}}));
    // The custom-call's work is unknown (0 FLOPs): the add has every FLOP.
    EXPECT_EQ(cell.flops_share.at(gpu ? "library" : "unsupported"), 0.0);
  }
  ASSERT_EQ(model.custom_calls.size(), 1u);
  EXPECT_EQ(model.custom_calls[0].implemented_by, std::vector<std::string>{"gpu"});
  EXPECT_TRUE(model.custom_calls[0].kernel_locked);
  // Only the add is carried, whichever pair: half the instructions, all of the (known) FLOPs.
  for (const report::CarriedAcross& pair : model.carried_across) {
    EXPECT_EQ(pair.instructions, 0.5) << pair.from << "->" << pair.to;
    EXPECT_EQ(pair.flops, 1.0) << pair.from << "->" << pair.to;
  }
  const std::string table = report::ReportToTable(report::Report{{model}, ""});
  // Wrapped at 100 columns under the first item.
  EXPECT_NE(table.find("custom-call te_fused_attn_forward_ffi x1: cpu no, "
                       "gpu yes (library TransformerEngine), systolic no,\n" +
                       std::string(42, ' ') + "kernel-locked: gpu only\n"),
            std::string::npos)
      << table;
}

TEST(ReportTest, AnUnknownCustomCallIsImplementedByNone) {
  const char* text = R"(HloModule acme
ENTRY main {
  q = f32[4] parameter(0)
  a = f32[4] custom-call(q), custom_call_target="acme_attention"
  ROOT r = f32[4] add(a, q)
})";
  const report::ModelReport model = ReportOf(text, Targets(kThree));
  for (const report::TargetCell& cell : model.targets) {
    EXPECT_EQ(NonZero(cell).at("unsupported"), 1) << cell.target;
    EXPECT_FALSE(cell.custom_calls.at(0).supported);
  }
  ASSERT_EQ(model.custom_calls.size(), 1u);
  EXPECT_TRUE(model.custom_calls[0].implemented_by.empty());
  EXPECT_FALSE(model.custom_calls[0].kernel_locked);
  EXPECT_EQ(Pair(model, "cpu", "gpu").instructions, 0.5);
  // Reported on the gpu alone, a call it implements is not "locked": there is nothing to compare.
  const report::ModelReport alone = ReportOf(report_test::kTeAttention, Targets({"gpu"}));
  EXPECT_EQ(alone.custom_calls.at(0).implemented_by, std::vector<std::string>{"gpu"});
  EXPECT_FALSE(alone.custom_calls.at(0).kernel_locked);
}

TEST(ReportTest, AllReduceIsACollectiveEverywhere) {
  const report::ModelReport model = ReportOf(report_test::kAllReduce, Targets(kThree));
  EXPECT_EQ(model.flops, 16);
  for (const report::TargetCell& cell : model.targets) {
    EXPECT_EQ(cell.owners.at("collective"), 1) << cell.target;
    EXPECT_EQ(cell.flops_share.at("collective"), 0.5);
    EXPECT_EQ(cell.kernels, 1);  // the negate; the all-reduce needs a runtime, not a kernel
    EXPECT_EQ(cell.by_hand,
              (std::vector<report::HandSupplied>{{"collective", "all-reduce", 1}}));
  }
  EXPECT_EQ(Pair(model, "systolic", "gpu").instructions, 0.5);
  EXPECT_EQ(Pair(model, "systolic", "gpu").flops, 0.5);
  // The collective's time is unknown: the CPU estimate is the negate alone, 64 bytes over
  // 30 GB/s (8 FLOPs at 147.2 Gop/s take less) plus the 1 us dispatch.
  EXPECT_NEAR(Cell(model, "cpu").latency_ms, (64 / 30e9 + 1e-6) * 1000, 1e-12);
}

TEST(ReportTest, AFailingTargetKeepsTheOthersRows) {
  report::ReportOptions options;
  options.compile = [](hlo::Module& module, const compiler::TargetDescription& target) {
    if (target.name == "gpu") throw hlo::Error("gpu pipeline exploded");
    compiler::Pipeline pipeline = compiler::MakeTargetPipeline(target);
    pipeline.Run(module);
  };
  const report::ModelReport model =
      ReportOf(report_test::kSoftmax, Targets(kThree), options);
  EXPECT_EQ(Cell(model, "gpu").error, "gpu pipeline exploded");
  EXPECT_FALSE(Cell(model, "cpu").error);
  EXPECT_EQ(NonZero(Cell(model, "systolic")), (Counts{{"native", 7}}));
  EXPECT_EQ(Pair(model, "cpu", "gpu").error, "gpu: gpu pipeline exploded");
  EXPECT_FALSE(Pair(model, "cpu", "gpu").instructions);
  EXPECT_EQ(Pair(model, "cpu", "systolic").instructions, 1.0);
  report::Report whole;
  whole.models.push_back(model);
  EXPECT_TRUE(whole.HasErrors());
  const std::string table = report::ReportToTable(whole);
  EXPECT_NE(table.find("gpu       error: gpu pipeline exploded"), std::string::npos) << table;
}

TEST(ReportTest, ModuleWithoutCodeHasNoShares) {
  const report::ModelReport model = ReportOf(
      "HloModule empty\nENTRY main {\n  ROOT p = f32[3] parameter(0)\n}\n", Targets(kThree));
  EXPECT_EQ(model.instructions, 0);
  for (const report::CarriedAcross& pair : model.carried_across) {
    EXPECT_FALSE(pair.instructions);
    EXPECT_FALSE(pair.flops);
  }
  EXPECT_EQ(Cell(model, "cpu").kernels, 0);
  EXPECT_EQ(Cell(model, "cpu").latency_ms, 0.0);
  EXPECT_EQ(Cell(model, "cpu").flops_share.at("generated"), 0.0);
}

// Llama-3 8B with TransformerEngine attention (docs/walkthrough-retargeting.md): every owner row
// counts the module's 1518 instructions, so the table, the by-hand lines and the header agree.
TEST(ReportTest, OwnerRowsAddUpToTheModuleOnLlama) {
  hlo::LoadedModule loaded =
      hlo::LoadModule(testing_support::CorpusPath("hlo_llama3_8b_cp_bf16_1x4.hlo"));
  const report::ModelReport model =
      report::BuildModelReport("llama", "", *loaded.module, Targets(kThree));
  EXPECT_EQ(model.instructions, 1518);
  for (const report::TargetCell& cell : model.targets) {
    ASSERT_FALSE(cell.error) << *cell.error;
    int64_t rows = 0, compiled = 0;
    for (const auto& [owner, count] : cell.owners_original) rows += count;
    for (const auto& [owner, count] : cell.owners) compiled += count;
    EXPECT_EQ(rows, model.instructions) << cell.target;
    EXPECT_GT(compiled, model.instructions) << cell.target;  // fusion copies producers
    // Each by-hand kind matches its owner's count in the row.
    std::map<std::string, int64_t> by_hand;
    for (const report::HandSupplied& work : cell.by_hand) by_hand[work.owner] += work.instructions;
    for (const char* owner : {"library", "host_fallback", "unsupported", "collective"}) {
      EXPECT_EQ(by_hand[owner], cell.owners_original.at(owner)) << cell.target << " " << owner;
    }
  }
  // On systolic only the ops that need the host are host fallback (fusion keeps them apart from
  // native ops, compiler/fusion/fusion_placement.h): 3 broadcast (of u32) + 2 convert (that
  // wrap or truncate) + 2 divide + 2 power (exponents other than 2 and -0.5) + 2 remainder =
  // 11 (slice, concatenate, dynamic-slice and dynamic-update-slice are DMA programs, the
  // dynamic starts clamped on the vector unit; the 20 reduce-windows strided boxes folded by
  // vadd; iota, sine, cosine, log, log-plus-one and converts to and from pred vector-unit
  // instructions).
  // On gpu the 8 + 4 TE calls are library calls, so nothing is unsupported there.
  EXPECT_EQ(Cell(model, "systolic").owners_original.at("host_fallback"), 11);
  EXPECT_EQ(Cell(model, "gpu").owners_original.at("unsupported"), 0);
  EXPECT_EQ(Cell(model, "cpu").owners_original.at("unsupported"), 12);
  ASSERT_EQ(model.custom_calls.size(), 2u);
  for (const report::ModelCustomCall& call : model.custom_calls) {
    EXPECT_EQ(call.implemented_by, std::vector<std::string>{"gpu"}) << call.target;
    EXPECT_TRUE(call.kernel_locked) << call.target;
  }
  EXPECT_EQ(model.custom_calls[0].target, "te_fused_attn_backward_ffi");
  EXPECT_EQ(model.custom_calls[0].count, 4);
  EXPECT_EQ(model.custom_calls[1].count, 8);
}

}  // namespace

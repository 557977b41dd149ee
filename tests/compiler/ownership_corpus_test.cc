// Invariants of the ownership analysis on every corpus module and every target (before and
// after the target's pipeline), and the JSON writer (validated by a small strict JSON reader
// written here, independent of the writer).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "compiler/ownership.h"
#include "compiler/target_pipelines.h"
#include "hlo/module_io.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace {

using compiler::ModuleStats;
using compiler::Owner;

// Parses a test module, adding the `HloModule` header the parser requires when it is absent.
std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  if (text.find("HloModule") != std::string::npos) return testing_support::ParseAndVerify(text);
  return testing_support::ParseAndVerify("HloModule test\n" + text);
}

// Instructions that generate no code, listed independently of compiler/cost_model.cc.
bool Trivial(hlo::Opcode op) {
  static const std::set<hlo::Opcode> trivial = {
      hlo::Opcode::kParameter, hlo::Opcode::kConstant,  hlo::Opcode::kTuple,
      hlo::Opcode::kGetTupleElement, hlo::Opcode::kBitcast, hlo::Opcode::kAfterAll,
      hlo::Opcode::kOptimizationBarrier, hlo::Opcode::kWhile, hlo::Opcode::kConditional,
      hlo::Opcode::kCall};
  return trivial.count(op) != 0;
}

// No code either: the annotation custom-calls of SPMD programs and host offloading.
bool Trivial(const hlo::Instruction& inst) {
  static const std::set<std::string> annotations = {"Sharding", "annotate_device_placement",
                                                    "MoveToHost", "MoveToDevice"};
  if (inst.opcode() == hlo::Opcode::kCustomCall)
    return annotations.count(inst.attr<hlo::CustomCallAttrs>().target) != 0;
  return Trivial(inst.opcode());
}

// Non-trivial instructions a fusion stands for (nested fusions opened, at least 1).
int64_t FusedCount(const hlo::Computation& computation) {
  int64_t count = 0;
  for (const auto& inst : computation.instructions()) {
    if (inst->opcode() == hlo::Opcode::kFusion) {
      count += FusedCount(*inst->called_computations()[0]);
    } else if (!Trivial(*inst)) {
      ++count;
    }
  }
  return count;
}

struct Expected {
  int64_t instructions = 0;  // every instruction of the walked computations
  int64_t non_trivial = 0;
  std::unordered_set<const hlo::Computation*> walked;
};

// Recursive walk through control flow only, written apart from the analysis' worklist.
void Walk(const hlo::Computation& computation, Expected& expected) {
  if (!expected.walked.insert(&computation).second) return;
  for (const auto& inst : computation.instructions()) {
    ++expected.instructions;
    if (inst->opcode() == hlo::Opcode::kFusion) {
      expected.non_trivial += std::max<int64_t>(1, FusedCount(*inst->called_computations()[0]));
    } else if (!Trivial(*inst)) {
      ++expected.non_trivial;
    }
    const hlo::Opcode op = inst->opcode();
    if (op == hlo::Opcode::kWhile || op == hlo::Opcode::kConditional ||
        op == hlo::Opcode::kCall) {
      for (const hlo::Computation* callee : inst->called_computations()) Walk(*callee, expected);
    }
  }
}

void CheckInvariants(const hlo::Module& module, const ModuleStats& stats) {
  Expected expected;
  Walk(*module.entry(), expected);
  // Every instruction owned exactly once.
  EXPECT_EQ(static_cast<int64_t>(stats.entries.size()), expected.instructions);
  std::unordered_set<const hlo::Instruction*> seen;
  int64_t kernels = 0;
  for (const auto& entry : stats.entries) {
    EXPECT_TRUE(seen.insert(entry.instruction).second) << entry.instruction->name();
    EXPECT_TRUE(expected.walked.count(entry.instruction->parent()));
    EXPECT_EQ(entry.info.owner == Owner::kNoCode, Trivial(*entry.instruction))
        << entry.instruction->name();
    EXPECT_EQ(entry.info.owner == Owner::kLibrary, !entry.info.library.empty());
    EXPECT_GE(entry.cost.flops, 0);
    EXPECT_GE(entry.cost.bytes_read, 0);
    if (entry.info.owner == Owner::kGeneratedKernel || entry.info.owner == Owner::kLibrary ||
        entry.info.owner == Owner::kAcceleratorNative) {
      ++kernels;
    }
  }
  int64_t sum = 0;
  for (const auto& [owner, count] : stats.instructions_by_owner) {
    EXPECT_NE(owner, "no-code");
    EXPECT_GE(count, 0);
    sum += count;
  }
  EXPECT_EQ(sum, expected.non_trivial);
  EXPECT_EQ(stats.kernel_count, kernels);
  EXPECT_GE(stats.fusion_coverage, 0.0);
  EXPECT_LE(stats.fusion_coverage, 1.0);
  EXPECT_TRUE(std::isfinite(stats.total_flops));
  EXPECT_TRUE(std::isfinite(stats.total_bytes));
  // Peak memory holds at least the entry's parameters, which live throughout.
  double parameter_bytes = 0;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    std::vector<const hlo::Shape*> leaves;
    hlo::FlattenShape(parameter->shape(), leaves);
    for (const hlo::Shape* leaf : leaves) {
      parameter_bytes += static_cast<double>(leaf->ElementCount()) * hlo::ByteSize(leaf->type);
    }
  }
  EXPECT_GE(static_cast<double>(stats.peak_buffer_bytes), parameter_bytes);
}

std::unique_ptr<hlo::Module> LoadCorpus(const std::string& file) {
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  return hlo::LoadModule(testing_support::CorpusPath(file), true, quiet).module;
}

TEST(OwnershipCorpusTest, EveryInstructionOwnedOnceOnEveryTarget) {
  for (const std::string& file : testing_support::CorpusFiles()) {
    auto module = LoadCorpus(file);
    for (const std::string& name : targets::DescriptionNames()) {
      SCOPED_TRACE(file + " on " + name);
      const auto start = std::chrono::steady_clock::now();
      ModuleStats stats = AnalyzeOwnership(*module, *targets::FindDescription(name));
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start).count();
      // ~10 ms for gemma3's 10k instructions; a quadratic walk would take seconds.
      EXPECT_LT(ms, 500) << "the analysis must stay linear";
      if (file.rfind("gemma3", 0) == 0) std::printf("gemma3 on %s: %.1f ms\n", name.c_str(), ms);
      CheckInvariants(*module, stats);
    }
  }
}

TEST(OwnershipCorpusTest, KnownFactsOfCorpusModules) {
  // llama3 calls TransformerEngine's fused attention: 8 forward + 4 backward custom-calls are
  // the TransformerEngine library on gpu (its registry, issue 8) and unsupported on every other
  // target; it also holds collectives.
  auto llama = LoadCorpus("hlo_llama3_8b_cp_bf16_1x4.hlo");
  for (const std::string& name : targets::DescriptionNames()) {
    ModuleStats stats = AnalyzeOwnership(*llama, *targets::FindDescription(name));
    int64_t forward = 0, backward = 0;
    for (const auto& entry : stats.entries) {
      if (entry.instruction == nullptr ||
          entry.instruction->opcode() != hlo::Opcode::kCustomCall) {
        continue;
      }
      const std::string& call = entry.instruction->attr<hlo::CustomCallAttrs>().target;
      const bool expected_owner = name == "gpu" ? entry.info.owner == Owner::kLibrary &&
                                                      entry.info.library == "TransformerEngine"
                                                : entry.info.owner == Owner::kUnsupportedCustomCall;
      forward += expected_owner && call == "te_fused_attn_forward_ffi";
      backward += expected_owner && call == "te_fused_attn_backward_ffi";
    }
    EXPECT_EQ(forward, 8) << name;
    EXPECT_EQ(backward, 4) << name;
    EXPECT_GT(stats.instructions_by_owner.at("collective"), 0) << name;
  }
  // dlrm on the systolic target, as its lowering runs it: the one column gather (slice sizes
  // {3616,1}) and the loss's one s32 `reduce_prod` (a multiply reducer) run on the host (the 5
  // embedding lookups are row gathers, dma.gather; the 6 index checks `reduce(pred) with and`
  // a max of negated 0/1 bytes; the 2 feature concatenations DMA programs); counted by hand in
  // the HLO text (grep ' gather(', 'reduce_and', 'reduce_prod').
  auto dlrm = LoadCorpus("dlrm_keras_jax_f32_test_step.hlo");
  ModuleStats systolic = AnalyzeOwnership(*dlrm, targets::SystolicDescription());
  EXPECT_EQ(systolic.instructions_by_owner.at("host-fallback"), 2);
  std::map<std::string, int> reasons;
  for (const auto& entry : systolic.entries) {
    if (entry.info.owner == Owner::kHostFallback) ++reasons[entry.info.detail];
  }
  EXPECT_EQ(reasons,
            (std::map<std::string, int>{
                {"systolic cannot execute gather: not a row gather (gather_plan.h): a gather "
                 "that addresses other than the operand's leading dimensions", 1},
                {"systolic cannot execute reduce: the vector unit reduces only a sum from 0 or a "
                 "max from -inf (pred: an and from true, an or from false)", 1}}));
  ModuleStats cpu = AnalyzeOwnership(*dlrm, targets::CpuDescription());
  EXPECT_EQ(cpu.instructions_by_owner.at("host-fallback"), 0);
  // xnn.parallel_dots: four 512^3 matmuls in kCustom fusions owned by the dot's library on
  // the gpu, plus 4 row sums over 512x512 and 3 adds of 512.
  auto dots = LoadCorpus("xnn.parallel_dots.optimized.hlo");
  ModuleStats gpu = AnalyzeOwnership(*dots, targets::GpuDescription());
  EXPECT_EQ(gpu.instructions_by_owner.at("library"), 4);
  EXPECT_EQ(gpu.flops_by_owner.at("library"), 4 * 2.0 * 512 * 512 * 512);
  EXPECT_EQ(gpu.total_flops, 4 * 2.0 * 512 * 512 * 512 + 4 * 512.0 * 512 + 3 * 512);
}

TEST(OwnershipCorpusTest, InvariantsHoldAfterEachTargetPipeline) {
  for (const char* file : {"mha_block_1x12x128x64_bf16.hlo", "layer_norm_1x4096x768_bf16.hlo",
                           "dlrm_keras_jax_f32_test_step.hlo"}) {
    for (const std::string& name : targets::DescriptionNames()) {
      SCOPED_TRACE(std::string(file) + " on " + name);
      auto module = LoadCorpus(file);
      const compiler::TargetDescription& target = *targets::FindDescription(name);
      compiler::MakeTargetPipeline(target).Run(*module);
      ModuleStats stats = AnalyzeOwnership(*module, target);
      CheckInvariants(*module, stats);
      std::printf("%-36s %-9s kernels %4lld  coverage %.3f  owners:", file, name.c_str(),
                  static_cast<long long>(stats.kernel_count), stats.fusion_coverage);
      for (const auto& [owner, count] : stats.instructions_by_owner) {
        if (count) std::printf(" %s=%lld", owner.c_str(), static_cast<long long>(count));
      }
      std::printf("\n");
    }
  }
}

// The stats file read back with nlohmann-json's strict parser (a parse error fails the test).
nlohmann::ordered_json ReadStats(const std::string& text) {
  EXPECT_TRUE(nlohmann::json::accept(text)) << text;
  return nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
}

TEST(OwnershipJsonTest, StatsOfEveryCorpusModuleAreValidJson) {
  for (const char* file : {"hlo_llama3_8b_cp_bf16_1x4.hlo", "xnn.parallel_dots.optimized.hlo",
                           "mha_block_1x12x128x64_bf16.hlo"}) {
    auto module = LoadCorpus(file);
    for (const std::string& name : targets::DescriptionNames()) {
      ModuleStats stats = AnalyzeOwnership(*module, *targets::FindDescription(name));
      auto json =
          ReadStats(compiler::ModuleStatsToJson(stats, {{"dce", 1.5}, {"cse", 0.25}}));
      EXPECT_EQ(json["target"], name) << file;
      EXPECT_EQ(json["pass_times_ms"].dump(), R"({"cse":0.25,"dce":1.5})") << file;
      EXPECT_EQ(json["total_pass_time_ms"], 1.75) << file;
      EXPECT_EQ(json["kernel_count"], stats.kernel_count) << file;
      // Every instruction that runs code has its entry; the counts agree.
      int64_t fused = 0;
      for (const auto& entry : json["entries"]) fused += entry["fused_instructions"].get<int64_t>();
      EXPECT_EQ(json["instructions"], fused) << file << " " << name;
    }
  }
}

TEST(OwnershipJsonTest, HostileStringsAndNumbersStayValid) {
  auto module = Parse(R"(
ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="evil\"name\\x"
}
)");
  ModuleStats stats = AnalyzeOwnership(*module, targets::GpuDescription());
  // Control characters, a lone continuation byte and a valid 2-byte sequence in a detail.
  compiler::OwnershipEntry extra = stats.entries.back();
  extra.info.detail = std::string("tab\there \x01 bad\x80 ok\xc3\xa9");
  stats.entries.push_back(extra);
  stats.total_flops = std::nan("");
  stats.total_bytes = INFINITY;
  const std::string text = compiler::ModuleStatsToJson(stats, {});
  auto json = ReadStats(text);
  EXPECT_NE(text.find(R"(tab\there \u0001 bad)"), std::string::npos) << text;
  EXPECT_EQ(json["entries"].back()["detail"], "tab\there \x01 bad\xEF\xBF\xBD ok\xc3\xa9");
  EXPECT_TRUE(json["total_flops"].is_null());
  EXPECT_TRUE(json["total_bytes"].is_null());
  EXPECT_EQ(json["pass_times_ms"], nlohmann::ordered_json::object());
  auto& unsupported = json["details_by_owner"]["unsupported-custom-call"];
  EXPECT_EQ(unsupported["evil\"name\\x"], 1) << unsupported.dump();
}

TEST(OwnershipJsonTest, AggregatesLibrariesAndReasons) {
  auto module = Parse(R"(
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s32[1,1] parameter(2)
  g = f32[2,1] gather(d, i), offset_dims={0}, collapsed_slice_dims={1},
    start_index_map={1}, index_vector_dim=1, slice_sizes={2,1}
  ROOT n = f32[2,1] negate(g)
}
)");
  auto gpu = ReadStats(
      compiler::ModuleStatsToJson(AnalyzeOwnership(*module, targets::GpuDescription()), {}));
  // 2*4 outputs * 3 multiply-adds * 2 = 48 FLOPs in cuBLASLt.
  EXPECT_EQ(gpu["library_instructions"].dump(), R"({"cuBLASLt":1})");
  EXPECT_EQ(gpu["library_flops"].dump(), R"({"cuBLASLt":48})");
  EXPECT_EQ(gpu["instructions"], 3);
  EXPECT_EQ(gpu["no_code_instructions"], 3);
  auto systolic = ReadStats(
      compiler::ModuleStatsToJson(AnalyzeOwnership(*module, targets::SystolicDescription()), {}));
  EXPECT_EQ(systolic["details_by_owner"].dump(),
            R"({"host-fallback":{"systolic cannot execute gather: not a row gather )"
            R"((gather_plan.h): a gather that addresses other than the operand's leading )"
            R"(dimensions":1}})");
}

}  // namespace

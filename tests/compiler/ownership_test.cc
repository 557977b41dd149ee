// "Ownership by construction": small modules whose owners are known by design give the expected
// counts on each of the four targets (targets::InterpDescription() ... targets::SystolicDescription()), plus the
// rules that need a hand-built TargetDescription (collectives with a runtime, custom-call
// registries, element-type fallbacks) and the walk over control flow.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>
#include <memory>
#include <string>

#include "compiler/cost_model.h"
#include "compiler/ownership.h"
#include "compiler/target_pipelines.h"
#include "tests/small_modules.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace {

using compiler::AnalyzeOwnership;
using compiler::ModuleStats;
using compiler::Owner;
using compiler::OwnershipEntry;
using compiler::TargetDescription;

// Parses a test module, adding the `HloModule` header the parser requires when it is absent.
std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  if (text.find("HloModule") != std::string::npos) return testing_support::ParseAndVerify(text);
  return testing_support::ParseAndVerify("HloModule test\n" + text);
}

// Only the non-zero counts, so expectations list what is there.
std::map<std::string, int64_t> Counts(const ModuleStats& stats) {
  std::map<std::string, int64_t> counts;
  for (const auto& [owner, count] : stats.instructions_by_owner) {
    if (count != 0) counts[owner] = count;
  }
  return counts;
}

ModuleStats Analyze(const std::string& text, const TargetDescription& target) {
  auto module = Parse(text);
  // The stats point into the module: copy out what the tests read before it dies.
  ModuleStats stats = AnalyzeOwnership(*module, target);
  for (OwnershipEntry& entry : stats.entries) entry.instruction = nullptr;
  return stats;
}

const OwnershipEntry& OnlyCodeEntry(const ModuleStats& stats) {
  const OwnershipEntry* found = nullptr;
  for (const OwnershipEntry& entry : stats.entries) {
    if (entry.info.owner == Owner::kNoCode) continue;
    EXPECT_EQ(found, nullptr) << "more than one entry with code";
    found = &entry;
  }
  if (found == nullptr) throw hlo::Error("no entry with code");
  return *found;
}

// dot + bias + relu, unfused: 5 non-trivial instructions (dot, 2 broadcasts, add, maximum).
const char* const kDotBiasReluUnfused = small_modules::kDotBiasRelu;

// The same as one kOutput fusion (what output fusion makes of it on cpu/gpu/systolic).
const char* const kDotBiasReluFused = R"(
HloModule dbr
fused_computation {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8,16] parameter(1)
  p2 = f32[16] parameter(2)
  dot = f32[4,16] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(p2), dimensions={1}
  add = f32[4,16] add(dot, bb)
  zero = f32[] constant(0)
  zb = f32[4,16] broadcast(zero), dimensions={}
  ROOT relu = f32[4,16] maximum(add, zb)
}
ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  ROOT f = f32[4,16] fusion(x, w, b), kind=kOutput, calls=fused_computation
}
)";

// dot: 4*16 outputs * 8 multiply-adds * 2 = 1024; add and maximum 64 each.
constexpr double kDotBiasReluFlops = 1024 + 64 + 64;

TEST(OwnershipTest, DotBiasReluFusedIsOwnedByTheContractionsOwner) {
  struct Case {
    const TargetDescription& target;
    std::string owner;
    std::string library;
  };
  for (const Case& c : {Case{targets::CpuDescription(), "library", "retarget-sgemm"},
                        Case{targets::GpuDescription(), "library", "cuBLASLt"},
                        Case{targets::SystolicDescription(), "accelerator-native", ""},
                        Case{targets::InterpDescription(), "generated-kernel", ""}}) {
    SCOPED_TRACE(c.target.name);
    ModuleStats stats = Analyze(kDotBiasReluFused, c.target);
    EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{c.owner, 5}}));
    EXPECT_EQ(stats.kernel_count, 1);
    EXPECT_EQ(stats.fusion_coverage, 1.0);
    EXPECT_EQ(stats.total_flops, kDotBiasReluFlops);
    EXPECT_EQ(stats.flops_by_owner.at(c.owner), kDotBiasReluFlops);
    // Boundary bytes only: (32 + 128 + 16) floats in, 64 floats out.
    EXPECT_EQ(stats.total_bytes, (32 + 128 + 16 + 64) * 4);
    const OwnershipEntry& fusion = OnlyCodeEntry(stats);
    EXPECT_EQ(fusion.info.library, c.library);
    EXPECT_EQ(fusion.fused_instructions, 5);
    EXPECT_EQ(fusion.info.detail, "kOutput fusion of 5 around dot");
    EXPECT_EQ(stats.target, c.target.name);
    // Buffer assignment: the 3 parameters (128 + 512 + 64 bytes) live throughout, plus the
    // fusion's 256-byte result; nothing inside the fusion reaches memory.
    EXPECT_EQ(stats.peak_buffer_bytes, 128 + 512 + 64 + 256);
  }
}

TEST(OwnershipTest, DotBiasReluUnfused) {
  // Only the dot goes to the library; the epilogue ops are generated kernels of their own.
  ModuleStats gpu = Analyze(kDotBiasReluUnfused, targets::GpuDescription());
  EXPECT_EQ(Counts(gpu), (std::map<std::string, int64_t>{{"library", 1}, {"generated-kernel", 4}}));
  EXPECT_EQ(gpu.kernel_count, 5);
  EXPECT_EQ(gpu.fusion_coverage, 0.0);
  EXPECT_EQ(gpu.flops_by_owner.at("library"), 1024);
  EXPECT_EQ(gpu.flops_by_owner.at("generated-kernel"), 128);

  ModuleStats interp = Analyze(kDotBiasReluUnfused, targets::InterpDescription());
  EXPECT_EQ(Counts(interp), (std::map<std::string, int64_t>{{"generated-kernel", 5}}));
  ModuleStats systolic = Analyze(kDotBiasReluUnfused, targets::SystolicDescription());
  EXPECT_EQ(Counts(systolic), (std::map<std::string, int64_t>{{"accelerator-native", 5}}));
  // Every owner key is present even when zero, so reports of targets line up.
  EXPECT_EQ(interp.instructions_by_owner.size(), 6u);
  EXPECT_EQ(interp.instructions_by_owner.count("no-code"), 0u);
}

const char* const kSoftmaxFused = R"(
HloModule softmax
max_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused_softmax {
  p = f32[2,8] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[2] reduce(p, ninf), dimensions={1}, to_apply=max_c
  mb = f32[2,8] broadcast(m), dimensions={0}
  s = f32[2,8] subtract(p, mb)
  e = f32[2,8] exponential(s)
  z = f32[] constant(0)
  sum = f32[2] reduce(e, z), dimensions={1}, to_apply=add_c
  sb = f32[2,8] broadcast(sum), dimensions={0}
  ROOT d = f32[2,8] divide(e, sb)
}
ENTRY main {
  x = f32[2,8] parameter(0)
  ROOT f = f32[2,8] fusion(x), kind=kInput, calls=fused_softmax
}
)";

TEST(OwnershipTest, SoftmaxIsGeneratedOnCpuAndGpuAndNativeOnSystolic) {
  // 7 non-trivial ops: 2 reduces, 2 broadcasts, subtract, exp, divide. The reducers' own
  // instructions belong to their reduce and are not counted.
  for (const TargetDescription* target : {&targets::CpuDescription(), &targets::GpuDescription()}) {
    ModuleStats stats = Analyze(kSoftmaxFused, *target);
    EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{"generated-kernel", 7}}))
        << target->name;
    EXPECT_EQ(stats.kernel_count, 1);
  }
  ModuleStats systolic = Analyze(kSoftmaxFused, targets::SystolicDescription());
  EXPECT_EQ(Counts(systolic), (std::map<std::string, int64_t>{{"accelerator-native", 7}}));
  // Each reduce, subtract, exp and divide touch 16 elements once: 5 * 16; exp is transcendental.
  EXPECT_EQ(systolic.total_flops, 80);
  EXPECT_EQ(systolic.total_transcendentals, 16);
  EXPECT_EQ(OnlyCodeEntry(systolic).info.detail, "kInput fusion of 7 around m");
}

TEST(OwnershipTest, UnknownCustomCallIsUnsupportedEverywhere) {
  // A made-up vendor kernel: TransformerEngine's te_* calls are in the gpu target's registry
  // (library "TransformerEngine", issue 8), so they no longer serve as the unknown example.
  const char* text = R"(
ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="acme_fused_attn_ffi"
}
)";
  for (const std::string& name : targets::DescriptionNames()) {
    ModuleStats stats = Analyze(text, *targets::FindDescription(name));
    EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{"unsupported-custom-call", 1}}))
        << name;
    EXPECT_EQ(OnlyCodeEntry(stats).info.detail, "acme_fused_attn_ffi");
    EXPECT_EQ(stats.kernel_count, 0);
  }
}

// SPMD and host-offload annotations (hlo/custom_call_targets.h) compute nothing: no code on any
// target, no cost, never "locked in" — MaxText's 39 Sharding calls are not vendor kernels.
TEST(OwnershipTest, AnnotationCustomCallsAreNoCodeEverywhere) {
  const char* text = R"(
ENTRY main {
  p = f32[4] parameter(0)
  s = f32[4] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  h = f32[4] custom-call(s), custom_call_target="MoveToHost"
  ROOT n = f32[4] negate(h)
}
)";
  for (const std::string& name : targets::DescriptionNames()) {
    ModuleStats stats = Analyze(text, *targets::FindDescription(name));
    EXPECT_EQ(Counts(stats).count("unsupported-custom-call"), 0u) << name;
    EXPECT_EQ(stats.kernel_count, 1) << name;  // the negate
  }
  auto module = testing_support::ParseAndVerify(std::string("HloModule m\n") + text);
  compiler::CostModel cost;
  for (const auto& inst : module->entry()->instructions()) {
    if (inst->opcode() != hlo::Opcode::kCustomCall) continue;
    const compiler::InstructionCost c = cost.Cost(*inst);
    EXPECT_EQ(c.bytes_read + c.bytes_written + c.flops, 0) << inst->name();
  }
}

TEST(OwnershipTest, KnownCustomCallFollowsTheRegistry) {
  const char* text = R"(
ENTRY main {
  p = f32[1,100] parameter(0)
  ROOT c = (f32[1,5], s32[1,5]) custom-call(p), custom_call_target="TopK"
}
)";
  EXPECT_EQ(Counts(Analyze(text, targets::CpuDescription())),
            (std::map<std::string, int64_t>{{"generated-kernel", 1}}));
  ModuleStats systolic = Analyze(text, targets::SystolicDescription());
  EXPECT_EQ(Counts(systolic), (std::map<std::string, int64_t>{{"host-fallback", 1}}));
  EXPECT_EQ(OnlyCodeEntry(systolic).info.detail, "custom-call TopK runs on the host of systolic");

  // A registry entry restricted to some types uses `otherwise` for the rest.
  TargetDescription target;
  target.name = "hand";
  target.custom_calls["TopK"] = compiler::OpRule{compiler::OpHandling::kLibrary, "MyTopK",
                                                 {hlo::PrimitiveType::kBF16},
                                                 compiler::OpHandling::kGenerated};
  EXPECT_EQ(Counts(Analyze(text, target)),
            (std::map<std::string, int64_t>{{"generated-kernel", 1}}));
}

const char* const kAllReduce = R"(
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[8] parameter(0)
  ROOT ar = f32[8] all-reduce(p), replica_groups={}, to_apply=add_c
}
)";

TEST(OwnershipTest, AllReduceNeedsAMultiDeviceRuntime) {
  for (const std::string& name : targets::DescriptionNames()) {
    ModuleStats stats = Analyze(kAllReduce, *targets::FindDescription(name));
    EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{"collective", 1}})) << name;
    EXPECT_EQ(OnlyCodeEntry(stats).info.detail, "all-reduce exchanges values between devices (costed over the interconnect)");
    EXPECT_EQ(stats.flops_by_owner.at("collective"), 8);
    EXPECT_EQ(stats.kernel_count, 0);
  }
  // With a runtime, the target's rule decides.
  TargetDescription target;
  target.name = "multi";
  target.supports_collectives = true;
  target.op_rules[hlo::Opcode::kAllReduce] =
      compiler::OpRule{compiler::OpHandling::kLibrary, "NCCL", {}, compiler::OpHandling::kLibrary};
  ModuleStats stats = Analyze(kAllReduce, target);
  EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{"library", 1}}));
  EXPECT_EQ(OnlyCodeEntry(stats).info.library, "NCCL");
}

const char* const kGather = R"(
ENTRY main {
  t = f32[10,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
)";

// A column of each row: slice size 1 in the last dimension, not a row gather.
const char* const kColumnGather = R"(
ENTRY main {
  t = f32[10,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[10,3] gather(t, i), offset_dims={0}, collapsed_slice_dims={1},
    start_index_map={1}, index_vector_dim=1, slice_sizes={10,1}
}
)";

TEST(OwnershipTest, RowGathersAreNativeOnSystolicOtherGathersFallBack) {
  ModuleStats systolic = Analyze(kGather, targets::SystolicDescription());
  EXPECT_EQ(Counts(systolic), (std::map<std::string, int64_t>{{"accelerator-native", 1}}));
  EXPECT_EQ(systolic.kernel_count, 1);
  // It reads the 3 gathered rows and the indices, not the whole table.
  EXPECT_EQ(systolic.total_bytes, (12 + 3) * 4 + 12 * 4);
  ModuleStats column = Analyze(kColumnGather, targets::SystolicDescription());
  EXPECT_EQ(Counts(column), (std::map<std::string, int64_t>{{"host-fallback", 1}}));
  EXPECT_EQ(OnlyCodeEntry(column).info.detail,
            "systolic cannot execute gather: not a row gather (gather_plan.h): a gather that "
            "addresses other than the operand's leading dimensions");
  EXPECT_EQ(column.kernel_count, 0);
  EXPECT_EQ(Counts(Analyze(kColumnGather, targets::CpuDescription())),
            (std::map<std::string, int64_t>{{"generated-kernel", 1}}));
}

TEST(OwnershipTest, AFusionWithAHostOnlyOpFallsBackAsAWhole) {
  const char* text = R"(
fused {
  t = f32[10,4] parameter(0)
  i = s32[3,1] parameter(1)
  g = f32[3,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  ROOT e = f32[3,4] exponential(g)
}
ENTRY main {
  t = f32[10,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT f = f32[3,4] fusion(t, i), kind=kLoop, calls=fused
}
)";
  ModuleStats systolic = Analyze(text, targets::SystolicDescription());
  // The gather runs natively only unfused (a DMA program of its own): a fusion formed
  // elsewhere around it is a host step as a whole.
  EXPECT_EQ(Counts(systolic), (std::map<std::string, int64_t>{{"host-fallback", 2}}));
  EXPECT_EQ(OnlyCodeEntry(systolic).info.detail,
            "fused g: systolic runs gather only unfused, as a program of its own");
  ModuleStats gpu = Analyze(text, targets::GpuDescription());
  EXPECT_EQ(Counts(gpu), (std::map<std::string, int64_t>{{"generated-kernel", 2}}));
  EXPECT_EQ(gpu.fusion_coverage, 1.0);
}

TEST(OwnershipTest, ElementTypeOutsideTheRuleFallsBackWithTheReason) {
  const char* text = R"(
ENTRY main {
  a = f64[2,3] parameter(0)
  b = f64[3,4] parameter(1)
  ROOT d = f64[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  ModuleStats systolic = Analyze(text, targets::SystolicDescription());
  EXPECT_EQ(Counts(systolic), (std::map<std::string, int64_t>{{"host-fallback", 1}}));
  EXPECT_EQ(OnlyCodeEntry(systolic).info.detail,
            "systolic runs dot only on s8, f32, bf16, not f64");
  // The rule is keyed on the operand type: a bf16 dot accumulating into f32 is a bf16 dot.
  const char* mixed = R"(
ENTRY main {
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  TargetDescription target;
  target.name = "bf16-only";
  target.op_rules[hlo::Opcode::kDot] = compiler::OpRule{
      compiler::OpHandling::kLibrary, "BF16Lib", {hlo::PrimitiveType::kBF16},
      compiler::OpHandling::kHostFallback};
  EXPECT_EQ(OnlyCodeEntry(Analyze(mixed, target)).info.library, "BF16Lib");
}

TEST(OwnershipTest, WalksControlFlowOnceButNotReducersOrFusionBodies) {
  const char* text = R"(
HloModule loops
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[4] exponential(x)
  ROOT t = (s32[], f32[4]) tuple(i1, x1)
}
helper {
  h = f32[4] parameter(0)
  ROOT n = f32[4] negate(h)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  r = f32[4] get-tuple-element(w), index=1
  c1 = f32[4] call(r), to_apply=helper
  c2 = f32[4] call(c1), to_apply=helper
  z = f32[] constant(0)
  ROOT s = f32[] reduce(c2, z), dimensions={0}, to_apply=add_c
}
)";
  auto module = Parse(text);
  ModuleStats stats = AnalyzeOwnership(*module, targets::CpuDescription());
  // entry 9 + cond 4 + body 7 + helper 2 (once, though called twice); add_c is not walked.
  EXPECT_EQ(stats.entries.size(), 22u);
  std::map<std::string, int> per_computation;
  for (const OwnershipEntry& entry : stats.entries) {
    ++per_computation[entry.instruction->parent()->name()];
  }
  EXPECT_EQ(per_computation, (std::map<std::string, int>{
                                 {"main", 9}, {"cond", 4}, {"body", 7}, {"helper", 2}}));
  // Code: compare, add, exp, negate, reduce. while/call/tuple/gte are no-code.
  EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{"generated-kernel", 5}}));
  EXPECT_EQ(stats.kernel_count, 5);
  for (const OwnershipEntry& entry : stats.entries) {
    const hlo::Opcode op = entry.instruction->opcode();
    if (op == hlo::Opcode::kWhile || op == hlo::Opcode::kCall) {
      EXPECT_EQ(entry.info.owner, Owner::kNoCode);
      EXPECT_EQ(entry.fused_instructions, 0);
    }
  }
}

TEST(OwnershipTest, CoverageCountsOnlyMultiInstructionFusions) {
  // One fusion of 3 (add, exp, negate) and one single-op fusion (abs) plus an unfused multiply:
  // 3 of 5 non-trivial instructions sit in a multi-instruction fusion.
  const char* text = R"(
f3 {
  p0 = f32[4] parameter(0)
  a = f32[4] add(p0, p0)
  e = f32[4] exponential(a)
  ROOT n = f32[4] negate(e)
}
f1 {
  q0 = f32[4] parameter(0)
  ROOT b = f32[4] abs(q0)
}
ENTRY main {
  x = f32[4] parameter(0)
  u = f32[4] fusion(x), kind=kLoop, calls=f3
  v = f32[4] fusion(u), kind=kLoop, calls=f1
  ROOT m = f32[4] multiply(v, x)
}
)";
  ModuleStats stats = Analyze(text, targets::GpuDescription());
  EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{"generated-kernel", 5}}));
  EXPECT_DOUBLE_EQ(stats.fusion_coverage, 3.0 / 5.0);
  EXPECT_EQ(stats.kernel_count, 3);
}

TEST(OwnershipTest, NestedFusionContentsCountOnce) {
  const char* text = R"(
inner {
  i0 = f32[4] parameter(0)
  ROOT e = f32[4] exponential(i0)
}
outer {
  o0 = f32[4] parameter(0)
  n = f32[4] negate(o0)
  ROOT f = f32[4] fusion(n), kind=kLoop, calls=inner
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT g = f32[4] fusion(x), kind=kLoop, calls=outer
}
)";
  ModuleStats stats = Analyze(text, targets::CpuDescription());
  EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{{"generated-kernel", 2}}));
  EXPECT_EQ(stats.total_flops, 8);
  EXPECT_EQ(stats.kernel_count, 1);
}

const char* const kSoftmaxUnfused = small_modules::kSoftmax;

// The same small modules through each target's real pipeline (MakeTargetPipeline): whatever the
// fusion passes decide, the owners that appear are the ones the design fixes.
TEST(OwnershipTest, OwnersAfterEachTargetsPipeline) {
  struct Case {
    const char* module;
    std::string target;
    std::set<std::string> owners;  // exactly the owners with a non-zero count
    std::string library;           // the library owning the dot, if any
  };
  const std::vector<Case> cases = {
      {kDotBiasReluUnfused, "interp", {"generated-kernel"}, ""},
      {kDotBiasReluUnfused, "cpu", {"library"}, "retarget-sgemm"},
      {kDotBiasReluUnfused, "gpu", {"library"}, "cuBLASLt"},
      {kDotBiasReluUnfused, "systolic", {"accelerator-native"}, ""},
      {kSoftmaxUnfused, "interp", {"generated-kernel"}, ""},
      {kSoftmaxUnfused, "cpu", {"generated-kernel"}, ""},
      {kSoftmaxUnfused, "gpu", {"generated-kernel"}, ""},
      {kSoftmaxUnfused, "systolic", {"accelerator-native"}, ""},
      {kAllReduce, "gpu", {"collective"}, ""},
      {kGather, "systolic", {"accelerator-native"}, ""},
      {kColumnGather, "systolic", {"host-fallback"}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target + ": " + std::string(c.module).substr(0, 40));
    auto module = Parse(c.module);
    const TargetDescription& target = *targets::FindDescription(c.target);
    compiler::MakeTargetPipeline(target).Run(*module);
    ModuleStats stats = AnalyzeOwnership(*module, target);
    std::set<std::string> owners;
    for (const auto& [owner, count] : Counts(stats)) owners.insert(owner);
    EXPECT_EQ(owners, c.owners);
    for (const OwnershipEntry& entry : stats.entries) {
      if (entry.info.owner == Owner::kLibrary) {
        EXPECT_EQ(entry.info.library, c.library);
      }
    }
  }
  // With output fusion, dot + bias + relu is one library call on cpu and gpu.
  for (const char* name : {"cpu", "gpu"}) {
    auto module = Parse(kDotBiasReluUnfused);
    compiler::MakeTargetPipeline(*targets::FindDescription(name)).Run(*module);
    EXPECT_EQ(AnalyzeOwnership(*module, *targets::FindDescription(name)).kernel_count, 1) << name;
  }
}

TEST(OwnershipTest, CustomFusionAroundAKnownCustomCallIsTheLibrarys) {
  const char* text = R"(
fused {
  a = f32[4,4] parameter(0)
  c = f32[4,4] custom-call(a, a), custom_call_target="__cublas$gemm"
  ROOT n = f32[4,4] negate(c)
}
ENTRY main {
  x = f32[4,4] parameter(0)
  ROOT f = f32[4,4] fusion(x), kind=kCustom, calls=fused
}
)";
  ModuleStats gpu = Analyze(text, targets::GpuDescription());
  EXPECT_EQ(Counts(gpu), (std::map<std::string, int64_t>{{"library", 2}}));
  EXPECT_EQ(OnlyCodeEntry(gpu).info.library, "cuBLAS");
  // The cpu does not know the custom-call: the whole fused kernel is unsupported.
  ModuleStats cpu = Analyze(text, targets::CpuDescription());
  EXPECT_EQ(Counts(cpu), (std::map<std::string, int64_t>{{"unsupported-custom-call", 2}}));
  EXPECT_EQ(OnlyCodeEntry(cpu).info.detail, "__cublas$gemm");
}

TEST(OwnershipTest, ModuleWithoutEntryGivesEmptyStats) {
  hlo::Module module("no_entry");
  ModuleStats stats = AnalyzeOwnership(module, targets::CpuDescription());
  EXPECT_TRUE(stats.entries.empty());
  EXPECT_EQ(stats.kernel_count, 0);
  EXPECT_EQ(stats.total_flops, 0);
  EXPECT_EQ(stats.instructions_by_owner.at("generated-kernel"), 0);
}

TEST(OwnershipTest, EmptyEntryGivesZeroStats) {
  ModuleStats stats = Analyze("ENTRY main {\n  ROOT p = f32[0] parameter(0)\n}\n",
                              targets::GpuDescription());
  EXPECT_EQ(Counts(stats), (std::map<std::string, int64_t>{}));
  EXPECT_EQ(stats.fusion_coverage, 0.0);
  EXPECT_EQ(stats.kernel_count, 0);
  EXPECT_EQ(stats.entries.size(), 1u);
  EXPECT_EQ(stats.entries[0].info.owner, Owner::kNoCode);
}

// Host offloading is counted as host-memory traffic: a value with an S(5) layout is written once
// and read once per user; a value JAX placed with annotate_device_placement(pinned_host) counts
// as written; nothing else moves to the host. Complex and 8-bit values are host fallbacks on
// every target that has no code for them, with the type in the detail.
TEST(OwnershipHostMemory, OffloadedValuesAreHostMemoryTraffic) {
  const ModuleStats stats = Analyze(R"(
ENTRY e {
  p = f32[256] parameter(0)
  h = f32[256]{0:S(5)} copy(p)
  back = f32[256] copy(h)
  one = f32[] constant(1)
  pinned = f32[] custom-call(one), custom_call_target="annotate_device_placement",
      frontend_attributes={_xla_buffer_placement="pinned_host"}
  ROOT t = (f32[256], f32[]) tuple(back, pinned)
})",
                                    targets::CpuDescription());
  EXPECT_EQ(stats.host_memory_bytes, 1024 + 1024 + 4);
  const ModuleStats none =
      Analyze("ENTRY e {\n  p = f32[8] parameter(0)\n  ROOT c = f32[8] copy(p)\n}",
              targets::CpuDescription());
  EXPECT_EQ(none.host_memory_bytes, 0);
}

TEST(OwnershipHostMemory, ComplexAndFp8AreHostFallbacksNamingTheType) {
  const std::string text = R"(
ENTRY e {
  p = c64[8] parameter(0)
  ROOT n = c64[8] negate(p)
})";
  for (const TargetDescription* target :
       {&targets::CpuDescription(), &targets::GpuDescription(), &targets::SystolicDescription()}) {
    const ModuleStats stats = Analyze(text, *target);
    const OwnershipEntry& entry = OnlyCodeEntry(stats);
    EXPECT_EQ(entry.info.owner, Owner::kHostFallback) << target->name;
    EXPECT_NE(entry.info.detail.find("negate on c64"), std::string::npos) << entry.info.detail;
  }
  const ModuleStats fp8_stats = Analyze(R"(
ENTRY e {
  p = f8e4m3fn[8] parameter(0)
  ROOT a = f8e4m3fn[8] add(p, p)
})",
                                        targets::CpuDescription());
  const OwnershipEntry& fp8 = OnlyCodeEntry(fp8_stats);
  EXPECT_EQ(fp8.info.owner, Owner::kHostFallback);
  EXPECT_NE(fp8.info.detail.find("f8e4m3fn"), std::string::npos) << fp8.info.detail;
}

}  // namespace

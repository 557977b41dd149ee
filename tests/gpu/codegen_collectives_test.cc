// Collectives in GPU artifacts (gpu_compiler_collectives.cc): the NCCL steps, groups and
// strided copies a sharded module becomes, every device's emulated results bit for bit the
// interpreter's on the same grid, and the refusals (a reduction NCCL lacks, a malformed step).
// XLA's own per-device results are tests/xla/xla_collectives.py's oracle for the gpu target.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/multi_device.h"
#include "targets/gpu/artifact.h"
#include "targets/gpu/codegen/gpu_compiler.h"
#include "targets/gpu/emulator/gpu_backend.h"
#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace {

using ::testing::HasSubstr;

// Four replicas: every collective form, along the outer dimension and along an inner one.
constexpr char kEveryCollective[] = R"(HloModule every_collective, replica_count=4
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
mul_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] multiply(a, b)
}
or_pred {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] or(a, b)
}
ENTRY main {
  x = f32[4,8] parameter(0)
  h = bf16[4,8] parameter(1)
  i = s32[6] parameter(2)
  p = pred[5] parameter(3)
  neg = f32[4,8] negate(x)
  sum_bf16 = bf16[4,8] all-reduce(h), replica_groups={{0,1},{2,3}}, to_apply=add_bf16
  both = (f32[4,8], f32[4,8]) all-reduce(x, neg), replica_groups={}, to_apply=max_f32
  product = s32[6] all-reduce(i), replica_groups={{0,2},{1,3}}, to_apply=mul_s32
  any = pred[5] all-reduce(p), replica_groups={}, to_apply=or_pred
  scattered = f32[4,2] reduce-scatter(x), replica_groups={}, dimensions={1}, to_apply=add_f32
  outer_scattered = f32[1,8] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=add_f32
  started = (f32[4,8], f32[4,32]) all-gather-start(x), replica_groups={}, dimensions={1}
  gathered = f32[4,32] all-gather-done(started)
  reducing = f32[4,8] all-reduce-start(x), replica_groups={{0,1,2,3}}, to_apply=add_f32
  reduced = f32[4,8] all-reduce-done(reducing)
  exchanged = f32[4,8] all-to-all(x), replica_groups={}, dimensions={1}
  permuting = (f32[4,8], f32[4,8], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,2},{3,0}}
  permuted = f32[4,8] collective-permute-done(permuting)
  replica = u32[] replica-id()
  ROOT t = (bf16[4,8], (f32[4,8], f32[4,8]), s32[6], pred[5], f32[4,2], f32[1,8], f32[4,32],
            f32[4,8], f32[4,8], f32[4,8], u32[]) tuple(sum_bf16, both, product, any, scattered,
            outer_scattered, gathered, reduced, exchanged, permuted, replica)
}
)";

gpu::codegen::GpuCompileResult CompileForGpu(const std::string& text) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  gpu::codegen::GpuCompileOptions options;
  options.assemble = false;
  return gpu::codegen::CompileModule(*module, options);
}

// The array leaves of a result, depth first (the gpu backend returns them as one flat tuple).
void CollectLeaves(const hlo::Literal& literal, std::vector<const hlo::Literal*>& leaves) {
  if (!literal.IsTuple()) {
    leaves.push_back(&literal);
    return;
  }
  for (const hlo::Literal& element : literal.elements()) CollectLeaves(element, leaves);
}

void ExpectSameLeaves(const hlo::Literal& got, const hlo::Literal& expected, size_t device) {
  std::vector<const hlo::Literal*> ours, theirs;
  CollectLeaves(got, ours);
  CollectLeaves(expected, theirs);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_TRUE(ours[i]->BitwiseEqual(*theirs[i]))
        << "device " << device << ", leaf " << i << "\n gpu: " << ours[i]->ToString()
        << "\n interp: " << theirs[i]->ToString();
  }
}

// Runs `text` on every device of its grid through the gpu backend (an executable per device,
// as `retarget run` does) and through the interpreter; every device's result must be the same
// bits.
void ExpectEveryDeviceMatchesInterpreter(const std::string& text) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(text);
  const hlo::DeviceGrid grid = hlo::ModuleDeviceGrid(*module);
  std::vector<std::vector<hlo::Literal>> inputs;
  for (int64_t d = 0; d < grid.size(); ++d)
    inputs.push_back(io::MakeRandomInputs(*module, 7 + static_cast<uint64_t>(d)));
  const std::vector<hlo::Literal> expected = hlo::EvaluateOnDevices(*module, grid, inputs);
  std::unique_ptr<targets::Backend> gpu = gpu::emulator::MakeGpuBackend();
  ASSERT_TRUE(gpu->multi_device());
  const std::vector<hlo::Literal> got =
      targets::RunAsDevices(targets::CompileForDevices(*gpu, *module, grid.size()), grid, inputs);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t d = 0; d < got.size(); ++d) ExpectSameLeaves(got[d], expected[d], d);
}

TEST(GpuCodegenCollectives, EveryDeviceMatchesTheInterpreterBitForBit) {
  ExpectEveryDeviceMatchesInterpreter(kEveryCollective);
}

TEST(GpuCodegenCollectives, StepsNameTheirGroupsAndInnerDimensionsMoveThroughStridedCopies) {
  const gpu::codegen::GpuCompileResult compiled = CompileForGpu(kEveryCollective);
  const gpu::Manifest& m = compiled.artifact.manifest;
  EXPECT_EQ(m.grid.replicas, 4);
  EXPECT_EQ(m.grid.partitions, 1);
  std::map<std::string, const gpu::CollectiveCall*> calls;
  std::map<std::string, int> strided;
  for (const gpu::Step& step : m.steps) {
    if (const auto* call = std::get_if<gpu::CollectiveCall>(&step.call)) calls[step.name] = call;
    if (std::holds_alternative<gpu::StridedCopy>(step.call))
      ++strided[step.name.substr(0, step.name.find('.'))];
  }
  ASSERT_TRUE(calls.count("sum_bf16"));
  EXPECT_EQ(calls["sum_bf16"]->groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(calls["sum_bf16"]->dtype, gpu::DType::kBF16);
  EXPECT_EQ(calls["sum_bf16"]->count, 32u);
  ASSERT_TRUE(calls.count("product"));
  EXPECT_EQ(calls["product"]->groups, (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(calls["product"]->reduction, gpu::Reduction::kProd);
  ASSERT_TRUE(calls.count("any"));
  EXPECT_EQ(calls["any"]->reduction, gpu::Reduction::kMax);  // or on pred
  ASSERT_TRUE(calls.count("both.0") && calls.count("both.1"));
  ASSERT_TRUE(calls.count("permuting"));
  EXPECT_EQ(calls["permuting"]->op, gpu::Collective::kSendReceive);
  EXPECT_EQ(calls["permuting"]->pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{3, 0}, {0, 1}, {1, 2}}));
  // Along dimension 1, four slabs per row: four strided copies; along dimension 0, none.
  EXPECT_EQ(strided["scattered"], 4);
  EXPECT_EQ(strided["started"], 4);
  EXPECT_EQ(strided["exchanged"], 8);  // into blocks, and out of them
  EXPECT_EQ(strided.count("outer_scattered"), 0u);
  EXPECT_EQ(calls["outer_scattered"]->count, 8u);
  EXPECT_EQ(calls["outer_scattered"]->send.bytes, 4u * 8u * 4u);
  // Serialized and read back, every field survives.
  const gpu::Artifact back = gpu::ParseArtifact(gpu::SerializeArtifact(compiled.artifact));
  EXPECT_EQ(back.manifest.grid.replicas, 4);
  EXPECT_EQ(gpu::ManifestToJson(back.manifest).dump(), gpu::ManifestToJson(m).dump());
}

TEST(GpuCodegenCollectives, PartitionsAndReplicasOfAGridAreTheirIds) {
  ExpectEveryDeviceMatchesInterpreter(R"(HloModule ids, replica_count=2, num_partitions=3
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[3,4] parameter(0)
  across_partitions = f32[3,4] all-reduce(x), channel_id=1, replica_groups={{0,1,2},{3,4,5}}, use_global_device_ids=true, to_apply=add
  everyone = f32[3,4] all-reduce(x), channel_id=2, replica_groups={{0,1,2,3,4,5}}, use_global_device_ids=true, to_apply=add
  gathered = f32[3,8] all-gather(x), replica_groups={}, dimensions={1}
  rotated = f32[3,4] collective-permute(x), channel_id=3, source_target_pairs={{0,1},{1,2},{2,0}}
  partition = u32[] partition-id()
  replica = u32[] replica-id()
  ROOT t = (f32[3,4], f32[3,4], f32[3,8], f32[3,4], u32[], u32[]) tuple(across_partitions, everyone, gathered, rotated, partition, replica)
}
)");
}

TEST(GpuCodegenCollectives, OneDeviceOfAShardedModuleExchangesWithItself) {
  // `retarget run --devices 1`: the artifact is compiled again for a grid of one.
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(R"(HloModule one, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,4] parameter(0)
  sum = f32[2,4] all-reduce(x), replica_groups={}, to_apply=add
  exchanged = f32[2,4] all-to-all(x), replica_groups={}, dimensions={1}
  replica = u32[] replica-id()
  ROOT t = (f32[2,4], f32[2,4], u32[]) tuple(sum, exchanged, replica)
}
)");
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, 3);
  const hlo::Literal expected = hlo::Evaluate(*module, inputs);
  std::unique_ptr<targets::Backend> gpu = gpu::emulator::MakeGpuBackend();
  ExpectSameLeaves(gpu->Compile(*module)->Run(inputs), expected, 0);
}

TEST(GpuCodegenCollectives, AReductionNcclLacksIsRefusedNamingTheInstruction) {
  try {
    CompileForGpu(R"(HloModule sub, replica_count=2
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT d = f32[] subtract(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={}, to_apply=sub
}
)");
    FAIL() << "a subtracting all-reduce compiled";
  } catch (const hlo::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("instruction r (all-reduce): its reduction is not one "
                                        "NCCL has"));
  }
}

TEST(GpuCodegenCollectives, ValidationRefusesMalformedCollectives) {
  gpu::Artifact artifact;
  gpu::Manifest& m = artifact.manifest;
  m.grid = {2, 1};
  m.arena_bytes = 1024;
  gpu::CollectiveCall call;
  call.op = gpu::Collective::kAllReduce;
  call.count = 4;
  call.send = {0, 16};
  call.receive = {256, 16};
  call.groups = {{0, 1}};
  m.steps.push_back({"ok", call});
  EXPECT_NO_THROW(gpu::ValidateArtifact(artifact));
  auto refused = [&](gpu::CollectiveCall bad, const std::string& why) {
    m.steps = {{"bad", bad}};
    try {
      gpu::ValidateArtifact(artifact);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const gpu::ArtifactError& error) {
      EXPECT_THAT(error.what(), HasSubstr(why));
    }
  };
  gpu::CollectiveCall lonely = call;
  lonely.groups = {{0}};
  refused(lonely, "device 1 is in no group");
  gpu::CollectiveCall outside = call;
  outside.groups = {{0, 2}};
  refused(outside, "device 2 is outside the grid of 2");
  gpu::CollectiveCall narrow = call;
  narrow.dtype = gpu::DType::kS16;
  narrow.send.bytes = narrow.receive.bytes = 8;
  refused(narrow, "NCCL does not reduce s16");
  gpu::CollectiveCall gather = call;
  gather.op = gpu::Collective::kAllGather;
  refused(gather, "receive: slice has 16 bytes, the tensor needs 32");
  gpu::CollectiveCall twice = call;
  twice.op = gpu::Collective::kSendReceive;
  twice.pairs = {{0, 1}, {0, 0}};
  refused(twice, "a device sends or receives twice");
  m.steps = {{"rows", gpu::StridedCopy{0, 512, 4, 64, 128, 64}}};
  EXPECT_NO_THROW(gpu::ValidateArtifact(artifact));
  m.steps = {{"rows", gpu::StridedCopy{0, 512, 9, 64, 128, 64}}};  // 8 x 128 + 64 > 1024
  EXPECT_THROW(gpu::ValidateArtifact(artifact), gpu::ArtifactError);
  m.steps = {{"rows", gpu::StridedCopy{0, 512, 4, 64, 32, 64}}};  // rows overlap
  EXPECT_THROW(gpu::ValidateArtifact(artifact), gpu::ArtifactError);
  m.steps.clear();
  m.grid = {0, 1};
  EXPECT_THROW(gpu::ValidateArtifact(artifact), gpu::ArtifactError);
}

}  // namespace

// The .rtgpu container and manifest: round trip, byte layout, version rejection, corrupt and
// truncated files, and the validator's messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "targets/gpu/artifact.h"
#include "tests/gpu/sample_artifact.h"

namespace gpu {
namespace {

using ::testing::HasSubstr;

uint64_t ReadLe(const std::string& bytes, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return v;
}

std::string ErrorOf(const std::string& bytes) {
  try {
    ParseArtifact(bytes, "model.rtgpu");
  } catch (const ArtifactError& e) {
    return e.what();
  }
  return "";
}

std::string ValidationErrorOf(const Artifact& a) {
  try {
    ValidateArtifact(a);
  } catch (const ArtifactError& e) {
    return e.what();
  }
  return "";
}

// An artifact using every step kind and every kernel argument kind.
Artifact FullArtifact() {
  Artifact a = testing::MakeSample(4, 3, 8).artifact;
  Manifest& m = a.manifest;
  const uint64_t base = m.arena_bytes;
  m.arena_bytes = base + 4096;
  a.sections["const.0"] = std::string("\x01\x02\x03\x04", 4);
  m.constants.push_back({"const.0", {base, 4}});
  a.sections["cubin.elementwise"] = std::string("\x7f" "ELF fake cubin", 15);
  m.modules[0].cubin_section = "cubin.elementwise";
  m.modules[0].cubin_arch = "sm_90";
  auto& kernel = std::get<KernelLaunch>(m.steps[0].call);
  KernelArg s64;
  s64.kind = KernelArg::Kind::kS64;
  s64.integer = (int64_t{1} << 53) + 1;  // not representable as a double: must survive exactly
  KernelArg f32;
  f32.kind = KernelArg::Kind::kF32;
  f32.real = 0.5;
  kernel.args.push_back(s64);
  kernel.args.push_back(f32);
  ConvCall conv;
  conv.input_dims = {1, 2, 4, 4};
  conv.filter_dims = {3, 2, 3, 3};
  conv.output_dims = {1, 3, 2, 2};
  conv.strides = {1, 1};
  conv.padding_low = {0, 0};
  conv.padding_high = {0, 0};
  conv.dilations = {1, 1};
  conv.input = {base + 64, 128};
  conv.filter = {base + 256, 216};
  conv.output = {base + 512, 48};
  m.steps.push_back({"conv.3", conv});
  m.steps.push_back({"copy.4", DeviceCopy{{base + 512, 48}, {base + 1024, 48}}});
  // Control flow: a loop whose condition and body are programs 0 and 1, and a conditional over
  // programs 1 and 2 (program 2 itself runs program 0).
  m.programs.push_back({"w.condition", {{"cond.copy", DeviceCopy{{base, 1}, {base + 2048, 1}}}}});
  m.programs.push_back({"w.body", {{"body.copy", DeviceCopy{{base + 64, 48}, {base + 512, 48}}}}});
  m.programs.push_back({"c.branch1", {{"inner", WhileLoop{0, 1, {base + 2048, 1}}}}});
  m.steps.push_back({"w.5", WhileLoop{0, 1, {base + 2048, 1}}});
  m.steps.push_back({"c.6", Conditional{DType::kS32, {base + 2304, 4}, {1, 2}}});
  return a;
}

TEST(GpuArtifact, RoundTripKeepsEveryField) {
  const Artifact original = FullArtifact();
  const std::string bytes = SerializeArtifact(original);
  const Artifact back = ParseArtifact(bytes);
  EXPECT_EQ(JsonText(ManifestToJson(back.manifest)), JsonText(ManifestToJson(original.manifest)));
  EXPECT_EQ(back.sections, original.sections);
  const auto& kernel = std::get<KernelLaunch>(back.manifest.steps[0].call);
  EXPECT_EQ(kernel.args[3].integer, 9007199254740993);
  EXPECT_EQ(kernel.args[4].real, 0.5);
  EXPECT_EQ(kernel.grid[0], 1u);    // 32 elements / 256 threads, rounded up
  EXPECT_EQ(kernel.block[0], 256u);
  const auto& mm = std::get<MatmulCall>(back.manifest.steps[1].call);
  EXPECT_EQ(mm.epilogue, Epilogue::kReluBias);
  EXPECT_EQ(mm.m, 4);
  EXPECT_EQ(mm.bias, (Slice{512, 12}));  // x at 0, w at 256, b at 512: 256-byte aligned
  EXPECT_EQ(std::get<ConvCall>(back.manifest.steps[2].call).filter_dims, (std::vector<int64_t>{3, 2, 3, 3}));
  EXPECT_STREQ(StepKindName(back.manifest.steps[3]), "copy");
  EXPECT_EQ(back.manifest.parameters[1].shape, (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(back.manifest.modules[0].cubin_arch, "sm_90");
  const auto& loop = std::get<WhileLoop>(back.manifest.steps[4].call);
  EXPECT_EQ(loop.condition, 0u);
  EXPECT_EQ(loop.body, 1u);
  EXPECT_EQ(loop.predicate.bytes, 1u);
  const auto& conditional = std::get<Conditional>(back.manifest.steps[5].call);
  EXPECT_EQ(conditional.selector_dtype, DType::kS32);
  EXPECT_EQ(conditional.branches, (std::vector<uint32_t>{1, 2}));
  ASSERT_EQ(back.manifest.programs.size(), 3u);
  EXPECT_EQ(back.manifest.programs[2].name, "c.branch1");
  EXPECT_STREQ(StepKindName(back.manifest.programs[2].steps[0]), "while");
}

// Programs run only earlier programs (no recursion); a predicate is one byte; a selector is
// pred with two branches or s32 with any number.
TEST(GpuArtifact, ValidatorChecksControlFlow) {
  const Artifact a = FullArtifact();
  EXPECT_EQ(ValidationErrorOf(a), "");
  {
    Artifact bad = a;
    std::get<WhileLoop>(bad.manifest.programs[2].steps[0].call).body = 2;  // itself
    EXPECT_THAT(ValidationErrorOf(bad),
                HasSubstr("programs[2] 'c.branch1' steps[0] (while 'inner') body: runs program 2, but "
                          "only programs below 2 may run here"));
  }
  {
    Artifact bad = a;
    std::get<WhileLoop>(bad.manifest.steps[4].call).condition = 3;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("steps[4] (while 'w.5') condition: runs program 3"));
  }
  {
    Artifact bad = a;
    std::get<WhileLoop>(bad.manifest.steps[4].call).predicate.bytes = 4;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("predicate: slice has 4 bytes, the tensor needs 1"));
  }
  {
    Artifact bad = a;
    std::get<Conditional>(bad.manifest.steps[5].call).selector_dtype = DType::kPred;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("selector: slice has 4 bytes, the tensor needs 1"));
  }
  {
    Artifact bad = a;
    std::get<Conditional>(bad.manifest.steps[5].call).selector_dtype = DType::kF32;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("selector dtype f32 is not pred or s32"));
  }
  {
    Artifact bad = a;
    std::get<Conditional>(bad.manifest.steps[5].call).branches.clear();
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("steps[5] (conditional 'c.6'): no branches"));
  }
  {
    Artifact bad = a;
    std::get<DeviceCopy>(bad.manifest.programs[1].steps[0].call).destination.offset = a.manifest.arena_bytes;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("programs[1] 'w.body' steps[0] (copy 'body.copy') destination"));
  }
}

TEST(GpuArtifact, ByteLayoutMatchesTheDocumentedHeader) {
  const std::string bytes = SerializeArtifact(FullArtifact());
  EXPECT_EQ(bytes.substr(0, 8), std::string("RTGPU\0\r\n", 8));
  EXPECT_EQ(ReadLe(bytes, 8, 4), 3u);                   // format version
  EXPECT_EQ(ReadLe(bytes, 12, 4), 4u);                  // manifest + const.0 + cubin + ptx
  EXPECT_EQ(ReadLe(bytes, 16, 8), bytes.size());        // total size
  EXPECT_EQ(ReadLe(bytes, 24, 2), 8u);                  // first section name length
  EXPECT_EQ(bytes.substr(26, 8), "manifest");
  const uint64_t offset = ReadLe(bytes, 34, 8), size = ReadLe(bytes, 42, 8);
  EXPECT_EQ(offset % 64, 0u);
  EXPECT_EQ(bytes[offset], '{');
  EXPECT_THAT(bytes.substr(offset, size), HasSubstr("\"kind\": \"cublaslt_matmul\""));
  EXPECT_EQ(bytes.size() % 64, 0u);
}

TEST(GpuArtifact, OtherFormatVersionIsRejectedWithBothVersions) {
  std::string bytes = SerializeArtifact(FullArtifact());
  bytes[8] = 7;
  EXPECT_EQ(ErrorOf(bytes), "model.rtgpu: artifact format version 7; this runtime reads version 3 "
                            "(recompile the model with a matching retarget)");
  // Only the 12 bytes up to the version are needed to say so.
  EXPECT_THAT(ErrorOf(bytes.substr(0, 12)), HasSubstr("artifact format version 7; this runtime reads version 3"));
}

TEST(GpuArtifact, BadMagicTruncationAndCorruptionAreErrors) {
  const std::string bytes = SerializeArtifact(FullArtifact());
  EXPECT_THAT(ErrorOf("PK\x03\x04 not an artifact"), HasSubstr("not a Retarget GPU artifact"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("not a Retarget GPU artifact"));
  EXPECT_THAT(ErrorOf(bytes.substr(0, bytes.size() - 1)), HasSubstr("header says " + std::to_string(bytes.size())));
  EXPECT_THAT(ErrorOf(bytes.substr(0, 10)), HasSubstr("truncated artifact: format version"));
  std::string corrupt = bytes;
  const uint64_t manifest_at = ReadLe(bytes, 34, 8);
  corrupt[manifest_at + 5] ^= 0x20;
  EXPECT_EQ(ErrorOf(corrupt), "model.rtgpu: section 'manifest' is corrupt (CRC-32 mismatch)");
}

TEST(GpuArtifact, EveryPrefixAndEveryByteFlipIsAnErrorOrAValidArtifact) {
  const std::string bytes = SerializeArtifact(testing::MakeSample(2, 2, 2).artifact);
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_NE(ErrorOf(bytes.substr(0, n)), "") << "prefix " << n;
  int rejected = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string flipped = bytes;
    flipped[i] ^= 0x5A;
    if (!ErrorOf(flipped).empty()) ++rejected;
  }
  // Header, table and section bytes are all covered by magic, sizes or CRCs; only alignment
  // padding between sections may flip unnoticed.
  EXPECT_GT(rejected, static_cast<int>(bytes.size()) / 2);
}

TEST(GpuArtifact, ValidatorNamesTheFault) {
  Artifact a = testing::MakeSample(4, 3, 8).artifact;
  {
    Artifact bad = a;
    bad.manifest.results[0].slice.offset = bad.manifest.arena_bytes - 8;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("results[0] 'out0': slice ["));
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("lies outside the " + std::to_string(a.manifest.arena_bytes) + "-byte arena"));
  }
  {
    Artifact bad = a;
    bad.manifest.parameters[0].shape = {4, 9};
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("slice has 128 bytes, the tensor needs 144"));
  }
  {
    Artifact bad = a;
    std::get<KernelLaunch>(bad.manifest.steps[0].call).block = {64, 32, 1};
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("steps[0] (kernel 'add.1'): block of 2048 threads exceeds 1024"));
  }
  {
    Artifact bad = a;
    std::get<MatmulCall>(bad.manifest.steps[1].call).lda = 7;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("leading dimension 7 < 8 columns"));
  }
  {
    Artifact bad = a;
    std::get<MatmulCall>(bad.manifest.steps[1].call).dtype = DType::kS32;
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("dtype s32 is not f32, f16, bf16 or f64"));
  }
  {
    Artifact bad = a;
    bad.sections.clear();
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("refers to missing section 'ptx.elementwise'"));
  }
  {
    Artifact bad = a;
    bad.manifest.parameters[1].name = "arg0";
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("empty or duplicate name 'arg0'"));
  }
  {
    Artifact bad = a;
    bad.manifest.parameters[0].shape = {int64_t{1} << 40, int64_t{1} << 40};
    EXPECT_THAT(ValidationErrorOf(bad), HasSubstr("size overflows 64 bits"));
  }
  EXPECT_EQ(ValidationErrorOf(a), "");
}

TEST(GpuArtifact, ManifestReaderRejectsUnknownNames) {
  const Json json = ManifestToJson(testing::MakeSample(1, 1, 1).artifact.manifest);
  auto error_of = [](const Json& j) {
    try {
      ManifestFromJson(j);
    } catch (const ArtifactError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string text = JsonText(json);
  const auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return ParseJson(t);
  };
  EXPECT_EQ(error_of(replace("\"dtype\": \"f32\"", "\"dtype\": \"f8\"")),
            "manifest: 'parameters[0].dtype' has unknown dtype 'f8'");
  EXPECT_EQ(error_of(replace("\"kind\": \"kernel\"", "\"kind\": \"nccl_allreduce\"")),
            "manifest: 'steps[0].kind' is unknown: 'nccl_allreduce'");
  EXPECT_EQ(error_of(replace("\"epilogue\": \"relu_bias\"", "\"epilogue\": \"swish\"")),
            "manifest: 'steps[1].epilogue' has unknown value 'swish'");
  EXPECT_EQ(error_of(replace("\"arena_bytes\": ", "\"arena_bytes\": -")), "manifest: 'arena_bytes' is negative (-1280)");
  // A version 2 manifest (before device grids and collectives) is refused, not misread.
  EXPECT_EQ(error_of(replace("\"format_version\": 3", "\"format_version\": 2")),
            "manifest says format version 2; this runtime reads version 3");
  EXPECT_EQ(error_of(replace("\"kind\": \"kernel\"",
                             "\"kind\": \"collective\", \"op\": \"all_broadcast\"")),
            "manifest: 'steps[0].op' has unknown value 'all_broadcast'");
  EXPECT_EQ(error_of(replace("\"programs\": []", "\"programs\": [{\"steps\": [{\"kind\": \"while\"}]}]")),
            "manifest: 'programs[0].steps[0]' lacks member 'condition'");
  EXPECT_EQ(error_of(replace("\"m\": 1", "\"m\": \"1\"")), "manifest: 'steps[1].m' must be an integer, not a string");
}

}  // namespace
}  // namespace gpu

namespace gpu {
namespace {

// The checked-in manifest of the sample is the current format version as shipped. If this fails,
// the format changed: keep reading old files, or bump kArtifactFormatVersion and regenerate the
// file (it is JsonText(ManifestToJson(MakeSample(4, 3, 8).artifact.manifest)) plus a newline).
TEST(GpuArtifact, CheckedInManifestStillReadsAndMatches) {
  std::ifstream in(RTGPU_TEST_DATA_DIR "/sample_4x3x8.manifest.json");
  ASSERT_TRUE(in) << "missing tests/gpu/data/sample_4x3x8.manifest.json";
  const std::string golden((std::istreambuf_iterator<char>(in)), {});
  Artifact from_golden;
  from_golden.manifest = ManifestFromJson(ParseJson(golden));
  from_golden.sections["ptx.elementwise"] = testing::AddOnePtx();
  ValidateArtifact(from_golden);
  EXPECT_EQ(JsonText(ManifestToJson(from_golden.manifest)) + "\n", golden);
  const Manifest sample = testing::MakeSample(4, 3, 8).artifact.manifest;
  EXPECT_EQ(golden, JsonText(ManifestToJson(sample)) + "\n");
}

}  // namespace
}  // namespace gpu

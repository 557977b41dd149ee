// The runtime's own .npz reader/writer (checked against numpy itself) and the input binding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "targets/gpu/runtime/npz.h"
#include "targets/gpu/runtime/run_error.h"
#include "targets/gpu/runtime/tensors.h"
#include "tests/gpu/sample_artifact.h"

namespace gpu::runtime {
namespace {

using ::testing::HasSubstr;

// The build's own Python with numpy (scripts/setup-python.sh), passed in by CMake.
const std::string kPython = RETARGET_PYTHON;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/gpu_npz_" + std::to_string(::getpid()) + "_" + name;
}

std::string FloatBytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const RunError& e) {
    return e.what();
  }
  return "";
}

TEST(GpuRuntimeNpz, NumpyReadsWhatWeWrite) {
  const std::string path = TempPath("ours.npz");
  int32_t ints[3] = {-7, 0, 2147483647};
  WriteNpzFile({{"out0", "<f4", {2, 3}, FloatBytes({1.5f, -2, 0, 3.25f, 1e-3f, 7})},
                {"out1", "<i4", {3}, std::string(reinterpret_cast<char*>(ints), 12)},
                {"out2", "|b1", {}, std::string("\x01", 1)}},
               path);
  const std::string script =
      "import numpy as np; z = np.load('" + path + "'); "
      "assert z['out0'].shape == (2, 3) and z['out0'].dtype == np.float32; "
      "assert z['out0'][1, 0] == 3.25 and z['out0'][0, 1] == -2; "
      "assert list(z['out1']) == [-7, 0, 2147483647]; "
      "assert z['out2'].shape == () and bool(z['out2']) is True";
  EXPECT_EQ(std::system((kPython + " -c \"" + script + "\"").c_str()), 0);
  std::remove(path.c_str());
}

TEST(GpuRuntimeNpz, WeReadWhatNumpyWrites) {
  const std::string path = TempPath("numpy.npz");
  const std::string script = "import numpy as np; np.savez('" + path +
                             "', arg0=np.arange(6, dtype=np.float32).reshape(2, 3) / 4, "
                             "arg1=np.array([1, -2], dtype=np.int64), arg2=np.zeros((0, 5), np.float16))";
  ASSERT_EQ(std::system((kPython + " -c \"" + script + "\"").c_str()), 0);
  const std::vector<NpyArray> arrays = ReadNpzFile(path);
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(arrays[0].name, "arg0");
  EXPECT_EQ(arrays[0].descr, "<f4");
  EXPECT_EQ(arrays[0].shape, (std::vector<int64_t>{2, 3}));
  float f[6];
  std::memcpy(f, arrays[0].data.data(), 24);
  EXPECT_EQ(f[5], 1.25f);  // 5 / 4
  EXPECT_EQ(arrays[1].descr, "<i8");
  int64_t i[2];
  std::memcpy(i, arrays[1].data.data(), 16);
  EXPECT_EQ(i[1], -2);
  EXPECT_EQ(arrays[2].shape, (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(arrays[2].data.empty());
  std::remove(path.c_str());
}

TEST(GpuRuntimeNpz, CompressedAndCorruptFilesAreClearErrors) {
  const std::string ours = SerializeNpz({{"arg0", "<f4", {2}, FloatBytes({1, 2})}});
  EXPECT_EQ(ParseNpz(ours, "in.npz")[0].shape, (std::vector<int64_t>{2}));
  EXPECT_THAT(ErrorOf([&] { ParseNpz("hello", "in.npz"); }), HasSubstr("in.npz: not a .npz file"));
  std::string corrupt = ours;
  corrupt[100] ^= 1;  // inside the .npy payload of the only entry
  EXPECT_THAT(ErrorOf([&] { ParseNpz(corrupt, "in.npz"); }), HasSubstr("entry 'arg0.npy' is corrupt (CRC-32 mismatch)"));
  for (size_t n = 0; n < ours.size(); ++n) {
    EXPECT_NE(ErrorOf([&] { ParseNpz(ours.substr(0, n), "in.npz"); }), "") << "prefix " << n;
  }
  const std::string path = TempPath("compressed.npz");
  ASSERT_EQ(std::system((kPython + " -c \"import numpy as np; np.savez_compressed('" + path + "', arg0=np.ones(4))\"").c_str()), 0);
  EXPECT_THAT(ErrorOf([&] { ReadNpzFile(path); }),
              HasSubstr("is compressed; this runtime reads stored entries (np.savez, not np.savez_compressed)"));
  std::remove(path.c_str());
}

TEST(GpuRuntimeTensors, BindingChecksNamesShapesAndDtypes) {
  const Manifest m = testing::MakeSample(2, 2, 2).artifact.manifest;
  const NpyArray x{"arg0", "<f4", {2, 2}, FloatBytes({1, 2, 3, 4})};
  const NpyArray w{"arg1", "<f4", {2, 2}, FloatBytes({1, 0, 0, 1})};
  const NpyArray b{"arg2", "<f4", {2}, FloatBytes({5, 6})};
  const auto bound = BindInputs(m, {b, x, w}, "in.npz");  // order in the file does not matter
  EXPECT_EQ(bound[0], x.data);
  EXPECT_EQ(bound[2], b.data);
  EXPECT_EQ(ErrorOf([&] { BindInputs(m, {x, w}, "in.npz"); }), "in.npz: no entry 'arg2' for parameter arg2");
  NpyArray wrong_shape = b;
  wrong_shape.shape = {1, 2};
  EXPECT_EQ(ErrorOf([&] { BindInputs(m, {x, w, wrong_shape}, "in.npz"); }),
            "in.npz: input 'arg2' has shape [1,2], the model expects [2]");
  NpyArray wrong_type{"arg2", "<f8", {2}, std::string(16, '\0')};
  EXPECT_EQ(ErrorOf([&] { BindInputs(m, {x, w, wrong_type}, "in.npz"); }),
            "in.npz: input 'arg2' has numpy dtype '<f8', the model expects f32 ('<f4')");
}

TEST(GpuRuntimeTensors, Bf16RoundsToNearestEvenAndTravelsAsFloat32) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3F80);
  float tie_down, tie_up, above;
  const uint32_t tie_down_bits = 0x3F808000, tie_up_bits = 0x3F818000, above_bits = 0x3F808001;
  std::memcpy(&tie_down, &tie_down_bits, 4);
  std::memcpy(&tie_up, &tie_up_bits, 4);
  std::memcpy(&above, &above_bits, 4);
  EXPECT_EQ(FloatToBf16(tie_down), 0x3F80);  // tie, even mantissa stays
  EXPECT_EQ(FloatToBf16(tie_up), 0x3F82);    // tie, odd mantissa rounds up to even
  EXPECT_EQ(FloatToBf16(above), 0x3F81);
  EXPECT_EQ(Bf16ToFloat(0xC040), -3.0f);
  Manifest m;
  m.results = {{"out0", DType::kBF16, {2}, {0, 4}}};
  const uint16_t bits[2] = {0x3F80, 0xC040};
  const auto npz = ResultsToNpz(m, {std::string(reinterpret_cast<const char*>(bits), 4)});
  EXPECT_EQ(npz[0].descr, "<f4");
  EXPECT_EQ(npz[0].data, FloatBytes({1.0f, -3.0f}));
}

TEST(GpuRuntimeTensors, RandomInputsRefuseHugeParameters) {
  Manifest m;
  m.arena_bytes = uint64_t{64} << 30;
  m.parameters = {{"arg0", DType::kF32, {int64_t{5} << 30}, {0, uint64_t{20} << 30}}};
  EXPECT_EQ(ErrorOf([&] { RandomInputs(m, 1); }),
            "random inputs would need more than 16 GiB of host memory; pass --inputs FILE.npz");
}

TEST(GpuRuntimeTensors, RandomInputsAreDeterministicAndInRange) {
  const Manifest m = testing::MakeSample(3, 2, 5).artifact.manifest;
  const auto a = RandomInputs(m, 7), b = RandomInputs(m, 7), c = RandomInputs(m, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  ASSERT_EQ(a[0].size(), 60u);
  for (size_t i = 0; i < 15; ++i) {
    float f;
    std::memcpy(&f, a[0].data() + 4 * i, 4);
    EXPECT_GE(f, -1.0f);
    EXPECT_LT(f, 1.0f);
  }
}

}  // namespace
}  // namespace gpu::runtime

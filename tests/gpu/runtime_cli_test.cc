// retarget-gpu-run as a process. On this GPU-less machine it must refuse cleanly (exit 1 with the
// no-driver message, never a crash); bad artifacts and inputs are reported before the driver is
// touched; ptxas accepts the hand-written PTX of the sample artifact. With tests/gpu/fake_driver.cc
// as libcuda.so.1 the whole run loop (upload, kernel, copy, timing, download, stats) runs on the host.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "targets/gpu/runtime/npz.h"
#include "tests/gpu/sample_artifact.h"

namespace gpu {
namespace {

using ::testing::HasSubstr;

struct Outcome {
  int status = -1;
  std::string output;  // stdout and stderr
};

Outcome RunCommand(const std::string& command) {
  Outcome o;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) o.output.append(buf.data(), n);
  const int raw = pclose(pipe);
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return o;
}

std::string Temp(const std::string& name) {
  return ::testing::TempDir() + "/gpu_cli_" + std::to_string(::getpid()) + "_" + name;
}

bool DriverPresent() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h != nullptr) dlclose(h);
  return h != nullptr;
}

class GpuRunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    sample_ = testing::MakeSample(4, 3, 8);
    artifact_path_ = Temp("sample.rtgpu");
    WriteArtifactFile(sample_.artifact, artifact_path_);
  }
  void TearDown() override { std::remove(artifact_path_.c_str()); }
  Outcome Run(const std::string& args) { return RunCommand(std::string(RTGPU_RUN_BINARY) + " " + args); }

  testing::Sample sample_;
  std::string artifact_path_;
};

TEST_F(GpuRunCli, WithoutADriverExitsOneWithAClearMessage) {
  if (DriverPresent()) GTEST_SKIP() << "an NVIDIA driver is present; the device check covers this machine";
  const Outcome o = Run(artifact_path_ + " --repeat 3");
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_THAT(o.output, HasSubstr("retarget-gpu-run: error: no NVIDIA driver found (libcuda.so.1 could not be loaded: "));
}

TEST_F(GpuRunCli, ArtifactFromAnotherVersionIsRejected) {
  std::string bytes;
  {
    std::ifstream in(artifact_path_, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[8] = 7;
  const std::string path = Temp("v7.rtgpu");
  std::ofstream(path, std::ios::binary) << bytes;
  const Outcome o = Run(path);
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.output, HasSubstr(path + ": artifact format version 7; this runtime reads version 3"));
  std::remove(path.c_str());
}

TEST_F(GpuRunCli, TruncatedArtifactAndBadInputsFailBeforeTheDriver) {
  const std::string path = Temp("cut.rtgpu");
  // The magic and this runtime's version, then nothing.
  std::ofstream(path, std::ios::binary)
      << std::string("RTGPU\0\r\n", 8) << static_cast<char>(gpu::kArtifactFormatVersion)
      << std::string(3, '\0');
  Outcome o = Run(path);
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.output, HasSubstr("truncated artifact: section count"));
  std::remove(path.c_str());

  const std::string inputs = Temp("in.npz");
  runtime::WriteNpzFile({{"arg0", "<f4", {4, 8}, std::string(128, '\0')}}, inputs);
  o = Run(artifact_path_ + " --inputs " + inputs);
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.output, HasSubstr(inputs + ": no entry 'arg1' for parameter arg1"));
  std::remove(inputs.c_str());

  o = Run(artifact_path_ + " --inputs random:x");
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.output, HasSubstr("--inputs random:SEED needs an integer seed, got 'x'"));
}

// With cudnn_backend.h at build time the conv path exists: against the fake driver cuDNN is
// loaded and its first call fails (it needs a real device), which must read as a message naming
// the step. Without the header the step is refused before the driver is touched.
TEST_F(GpuRunCli, ConvolutionStepFailsWithAMessageNamingTheStep) {
  Artifact a = sample_.artifact;
  ConvCall conv;
  conv.input_dims = {1, 1, 2, 2};
  conv.filter_dims = {1, 1, 1, 1};
  conv.output_dims = {1, 1, 2, 2};
  conv.strides = conv.dilations = {1, 1};
  conv.padding_low = conv.padding_high = {0, 0};
  conv.input = {0, 16};
  conv.filter = {0, 4};
  conv.output = {0, 16};
  a.manifest.steps = {{"convolution.5", conv}};
  const std::string path = Temp("conv.rtgpu");
  WriteArtifactFile(a, path);
#ifdef RTGPU_HAVE_CUDNN
  const Outcome o = RunCommand("LD_LIBRARY_PATH=" RTGPU_FAKE_DRIVER_DIR " " RTGPU_RUN_BINARY " " + path);
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_THAT(o.output, HasSubstr("retarget-gpu-run: error: cudnn_conv 'convolution.5': "));
#else
  const Outcome o = Run(path);
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.output, HasSubstr("step 'convolution.5': cudnn_conv not supported by this runtime build"));
#endif
  std::remove(path.c_str());
}

TEST_F(GpuRunCli, DescribeUsageAndVersionNeedNoGpu) {
  Outcome o = Run(artifact_path_ + " --describe");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_THAT(o.output, HasSubstr("parameter arg1 f32[8,3]"));
  EXPECT_THAT(o.output, HasSubstr("step 1 cublaslt_matmul dot.2"));
  EXPECT_THAT(o.output, HasSubstr("section ptx.elementwise"));
  o = Run("--version");
  EXPECT_EQ(o.status, 0);
  EXPECT_THAT(o.output, HasSubstr("artifact format version 3"));
  o = Run(artifact_path_ + " --repeat 0");
  EXPECT_EQ(o.status, 2);
  EXPECT_THAT(o.output, HasSubstr("--repeat needs an integer >= 1, got '0'"));
  o = Run("");
  EXPECT_EQ(o.status, 2);
  EXPECT_THAT(o.output, HasSubstr("no artifact given"));
  o = Run(Temp("missing.rtgpu"));
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.output, HasSubstr("cannot open the artifact"));
}

TEST(GpuPtx, PtxasAcceptsTheHandWrittenKernel) {
  std::ifstream probe(RTGPU_PTXAS);
  ASSERT_TRUE(probe) << "ptxas (CUDA toolkit) not found at " << RTGPU_PTXAS;
  const std::string ptx = Temp("add_one.ptx"), cubin = Temp("add_one.cubin");
  std::ofstream(ptx) << testing::AddOnePtx();
  const Outcome o = RunCommand(std::string(RTGPU_PTXAS) + " -arch=sm_90 -v " + ptx + " -o " + cubin);
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_THAT(o.output, HasSubstr("Compiling entry function 'add_one' for 'sm_90'"));
  EXPECT_THAT(o.output, HasSubstr("0 bytes spill stores"));
  std::ifstream elf(cubin, std::ios::binary);
  char magic[4] = {};
  elf.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "\x7f" "ELF");
  std::remove(ptx.c_str());
  std::remove(cubin.c_str());
}

}  // namespace
}  // namespace gpu

namespace gpu {
namespace {

// The inputs of MakeSample(4, 3, 8) as an .npz file.
void WriteSampleInputs(const testing::Sample& sample, const std::string& path) {
  auto bytes = [](const std::vector<float>& v) { return std::string(reinterpret_cast<const char*>(v.data()), 4 * v.size()); };
  runtime::WriteNpzFile({{"arg0", "<f4", {4, 8}, bytes(sample.x)}, {"arg1", "<f4", {8, 3}, bytes(sample.w)},
                         {"arg2", "<f4", {3}, bytes(sample.b)}},
                        path);
}

// The run loop end to end against tests/gpu/fake_driver.cc (host memory, add_one run on the host,
// 0.25 ms per recorded event): uploads, argument marshalling, step order, copies, downloads,
// medians and the stats file.
TEST(GpuRunFakeDriver, RunsKernelAndCopyStepsAndReportsMedians) {
  testing::Sample sample = testing::MakeSample(4, 3, 8);
  Manifest& m = sample.artifact.manifest;
  const Slice t = std::get<KernelLaunch>(m.steps[0].call).args[1].slice;
  const Slice copy{m.arena_bytes, t.bytes};
  m.arena_bytes += t.bytes;
  m.steps = {m.steps[0], Step{"copy.3", DeviceCopy{t, copy}}};
  m.results = {{"out0", DType::kF32, {4, 8}, t}, {"out1", DType::kF32, {4, 8}, copy}};
  const std::string artifact = Temp("fake.rtgpu"), inputs = Temp("fake_in.npz"), outputs = Temp("fake_out.npz"),
                    stats = Temp("fake_stats.json");
  WriteArtifactFile(sample.artifact, artifact);
  WriteSampleInputs(sample, inputs);
  const Outcome o = RunCommand("LD_LIBRARY_PATH=" RTGPU_FAKE_DRIVER_DIR " " RTGPU_RUN_BINARY " " + artifact + " --inputs " +
                               inputs + " --output " + outputs + " --stats-json " + stats + " --repeat 5 --warmup 2");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_THAT(o.output, HasSubstr("device: Fake GPU (test stand-in, tests/gpu/fake_driver.cc) (sm_90, driver 99999)"));
  // Three events per repeat (start, after step 0, after step 1): each step 0.25 ms, total 0.5 ms.
  EXPECT_THAT(o.output, HasSubstr("step 0 kernel           add.1                    median 0.2500 ms, min 0.2500 ms"));
  EXPECT_THAT(o.output, HasSubstr("time: median 0.5000 ms, min 0.5000 ms over 5 runs"));
  const std::vector<runtime::NpyArray> out = runtime::ReadNpzFile(outputs);
  ASSERT_EQ(out.size(), 2u);
  for (const runtime::NpyArray& a : out) {
    ASSERT_EQ(a.data.size(), 128u) << a.name;
    for (size_t i = 0; i < 32; ++i) {
      float v;
      std::memcpy(&v, a.data.data() + 4 * i, 4);
      EXPECT_EQ(v, sample.x[i] + 1.0f) << a.name << "[" << i << "]";
    }
  }
  std::ifstream in(stats);
  const std::string json((std::istreambuf_iterator<char>(in)), {});
  const Json j = ParseJson(json);
  EXPECT_EQ(j.at("repeat").get<int>(), 5);
  EXPECT_EQ(j.at("total_median_ms").get<double>(), 0.5);
  EXPECT_EQ(j.at("steps").at(1).at("kind").get<std::string>(), "copy");
  for (const std::string& p : {artifact, inputs, outputs, stats}) std::remove(p.c_str());
}

// A while step driven from the host against the fake driver. The loop state is a 4-byte shift
// register R, reset from a constant [1, 1, 0, 0] before the loop; the condition copies R[0] into
// the predicate, the body shifts R left (staged through scratch) and adds one to x (add_one into
// t, then t copied back to x). Two trips: the result is x + 2, on every run since R is reset.
TEST(GpuRunFakeDriver, WhileStepRunsOnTheHostDrivenPathAndStopsAtTheLimit) {
  testing::Sample sample = testing::MakeSample(4, 3, 8);
  Manifest& m = sample.artifact.manifest;
  const Step add_one = m.steps[0];
  const Slice x = std::get<KernelLaunch>(add_one.call).args[0].slice;
  const Slice t = std::get<KernelLaunch>(add_one.call).args[1].slice;
  const uint64_t base = (m.arena_bytes + 255) / 256 * 256;
  const Slice r_init{base, 4}, r{base + 256, 4}, r_tail{base + 257, 3}, r_head{base + 256, 3},
      scratch{base + 512, 3}, predicate{base + 768, 1}, r_first{base + 256, 1};
  m.arena_bytes = base + 1024;
  sample.artifact.sections["const.r"] = std::string("\x01\x01\x00\x00", 4);
  m.constants.push_back({"const.r", r_init});
  m.programs = {{"w.condition", {{"w.predicate", DeviceCopy{r_first, predicate}}}},
                {"w.body",
                 {add_one, {"w.back", DeviceCopy{t, x}}, {"w.stage", DeviceCopy{r_tail, scratch}},
                  {"w.shift", DeviceCopy{scratch, r_head}}}}};
  m.steps = {{"w.init", DeviceCopy{r_init, r}}, {"w", WhileLoop{0, 1, predicate}}};
  m.results = {{"out0", DType::kF32, {4, 8}, t}};
  const std::string artifact = Temp("loop.rtgpu"), inputs = Temp("loop_in.npz"),
                    outputs = Temp("loop_out.npz");
  WriteArtifactFile(sample.artifact, artifact);
  WriteSampleInputs(sample, inputs);
  const std::string run = "LD_LIBRARY_PATH=" RTGPU_FAKE_DRIVER_DIR " " RTGPU_RUN_BINARY " " + artifact +
                          " --inputs " + inputs + " --repeat 3 --warmup 1";
  Outcome o = RunCommand(run + " --output " + outputs);
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_THAT(o.output, HasSubstr("control flow: host-driven (predicate read back each trip)"));
  EXPECT_THAT(o.output, HasSubstr("step 1 while"));
  const std::vector<runtime::NpyArray> out = runtime::ReadNpzFile(outputs);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].data.size(), 128u);
  for (size_t i = 0; i < 32; ++i) {
    float v;
    std::memcpy(&v, out[0].data.data() + 4 * i, 4);
    EXPECT_EQ(v, sample.x[i] + 2.0f) << i;
  }
  o = RunCommand(run + " --max-iterations 1");
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_THAT(o.output, HasSubstr("the loop 'w' exceeded 1 iterations"));
  for (const std::string& p : {artifact, inputs, outputs}) std::remove(p.c_str());
}

// The steps of multi-device programs on one device, against the fake driver: a strided copy of
// x's first four columns, a fill, the replica id, an all-gather whose group is this device alone
// (a copy) and a send_receive nobody sends to (zeros).
TEST(GpuRunFakeDriver, StridedCopyFillDeviceIdAndOneDeviceCollectivesRun) {
  testing::Sample sample = testing::MakeSample(4, 3, 8);
  Manifest& m = sample.artifact.manifest;
  const Slice x = std::get<KernelLaunch>(m.steps[0].call).args[0].slice;
  const uint64_t base = (m.arena_bytes + 255) / 256 * 256;
  const Slice columns{base, 64}, filled{base + 256, 16}, id{base + 512, 4}, gathered{base + 768, 64},
      zeros{base + 1024, 16};
  m.arena_bytes = base + 1280;
  CollectiveCall gather;
  gather.op = Collective::kAllGather;
  gather.count = 16;
  gather.send = columns;
  gather.receive = gathered;
  gather.groups = {{0}};
  CollectiveCall nobody;
  nobody.op = Collective::kSendReceive;
  nobody.count = 4;
  nobody.send = filled;
  nobody.receive = zeros;
  m.steps = {{"columns", StridedCopy{x.offset, columns.offset, 4, 16, 32, 16}},
             {"fill", Fill{filled, 0x3f}},
             {"id", DeviceIdWrite{false, id}},
             {"gather", gather},
             {"nobody", nobody}};
  m.results = {{"out0", DType::kF32, {4, 4}, gathered},
               {"out1", DType::kU8, {16}, filled},
               {"out2", DType::kU32, {}, id},
               {"out3", DType::kF32, {4}, zeros}};
  const std::string artifact = Temp("steps.rtgpu"), inputs = Temp("steps_in.npz"), outputs = Temp("steps_out.npz");
  WriteArtifactFile(sample.artifact, artifact);
  WriteSampleInputs(sample, inputs);
  const Outcome o = RunCommand("LD_LIBRARY_PATH=" RTGPU_FAKE_DRIVER_DIR " " RTGPU_RUN_BINARY " " + artifact + " --inputs " +
                               inputs + " --output " + outputs + " --repeat 1 --warmup 0");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_THAT(o.output, HasSubstr("step 3 collective"));
  const std::vector<runtime::NpyArray> out = runtime::ReadNpzFile(outputs);
  ASSERT_EQ(out.size(), 4u);
  for (size_t row = 0; row < 4; ++row) {
    for (size_t col = 0; col < 4; ++col) {
      float v;
      std::memcpy(&v, out[0].data.data() + 4 * (row * 4 + col), 4);
      EXPECT_EQ(v, sample.x[row * 8 + col]) << row << "," << col;
    }
  }
  EXPECT_EQ(out[1].data, std::string(16, '\x3f'));
  EXPECT_EQ(out[2].data, std::string(4, '\0'));
  EXPECT_EQ(out[3].data, std::string(16, '\0'));
  for (const std::string& p : {artifact, inputs, outputs}) std::remove(p.c_str());
}

// An artifact for two devices needs two GPUs; the fake driver shows one. Inputs stacked along a
// device dimension are checked first, without the driver.
TEST(GpuRunFakeDriver, TwoDeviceArtifactNeedsTwoGpus) {
  testing::Sample sample = testing::MakeSample(2, 2, 2);
  sample.artifact.manifest.grid = {2, 1};
  const std::string artifact = Temp("two.rtgpu"), inputs = Temp("two_in.npz");
  WriteArtifactFile(sample.artifact, artifact);
  const std::string run = "LD_LIBRARY_PATH=" RTGPU_FAKE_DRIVER_DIR " " RTGPU_RUN_BINARY " " + artifact;
  Outcome o = RunCommand(run);
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_THAT(o.output, HasSubstr("the artifact runs on 2 devices (2 replica(s) x 1 partition(s)); 1 visible"));
  runtime::WriteNpzFile({{"arg0", "<f4", {3, 2, 2}, std::string(48, '\0')}}, inputs);
  o = RunCommand(run + " --inputs " + inputs);
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_THAT(o.output, HasSubstr("entry 'arg0' has shape [3,2,2]; a run on 2 devices needs a leading dimension of 2"));
  for (const std::string& p : {artifact, inputs}) std::remove(p.c_str());
}

TEST(GpuRunFakeDriver, UnknownKernelIsADriverErrorNotACrash) {
  testing::Sample sample = testing::MakeSample(2, 2, 2);
  std::get<KernelLaunch>(sample.artifact.manifest.steps[0].call).entry = "missing_kernel";
  sample.artifact.manifest.steps.resize(1);
  const std::string artifact = Temp("fake_missing.rtgpu");
  WriteArtifactFile(sample.artifact, artifact);
  const Outcome o = RunCommand("LD_LIBRARY_PATH=" RTGPU_FAKE_DRIVER_DIR " " RTGPU_RUN_BINARY " " + artifact);
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_THAT(o.output, HasSubstr("kernel 'missing_kernel' in module 'elementwise': CUDA_ERROR_NOT_FOUND (fake driver)"));
  std::remove(artifact.c_str());
}

}  // namespace
}  // namespace gpu

// MeasureOnGpu and GpuUnavailableReason (contract in report_gpu_latency.h).
//
// The driver is probed here only to decide whether to compile and run at all; the run itself
// happens in retarget-gpu-run, a separate process, so a driver fault or a hung kernel cannot take
// the report down (the child is killed at the timeout).
#include "tools/retarget/report_gpu_latency.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "targets/gpu/artifact.h"
#include "targets/gpu/artifact_json.h"
#include "targets/gpu/codegen/gpu_compiler.h"
#include "tools/retarget/run_support.h"
#include "tools/sweep/child_processes.h"

namespace cli {
namespace {

namespace fs = std::filesystem;

// Timed runs and warm-ups asked of retarget-gpu-run: the CPU column's "one warm-up, median of 5".
constexpr int kGpuWarmup = 1;
constexpr int kGpuRepeat = 5;

// The driver API's entry points the probe needs (CUresult is an int-sized enum; 0 = success).
using CuInitFunction = int (*)(unsigned int);
using CuDeviceGetCountFunction = int (*)(int*);

// retarget-gpu-run beside the running binary, or "" when it is not there.
std::string RunnerPath() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path runner = self.parent_path() / "retarget-gpu-run";
  return access(runner.c_str(), X_OK) == 0 ? runner.string() : "";
}

// A private temporary folder, removed when this goes out of scope.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (fs::temp_directory_path() / "retarget_report_gpu_XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The last line of a child's stderr (retarget-gpu-run's "retarget-gpu-run: error: ..." line).
std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

std::optional<std::string> GpuUnavailableReason(const std::string& library) {
  void* driver = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* why = dlerror();
    return "no GPU: " + library + " could not be loaded (" + (why ? why : "unknown error") + ")";
  }
  std::optional<std::string> reason;
  auto init = reinterpret_cast<CuInitFunction>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<CuDeviceGetCountFunction>(dlsym(driver, "cuDeviceGetCount"));
  int devices = 0;
  if (init == nullptr || count == nullptr) {
    reason = "no GPU: " + library + " lacks cuInit or cuDeviceGetCount";
  } else if (const int status = init(0); status != 0) {
    reason = "no GPU: cuInit failed (CUresult " + std::to_string(status) + ")";
  } else if (count(&devices) != 0 || devices < 1) {
    reason = "no GPU: the CUDA driver sees no device";
  }
  dlclose(driver);
  return reason;
}

report::LatencyAnswer MeasureOnGpu(const hlo::Module& module, const report::LatencyBudget& budget) {
  if (std::optional<std::string> reason = GpuUnavailableReason()) {
    return report::LatencyAnswer::None(*reason);
  }
  const std::string runner = RunnerPath();
  if (runner.empty()) {
    return report::LatencyAnswer::None(
        "retarget-gpu-run is not next to retarget (it is built only with the CUDA toolkit)");
  }
  TemporaryFolder folder;
  if (folder.path().empty()) return report::LatencyAnswer::None("cannot create a temporary folder");
  const std::string artifact = folder.path() + "/model.rtgpu";
  const std::string stats = folder.path() + "/stats.json";
  try {
    std::unique_ptr<hlo::Module> copy = module.Clone();
    const gpu::codegen::GpuCompileResult compiled = gpu::codegen::CompileModule(*copy);
    std::ofstream out(artifact, std::ios::binary);
    out << gpu::SerializeArtifact(compiled.artifact);
    if (!out.flush()) return report::LatencyAnswer::None("cannot write " + artifact);
  } catch (const hlo::Error& error) {
    return report::LatencyAnswer::None("the GPU code generator cannot compile it: " +
                                       error.message());
  } catch (const std::exception& error) {
    return report::LatencyAnswer::None("the GPU code generator cannot compile it: " +
                                       std::string(error.what()));
  }

  Heartbeat heartbeat("timing " + module.name() + " on the gpu");
  const double timeout = kGpuRunTimeout + 10 * budget.max_run_seconds;
  const std::vector<sweep::Outcome> outcomes = sweep::RunChildren(
      {{runner, artifact, "--inputs", "random:0", "--warmup", std::to_string(kGpuWarmup),
        "--repeat", std::to_string(kGpuRepeat), "--stats-json", stats}},
      1, timeout, [](size_t, const sweep::Outcome&) {});
  const sweep::Outcome& outcome = outcomes.at(0);
  if (!outcome.Succeeded()) {
    return report::LatencyAnswer::None("retarget-gpu-run failed (" + outcome.Describe(timeout) +
                                       "): " + LastLine(outcome.err));
  }
  std::ifstream in(stats);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The runtime writes it as gpu::Json (docs/gpu-runtime.md); read it with the same accessors.
  double median = 0;
  std::string device;
  int64_t driver_version = 0;
  try {
    const gpu::Json json = gpu::ParseJson(text);
    median = gpu::AsDouble(gpu::Get(json, "total_median_ms", "stats"), "total_median_ms");
    device = gpu::AsString(gpu::Get(json, "device", "stats"), "device");
    driver_version = gpu::AsInt(gpu::Get(json, "driver_version", "stats"), "driver_version");
  } catch (const gpu::ArtifactError& error) {
    return report::LatencyAnswer::None("retarget-gpu-run's statistics are unreadable: " +
                                       std::string(error.what()));
  }
  // A driver that says it is a test stand-in (tests/gpu/fake_driver.cc) times nothing real:
  // its figure is not a measurement, unless a test asks for the plumbing explicitly.
  const char* allow = std::getenv("RETARGET_ACCEPT_STAND_IN_GPU");
  if (device.find("test stand-in") != std::string::npos &&
      (allow == nullptr || std::string(allow) != "1")) {
    return report::LatencyAnswer::None("the CUDA driver is a test stand-in (" + device +
                                       "): not a measurement");
  }
  return report::MeasuredLatency{median, "measured", std::nullopt,
                                 device + ", driver " + std::to_string(driver_version)};
}

}  // namespace cli

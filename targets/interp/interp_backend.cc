#include "targets/interp/interp_backend.h"

#include <chrono>

namespace targets {
namespace {

class InterpExecutable final : public Executable {
 public:
  InterpExecutable(std::unique_ptr<hlo::Module> module, const hlo::CustomCallRegistry* calls)
      : module_(std::move(module)), custom_calls_(calls) {}

  hlo::Literal Run(std::span<const hlo::Literal> inputs) override {
    return RunOn(inputs, nullptr);
  }
  hlo::Literal RunAsDevice(std::span<const hlo::Literal> inputs,
                           const hlo::DeviceView& device) override {
    return RunOn(inputs, &device);
  }
  Profile profile() const override { return profile_; }

 private:
  hlo::Literal RunOn(std::span<const hlo::Literal> inputs, const hlo::DeviceView* device) {
    auto start = std::chrono::steady_clock::now();
    hlo::EvaluatorOptions options;
    options.custom_calls = custom_calls_;
    options.device = device;
    hlo::Literal result = hlo::Evaluate(*module_, inputs, options);
    profile_.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
  }

  std::unique_ptr<hlo::Module> module_;
  const hlo::CustomCallRegistry* custom_calls_;
  Profile profile_;
};

class InterpBackend final : public Backend {
 public:
  explicit InterpBackend(const hlo::CustomCallRegistry* calls) : custom_calls_(calls) {}
  std::string name() const override { return "interp"; }
  bool multi_device() const override { return true; }
  std::string description() const override {
    return "reference interpreter (hlo/ evaluator): the numeric truth, unoptimized";
  }
  std::unique_ptr<Executable> Compile(const hlo::Module& module) override {
    return std::make_unique<InterpExecutable>(module.Clone(), custom_calls_);
  }

 private:
  const hlo::CustomCallRegistry* custom_calls_;
};

}  // namespace

std::unique_ptr<Backend> MakeInterpBackend(const hlo::CustomCallRegistry* custom_calls) {
  return std::make_unique<InterpBackend>(custom_calls);
}

}  // namespace targets

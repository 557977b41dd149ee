// The run corpus: one .hlo file per case under tests/run/, each naming in its header the targets
// it runs on; every (file, target) pair is one test that runs the module on the target and
// compares it with the interpreter (Cranelift's run tests, XLA's // RUN: lines). Header lines,
// before the module:
//   // RUN: interp cpu gpu systolic systolic@tpu-v4-mxu    the targets (a preset after '@')
//   // TOLERANCE: rtol=1e-3 atol=1e-4                      optional (default: per element type)
//   // INPUTS: random:7                                    optional (default random:0)
//   // REFUSED: gpu "variadic scatter"                     the target must refuse it, saying so
// A refused target prints its reason; one that starts to accept the module fails until its
// REFUSED line goes. systolic runs on tpu-v1 with every matrix type (bf16 and f32 as multi-pass
// int8, as `retarget run` does) and the interpreter as its host.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "simulator/isa/arch_config.h"
#include "targets/gpu/emulator/gpu_backend.h"
#include "targets/systolic/systolic_backend.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"

namespace {

struct RunCase {
  std::string file;    // relative to tests/run
  std::string target;  // "cpu", "systolic@tpu-v4-mxu", ...
};

struct Header {
  std::vector<std::string> targets;
  std::map<std::string, std::string> refused;  // target -> expected substring of the error
  std::optional<io::Tolerance> tolerance;
  uint64_t seed = 0;
};

std::string RunDir() { return std::string(RETARGET_SOURCE_DIR) + "/tests/run"; }

[[noreturn]] void BadHeader(const std::string& file, int line, const std::string& message) {
  throw hlo::Error(file + ":" + std::to_string(line) + ": " + message);
}

Header ReadHeader(const std::string& file) {
  std::ifstream in(RunDir() + "/" + file);
  Header header;
  std::string line;
  for (int number = 1; std::getline(in, line) && line.rfind("//", 0) == 0; ++number) {
    std::istringstream words(line.substr(2));
    std::string key;
    words >> key;
    if (key == "RUN:") {
      for (std::string target; words >> target;) header.targets.push_back(target);
    } else if (key == "TOLERANCE:") {
      io::Tolerance tolerance;
      for (std::string item; words >> item;) {
        if (item.rfind("rtol=", 0) == 0) tolerance.rtol = std::stod(item.substr(5));
        else if (item.rfind("atol=", 0) == 0) tolerance.atol = std::stod(item.substr(5));
        else BadHeader(file, number, "TOLERANCE takes rtol=R atol=A, got '" + item + "'");
      }
      header.tolerance = tolerance;
    } else if (key == "INPUTS:") {
      std::string spec;
      words >> spec;
      if (spec.rfind("random:", 0) != 0) BadHeader(file, number, "INPUTS takes random:SEED");
      header.seed = std::stoull(spec.substr(7));
    } else if (key == "REFUSED:") {
      std::string target, rest;
      words >> target;
      std::getline(words, rest);
      const size_t open = rest.find('"'), close = rest.rfind('"');
      if (open == std::string::npos || close <= open)
        BadHeader(file, number, "REFUSED takes TARGET \"part of the error\"");
      header.refused[target] = rest.substr(open + 1, close - open - 1);
    }
  }
  if (header.targets.empty()) BadHeader(file, 1, "no // RUN: line naming the targets");
  for (const auto& [target, message] : header.refused) {
    if (std::find(header.targets.begin(), header.targets.end(), target) == header.targets.end())
      BadHeader(file, 1, "REFUSED names '" + target + "', which the RUN line does not");
  }
  return header;
}

std::vector<RunCase> AllCases() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(RunDir())) {
    if (entry.path().extension() == ".hlo")
      files.push_back(std::filesystem::relative(entry.path(), RunDir()).string());
  }
  std::sort(files.begin(), files.end());
  std::vector<RunCase> cases;
  for (const std::string& file : files) {
    for (const std::string& target : ReadHeader(file).targets) cases.push_back({file, target});
  }
  return cases;
}

// The backend for a RUN target; the interpreter is the host of the systolic target.
std::unique_ptr<targets::Backend> MakeBackend(const std::string& target) {
  targets::Backend* interp = testing_support::Backends().Find("interp");
  const size_t at = target.find('@');
  const std::string name = target.substr(0, at);
  if (name == "gpu") return gpu::emulator::MakeGpuBackend();
  if (name == "systolic") {
    const std::string preset = at == std::string::npos ? "tpu-v1" : target.substr(at + 1);
    return targets::MakeSystolicBackend(
        systolic::LoadArchConfig(preset, std::vector<std::string>{"array.dtypes=int8,bf16,f32"}),
        interp);
  }
  return nullptr;  // interp, cpu: registered by the test main
}

void PrintTo(const RunCase& c, std::ostream* os) { *os << c.file << " on " << c.target; }

class RunCorpus : public ::testing::TestWithParam<RunCase> {};

TEST_P(RunCorpus, MatchesTheInterpreterOrIsRefusedAsDeclared) {
  const RunCase& c = GetParam();
  const Header header = ReadHeader(c.file);
  const std::string text = testing_support::ReadFile(RunDir() + "/" + c.file);
  std::unique_ptr<hlo::Module> module = hlo::ParseHloText(text, c.file);
  hlo::Verify(*module);
  std::unique_ptr<targets::Backend> owned = MakeBackend(c.target);
  targets::Backend* backend =
      owned ? owned.get() : testing_support::Backends().Find(c.target);
  ASSERT_NE(backend, nullptr) << c.file << ": unknown target '" << c.target << "'";
  const std::vector<hlo::Literal> inputs = io::MakeRandomInputs(*module, header.seed);

  const auto refused = header.refused.find(c.target);
  testing_support::ComparedRun run;
  try {
    run = testing_support::RunAgainstInterpreter(*backend, *module, inputs,
                                                 header.tolerance ? &*header.tolerance : nullptr);
  } catch (const hlo::Error& e) {
    ASSERT_NE(refused, header.refused.end()) << c.file << " on " << c.target << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(refused->second), std::string::npos)
        << c.file << " on " << c.target << " was refused for another reason: " << e.what();
    std::printf("  %s refuses %s: %s\n", c.target.c_str(), c.file.c_str(), e.what());
    return;
  }
  ASSERT_EQ(refused, header.refused.end())
      << c.file << " now runs on " << c.target << ": remove its REFUSED line";
  EXPECT_TRUE(run.comparison.matched) << c.file << " on " << c.target << ": "
                                      << run.comparison.summary;
}

INSTANTIATE_TEST_SUITE_P(Run, RunCorpus, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<RunCase>& info) {
                           std::string name = info.param.file + "_" + info.param.target;
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace

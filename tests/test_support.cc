#include "tests/test_support.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "tools/io/inputs.h"

namespace testing_support {

std::string CorpusDir() { return RETARGET_CORPUS_DIR; }
std::string CorpusPath(const std::string& file) { return CorpusDir() + "/" + file; }

const std::vector<RefusedCorpusFile>& CorpusFilesNotYetAccepted() {
  // Every corpus module parses and verifies today; a module the front door refuses goes here
  // with the exact error, and corpus_refusals_test keeps the list honest.
  static const std::vector<RefusedCorpusFile> refused = {};
  return refused;
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    const std::string name = entry.path().filename().string();
    const bool refused = std::any_of(CorpusFilesNotYetAccepted().begin(),
                                     CorpusFilesNotYetAccepted().end(),
                                     [&](const RefusedCorpusFile& r) { return r.file == name; });
    if (entry.path().extension() == ".hlo" && !refused) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string TestDataPath(const std::string& file) {
  return std::string(RETARGET_TEST_DATA_DIR) + "/" + file;
}
std::string BinDir() { return RETARGET_BIN_DIR; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<hlo::Module> ParseAndVerify(const std::string& text) {
  auto module = hlo::ParseHloText(text, "test.hlo");
  hlo::Verify(*module);
  return module;
}

targets::BackendRegistry& Backends() {
  static targets::BackendRegistry registry;
  return registry;
}

namespace {

hlo::Literal InterpreterResult(const hlo::Module& module, const std::vector<hlo::Literal>& inputs) {
  targets::Backend* interp = Backends().Find("interp");
  if (interp == nullptr) throw std::runtime_error("the interp backend is not registered");
  return interp->Compile(module)->Run(inputs);
}

}  // namespace

ComparedRun RunAgainstInterpreter(targets::Backend& backend, const hlo::Module& module,
                                  const std::vector<hlo::Literal>& inputs,
                                  const io::Tolerance* tolerance) {
  const hlo::Literal expected = InterpreterResult(module, inputs);
  ComparedRun run;
  run.executable = backend.Compile(module);
  run.result = run.executable->Run(inputs);
  run.comparison = io::CompareArrays(io::FlattenOutputs(expected), io::FlattenOutputs(run.result),
                                     tolerance);
  return run;
}

io::CompareResult CompareLeavesWithInterpreter(const hlo::Module& module,
                                               const std::vector<hlo::Literal>& inputs,
                                               const std::vector<hlo::Literal>& leaves,
                                               const io::Tolerance* tolerance) {
  std::vector<io::NpyArray> actual;
  for (size_t i = 0; i < leaves.size(); ++i) {
    std::string name = "out";  // appended: GCC 12 warns falsely (-Wrestrict) on "out" + string
    name += std::to_string(i);
    actual.push_back({std::move(name), leaves[i]});
  }
  return io::CompareArrays(io::FlattenOutputs(InterpreterResult(module, inputs)), actual,
                           tolerance);
}

}  // namespace testing_support

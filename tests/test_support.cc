#include "tests/test_support.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace testing_support {

std::string CorpusDir() { return RETARGET_CORPUS_DIR; }
std::string CorpusPath(const std::string& file) { return CorpusDir() + "/" + file; }

const std::vector<RefusedCorpusFile>& CorpusFilesNotYetAccepted() {
  // XLA:CPU's thunk-coverage modules carry a c64 FFT; complex element types are not in the IR yet.
  static const std::vector<RefusedCorpusFile> refused = {
      {"thunk_coverage_cpu.hlo", "77:18: error: unknown element type 'c64'"},
      {"thunk_coverage_host_offload.hlo", "83:18: error: unknown element type 'c64'"},
  };
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

}  // namespace testing_support

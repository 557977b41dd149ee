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

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path().filename().string());
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

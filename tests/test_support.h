// Shared helpers for tests: corpus paths, parsing snippets, and the explicitly registered
// backends (the test main fills the registry; nothing registers itself statically).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.h"
#include "targets/backend.h"

namespace testing_support {

std::string CorpusDir();                      // ../shared/corpus/xla
std::string CorpusPath(const std::string& file);
std::vector<std::string> CorpusFiles();       // every *.hlo, sorted
std::string TestDataPath(const std::string& file);  // tests/data/...
std::string BinDir();                         // build/bin
std::string ReadFile(const std::string& path);

// Parses HLO text (filename "test.hlo") and verifies it; fails the test on error.
std::unique_ptr<hlo::Module> ParseAndVerify(const std::string& text);

targets::BackendRegistry& Backends();

}  // namespace testing_support

// Shared helpers for tests: corpus paths, parsing snippets, and the explicitly registered
// backends (the test main fills the registry; nothing registers itself statically).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/ir.h"
#include "targets/backend.h"
#include "tools/io/compare.h"

namespace testing_support {

std::string CorpusDir();                      // ../shared/corpus/xla
std::string CorpusPath(const std::string& file);
// Every *.hlo the parser accepts, sorted: all of them but those of CorpusFilesNotYetAccepted().
std::vector<std::string> CorpusFiles();
// Corpus modules the front door refuses today, each with the error it gives; tests/hlo/
// corpus_refusals_test.cc checks that each still fails with exactly that error, so a module that
// starts to parse fails there until its row is removed (and every corpus test then covers it).
struct RefusedCorpusFile {
  std::string file;
  std::string error;  // a substring of the parse error
};
const std::vector<RefusedCorpusFile>& CorpusFilesNotYetAccepted();
std::string TestDataPath(const std::string& file);  // tests/data/...
std::string BinDir();                         // build/bin
std::string ReadFile(const std::string& path);

// Parses HLO text (filename "test.hlo") and verifies it; fails the test on error.
std::unique_ptr<hlo::Module> ParseAndVerify(const std::string& text);

targets::BackendRegistry& Backends();

// The suite's one run-and-compare: `module` runs on `backend` and on the interpreter with the
// same inputs, and every output is compared with io::CompareArrays (`tolerance` nullptr: the
// per-type defaults of compare.h). The run corpus (tests/run) and each backend's structural
// tests use it, so "matches the interpreter" means the same thing everywhere.
struct ComparedRun {
  std::unique_ptr<targets::Executable> executable;  // the backend's, for counters and artifacts
  hlo::Literal result;
  io::CompareResult comparison;
};
ComparedRun RunAgainstInterpreter(targets::Backend& backend, const hlo::Module& module,
                                  const std::vector<hlo::Literal>& inputs,
                                  const io::Tolerance* tolerance = nullptr);
// The same for results that come as a list of leaves (the GPU emulator's), in leaf order.
io::CompareResult CompareLeavesWithInterpreter(const hlo::Module& module,
                                               const std::vector<hlo::Literal>& inputs,
                                               const std::vector<hlo::Literal>& leaves,
                                               const io::Tolerance* tolerance = nullptr);

// Sets GlobalLimits().max_while_iterations and restores it at scope exit, so one test's limit
// cannot leak into another.
class ScopedWhileLimit {
 public:
  explicit ScopedWhileLimit(int64_t limit) : saved_(hlo::GlobalLimits().max_while_iterations) {
    hlo::GlobalLimits().max_while_iterations = limit;
  }
  ~ScopedWhileLimit() { hlo::GlobalLimits().max_while_iterations = saved_; }
  ScopedWhileLimit(const ScopedWhileLimit&) = delete;
  ScopedWhileLimit& operator=(const ScopedWhileLimit&) = delete;

 private:
  int64_t saved_;
};

}  // namespace testing_support

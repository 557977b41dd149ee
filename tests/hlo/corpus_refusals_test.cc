// The corpus modules the front door does not take yet (testing_support::CorpusFilesNotYetAccepted)
// fail with exactly their recorded error: a clear FILE:LINE:COL diagnostic, never a crash. When
// one starts to parse, this test fails until its row is removed, and from then on every corpus
// test runs on it.
#include <gtest/gtest.h>

#include <filesystem>

#include "hlo/diagnostic.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "tests/test_support.h"

namespace {

TEST(CorpusRefusals, EachRefusedModuleFailsWithItsRecordedError) {
  for (const testing_support::RefusedCorpusFile& refused :
       testing_support::CorpusFilesNotYetAccepted()) {
    SCOPED_TRACE(refused.file);
    const std::string path = testing_support::CorpusPath(refused.file);
    ASSERT_TRUE(std::filesystem::exists(path)) << "no longer in the corpus: remove its row";
    try {
      auto module = hlo::ParseHloText(testing_support::ReadFile(path), refused.file);
      hlo::Verify(*module);
      ADD_FAILURE() << "now parses and verifies: remove its row from CorpusFilesNotYetAccepted()";
    } catch (const hlo::Error& e) {
      const std::string message = hlo::FormatError(e, refused.file);
      EXPECT_NE(message.find(refused.error), std::string::npos) << message;
    }
  }
}

}  // namespace

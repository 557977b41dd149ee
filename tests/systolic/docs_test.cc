// docs/isa.md and docs/accelerator.md embed reference sections generated from isa.def and
// arch_config.def; these tests fail when a table changes without its document. To regenerate
// the sections after a deliberate change, run the test with SYSTOLIC_BLESS=1 (it rewrites the
// text between the BEGIN/END GENERATED markers and nothing else).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "simulator/isa/arch_config.h"
#include "simulator/isa/isa.h"
#include "simulator/isa/isa_doc.h"

namespace systolic {
namespace {

std::string DocPath(const std::string& name) {
  return std::string(RETARGET_SOURCE_DIR) + "/docs/" + name;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compares (or, when blessing, replaces) the generated section `name` of document `file`.
void CheckGeneratedSection(const std::string& file, const std::string& name,
                           const std::string& expected) {
  std::string path = DocPath(file);
  std::string text = Read(path);
  std::string begin = "<!-- BEGIN GENERATED: " + name + " -->\n";
  std::string end = "<!-- END GENERATED: " + name + " -->";
  size_t b = text.find(begin);
  size_t e = text.find(end);
  ASSERT_NE(b, std::string::npos) << path << " lacks " << begin;
  ASSERT_NE(e, std::string::npos) << path << " lacks " << end;
  ASSERT_LT(b, e);
  b += begin.size();
  std::string actual = text.substr(b, e - b);
  if (actual == expected) return;
  if (std::getenv("SYSTOLIC_BLESS") != nullptr) {
    text.replace(b, e - b, expected);
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  ADD_FAILURE() << path << ": section '" << name
                << "' is stale; rerun with SYSTOLIC_BLESS=1 to regenerate it";
}

TEST(SystolicDocs, IsaReferenceIsCurrent) {
  CheckGeneratedSection("isa.md", "isa-reference", IsaReferenceMarkdown());
}

TEST(SystolicDocs, AcceleratorKeysAndPresetsAreCurrent) {
  CheckGeneratedSection("accelerator.md", "keys", KeysMarkdown());
  CheckGeneratedSection("accelerator.md", "presets", PresetsMarkdown());
}

TEST(SystolicDocs, EveryInstructionHasAHandWrittenSection) {
  std::string text = Read(DocPath("isa.md"));
  std::string hand_written = text.substr(0, text.find("<!-- BEGIN GENERATED"));
  for (const InstrInfo& info : AllInstructions()) {
    // Described as `mnemonic` or `mnemonic operands...`.
    std::string name = "`";
    name += info.mnemonic;
    EXPECT_TRUE(hand_written.find(name + "`") != std::string::npos ||
                hand_written.find(name + " ") != std::string::npos)
        << info.mnemonic << " is not described in docs/isa.md";
  }
}

}  // namespace
}  // namespace systolic

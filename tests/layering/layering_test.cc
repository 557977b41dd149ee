// The layering check (layering_check.h): the repository's own sources cross no forbidden edge,
// and the check itself finds each kind of violation in a small synthetic tree (so a scan that
// silently matched nothing could not pass).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "tests/layering/layering_check.h"

namespace {

namespace fs = std::filesystem;
using layering::LayerOf;
using layering::MayUse;
using layering::ScanTree;

TEST(Layering, NoIncludeInTheRepositoryCrossesALayer) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<layering::Violation> violations =
      ScanTree(RETARGET_SOURCE_DIR, layering::SourceFolders());
  std::string report;
  for (const layering::Violation& v : violations) report += v.ToString() + "\n";
  EXPECT_TRUE(violations.empty()) << report;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << "the scan should take well under a second";
}

TEST(Layering, TheTableMapsEachFolderToItsLayer) {
  EXPECT_EQ(LayerOf("hlo/ir.h"), "hlo");
  EXPECT_EQ(LayerOf("targets/backend.h"), "backend-api");
  EXPECT_EQ(LayerOf("simulator/isa/isa.def"), "accelerator-isa");
  EXPECT_EQ(LayerOf("simulator/simulator.h"), "simulator");
  EXPECT_EQ(LayerOf("targets/systolic/systolic_backend.h"), "systolic-backend");
  EXPECT_EQ(LayerOf("targets/systolic/lowering/lowering.cc"), "systolic-backend");
  EXPECT_EQ(LayerOf("tools/io/compare.cc"), "io");
  EXPECT_EQ(LayerOf("docs/ownership.md"), std::nullopt);
  EXPECT_EQ(LayerOf("targets/backend.hh"), std::nullopt);  // an exact-file prefix is exact
}

TEST(Layering, MayUseFollowsTheDagTransitivelyAndNeverBackwards) {
  EXPECT_TRUE(MayUse("compiler", "hlo"));
  EXPECT_TRUE(MayUse("cpu", "hlo"));               // through compiler
  EXPECT_TRUE(MayUse("sweep", "compiler"));        // through report
  EXPECT_TRUE(MayUse("systolic-backend", "simulator"));
  EXPECT_TRUE(MayUse("systolic-backend", "accelerator-isa"));  // through the simulator
  EXPECT_TRUE(MayUse("tests", "gpu"));
  EXPECT_FALSE(MayUse("hlo", "compiler"));
  EXPECT_FALSE(MayUse("compiler", "cpu"));
  EXPECT_FALSE(MayUse("cpu", "gpu"));
  EXPECT_FALSE(MayUse("gpu", "systolic-backend"));
  EXPECT_FALSE(MayUse("simulator", "compiler"));
  EXPECT_FALSE(MayUse("simulator", "systolic-backend"));
  EXPECT_FALSE(MayUse("accelerator-isa", "simulator"));
  EXPECT_FALSE(MayUse("io", "compiler"));
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(Layering, FindsEachKindOfViolationWithFileLineAndRule) {
  const fs::path root = fs::temp_directory_path() /
                        ("retarget_layering_" + std::to_string(::getpid()));
  fs::remove_all(root);
  Write(root / "hlo/ir.h", "#pragma once\n");
  Write(root / "compiler/pass.h", "#pragma once\n#include \"hlo/ir.h\"\n");
  Write(root / "targets/gpu/gpu.h", "#pragma once\n");
  // hlo reaching up into compiler, on line 3.
  Write(root / "hlo/bad.cc", "// x\n#include <vector>\n#include \"compiler/pass.h\"\n");
  // cpu including gpu; a sibling include of its own folder is fine.
  Write(root / "targets/cpu/own.h", "#pragma once\n");
  Write(root / "targets/cpu/bad.cc", "#include \"own.h\"\n  #  include \"targets/gpu/gpu.h\"\n");
  // simulator reaching compiler through a relative path.
  Write(root / "simulator/bad.cc", "#include \"../compiler/pass.h\"\n");
  // Generated or system headers in quotes resolve to no file: ignored.
  Write(root / "compiler/ok.cc", "#include \"hlo/hlo.pb.h\"\n#include \"hlo/ir.h\"\n");
  // A C++ file outside every layer.
  Write(root / "tools/newtool/x.cc", "int x;\n");

  std::vector<std::string> found;
  for (const layering::Violation& v :
       ScanTree(root, {"hlo", "compiler", "targets", "simulator", "tools"})) {
    found.push_back(v.ToString());
  }
  fs::remove_all(root);
  EXPECT_EQ(found,
            (std::vector<std::string>{
                "hlo/bad.cc:3: #include \"compiler/pass.h\": layer hlo may not use layer "
                "compiler (hlo may use: -; docs/architecture.md)",
                "simulator/bad.cc:1: #include \"../compiler/pass.h\": layer simulator may not "
                "use layer compiler (simulator may use: accelerator-isa; docs/architecture.md)",
                "targets/cpu/bad.cc:2: #include \"targets/gpu/gpu.h\": layer cpu may not use "
                "layer gpu (cpu may use: compiler, backend-api, llvm-emitter; "
                "docs/architecture.md)",
                "tools/newtool/x.cc:1: the file lies in no layer: add its folder to the table in "
                "tests/layering/layering_check.cc"}));
}

}  // namespace

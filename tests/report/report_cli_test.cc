// `retarget report` end to end (build/bin/retarget run through the shell on temporary files):
// two corpus models, the 100-column table, and the error paths — unknown targets, an existing
// --json OUT, OUT naming an input, a model that fails while the others are reported.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/report/json_value.h"
#include "tests/test_support.h"

namespace {

namespace fs = std::filesystem;
using report_test::JsonValue;

struct Result {
  int exit_code = -1;
  std::string out, err;
};

class ReportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("retarget_report_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
  }
  Result Retarget(const std::string& args) const {
    const std::string command = "cd '" + dir_.string() + "' && '" + testing_support::BinDir() +
                                "/retarget' " + args + " >stdout.txt 2>stderr.txt";
    const int status = std::system(command.c_str());
    Result result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = testing_support::ReadFile(Path("stdout.txt"));
    result.err = testing_support::ReadFile(Path("stderr.txt"));
    return result;
  }
  fs::path dir_;
};

constexpr char kGood[] =
    "HloModule good\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT e = f32[4] exponential(p)\n}\n";
constexpr char kBad[] = "HloModule bad\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT e = f32[4] frob(p)\n}\n";

void ExpectLinesFit(const std::string& table) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("error:") != std::string::npos) continue;  // messages are not cut
    EXPECT_LE(line.size(), 100u) << line;
  }
}

TEST_F(ReportCliTest, TwoCorpusModelsOnThreeTargets) {
  const std::string mha = testing_support::CorpusPath("mha_block_1x12x128x64_bf16.hlo");
  const std::string norm = testing_support::CorpusPath("layer_norm_1x4096x768_bf16.hlo");
  Result r = Retarget("report '" + mha + "' '" + norm + "' --json out.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLinesFit(r.out);
  EXPECT_NE(r.out.find("== mha_block_1x12x128x64_bf16\nmodule jit_f: 28 instructions, "),
            std::string::npos)
      << r.out;
  const JsonValue json = report_test::ParseJson(testing_support::ReadFile(Path("out.json")));
  ASSERT_EQ(json["models"].array.size(), 2u);

  // mha_block: two bf16 batched dots of 2 * 12 * 128 * 128 * 64 FLOPs each go to Eigen /
  // cuBLASLt and run natively on the MXU; at most the other FLOPs are carried.
  const JsonValue& block = json["models"].array[0];
  const double dot_flops = 2 * (2.0 * 12 * 128 * 128 * 64);
  EXPECT_GE(block["flops"].number, dot_flops);
  const JsonValue& systolic = block["targets"]["systolic"];
  EXPECT_EQ(systolic["flops_share"]["native"].number, 1);
  for (const char* target : {"cpu", "gpu"}) {
    const JsonValue& cell = block["targets"][target];
    EXPECT_GE(cell["flops_share"]["library"].number, dot_flops / block["flops"].number) << target;
    EXPECT_EQ(cell["owners"]["unsupported"].number, 0);
  }
  for (const auto& [pair, value] : block["carried_across"].object) {
    EXPECT_LE(value["flops"].number, 1 - dot_flops / block["flops"].number + 1e-12) << pair;
    EXPECT_GT(value["instructions"].number, 0.5) << pair;  // the softmax and data movement
  }
  // layer_norm: no contraction, no custom-call, bf16 only: carried whole between every pair.
  const JsonValue& norm_model = json["models"].array[1];
  EXPECT_EQ(norm_model["name"].string, "layer_norm_1x4096x768_bf16");
  for (const auto& [pair, value] : norm_model["carried_across"].object) {
    EXPECT_EQ(value["instructions"].number, 1) << pair;
    EXPECT_EQ(value["flops"].number, 1) << pair;
  }
  EXPECT_EQ(norm_model["carried_across"].object.size(), 6u);
}

TEST_F(ReportCliTest, UnknownTargetsAndMissingFilesAreUsageErrors) {
  Write("good.hlo", kGood);
  Result unknown = Retarget("report good.hlo --targets cpu,tpu9");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown target 'tpu9' (targets: interp, cpu, gpu, systolic)"),
            std::string::npos)
      << unknown.err;
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(Retarget("report good.hlo --targets ,").exit_code, 2);
  EXPECT_EQ(Retarget("report").exit_code, 2);
  EXPECT_EQ(Retarget("report good.hlo --bogus").exit_code, 2);
  Result html = Retarget("report good.hlo --html x.html");  // documented, not in this slice
  EXPECT_EQ(html.exit_code, 1);
  EXPECT_NE(html.err.find("--html is not available yet"), std::string::npos) << html.err;
  EXPECT_FALSE(fs::exists(Path("x.html")));
  Result help = Retarget("report --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--targets LIST"), std::string::npos);
  // Repeated targets are reported once, in the order given.
  Result twice = Retarget("report good.hlo --targets gpu,cpu,gpu --json o.json");
  EXPECT_EQ(twice.exit_code, 0) << twice.err;
  const JsonValue json = report_test::ParseJson(testing_support::ReadFile(Path("o.json")));
  EXPECT_EQ(json["models"].array.at(0)["targets"].Keys(), (std::vector<std::string>{"gpu", "cpu"}));
}

TEST_F(ReportCliTest, NothingIsOverwrittenWithoutForce) {
  Write("good.hlo", kGood);
  Write("out.json", "keep me");
  Result refused = Retarget("report good.hlo --json out.json");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("out.json: already exists (use --force to overwrite)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(testing_support::ReadFile(Path("out.json")), "keep me");
  Result forced = Retarget("report good.hlo --json out.json --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(testing_support::ReadFile(Path("out.json")).rfind("{\"models\": [", 0), 0u);
  // An input is never replaced, even with --force.
  Result input = Retarget("report good.hlo --json good.hlo --force");
  EXPECT_EQ(input.exit_code, 1);
  EXPECT_EQ(testing_support::ReadFile(Path("good.hlo")), kGood);
}

TEST_F(ReportCliTest, AFailingModelKeepsItsRowAndTheOthers) {
  Write("good.hlo", kGood);
  Write("bad.hlo", kBad);
  Result r = Retarget("report bad.hlo good.hlo --targets cpu,systolic --json out.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("== bad: error: bad.hlo:4:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== good\nmodule good: 1 instructions, 4 FLOPs\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("some models or targets failed"), std::string::npos);
  const JsonValue json = report_test::ParseJson(testing_support::ReadFile(Path("out.json")));
  const JsonValue& bad = json["models"].array.at(0);
  EXPECT_NE(bad["targets"]["cpu"]["error"].string.find("bad.hlo:4:"), std::string::npos);
  const JsonValue& good = json["models"].array.at(1);
  EXPECT_FALSE(good.Has("error"));
  EXPECT_EQ(good["targets"]["cpu"]["owners"]["generated"].number, 1);
  EXPECT_EQ(good["targets"]["systolic"]["owners"]["native"].number, 1);
  EXPECT_EQ(good["carried_across"]["cpu->systolic"]["instructions"].number, 1);
}

}  // namespace

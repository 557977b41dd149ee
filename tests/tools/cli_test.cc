// End-to-end tests of the `retarget` binary (build/bin/retarget), run as a user would through the
// shell on temporary files: help, exit statuses, error format with caret, print round trips,
// run/compare results computed by hand, the timing line, and refusals to overwrite files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "tests/cli_fixture.h"
#include "tests/small_modules.h"
#include "tests/test_support.h"
#include "tools/io/npz.h"

namespace {

namespace fs = std::filesystem;

using Result = testing_support::CommandResult;

using CliTest = testing_support::CliFixture;

std::string Example() { return std::string(RETARGET_TEST_DATA_DIR) + "/../../examples/mlp.hlo"; }

// out0 = p0 + p1, out1 = p0 * p1 on f32[3]; results are easy to state by hand.
constexpr char kAddMul[] =
    "HloModule add_mul\n"
    "\n"
    "ENTRY main {\n"
    "  p0 = f32[3]{0} parameter(0)\n"
    "  p1 = f32[3]{0} parameter(1)\n"
    "  sum = f32[3]{0} add(p0, p1)\n"
    "  product = f32[3]{0} multiply(p0, p1)\n"
    "  ROOT t = (f32[3]{0}, f32[3]{0}) tuple(sum, product)\n"
    "}\n";

hlo::Literal F32(std::vector<float> values) {
  hlo::Literal literal(
      hlo::Shape::Array(hlo::PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.mutable_data<float>()[i] = values[i];
  return literal;
}

TEST_F(CliTest, ToolHelpAndNoArguments) {
  Result help = Retarget("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.rfind("usage: retarget <command>", 0), 0u);
  for (const char* command :
       {"verify", "print", "run", "compare", "compile", "report", "sim", "sweep", "scalesim"}) {
    EXPECT_NE(help.out.find(std::string("  ") + command + " "), std::string::npos) << command;
  }
  Result none = Retarget("");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("usage: retarget <command>"), std::string::npos);
}

TEST_F(CliTest, EveryCommandHasHelp) {
  for (const char* command :
       {"verify", "print", "run", "compare", "compile", "report", "sim", "sweep", "scalesim"}) {
    Result r = Retarget(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_EQ(r.out.rfind(std::string("usage: retarget ") + command, 0), 0u) << r.out;
    EXPECT_NE(r.out.find("-h, --help"), std::string::npos) << command;
  }
  EXPECT_NE(Retarget("run --help").out.find("usage: retarget run FILE --target T [--inputs SPEC]"),
            std::string::npos);
}

TEST_F(CliTest, UsageErrorsExitWithTwo) {
  Result unknown_command = Retarget("frobnicate x");
  EXPECT_EQ(unknown_command.exit_code, 2);
  EXPECT_EQ(unknown_command.err,
            "retarget: error: unknown command 'frobnicate'\n"
            "Try 'retarget --help' for the list of commands.\n");
  Result unknown_flag = Retarget("verify x.hlo --frob");
  EXPECT_EQ(unknown_flag.exit_code, 2);
  EXPECT_EQ(unknown_flag.err.rfind(
                "retarget verify: error: unknown option '--frob'\nusage: retarget verify", 0),
            0u);
  EXPECT_EQ(Retarget("verify").exit_code, 2);
  EXPECT_EQ(Retarget("compare a.npz").exit_code, 2);
  EXPECT_EQ(Retarget("run '" + Example() + "'").exit_code, 2);  // --target is required
  Result repeat = Retarget("run '" + Example() + "' --target interp --repeat 0");
  EXPECT_EQ(repeat.exit_code, 2);
  EXPECT_NE(repeat.err.find("--repeat needs an integer from 1"), std::string::npos);
  EXPECT_EQ(Retarget("run '" + Example() + "' --target interp --rtol -1").exit_code, 2);
  EXPECT_EQ(Retarget("run '" + Example() + "' --target interp --inputs").exit_code, 2);
  EXPECT_EQ(Retarget("run '" + Example() + "' --target tpu9").exit_code, 2);
  EXPECT_EQ(Retarget("print '" + Example() + "' --format json").exit_code, 2);
}

// Without a GPU, --target gpu runs the generated artifact by host emulation and says so.
TEST_F(CliTest, GpuTargetRunsByHostEmulationAndSaysSo) {
  Result r = Retarget("run '" + Example() + "' --target gpu --compare interp");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: no GPU in this process: the generated kernels ran by host "
                       "emulation"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("MATCHED (2 arrays, 160 elements)"), std::string::npos) << r.out;
}

TEST_F(CliTest, VerifySucceedsOnCorpusAndExample) {
  Result corpus =
      Retarget("verify '" + testing_support::CorpusPath("layer_norm_1x4096x768_bf16.hlo") + "'");
  EXPECT_EQ(corpus.exit_code, 0) << corpus.err;
  EXPECT_NE(corpus.out.find(": OK (module jit_layer_norm, 3 computations"), std::string::npos)
      << corpus.out;
  Result example = Retarget("verify '" + Example() + "'");
  EXPECT_EQ(example.exit_code, 0) << example.err;
}

TEST_F(CliTest, VerifyErrorHasFileLineColumnAndCaret) {
  Write("bad.hlo",
        "HloModule m\n\nENTRY main {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, q)\n}\n");
  Result r = Retarget("verify bad.hlo");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  // The location is the undefined operand `q`: line 5, column 26.
  EXPECT_EQ(r.err,
            "bad.hlo:5:26: error: use of undefined instruction 'q'\n"
            "  ROOT a = f32[2] add(p, q)\n"
            "                         ^\n");

  Result missing = Retarget("verify does_not_exist.hlo");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("does_not_exist.hlo: error: ", 0), 0u) << missing.err;
}

TEST_F(CliTest, PrintRoundTripsTextAndProto) {
  Result first = Retarget("print '" + Example() + "' -o a.hlo");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(Retarget("print a.hlo -o b.hlo").exit_code, 0);
  std::string a = testing_support::ReadFile(Path("a.hlo"));
  EXPECT_EQ(a,
            testing_support::ReadFile(Path("b.hlo")));  // print -> parse -> print is a fixed point
  EXPECT_EQ(a.rfind("HloModule jit_mlp", 0), 0u);
  Result stdout_text = Retarget("print a.hlo");
  EXPECT_EQ(stdout_text.out, a);

  Result proto = Retarget("print a.hlo --format proto -o m.pb");
  ASSERT_EQ(proto.exit_code, 0) << proto.err;
  EXPECT_EQ(Retarget("verify m.pb").exit_code, 0);
  Result from_proto = Retarget("run m.pb --target interp --output p.npz");
  ASSERT_EQ(from_proto.exit_code, 0) << from_proto.err;
  ASSERT_EQ(Retarget("run a.hlo --target interp --output t.npz").exit_code, 0);
  EXPECT_EQ(Retarget("compare t.npz p.npz --rtol 0 --atol 0").exit_code, 0);  // bit-identical
}

TEST_F(CliTest, PrintRefusesToOverwrite) {
  Write("m.hlo", kAddMul);
  Write("existing.hlo", "keep me");
  Result refused = Retarget("print m.hlo -o existing.hlo");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("existing.hlo: already exists (use --force to overwrite)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(testing_support::ReadFile(Path("existing.hlo")), "keep me");
  EXPECT_EQ(Retarget("print m.hlo -o existing.hlo --force").exit_code, 0);
  EXPECT_EQ(testing_support::ReadFile(Path("existing.hlo")).rfind("HloModule add_mul", 0), 0u);

  Result over_input = Retarget("print m.hlo --force -o ./m.hlo");
  EXPECT_EQ(over_input.exit_code, 1);
  EXPECT_NE(over_input.err.find("refusing to write over the input file"), std::string::npos);
  EXPECT_EQ(testing_support::ReadFile(Path("m.hlo")), kAddMul);
}

// run writes up to five files; an existing one is refused before anything compiles or runs,
// unless --force, and an input is never replaced.
TEST_F(CliTest, RunRefusesToOverwriteWithoutForce) {
  Write("m.hlo", kAddMul);
  Write("out.npz", "keep me");
  Write("stats.json", "keep me too");
  Result refused = Retarget("run m.hlo --target interp --output out.npz");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("out.npz: already exists (use --force to overwrite)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out.find("out0"), std::string::npos) << "ran before refusing";
  EXPECT_EQ(testing_support::ReadFile(Path("out.npz")), "keep me");
  EXPECT_EQ(Retarget("run m.hlo --target interp --stats-json stats.json").exit_code, 1);
  EXPECT_EQ(testing_support::ReadFile(Path("stats.json")), "keep me too");
  Result forced = Retarget("run m.hlo --target interp --output out.npz --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(io::ReadNpz(Path("out.npz")).size(), 2u);  // add_mul returns two arrays
  EXPECT_EQ(Retarget("run m.hlo --target interp --force --save-inputs ./m.hlo").exit_code, 1);
  EXPECT_EQ(testing_support::ReadFile(Path("m.hlo")), kAddMul);
}

TEST_F(CliTest, RunWritesOutputsThatCompareMatchesAndMismatches) {
  Write("m.hlo", kAddMul);
  io::WriteNpz(Path("in.npz"), {{"arg0", F32({1, 2, 3})}, {"arg1", F32({0.5f, 0.25f, -1})}});
  Result run = Retarget("run m.hlo --target interp --inputs in.npz --output out.npz");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("out0 = f32[3] {1.5, 2.25, 2}"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("out1 = f32[3] {0.5, 0.5, -3}"), std::string::npos) << run.out;

  // Expected values by hand: sums and products of the inputs above.
  io::WriteNpz(Path("expected.npz"),
               {{"out0", F32({1.5f, 2.25f, 2})}, {"out1", F32({0.5f, 0.5f, -3})}});
  Result matched = Retarget("compare expected.npz out.npz");
  EXPECT_EQ(matched.exit_code, 0);
  EXPECT_EQ(matched.out, "MATCHED (2 arrays, 6 elements)\n");

  io::WriteNpz(Path("wrong.npz"),
               {{"out0", F32({1.5f, 2.5f, 2})}, {"out1", F32({0.5f, 0.5f, -3})}});
  Result mismatch = Retarget("compare wrong.npz out.npz");
  EXPECT_EQ(mismatch.exit_code, 1);
  EXPECT_EQ(mismatch.out.rfind("MISMATCH out0[1]: expected 2.5, got 2.25", 0), 0u) << mismatch.out;
  // A loose enough tolerance accepts it: 0.25 <= 0.3 + 0 * 2.5.
  EXPECT_EQ(Retarget("compare wrong.npz out.npz --atol 0.3 --rtol 0").exit_code, 0);

  Result bad_file = Retarget("compare expected.npz m.hlo");
  EXPECT_EQ(bad_file.exit_code, 1);
  EXPECT_NE(bad_file.err.find("m.hlo: not an .npz file"), std::string::npos) << bad_file.err;
}

// --save-inputs writes the random arguments as an --inputs file: arg0 and arg1 hold the values the
// run used, so feeding them back reproduces out0 = arg0 + arg1 bit for bit.
TEST_F(CliTest, RunSaveInputsReproducesTheRun) {
  Write("m.hlo", kAddMul);
  Result first = Retarget("run m.hlo --target interp --inputs random:7 --save-inputs args.npz "
                          "--output first.npz");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("wrote args.npz (2 arguments)"), std::string::npos) << first.out;
  std::vector<io::NpyArray> args = io::ReadNpz(Path("args.npz"));
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].name, "arg0");
  EXPECT_EQ(args[1].name, "arg1");
  std::vector<io::NpyArray> outputs = io::ReadNpz(Path("first.npz"));
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(outputs[0].literal.data<float>()[i],
              args[0].literal.data<float>()[i] + args[1].literal.data<float>()[i]);
  }
  Result again = Retarget("run m.hlo --target cpu --inputs args.npz --output again.npz");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Retarget("compare first.npz again.npz --rtol 0 --atol 0").exit_code, 0);
  // Never over the module or the inputs file.
  EXPECT_EQ(Retarget("run m.hlo --target interp --inputs args.npz --save-inputs args.npz").exit_code,
            1);
}

// A runaway loop stops at --max-iterations on every target that runs loops, with an error
// naming the while and the limit (exit 1), never a hang.
TEST_F(CliTest, RunStopsARunawayLoopAtMaxIterations) {
  Write("spin.hlo", small_modules::kRunawayLoop);
  for (const char* target : {"interp", "cpu", "systolic"}) {
    Result run = Retarget(std::string("run spin.hlo --target ") + target + " --max-iterations 50");
    EXPECT_EQ(run.exit_code, 1) << target << ": " << run.err;
    EXPECT_NE(run.err.find("spin"), std::string::npos) << target << ": " << run.err;
    EXPECT_NE(run.err.find("50"), std::string::npos) << target << ": " << run.err;
  }
  EXPECT_EQ(Retarget("run spin.hlo --target interp --max-iterations 0").exit_code, 2);
}

TEST_F(CliTest, CompileStatsJoinTheBackendsObjectTheContextAndTheOwnership) {
  // The GPU backend adds its code generator's object (gpu_codegen) in front of the compile
  // context and the compiler's ownership fields: one document, every part in its place.
  Result r = Retarget("compile '" + Example() +
                      "' --target gpu -o m.rtgpu --stats-json s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto stats = nlohmann::ordered_json::parse(testing_support::ReadFile(Path("s.json")));
  std::vector<std::string> keys;
  for (const auto& [key, value] : stats.items()) keys.push_back(key);
  ASSERT_GE(keys.size(), 8u);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 6),
            (std::vector<std::string>{"gpu_codegen", "file", "module", "pipeline_ms", "passes",
                                      "target"}));
  const auto& codegen = stats.at("gpu_codegen");
  EXPECT_EQ(codegen.at("arch"), "sm_90");
  ASSERT_FALSE(codegen.at("kernels").empty());
  for (const auto& kernel : codegen.at("kernels")) {
    EXPECT_TRUE(kernel.at("entry").is_string());
    EXPECT_GE(kernel.at("grid").get<int64_t>(), 1);
    EXPECT_GE(kernel.at("block").get<int64_t>(), 1);
    EXPECT_TRUE(kernel.at("assembled").is_boolean());
  }
  // The MLP's two dots go to cuBLASLt: the owners name them.
  int library = 0;
  for (const auto& owner : codegen.at("owners")) library += owner.at("owner") == "cuBLASLt";
  EXPECT_EQ(library, 2);
  EXPECT_EQ(stats.at("module"), "jit_mlp");
  EXPECT_EQ(stats.at("target"), "gpu");
  EXPECT_FALSE(stats.at("passes").empty());
  EXPECT_TRUE(stats.at("passes").at(0).at("changed").is_boolean());
  EXPECT_TRUE(stats.at("kernel_count").is_number_integer());
}

TEST_F(CliTest, RunCompareInterpRepeatAndStats) {
  Result r = Retarget(
      "run '" + Example() +
      "' --target interp --inputs random:3 --compare interp --repeat 3 --stats-json s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MATCHED (2 arrays, 160 elements)"), std::string::npos) << r.out;
  std::smatch match;
  EXPECT_TRUE(std::regex_search(
      r.out, match,
      std::regex("\ntime: median [0-9]+\\.[0-9]{3} ms, min [0-9]+\\.[0-9]{3} ms over 3 runs\n")))
      << r.out;
  std::string stats = testing_support::ReadFile(Path("s.json"));
  EXPECT_NE(stats.find("\"runs\": 3"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"matched\": true"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"median_ms\": "), std::string::npos) << stats;
  // Same seed, same outputs; another seed differs.
  ASSERT_EQ(Retarget("run '" + Example() + "' --target interp --inputs random:3 --output a.npz")
                .exit_code,
            0);
  ASSERT_EQ(Retarget("run '" + Example() + "' --target interp --inputs random:3 --output b.npz")
                .exit_code,
            0);
  ASSERT_EQ(Retarget("run '" + Example() + "' --target interp --inputs random:4 --output c.npz")
                .exit_code,
            0);
  EXPECT_EQ(testing_support::ReadFile(Path("a.npz")), testing_support::ReadFile(Path("b.npz")));
  EXPECT_EQ(Retarget("compare a.npz c.npz").exit_code, 1);
}

TEST_F(CliTest, RunRejectsBadInputsAndNeverOverwritesThem) {
  Write("m.hlo", kAddMul);
  io::WriteNpz(Path("short.npz"), {{"arg0", F32({1, 2, 3})}});
  Result missing = Retarget("run m.hlo --target interp --inputs short.npz");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err,
            "retarget: error: short.npz: missing entry 'arg1' for a parameter of shape f32[3]\n");
  Write("junk.npz", "PK\x03\x04 junk");
  EXPECT_EQ(Retarget("run m.hlo --target interp --inputs junk.npz").exit_code, 1);
  Result seed = Retarget("run m.hlo --target interp --inputs random:abc");
  EXPECT_EQ(seed.exit_code, 1);
  EXPECT_NE(seed.err.find("the seed must be a non-negative integer"), std::string::npos);

  io::WriteNpz(Path("in.npz"), {{"arg0", F32({1, 2, 3})}, {"arg1", F32({1, 1, 1})}});
  std::string before = testing_support::ReadFile(Path("in.npz"));
  Result over = Retarget("run m.hlo --target interp --inputs in.npz --output in.npz");
  EXPECT_EQ(over.exit_code, 1);
  EXPECT_NE(over.err.find("refusing to write over the input file"), std::string::npos);
  EXPECT_EQ(testing_support::ReadFile(Path("in.npz")), before);
  EXPECT_EQ(Retarget("run m.hlo --target interp --output m.hlo").exit_code, 1);
  EXPECT_EQ(testing_support::ReadFile(Path("m.hlo")), kAddMul);
}

}  // namespace

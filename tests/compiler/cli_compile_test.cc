// End-to-end tests of `retarget compile` and `retarget opt`, run through the shell on temporary
// files as a user would: exit statuses (0 / 1 failure / 2 usage), located errors, refusals to
// overwrite, dumps, --disable-pass, --stats-json, and that compiled output runs on the
// interpreter with the same results as the input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/cli_fixture.h"
#include "tests/test_support.h"

namespace {

namespace fs = std::filesystem;

using Result = testing_support::CommandResult;

// y = relu(x @ w + b) on small shapes, plus an unused multiply for dce to remove.
constexpr const char* kMlp = R"(HloModule mlp

ENTRY main {
  x = f32[2,3] parameter(0)
  w = f32[3,4] parameter(1)
  b = f32[4] parameter(2)
  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[2,4] broadcast(b), dimensions={1}
  s = f32[2,4] add(d, bb)
  zero = f32[] constant(0)
  z = f32[2,4] broadcast(zero), dimensions={}
  unused = f32[2,4] multiply(s, s)
  ROOT r = f32[2,4] maximum(s, z)
}
)";

class CompileCliTest : public testing_support::CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    Write("mlp.hlo", kMlp);
  }
  std::string Read(const std::string& name) const { return testing_support::ReadFile(Path(name)); }
};

TEST_F(CompileCliTest, CompiledModuleRunsOnTheInterpreterWithTheSameResults) {
  for (const char* target : {"interp", "cpu", "gpu", "systolic"}) {
    std::string out = std::string("mlp.") + target + ".hlo";
    Result compile =
        Retarget(std::string("compile mlp.hlo --target ") + target + " --verify-each -o " + out);
    ASSERT_EQ(compile.exit_code, 0) << target << ": " << compile.err;
    EXPECT_EQ(compile.out, "");
    EXPECT_EQ(Read(out).find("unused"), std::string::npos) << target;  // dce ran
    Result a = Retarget("run mlp.hlo --target interp --inputs random:3 --output a.npz");
    Result b = Retarget("run " + out + " --target interp --inputs random:3 --output b.npz");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    Result compare = Retarget("compare a.npz b.npz");
    EXPECT_EQ(compare.exit_code, 0) << target << ": " << compare.out << compare.err;
    fs::remove(Path("a.npz"));
    fs::remove(Path("b.npz"));
  }
  // The cpu pipeline fuses the bias add and relu into the dot (kOutput), printed as XLA does.
  std::string cpu = Read("mlp.cpu.hlo");
  EXPECT_NE(cpu.find("kind=kOutput, calls=fused_computation"), std::string::npos) << cpu;
  EXPECT_EQ(Read("mlp.interp.hlo").find("fusion("), std::string::npos);  // interp fuses nothing
}

TEST_F(CompileCliTest, WritesToStdoutAndRefusesToOverwrite) {
  Result compile = Retarget("compile mlp.hlo --target gpu");
  ASSERT_EQ(compile.exit_code, 0) << compile.err;
  EXPECT_EQ(compile.out.rfind("HloModule mlp", 0), 0u) << compile.out;

  Write("taken.hlo", "precious");
  Result refused = Retarget("compile mlp.hlo --target gpu -o taken.hlo");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("already exists (use --force to overwrite)"), std::string::npos);
  EXPECT_EQ(Read("taken.hlo"), "precious");
  EXPECT_EQ(Retarget("compile mlp.hlo --target gpu -o taken.hlo --force").exit_code, 0);
  EXPECT_EQ(Read("taken.hlo").rfind("HloModule mlp", 0), 0u);

  Result input = Retarget("compile mlp.hlo --target gpu -o mlp.hlo --force");
  EXPECT_EQ(input.exit_code, 1);
  EXPECT_NE(input.err.find("refusing to write over the input file"), std::string::npos);
  EXPECT_EQ(Read("mlp.hlo"), kMlp);
}

TEST_F(CompileCliTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(Retarget("compile mlp.hlo").exit_code, 2);  // --target is required
  Result target = Retarget("compile mlp.hlo --target tpu9");
  EXPECT_EQ(target.exit_code, 2);
  EXPECT_NE(target.err.find("unknown target 'tpu9' (targets: interp, cpu, gpu, systolic)"),
            std::string::npos)
      << target.err;
  EXPECT_EQ(Retarget("compile mlp.hlo --target cpu --frob").exit_code, 2);
  EXPECT_EQ(Retarget("compile mlp.hlo --target cpu --emit jpeg").exit_code, 2);
  // A kind another target emits names what this one can; a binary needs a file.
  Result foreign = Retarget("compile mlp.hlo --target cpu --emit ptx");
  EXPECT_EQ(foreign.exit_code, 1);
  EXPECT_NE(foreign.err.find("--emit ptx does not apply to --target cpu (it emits hlo, llvm, obj)"),
            std::string::npos)
      << foreign.err;
  Result object = Retarget("compile mlp.hlo --target cpu --emit obj");
  EXPECT_EQ(object.exit_code, 2);
  EXPECT_NE(object.err.find("--emit obj needs -o OUT.o"), std::string::npos) << object.err;
  EXPECT_EQ(Retarget("compile --target cpu").exit_code, 2);      // FILE missing
  EXPECT_EQ(Retarget("opt mlp.hlo --target cpu").exit_code, 2);  // --passes missing
  Result help = Retarget("compile --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.rfind("usage: retarget compile FILE --target T", 0), 0u) << help.out;
  EXPECT_EQ(Retarget("opt --help").exit_code, 0);
}

TEST_F(CompileCliTest, FailuresExitWithOneAndNameTheLocation) {
  Write("bad.hlo",
        "HloModule bad\n\nENTRY main {\n  p = f32[2] parameter(0)\n"
        "  ROOT n = f32[3] negate(p)\n}\n");
  Result bad = Retarget("compile bad.hlo --target cpu");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err.rfind("bad.hlo:5:", 0), 0u) << bad.err;

  // Each target emits its own kinds; another kind is an error naming them.
  Result emit = Retarget("compile mlp.hlo --target cpu --emit ptx");
  EXPECT_EQ(emit.exit_code, 1);
  EXPECT_NE(emit.err.find("--emit ptx does not apply to --target cpu (it emits hlo, llvm, obj)"),
            std::string::npos)
      << emit.err;
  Result asm_on_gpu = Retarget("compile mlp.hlo --target gpu --emit asm");
  EXPECT_EQ(asm_on_gpu.exit_code, 1);
  EXPECT_NE(asm_on_gpu.err.find("(it emits hlo, llvm, ptx)"), std::string::npos)
      << asm_on_gpu.err;

  Result disabled = Retarget("compile mlp.hlo --target cpu --disable-pass no-such-pass");
  EXPECT_EQ(disabled.exit_code, 1);
  EXPECT_NE(disabled.err.find("unknown pass 'no-such-pass'; valid passes: "), std::string::npos)
      << disabled.err;

  Result unknown = Retarget("opt mlp.hlo --passes dce,bogus --target cpu");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("unknown pass 'bogus'"), std::string::npos) << unknown.err;
}

TEST_F(CompileCliTest, DumpsDisablesListsAndTimesPasses) {
  Result list = Retarget("compile --target cpu --list-passes");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.rfind("pipeline 'cpu' (", 0), 0u) << list.out;

  Result compile = Retarget(
      "compile mlp.hlo --target cpu --dump-dir dumps --disable-pass dce --disable-pass cse "
      "--time-passes -o out.hlo");
  ASSERT_EQ(compile.exit_code, 0) << compile.err;
  EXPECT_TRUE(fs::exists(Path("dumps/00.input.hlo")));
  bool any_dce_dump = false, any_dump = false;
  for (const auto& entry : fs::directory_iterator(Path("dumps"))) {
    std::string name = entry.path().filename().string();
    any_dce_dump |= name.find(".dce.hlo") != std::string::npos;
    any_dump |= name != "00.input.hlo";
  }
  EXPECT_FALSE(any_dce_dump);  // disabled passes write no dump
  EXPECT_NE(compile.err.find("disabled"), std::string::npos) << compile.err;  // the time table
  EXPECT_NE(compile.err.find("total"), std::string::npos) << compile.err;
  EXPECT_TRUE(any_dump);
  EXPECT_NE(Read("out.hlo").find("unused"), std::string::npos);  // dce was off
}

TEST_F(CompileCliTest, StatsJsonHasOwnersCoverageAndPassTimes) {
  Result compile = Retarget("compile mlp.hlo --target gpu --stats-json stats.json -o out.hlo");
  ASSERT_EQ(compile.exit_code, 0) << compile.err;
  std::string json = Read("stats.json");
  for (const char* key :
       {"\"target\": \"gpu\"", "\"instructions_by_owner\"", "\"kernel_count\"",
        "\"fusion_coverage\"", "\"peak_buffer_bytes\"", "\"pass_times_ms\"", "\"passes\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  }
}

TEST_F(CompileCliTest, OptRunsExactlyTheNamedPasses) {
  Result none = Retarget("opt mlp.hlo --passes '' --target cpu");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("unused"), std::string::npos);  // nothing ran
  Result dce = Retarget("opt mlp.hlo --passes dce --target cpu");
  ASSERT_EQ(dce.exit_code, 0) << dce.err;
  EXPECT_EQ(dce.out.find("unused"), std::string::npos) << dce.out;
  EXPECT_EQ(dce.out.find("fusion("), std::string::npos);  // no fusion pass was named
}

}  // namespace

// --target systolic --emit asm: the lowering's programs, which assemble (the .sasm text is the
// assembler's input language) and name the matrix-unit instructions of the MLP's two dots.
TEST_F(CompileCliTest, SystolicEmitsAssemblyThatAssembles) {
  Result emit = Retarget("compile mlp.hlo --target systolic --emit asm -o mlp.sasm");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  const std::string sasm = testing_support::ReadFile(Path("mlp.sasm"));
  EXPECT_NE(sasm.find("mxu.matmul"), std::string::npos);
  EXPECT_NE(sasm.find("mxu.ldw"), std::string::npos);
  EXPECT_NE(sasm.find("halt"), std::string::npos);
  Result again = Retarget("compile mlp.hlo --target systolic --emit asm -o mlp.sasm");
  EXPECT_EQ(again.exit_code, 1);  // never overwritten without --force
  Result sim = Retarget("sim mlp.sasm --config tpu-v1 --set array.dtypes=int8,bf16,f32");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;  // the text assembles and runs (on zero memory)
}

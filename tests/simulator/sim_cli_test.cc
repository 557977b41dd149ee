// `retarget sim` end to end through the built binary: the example programs with hand-computed
// results through --inputs/--output, every output flag, the refusal to overwrite, and the error
// messages and exit codes for bad configs, keys, programs and memory files.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "simulator/isa/assembler.h"
#include "simulator/isa/encoding.h"
#include "tests/report/json_value.h"
#include "tests/simulator/trace_check.h"
#include "tests/cli_fixture.h"
#include "tests/test_support.h"
#include "tools/io/npz.h"

namespace {

namespace fs = std::filesystem;
using report_test::JsonValue;
using report_test::ParseJson;

using Result = testing_support::CommandResult;

std::string Example(const std::string& name) {
  return std::string(RETARGET_EXAMPLES_DIR) + "/" + name;
}

// The example's path in single quotes, for the shell. (Appending avoids a g++ 12 -Wrestrict
// false positive on "'" + std::string + "'".)
std::string QuotedExample(const std::string& name) {
  std::string quoted = "'";
  quoted.append(Example(name)).append("'");
  return quoted;
}

template <typename T>
hlo::Literal Array(hlo::PrimitiveType type, std::vector<int64_t> dims, const std::vector<T>& v) {
  hlo::Literal literal(hlo::Shape::Array(type, std::move(dims)));
  std::memcpy(literal.mutable_bytes().data(), v.data(), v.size() * sizeof(T));
  return literal;
}

template <typename T>
std::vector<T> Values(const hlo::Literal& literal) {
  std::vector<T> values(literal.bytes().size() / sizeof(T));
  std::memcpy(values.data(), literal.bytes().data(), values.size() * sizeof(T));
  return values;
}

// A = rows of s8, W picks columns so that C[i] = [a0+a3, a1+a3, a2+a3, a0+a1+a2-a3] (by hand).
const std::vector<int8_t> kA = {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, 0, 1, 0, 1};
const std::vector<int8_t> kW = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, -1};
const std::vector<int32_t> kC = {5, 6, 7, 2, 13, 14, 15, 10, -5, -6, -7, -2, 1, 2, 1, 0};

class SimCliTest : public testing_support::CliFixture {
 protected:
  void WriteMatmulInputs(bool typed_result) const {
    std::vector<io::NpyArray> arrays = {
        {"dram@0x0", Array(hlo::PrimitiveType::kS8, {4, 4}, kA)},
        {"dram@0x100", Array(hlo::PrimitiveType::kS8, {4, 4}, kW)}};
    if (typed_result) {
      arrays.push_back(
          {"dram@0x1000", Array(hlo::PrimitiveType::kS32, {4, 4}, std::vector<int32_t>(16, 0))});
    }
    io::WriteNpz(Path("mem.npz"), arrays);
  }

};

TEST_F(SimCliTest, MatmulTileWritesTheProductAsUntypedDram) {
  WriteMatmulInputs(/*typed_result=*/false);
  Result r =
      Retarget("sim '" + Example("matmul_tile.sasm") + "' --inputs mem.npz --output out.npz");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cycles: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MAC utilization: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote out.npz"), std::string::npos) << r.out;
  std::vector<io::NpyArray> out = io::ReadNpz(Path("out.npz"));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, "dram@0x0");
  EXPECT_EQ(Values<int8_t>(out[0].literal), kA);  // inputs come back unchanged
  EXPECT_EQ(out[1].name, "dram@0x100");
  EXPECT_EQ(out[1].literal.shape().ToString(false), "s8[4,4]");
  EXPECT_EQ(out[2].name, "dram@0x1000");  // written by the program, covered by no input
  EXPECT_EQ(out[2].literal.shape().ToString(false), "u8[64]");
  EXPECT_EQ(Values<int32_t>(out[2].literal), kC);
}

TEST_F(SimCliTest, MatmulTileFillsATypedResultArray) {
  WriteMatmulInputs(/*typed_result=*/true);
  Result r = Retarget("sim '" + Example("matmul_tile.sasm") +
                      "' --config gemmini --inputs mem.npz -o out.npz");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<io::NpyArray> out = io::ReadNpz(Path("out.npz"));
  ASSERT_EQ(out.size(), 3u);  // nothing written outside the inputs
  EXPECT_EQ(out[2].name, "dram@0x1000");
  EXPECT_EQ(out[2].literal.shape().ToString(false), "s32[4,4]");
  EXPECT_EQ(Values<int32_t>(out[2].literal), kC);
}

TEST_F(SimCliTest, SoftmaxRowMatchesTheFormula) {
  const std::vector<float> x = {3, 3, 3, 3, 3, 3, 3, 3, 1, 2, 3, 4, 5, 6, 7, 8};
  io::WriteNpz(Path("mem.npz"), {{"dram@0x0", Array(hlo::PrimitiveType::kF32, {2, 8}, x)},
                                 {"dram@0x100", Array(hlo::PrimitiveType::kF32, {2, 8},
                                                      std::vector<float>(16, -1.0f))}});
  Result r =
      Retarget("sim '" + Example("softmax_row.sasm") + "' --inputs mem.npz --output out.npz");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<io::NpyArray> out = io::ReadNpz(Path("out.npz"));
  ASSERT_EQ(out.size(), 2u);
  std::vector<float> y = Values<float>(out[1].literal);
  ASSERT_EQ(y.size(), 16u);
  for (int c = 0; c < 8; ++c) EXPECT_EQ(y[c], 0.125f) << c;  // a constant row: exactly 1/8
  // Row 2 by the textbook formula (no max subtraction): e^c / sum_j e^j.
  double sum = 0;
  for (int j = 1; j <= 8; ++j) sum += std::exp(static_cast<double>(j));
  for (int c = 0; c < 8; ++c) {
    EXPECT_NEAR(y[8 + c], std::exp(c + 1.0) / sum, 1e-6) << c;
  }
}

TEST_F(SimCliTest, LocalMemoryInputsAndSplitDramRanges) {
  Write("spill.sasm",
        "dma.store local=acc:0x0, dram=0x40, row_bytes=16, rows=1, planes=1\n"
        "dma.store local=ub:0x10, dram=0x80, row_bytes=4, rows=1, planes=1\n"
        "halt\n");
  io::WriteNpz(Path("mem.npz"),
               {{"acc@0x0",
                 Array(hlo::PrimitiveType::kS32, {4}, std::vector<int32_t>{1, -2, 3, -4})},
                {"ub@0x10", Array(hlo::PrimitiveType::kF32, {1}, std::vector<float>{2.5f})},
                // Covers the middle of the first stored range, which splits around it.
                {"dram@0x48", Array(hlo::PrimitiveType::kU8, {4}, std::vector<uint8_t>(4, 0))}});
  Result r = Retarget("sim spill.sasm --config gemmini --inputs mem.npz -o out.npz");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<io::NpyArray> out = io::ReadNpz(Path("out.npz"));
  ASSERT_EQ(out.size(), 6u);
  std::vector<std::string> names;
  for (const io::NpyArray& array : out) names.push_back(array.name);
  EXPECT_EQ(names, (std::vector<std::string>{"acc@0x0", "ub@0x10", "dram@0x48", "dram@0x40",
                                             "dram@0x4c", "dram@0x80"}));
  EXPECT_EQ(Values<int32_t>(out[0].literal), (std::vector<int32_t>{1, -2, 3, -4}));
  EXPECT_EQ(Values<float>(out[1].literal), std::vector<float>{2.5f});
  EXPECT_EQ(Values<int32_t>(out[2].literal), std::vector<int32_t>{3});  // the store overwrote it
  EXPECT_EQ(Values<int32_t>(out[3].literal), (std::vector<int32_t>{1, -2}));
  EXPECT_EQ(Values<int32_t>(out[4].literal), std::vector<int32_t>{-4});
  EXPECT_EQ(Values<float>(out[5].literal), std::vector<float>{2.5f});
}

TEST_F(SimCliTest, TraceVcdAndStatsJson) {
  WriteMatmulInputs(false);
  Result r = Retarget("sim '" + Example("matmul_tile.sasm") +
                      "' --inputs mem.npz --trace t.json --vcd t.vcd --stats-json s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* file : {"t.json", "t.vcd", "s.json"}) {
    EXPECT_NE(r.out.find(std::string("wrote ") + file), std::string::npos) << r.out;
  }
  const JsonValue stats = ParseJson(testing_support::ReadFile(Path("s.json")));
  const JsonValue trace = ParseJson(testing_support::ReadFile(Path("t.json")));
  EXPECT_EQ(stats["config"]["name"].string, "tpu-v1");
  EXPECT_GT(stats["cycles"].number, 0);
  EXPECT_EQ(stats["macs"].number, 64);  // 4 x 4 x 4
  EXPECT_EQ(stats["bytes"]["dram_read"].number, 32);
  EXPECT_EQ(stats["bytes"]["dram_written"].number, 64);
  EXPECT_GE(stats["units"]["load"]["instructions"].number, 2);  // two dma.load (+ sem.signal)
  EXPECT_EQ(trace["otherData"]["total_cycles"].number, stats["cycles"].number);

  int thread_names = 0, matmuls = 0;
  for (const JsonValue& event : trace["traceEvents"].array) {
    // Unit tracks; overlap tracks ("load (overlap 1)") appear when a unit pipelines transfers.
    if (event["ph"].string == "M" && event["name"].string == "thread_name" &&
        event["args"]["name"].string.find("(overlap") == std::string::npos) {
      ++thread_names;
    }
    if (event["ph"].string != "X" || event["name"].string != "mxu.matmul") continue;
    ++matmuls;
    EXPECT_EQ(event["args"]["index"].number, 5);  // the sixth instruction of the example
    EXPECT_EQ(event["tid"].number, 3);            // mxu's track
    EXPECT_DOUBLE_EQ(event["ts"].number, event["args"]["start_cycle"].number / 700);
    EXPECT_DOUBLE_EQ(event["dur"].number, event["args"]["cycles"].number / 700);
  }
  EXPECT_EQ(thread_names, 5);
  EXPECT_EQ(matmuls, 1);
  // SRAM occupancy: A (16 B) and W (16 B) land in the UB; W dies when mxu.ldw completes, A when
  // the matmul does; its 64 B of results live in the accumulators until the store completes.
  std::vector<double> ub_live, acc_live;
  for (const JsonValue& event : trace["traceEvents"].array) {
    if (event["ph"].string != "C") continue;
    if (event["name"].string == "ub_bytes_live") ub_live.push_back(event["args"]["value"].number);
    if (event["name"].string == "acc_bytes_live") acc_live.push_back(event["args"]["value"].number);
  }
  EXPECT_EQ(ub_live, (std::vector<double>{16, 32, 16, 0}));
  EXPECT_EQ(acc_live, (std::vector<double>{64, 0}));
  EXPECT_EQ(stats["peak_bytes_live"]["ub"].number, 32);
  EXPECT_EQ(stats["peak_bytes_live"]["acc"].number, 64);
  EXPECT_EQ(simulator_test::FirstNestingViolation(trace), "");

  const std::string vcd = testing_support::ReadFile(Path("t.vcd"));
  EXPECT_EQ(vcd.rfind("$version retarget sim $end\n", 0), 0u) << vcd.substr(0, 200);
  EXPECT_NE(vcd.find("$timescale 1 ps $end"), std::string::npos);
  EXPECT_NE(vcd.find("b101 &\n"), std::string::npos) << vcd;  // mxu runs instruction #5
  EXPECT_NE(vcd.find("#" + std::to_string(std::llround(stats["cycles"].number * 1e6 / 700)) +
                     "\n"),
            std::string::npos)
      << vcd;  // the dump ends at the last cycle
}

TEST_F(SimCliTest, BinaryProgramRunsLikeItsAssembly) {
  systolic::Program program = systolic::Assemble(
      testing_support::ReadFile(Example("matmul_tile.sasm")), "matmul_tile.sasm");
  Write("tile.bin", systolic::WriteBinary(program));
  WriteMatmulInputs(true);
  Result text = Retarget("sim '" + Example("matmul_tile.sasm") +
                         "' --inputs mem.npz --stats-json a.json");
  Result binary = Retarget("sim tile.bin --inputs mem.npz --stats-json b.json -o out.npz");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_EQ(binary.exit_code, 0) << binary.err;
  EXPECT_EQ(ParseJson(testing_support::ReadFile(Path("a.json")))["cycles"].number,
            ParseJson(testing_support::ReadFile(Path("b.json")))["cycles"].number);
  EXPECT_EQ(Values<int32_t>(io::ReadNpz(Path("out.npz"))[2].literal), kC);
}

TEST_F(SimCliTest, NeverOverwritesWithoutForce) {
  WriteMatmulInputs(false);
  Write("s.json", "keep");
  const std::string program = QuotedExample("matmul_tile.sasm");
  Result r = Retarget("sim " + program + " --inputs mem.npz --stats-json s.json --trace t.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("s.json: already exists (use --force to overwrite)"), std::string::npos)
      << r.err;
  EXPECT_EQ(testing_support::ReadFile(Path("s.json")), "keep");
  EXPECT_FALSE(fs::exists(Path("t.json")));  // checked before the run: nothing written
  Result forced = Retarget("sim " + program + " --inputs mem.npz --stats-json s.json --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(testing_support::ReadFile(Path("s.json")).find("retarget-sim-stats"),
            std::string::npos);

  Result input = Retarget("sim " + program + " --inputs mem.npz --output mem.npz --force");
  EXPECT_EQ(input.exit_code, 1);
  EXPECT_NE(input.err.find("refusing to write over the input file"), std::string::npos)
      << input.err;
  Result same = Retarget("sim " + program + " --trace x.json --stats-json ./x.json");
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("two outputs name the same file"), std::string::npos) << same.err;
  Result absolute = Retarget("sim " + program + " --trace y.json --vcd '" + Path("y.json") + "'");
  EXPECT_EQ(absolute.exit_code, 2) << absolute.err;
  EXPECT_FALSE(fs::exists(Path("y.json")));
}

TEST_F(SimCliTest, BadConfigKeyProgramAndMemoryFile) {
  const std::string program = QuotedExample("matmul_tile.sasm");
  Result preset = Retarget("sim " + program + " --config tpu-v9");
  EXPECT_EQ(preset.exit_code, 1);
  EXPECT_NE(preset.err.find("tpu-v9: error: cannot open config file (and it is not a preset: "
                            "tpu-v1, gemmini, tpu-v4-mxu)"),
            std::string::npos)
      << preset.err;

  Result key = Retarget("sim " + program + " --set array.size=4");
  EXPECT_EQ(key.exit_code, 1);
  EXPECT_NE(key.err.find("array.size"), std::string::npos) << key.err;
  EXPECT_NE(key.err.find("array.rows"), std::string::npos) << key.err;  // lists the valid keys

  Result value = Retarget("sim " + program + " --set array.rows=0");
  EXPECT_EQ(value.exit_code, 1);
  EXPECT_NE(value.err.find("array.rows"), std::string::npos) << value.err;

  Write("bad.sasm", "# a typo on line 3\nnop\n  mtmul src=ub:0\nhalt\n");
  Result sasm = Retarget("sim bad.sasm");
  EXPECT_EQ(sasm.exit_code, 1);
  EXPECT_EQ(sasm.err.rfind("bad.sasm:3:3: error: unknown mnemonic 'mtmul'", 0), 0u) << sasm.err;

  Write("bad.bin", "SYSB");
  Result bin = Retarget("sim bad.bin");
  EXPECT_EQ(bin.exit_code, 1);
  EXPECT_NE(bin.err.find("bad.bin"), std::string::npos) << bin.err;

  Result missing = Retarget("sim nope.sasm");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.sasm: error: cannot read"), std::string::npos) << missing.err;

  io::WriteNpz(Path("names.npz"),
               {{"x", Array(hlo::PrimitiveType::kU8, {1}, std::vector<uint8_t>{1})}});
  Result name = Retarget("sim " + program + " --inputs names.npz");
  EXPECT_EQ(name.exit_code, 1);
  EXPECT_NE(name.err.find("names.npz: error: entry 'x': expected an array name like dram@0x1000"),
            std::string::npos)
      << name.err;

  // 4 bytes at the last 2 bytes of gemmini's 256 KiB unified buffer.
  io::WriteNpz(Path("big.npz"), {{"ub@0x3fffe", Array(hlo::PrimitiveType::kF32, {1},
                                                      std::vector<float>{1})}});
  Result fit = Retarget("sim " + program + " --config gemmini --inputs big.npz");
  EXPECT_EQ(fit.exit_code, 1);
  EXPECT_NE(fit.err.find("entry 'ub@0x3fffe': 4 bytes at 0x3fffe do not fit in ub (262144 bytes)"),
            std::string::npos)
      << fit.err;
}

TEST_F(SimCliTest, RunTimeErrorsFromTheSimulator) {
  Write("deadlock.sasm", "sem.wait unit=mxu, sem=3, count=1\nhalt\n");
  Result deadlock = Retarget("sim deadlock.sasm --trace t.json");
  EXPECT_EQ(deadlock.exit_code, 1);
  EXPECT_NE(deadlock.err.find("deadlock"), std::string::npos) << deadlock.err;
  for (const auto& entry : fs::directory_iterator(dir_)) {  // no partial output, no temporary
    EXPECT_EQ(entry.path().filename().string().rfind("t.json", 0), std::string::npos)
        << entry.path();
  }

  Result limit = Retarget("sim '" + Example("matmul_tile.sasm") + "' --max-cycles 3");
  EXPECT_EQ(limit.exit_code, 1);
  EXPECT_FALSE(limit.err.empty());
}

TEST_F(SimCliTest, UsageErrorsAndHelp) {
  EXPECT_EQ(Retarget("sim").exit_code, 2);  // no PROGRAM
  EXPECT_EQ(Retarget("sim a.sasm b.sasm").exit_code, 2);
  EXPECT_EQ(Retarget("sim a.sasm --bogus").exit_code, 2);
  Result cycles = Retarget("sim a.sasm --max-cycles 0");
  EXPECT_EQ(cycles.exit_code, 2);
  EXPECT_NE(cycles.err.find("--max-cycles"), std::string::npos) << cycles.err;
  Result help = Retarget("sim --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("dram@0xADDR"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--vcd"), std::string::npos) << help.out;
  Result list = Retarget("--help");
  EXPECT_NE(list.out.find("sim"), std::string::npos);
}

}  // namespace

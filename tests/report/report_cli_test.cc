// `retarget report` end to end (build/bin/retarget run through the shell on temporary files):
// two corpus models (their JSON checked against docs/report.schema.json), the 100-column table,
// --prices and --config, and the error paths — unknown targets and presets, bad price files, an
// existing --json/--html OUT, OUT naming an input, a model that fails while the others are
// reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/cli_fixture.h"
#include "tests/report/json_schema.h"
#include "tests/report/json_value.h"

namespace {

namespace fs = std::filesystem;
using report_test::JsonValue;
using Result = testing_support::CommandResult;
using ReportCliTest = testing_support::CliFixture;

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

// A simulated latency carries its host-fallback share: a model the accelerator runs natively
// shows 0 % beside "simulated"; one whose every step falls back to the host (complex arithmetic,
// which the accelerator does not hold) is labelled "estimated", with the share and the reason.
TEST_F(ReportCliTest, SimulatedLatencyShowsItsHostShare) {
  Write("mlp.hlo", testing_support::ReadFile(std::string(RETARGET_TEST_DATA_DIR) +
                                             "/../../examples/mlp.hlo"));
  Result native = Retarget("report mlp.hlo --targets systolic --json native.json");
  ASSERT_EQ(native.exit_code, 0) << native.err;
  const JsonValue cell = report_test::ParseJson(testing_support::ReadFile(Path("native.json")))
      ["models"].array.at(0)["targets"]["systolic"];
  EXPECT_EQ(cell["latency_source"].string, "simulated");
  EXPECT_EQ(cell["latency_host_share"].number, 0);
  EXPECT_NE(native.out.find("simulated     0.0%"), std::string::npos) << native.out;

  Write("complex.hlo", R"(HloModule complex_host
ENTRY main {
  a = f32[65536] parameter(0)
  b = f32[65536] parameter(1)
  c = c64[65536] complex(a, b)
  m = c64[65536] multiply(c, c)
  ROOT r = f32[65536] real(m)
})");
  Result host = Retarget("report complex.hlo --targets systolic --json host.json");
  ASSERT_EQ(host.exit_code, 0) << host.err;
  const JsonValue host_cell = report_test::ParseJson(testing_support::ReadFile(Path("host.json")))
      ["models"].array.at(0)["targets"]["systolic"];
  EXPECT_EQ(host_cell["latency_source"].string, "estimated");
  EXPECT_GE(host_cell["latency_host_share"].number, 0.95);
  EXPECT_NE(host_cell["latency_note"].string.find("the accelerator ran almost nothing"),
            std::string::npos);
  EXPECT_NE(host.out.find("systolic latency estimated: host fallbacks take"), std::string::npos)
      << host.out;
}

// A module written for 4 devices: the cpu target measures the whole step (an executable and a
// thread per device), the accelerator keeps the estimate and says why, and each cell carries
// the collectives' communication estimate.
TEST_F(ReportCliTest, ShardedModuleIsMeasuredOnEveryDeviceWhereTheTargetCan) {
  Write("sum4.hlo", R"(HloModule sum_all, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[1024] parameter(0)
  ROOT sum = f32[1024] all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
})");
  Result r = Retarget("report sum4.hlo --targets cpu,systolic --json out.json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const JsonValue targets =
      report_test::ParseJson(testing_support::ReadFile(Path("out.json")))["models"].array.at(0)
          ["targets"];
  EXPECT_EQ(targets["cpu"]["latency_source"].string, "measured");
  EXPECT_EQ(targets["cpu"]["communication"]["collectives"].number, 1);
  // Four simulated chips; a preset without links sends the all-reduce through the host, so
  // the figure is the host's and labelled estimated.
  EXPECT_EQ(targets["systolic"]["latency_source"].string, "estimated");
  EXPECT_EQ(targets["systolic"]["latency_note"].string,
            "host fallbacks take 100.0 % of the simulated time: the accelerator ran almost "
            "nothing");
  // The carried-across view says what takes the collectives on each target.
  EXPECT_NE(r.out.find("collectives (1) move over: cpu shared memory (threads of one process), "
                       "systolic no links\n"),
            std::string::npos)
      << r.out;

  // With links the chips' time is the links': 2(n-1) = 6 steps of 1 us and 1.5 x 4096 bytes at
  // 100 GB/s (chip_links.h), simulated on four chips.
  r = Retarget("report sum4.hlo --targets systolic --set link.bandwidth_gbps=100 "
               "--set link.latency_ns=1000 --json linked.json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const JsonValue linked =
      report_test::ParseJson(testing_support::ReadFile(Path("linked.json")))["models"].array.at(0)
          ["targets"]["systolic"];
  EXPECT_EQ(linked["latency_source"].string, "simulated");
  EXPECT_NEAR(linked["latency_ms"].number, (6 * 1e-6 + 1.5 * 4096 / 100e9) * 1e3, 1e-6);
  EXPECT_NE(r.out.find("systolic communication: 0.006061 ms estimated over chip-to-chip links"),
            std::string::npos)
      << r.out;
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
  const JsonValue schema = report_test::ParseJson(
      testing_support::ReadFile(std::string(RETARGET_DOCS_DIR) + "/report.schema.json"));
  EXPECT_TRUE(report_test::SchemaChecker(schema).Validate(json).empty());

  // mha_block: two bf16 batched dots of 2 * 12 * 128 * 128 * 64 FLOPs each go to retarget-sgemm /
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
  Result same = Retarget("report good.hlo --json x.out --html x.out");
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_NE(same.err.find("--json and --html name the same file"), std::string::npos) << same.err;
  EXPECT_FALSE(fs::exists(Path("x.out")));
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
  EXPECT_EQ(testing_support::ReadFile(Path("out.json")).rfind("{\n  \"models\": [", 0), 0u);
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

// The accelerator's owners are its lowering's: a broadcast along a leading dimension, which the
// per-op rules call native, is reported as the host step the lowering makes of it — with and
// without --estimate-only (ownership is not a latency).
TEST_F(ReportCliTest, SystolicOwnersAreTheLoweringsHostSteps) {
  Write("spread.hlo", R"(HloModule spread
ENTRY main {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  ROOT b = f32[4,8,256] broadcast(e), dimensions={0}
}
)");
  for (const char* flags : {"--estimate-only", ""}) {
    Result r = Retarget(std::string("report spread.hlo --targets cpu,systolic --json out.json "
                                    "--force ") + flags);
    ASSERT_EQ(r.exit_code, 0) << flags << r.err;
    const JsonValue json = report_test::ParseJson(testing_support::ReadFile(Path("out.json")));
    const JsonValue& systolic = json["models"].array.at(0)["targets"]["systolic"];
    EXPECT_EQ(systolic["owners"]["host_fallback"].number, 1) << flags;
    EXPECT_EQ(systolic["owners"]["native"].number, 1) << flags;  // the exponential
    EXPECT_EQ(json["models"].array.at(0)["targets"]["cpu"]["owners"]["generated"].number, 2);
  }
}

TEST_F(ReportCliTest, PricesFromAFileSetTheCost) {
  Write("good.hlo", kGood);
  Write("p.cfg", "# test prices\ncpu.usd_per_hour = 36\ncpu.source = test; cited\n");
  Result r = Retarget("report good.hlo --targets cpu,gpu --prices p.cfg --json out.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const JsonValue json = report_test::ParseJson(testing_support::ReadFile(Path("out.json")));
  const JsonValue& cpu = json["models"].array.at(0)["targets"]["cpu"];
  EXPECT_EQ(cpu["usd_per_hour"].number, 36);
  EXPECT_EQ(cpu["price_source"].string, "test; cited");
  // $36/hour = 1 cent per second: 1e6 runs of latency_ms cost latency_ms * 1e3 * 0.01 dollars.
  EXPECT_NEAR(cpu["cost_per_1m_usd"].number, cpu["latency_ms"].number * 10, 1e-12);
  EXPECT_EQ(json["models"].array.at(0)["targets"]["gpu"]["usd_per_hour"].number, 4.54);
  EXPECT_NE(r.out.find("$/hour"), std::string::npos);

  Write("bad.cfg", "cpu.usd_per_hour = 1\n\ngpu.usd_per_hour = lots\n");
  Result bad = Retarget("report good.hlo --prices bad.cfg --json bad.json");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("bad.cfg:3:20: error: bad value 'lots' for 'gpu.usd_per_hour'"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.out, "");  // checked before any work
  EXPECT_FALSE(fs::exists(Path("bad.json")));
  Write("unknown.cfg", "tpu.usd_per_hour = 1\n");
  Result unknown = Retarget("report good.hlo --prices unknown.cfg");
  EXPECT_NE(unknown.err.find("unknown.cfg:1:1: error: unknown target 'tpu' (targets: interp, cpu, "
                             "gpu, systolic)"),
            std::string::npos)
      << unknown.err;
  EXPECT_EQ(Retarget("report good.hlo --prices missing.cfg").exit_code, 1);
}

TEST_F(ReportCliTest, ConfigEstimatesTheSystolicColumn) {
  Write("good.hlo", kGood);
  Result builtin = Retarget("report good.hlo --targets systolic --estimate-only --json b.json");
  Result v1 = Retarget(
      "report good.hlo --targets systolic --estimate-only --config tpu-v1 --json v1.json");
  Result slow = Retarget(
      "report good.hlo --targets systolic --estimate-only --config gemmini --set clock.mhz=500 "
      "--json g.json");
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  ASSERT_EQ(v1.exit_code, 0) << v1.err;
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  auto cell = [&](const std::string& file) {
    return report_test::ParseJson(testing_support::ReadFile(Path(file)));
  };
  const JsonValue b = cell("b.json"), t = cell("v1.json"), g = cell("g.json");
  const auto latency = [](const JsonValue& json) {
    return json["models"].array.at(0)["targets"]["systolic"]["latency_ms"].number;
  };
  EXPECT_EQ(b["systolic_config"].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(t["systolic_config"].string, "tpu-v1");
  EXPECT_EQ(latency(t), latency(b));  // same array, clock, lanes and bandwidth
  // exp of 4 f32 on gemmini at 500 MHz: 4 ops on 16 lanes * 500 MHz vs 32 bytes at 16 GB/s,
  // plus 10 us to issue.
  EXPECT_EQ(g["systolic_config"].string, "gemmini --set clock.mhz=500");
  EXPECT_NEAR(latency(g), (std::max(4 / (16 * 500e6), 32 / 16e9) + 10e-6) * 1e3, 1e-12);
  EXPECT_EQ(slow.out.rfind("systolic: estimated with accelerator config 'gemmini --set "
                           "clock.mhz=500'\n== good\n", 0),
            0u)
      << slow.out;

  Result preset = Retarget("report good.hlo --config tpu9");
  EXPECT_EQ(preset.exit_code, 1);
  EXPECT_NE(preset.err.find("not a preset: tpu-v1, gemmini, tpu-v4-mxu"), std::string::npos)
      << preset.err;
  EXPECT_EQ(preset.out, "");
  Result key = Retarget("report good.hlo --config gemmini --set clock.ghz=1");
  EXPECT_EQ(key.exit_code, 1);
  EXPECT_NE(key.err.find("unknown key 'clock.ghz'"), std::string::npos) << key.err;
  Result without = Retarget("report good.hlo --targets cpu --config gemmini");
  EXPECT_EQ(without.exit_code, 2);
  EXPECT_NE(without.err.find("which --targets does not include"), std::string::npos);
}

TEST_F(ReportCliTest, HtmlIsWrittenOnceAndKeptWithoutForce) {
  Write("good.hlo", kGood);
  Result r = Retarget("report good.hlo --html page.html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = testing_support::ReadFile(Path("page.html"));
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("Chart.js v3"), std::string::npos);  // inlined, not linked
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  Write("keep.html", "keep me");
  Result refused = Retarget("report good.hlo --html keep.html");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("keep.html: already exists (use --force to overwrite)"),
            std::string::npos);
  EXPECT_EQ(testing_support::ReadFile(Path("keep.html")), "keep me");
  EXPECT_EQ(Retarget("report good.hlo --html keep.html --force").exit_code, 0);
  EXPECT_EQ(testing_support::ReadFile(Path("keep.html")).rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Retarget("report good.hlo --html good.hlo --force").exit_code, 1);
  EXPECT_EQ(testing_support::ReadFile(Path("good.hlo")), kGood);
}

}  // namespace

// Without --estimate-only the CPU column is measured by the CPU backend and the systolic column
// simulated; the simulated figure is the one `retarget run --target systolic` reports for the
// same machine (the default run configuration), computed here through that other command.
TEST_F(ReportCliTest, CpuIsMeasuredAndSystolicSimulated) {
  Write("good.hlo", kGood);
  Result report = Retarget("report good.hlo --targets cpu,systolic --json r.json");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  Result run = Retarget("run good.hlo --target systolic --stats-json s.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonValue r = report_test::ParseJson(testing_support::ReadFile(Path("r.json")));
  const JsonValue s = report_test::ParseJson(testing_support::ReadFile(Path("s.json")));
  const JsonValue& targets = r["models"].array.at(0)["targets"];
  EXPECT_EQ(targets["cpu"]["latency_source"].string, "measured");
  EXPECT_GT(targets["cpu"]["latency_ms"].number, 0.0);
  EXPECT_EQ(targets["systolic"]["latency_source"].string, "simulated");
  EXPECT_DOUBLE_EQ(targets["systolic"]["latency_ms"].number, s["seconds"].number * 1e3);
}

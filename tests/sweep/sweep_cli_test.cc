// `retarget sweep` and `retarget sweep-merge` end to end through the built binary: the issue's
// test (4 points of DRAM bandwidth on a memory-bound corpus model give non-increasing latency;
// 4 array sizes on compute-bound ones too), -j 2 writing the same CSV as -j 1, refusal to
// overwrite, usage errors that list the valid names, a manifest whose commands really run and
// merge back into the sweep's own CSV, and the HTML page in headless Chromium.
#include <gtest/gtest.h>

#include "tests/cli_fixture.h"
#include "tools/sweep/sweep_csv.h"

namespace {

using SweepCliTest = testing_support::CliFixture;

std::string Mlp() { return std::string(RETARGET_SOURCE_DIR) + "/examples/mlp.hlo"; }

// bf16 is native on tpu-v4-mxu, so the simulator runs this on the array (no host fallback).
constexpr char kDotBf16[] = R"(HloModule dot
ENTRY main {
  a = bf16[256,256] parameter(0)
  b = bf16[256,256] parameter(1)
  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

std::vector<double> Column(const sweep::SweepTable& table, const std::string& name) {
  const int c = table.ColumnIndex(name);
  std::vector<double> values;
  for (const auto& row : table.rows) values.push_back(std::stod(row.at(static_cast<size_t>(c))));
  return values;
}

std::vector<std::string> Text(const sweep::SweepTable& table, const std::string& name) {
  const int c = table.ColumnIndex(name);
  std::vector<std::string> values;
  for (const auto& row : table.rows) values.push_back(row.at(static_cast<size_t>(c)));
  return values;
}

// Simulated when the systolic backend runs the model (`retarget run --target systolic` succeeds
// at the same config), else estimated with every note saying why: the sweep never hides a
// working simulator, and never fails a point because the simulator cannot run it yet.
void ExpectSourceMatchesTheBackend(const sweep::SweepTable& table,
                                   const testing_support::CommandResult& backend_run) {
  const std::vector<std::string> sources = Text(table, "latency_source");
  const std::vector<std::string> notes = Text(table, "note");
  for (size_t i = 0; i < sources.size(); ++i) {
    if (backend_run.exit_code == 0) {
      EXPECT_EQ(sources[i], "simulated") << notes[i];
    } else {
      EXPECT_EQ(sources[i], "estimated");
      EXPECT_EQ(notes[i].rfind("simulation failed: ", 0), 0u) << notes[i];
    }
  }
}

void ExpectNonIncreasing(const std::vector<double>& values, const std::string& what) {
  for (size_t i = 1; i < values.size(); ++i) {
    EXPECT_LE(values[i], values[i - 1]) << what << " point " << i;
  }
}

TEST_F(SweepCliTest, MoreDramBandwidthIsNeverSlowerOnAMemoryBoundModel) {
  const std::string model = testing_support::CorpusPath("mean_axis_1x4096x1024_bf16.hlo");
  for (const std::string mode : {"", " --estimate-only"}) {
    const auto run = Retarget("sweep '" + model +
                              "' --set dram_gbps=10,20,40,80 --csv s.csv "
                              "--force -j 2" +
                              mode);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const sweep::SweepTable table = sweep::ReadCsvFile(Path("s.csv"));
    ASSERT_EQ(table.rows.size(), 4u);
    EXPECT_EQ(Text(table, "dram_gbps"), (std::vector<std::string>{"10", "20", "40", "80"}));
    const std::vector<double> latency = Column(table, "latency_ms");
    ExpectNonIncreasing(latency, "latency" + mode);
    // Memory-bound: 8x the bandwidth is far faster, not merely no slower.
    EXPECT_LT(latency[3], 0.5 * latency[0]) << mode;
    if (mode.empty()) {
      ExpectSourceMatchesTheBackend(table, Retarget("run '" + model + "' --target systolic"));
    } else {
      EXPECT_EQ(Text(table, "latency_source"), std::vector<std::string>(4, "estimated"));
    }
    // Cost is latency x price: it falls in proportion.
    const std::vector<double> cost = Column(table, "cost_per_1m_usd");
    EXPECT_NEAR(cost[3] / cost[0], latency[3] / latency[0], 1e-3);
  }
}

TEST_F(SweepCliTest, ALargerArrayIsNeverSlowerOnComputeBoundModels) {
  // Simulated (where the backend runs it): a bf16 matmul on the array.
  Write("dot.hlo", kDotBf16);
  auto run = Retarget(
      "sweep dot.hlo --config tpu-v4-mxu --set array=16x16,32x32,64x64,128x128 "
      "--max-run-seconds 1 --csv dot.csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  sweep::SweepTable table = sweep::ReadCsvFile(Path("dot.csv"));
  ExpectSourceMatchesTheBackend(table,
                                Retarget("run dot.hlo --target systolic --config tpu-v4-mxu"));
  ExpectNonIncreasing(Column(table, "latency_ms"), "dot");
  EXPECT_LT(Column(table, "latency_ms")[3], 0.25 * Column(table, "latency_ms")[0]);
  if (Text(table, "latency_source")[0] == "simulated") {  // all on the array, none on the host
    for (double share : Column(table, "host_fallback_share")) EXPECT_EQ(share, 0);
  }
  EXPECT_EQ(Text(table, "config")[1], "array.rows=32 array.cols=32");

  // Estimated: the corpus's f32 parallel dots (4 x 512^3 MACs) on a TPU v1 whose MXU also
  // takes f32 (on the int8-only preset they would run on the host at any array size).
  Write("tpu_v1_f32.cfg", "preset = tpu-v1\narray.dtypes = int8,bf16,f32\n");
  const std::string model = testing_support::CorpusPath("xnn.parallel_dots.optimized.hlo");
  run = Retarget("sweep '" + model +
                 "' --config tpu_v1_f32.cfg --set array=16x16,32x32,64x64,128x128 "
                 "--estimate-only --csv dots.csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  table = sweep::ReadCsvFile(Path("dots.csv"));
  EXPECT_EQ(Text(table, "latency_source"), std::vector<std::string>(4, "estimated"));
  ExpectNonIncreasing(Column(table, "latency_ms"), "estimated parallel dots");
  EXPECT_LT(Column(table, "latency_ms")[1], 0.5 * Column(table, "latency_ms")[0]);
}

TEST_F(SweepCliTest, ParallelJobsWriteTheSameCsvAsOne) {
  const std::string args =
      "sweep '" + Mlp() + "' --set array=16x16,32x32 --set sram_kib=64,256,1024";
  const auto one = Retarget(args + " -j 1 --csv one.csv");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto two = Retarget(args + " -j 2 --csv two.csv");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const std::string csv = testing_support::ReadFile(Path("one.csv"));
  EXPECT_EQ(csv, testing_support::ReadFile(Path("two.csv")));
  const sweep::SweepTable table = sweep::ParseCsv(csv, "one.csv");
  ASSERT_EQ(table.rows.size(), 6u);
  EXPECT_EQ(Text(table, "point"), (std::vector<std::string>{"0", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(table.rows[4][2], "256");  // point 4 = (32x32, 256 KiB)
  EXPECT_EQ(Text(table, "config")[4], "array.rows=32 array.cols=32 ub.bytes=262144");
  // Progress on stderr, one line per point.
  EXPECT_NE(two.err.find("[6/6] point"), std::string::npos) << two.err;
}

TEST_F(SweepCliTest, CostFollowsThePriceFile) {
  Write("prices.cfg", "systolic.usd_per_hour = 3.6\n");  // $0.001 per second
  const auto run = Retarget("sweep '" + Mlp() +
                            "' --set array=16x16,64x64 --estimate-only "
                            "--prices prices.cfg --csv s.csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const sweep::SweepTable table = sweep::ReadCsvFile(Path("s.csv"));
  const std::vector<double> latency = Column(table, "latency_ms"),
                            cost = Column(table, "cost_per_1m_usd");
  for (size_t i = 0; i < latency.size(); ++i) {
    // 1e6 inferences x latency_ms / 1000 s x $0.001/s.
    EXPECT_NEAR(cost[i], latency[i], 1e-5 * latency[i]) << i;
  }
  Write("bad.cfg", "tpu.usd_per_hour = 1\n");
  const auto bad = Retarget("sweep '" + Mlp() + "' --set array=16x16 --prices bad.cfg");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("bad.cfg:1:"), std::string::npos) << bad.err;
}

// A bf16 dot the array takes and an f32 dot tpu-v4-mxu's MXU (int8, bf16) cannot: estimated, the
// f32 one runs on the host. Its MACs must not count against the array and its time is the host
// fallback share; the cost of each point is in the CSV and in the HTML page's table and charts.
TEST_F(SweepCliTest, EstimatedPointsSeparateHostWorkAndCarryTheirCost) {
  Write("mixed.hlo", R"(HloModule mixed
ENTRY main {
  a = bf16[256,256] parameter(0)
  b = bf16[256,256] parameter(1)
  d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[256,256] parameter(2)
  y = f32[256,256] parameter(3)
  h = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[256,256], f32[256,256]) tuple(d, h)
})");
  Write("host.hlo", R"(HloModule host
ENTRY main {
  x = f32[256,256] parameter(0)
  y = f32[256,256] parameter(1)
  ROOT h = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  Write("dot.hlo", kDotBf16);
  const std::string sweep = " --config tpu-v4-mxu --set array=32x32,128x128 --estimate-only";
  auto run = Retarget("sweep mixed.hlo" + sweep + " --csv mixed.csv --html mixed.html");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(Retarget("sweep host.hlo" + sweep + " --csv host.csv").exit_code, 0);
  ASSERT_EQ(Retarget("sweep dot.hlo" + sweep + " --csv dot.csv").exit_code, 0);
  const sweep::SweepTable mixed = sweep::ReadCsvFile(Path("mixed.csv"));
  const sweep::SweepTable host = sweep::ReadCsvFile(Path("host.csv"));
  const sweep::SweepTable dot = sweep::ReadCsvFile(Path("dot.csv"));
  const std::vector<double> latency = Column(mixed, "latency_ms");
  const std::vector<double> host_latency = Column(host, "latency_ms");
  for (size_t i = 0; i < 2; ++i) {
    // The array's utilization is the bf16 dot's alone; the host's time is the f32 dot's.
    EXPECT_NEAR(Column(mixed, "utilization")[i], Column(dot, "utilization")[i], 1e-5) << i;
    EXPECT_GT(Column(dot, "utilization")[i], 0) << i;
    EXPECT_EQ(Column(host, "utilization")[i], 0) << i;
    EXPECT_EQ(Column(host, "host_fallback_share")[i], 1) << i;
    EXPECT_NEAR(Column(mixed, "host_fallback_share")[i], host_latency[i] / latency[i], 1e-5) << i;
    // $1.20 per hour: 1e6 inferences x latency_ms / 1000 s x $1.2 / 3600 s = latency_ms / 3.
    EXPECT_NEAR(Column(mixed, "cost_per_1m_usd")[i], latency[i] / 3, 1e-5 * latency[i]) << i;
  }
  const std::string page = testing_support::ReadFile(Path("mixed.html"));
  EXPECT_NE(page.find("<th>cost_per_1m_usd</th>"), std::string::npos);
  EXPECT_NE(page.find("<td>" + Text(mixed, "cost_per_1m_usd")[0] + "</td>"), std::string::npos);
  EXPECT_NE(page.find("[\"cost_per_1m_usd\",\"USD per million inferences\""), std::string::npos);
}

TEST_F(SweepCliTest, OutputsAreKeptWithoutForce) {
  Write("s.csv", "precious");
  const auto run = Retarget("sweep '" + Mlp() + "' --set clock_mhz=700 --csv s.csv");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("s.csv: already exists (use --force to overwrite)"), std::string::npos)
      << run.err;
  EXPECT_EQ(testing_support::ReadFile(Path("s.csv")), "precious");
  const auto forced = Retarget("sweep '" + Mlp() + "' --set clock_mhz=700 --csv s.csv --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  Write("m.hlo", testing_support::ReadFile(Mlp()));
  const auto self = Retarget("sweep m.hlo --set clock_mhz=700 --csv m.hlo --force");
  EXPECT_EQ(self.exit_code, 1);
  EXPECT_EQ(testing_support::ReadFile(Path("m.hlo")), testing_support::ReadFile(Mlp()));
}

TEST_F(SweepCliTest, BadInputListsTheValidNames) {
  const std::string mlp = "'" + Mlp() + "'";
  auto run = Retarget("sweep " + mlp + " --target tpu --set array=8x8");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown target 'tpu' (sweep targets: systolic)"), std::string::npos)
      << run.err;
  run = Retarget("sweep " + mlp + " --target cpu --set array=8x8");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("only --target systolic"), std::string::npos) << run.err;
  run = Retarget("sweep " + mlp + " --config tpu-v9 --set array=8x8");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("gemmini"), std::string::npos) << run.err;
  run = Retarget("sweep " + mlp + " --set dram=1,2");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("unknown key 'dram' (valid keys: array, dram_gbps, sram_kib, clock_mhz"),
            std::string::npos)
      << run.err;
  run = Retarget("sweep " + mlp);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("give at least one --set"), std::string::npos) << run.err;
  run = Retarget("sweep " + mlp + " --set array=8x8 --point 1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("point 1 is outside the sweep (points 0..0)"), std::string::npos);
  run = Retarget("sweep missing.hlo --set array=8x8");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("missing.hlo"), std::string::npos) << run.err;
}

TEST_F(SweepCliTest, AFailingPointKeepsItsRowAndTheSweepGoesOn) {
  // A hung point is killed at the timeout; the others finish and the CSV is still written.
  const auto run = Retarget("sweep '" + Mlp() +
                            "' --set clock_mhz=700,1400 --timeout 0.000001 "
                            "--csv s.csv");
  EXPECT_EQ(run.exit_code, 1);
  const sweep::SweepTable table = sweep::ReadCsvFile(Path("s.csv"));
  ASSERT_EQ(table.rows.size(), 2u);
  for (const std::string& error : Text(table, "error")) {
    EXPECT_NE(error.find("timed out"), std::string::npos) << error;
  }
  EXPECT_NE(run.err.find("some points failed"), std::string::npos);
}

TEST_F(SweepCliTest, APointWhoseSimulationHangsKeepsItsEstimate) {
  // 4096^3 MACs take the simulator many minutes (it computes every product) and the cost model
  // milliseconds: the simulating process is killed at the timeout, the estimate-only retry fills
  // the row. (Where the backend rejects the model outright, the note gives its error instead.)
  // The problem is 8x what a fast machine could simulate within the timeout, so the outcome
  // does not depend on the machine's speed.
  Write("big.hlo", R"(HloModule big
ENTRY main {
  a = bf16[4096,4096] parameter(0)
  b = bf16[4096,4096] parameter(1)
  ROOT d = f32[4096,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  const auto run = Retarget(
      "sweep big.hlo --config tpu-v4-mxu --set clock_mhz=940 "
      "--max-run-seconds 100 --timeout 3 --csv s.csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const sweep::SweepTable table = sweep::ReadCsvFile(Path("s.csv"));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(Text(table, "latency_source")[0], "estimated");
  EXPECT_EQ(Text(table, "error")[0], "");
  const std::string note = Text(table, "note")[0];
  EXPECT_TRUE(note.rfind("the simulating process failed (timed out after 3 s); estimated instead",
                         0) == 0 ||
              note.rfind("simulation failed: ", 0) == 0)
      << note;
}

TEST_F(SweepCliTest, ManifestTasksMergeBackIntoTheSweep) {
  const std::string args = "sweep '" + Mlp() + "' --set dram_gbps=10,40 --set clock_mhz=700,940";
  auto run = Retarget(args + " --manifest cluster");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string commands = testing_support::ReadFile(Path("cluster/commands.txt"));
  const std::string slurm = testing_support::ReadFile(Path("cluster/sweep.sbatch"));
  EXPECT_NE(slurm.find("#SBATCH --array=0-3"), std::string::npos);
  EXPECT_NE(slurm.find("SLURM_ARRAY_TASK_ID"), std::string::npos);
  // Run the parallel file's commands as GNU parallel would (one shell command a line), then
  // merge: the result is the CSV of the sweep run here in one go.
  run = Shell("sh cluster/commands.txt");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  run = Retarget(
      "sweep-merge cluster/parts/point-3.csv cluster/parts/point-1.csv "
      "cluster/parts/point-0.csv cluster/parts/point-2.csv cluster/parts/point-2.csv "
      "--csv merged.csv --html merged.html");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(testing_support::ReadFile(Path("merged.html")).find("<canvas id=\"chart-3\""),
            std::string::npos);
  run = Retarget(args + " --csv whole.csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(testing_support::ReadFile(Path("merged.csv")),
            testing_support::ReadFile(Path("whole.csv")));
  // The manifest is not rewritten without --force; a missing part is an error naming it.
  run = Retarget(args + " --manifest cluster");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("already exists"), std::string::npos) << run.err;
  run = Retarget("sweep-merge cluster/parts/point-0.csv cluster/parts/point-9.csv");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("point-9.csv: no such file"), std::string::npos) << run.err;
  // A gap in the points is reported after the merge.
  run = Retarget("sweep-merge cluster/parts/point-0.csv cluster/parts/point-2.csv");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("1 points missing (1)"), std::string::npos) << run.err;
}

TEST_F(SweepCliTest, TheHtmlPageRendersInHeadlessChromium) {
  ASSERT_EQ(std::system("command -v chromium >/dev/null 2>&1"), 0)
      << "chromium is missing: run scripts/install-deps.sh";
  const auto run = Retarget("sweep '" + Mlp() +
                            "' --set array=16x16,32x32,64x64 --estimate-only "
                            "--html page.html --csv page.csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto chromium = Shell(
      "timeout 120 chromium --headless --disable-gpu --no-sandbox --user-data-dir=profile "
      "--enable-logging=stderr --v=0 --dump-dom file://" +
      Path("page.html"));
  ASSERT_EQ(chromium.exit_code, 0) << chromium.err;
  EXPECT_EQ(chromium.err.find(":CONSOLE"), std::string::npos) << chromium.err;
  const std::string& dom = chromium.out;
  EXPECT_NE(dom.find("<div id=\"script-errors\"></div>"), std::string::npos);
  EXPECT_NE(dom.find("data-charts=\"4\""), std::string::npos);
  size_t rendered = 0;
  for (size_t at = dom.find("data-rendered=\"true\""); at != std::string::npos;
       at = dom.find("data-rendered=\"true\"", at + 1)) {
    ++rendered;
  }
  EXPECT_EQ(rendered, 4u);
  EXPECT_NE(dom.find("<td>array.rows=64 array.cols=64</td>"), std::string::npos);
}

}  // namespace

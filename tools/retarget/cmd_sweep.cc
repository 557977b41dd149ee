// `retarget sweep FILE [--target systolic] [--config PRESET|FILE] --set KEY=V1,V2,... [...]
// [--csv OUT] [--html OUT] [-j N] [--point K] [--manifest DIR] [--force]`: the cross product of
// the --set axes over the accelerator's config, each point evaluated by a `retarget sweep-point`
// child process (at most N at a time, a core each by default), progress on stderr, the table as
// CSV on stdout or in OUT, and an HTML page plotting it. --manifest writes the same sweep as a
// Slurm job array and a GNU parallel command file instead of running it (docs/sweep.md).
//
// Guarantees: flags, the target, the config, every value of every axis and the output paths
// are checked before any point runs (unknown targets, presets and keys list the valid ones; an
// existing output is kept unless --force; an output never replaces FILE); the model is loaded
// once up front, so a bad file is one error, not N failed rows. A point whose process crashes or
// times out is retried with the cost model alone (its note says so); a point that still fails
// gets its row with the error and the sweep goes on; the exit status is then 1, after every
// output was written. Rows are in point order whatever -j is, and hold no wall-clock
// figures, so -j 1 and -j 8 write the same CSV.
#include "tools/retarget/cmd_sweep.h"

#include <charconv>
#include <filesystem>
#include <iostream>
#include <set>
#include <thread>

#include "hlo/json_text.h"
#include "hlo/module_io.h"
#include "tools/report/prices.h"
#include "tools/report/report_html.h"
#include "tools/sweep/point_runner.h"
#include "tools/sweep/sweep_csv.h"
#include "tools/sweep/sweep_html.h"
#include "tools/sweep/sweep_manifest.h"
#include "tools/sweep/sweep_space.h"

namespace cli {
namespace {

constexpr int64_t kMaxJobs = 1024;
constexpr double kDefaultTimeoutSeconds = 600;

// The targets `sweep` varies: the systolic accelerator is the only one with an ArchConfig.
void CheckTarget(const ParsedArgs& args) {
  const std::string target = args.Get("--target").value_or("systolic");
  if (target == "systolic") return;
  bool known = false;
  for (const std::string& name : KnownTargets()) known = known || name == target;
  if (known) {
    throw UsageError(
        "sweep varies accelerator parameters: only --target systolic has them, "
        "not '" +
        target + "'");
  }
  throw UsageError("unknown target '" + target + "' (sweep targets: systolic)");
}

std::string ConfigArgument(const ParsedArgs& args) {
  const std::string config = args.Get("--config").value_or("tpu-v1");
  return config;
}

// Refuses an output that names the input or exists (unless --force), before any work.
void CheckOutput(const std::optional<std::string>& path, const ParsedArgs& args) {
  if (!path) return;
  RefuseToOverwriteInputs(*path, args.positional);
  std::error_code ec;
  if (!args.Has("--force") && std::filesystem::exists(*path, ec)) {
    throw hlo::Error(*path + ": already exists (use --force to overwrite)");
  }
}

int JobsArgument(const ParsedArgs& args) {
  if (auto jobs = args.Get("--jobs"))
    return static_cast<int>(ParsePositiveInt("--jobs", *jobs, kMaxJobs));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The flags every point repeats, for sweep-point children and for the manifest's tasks.
std::vector<std::string> SharedPointFlags(const ParsedArgs& args, const std::string& config) {
  std::vector<std::string> flags = {"--config", config};
  if (auto seconds = args.Get("--max-run-seconds")) {
    flags.push_back("--max-run-seconds");
    flags.push_back(*seconds);
  }
  if (args.Has("--estimate-only")) flags.push_back("--estimate-only");
  if (auto prices = args.Get("--prices")) {
    flags.push_back("--prices");
    flags.push_back(std::filesystem::absolute(*prices).string());  // tasks may start elsewhere
  }
  return flags;
}

std::string SelfPath() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw hlo::Error("cannot find the retarget binary (/proc/self/exe): " + ec.message());
  return self.string();
}

// Latencies of different sources are not comparable (the cost model is a roofline; the
// simulator counts every stall and host fallback): say so when one sweep holds both.
void WarnOnMixedSources(const sweep::SweepTable& table) {
  const int source = table.ColumnIndex("latency_source");
  std::set<std::string> sources;
  for (const auto& row : table.rows) {
    if (!row[static_cast<size_t>(source)].empty()) sources.insert(row[static_cast<size_t>(source)]);
  }
  if (sources.size() > 1) {
    std::cerr << "retarget sweep: warning: the points mix simulated and estimated latencies, "
                 "which are not comparable (see the note column; --estimate-only or a larger "
                 "--max-run-seconds makes them one source)\n";
  }
}

int WriteManifest(const ParsedArgs& args, const std::string& dir_arg,
                  const sweep::SweepSpace& space, const std::string& config) {
  // Absolute, without "..": the tasks may start in any directory, on any node.
  auto absolute = [](const std::string& path) {
    return std::filesystem::weakly_canonical(std::filesystem::absolute(path)).string();
  };
  const std::filesystem::path dir = absolute(dir_arg);
  const std::string slurm = (dir / "sweep.sbatch").string();
  const std::string parallel = (dir / "commands.txt").string();
  const bool force = args.Has("--force");
  for (const std::string& path : {slurm, parallel}) CheckOutput(path, args);
  sweep::ManifestSpec spec;
  spec.retarget = SelfPath();
  spec.model = absolute(args.positional[0]);
  std::error_code ec;
  spec.point_args = SharedPointFlags(
      args, std::filesystem::is_regular_file(config, ec) ? absolute(config) : config);
  for (const auto& set : args.all.at("--set")) {
    spec.point_args.push_back("--set");
    spec.point_args.push_back(set);
  }
  spec.points = space.size();
  spec.dir = dir.string();
  for (const char* sub : {"parts", "logs"}) {  // the tasks write there; Slurm needs logs/ to exist
    std::filesystem::create_directories(dir / sub, ec);
    if (ec)
      throw hlo::Error((dir / sub).string() + ": cannot create the directory: " + ec.message());
  }
  WriteOutputFile(slurm, sweep::SlurmScript(spec), force, args.positional);
  WriteOutputFile(parallel, sweep::ParallelCommands(spec), force, args.positional);
  std::cout << "wrote " << slurm << " (Slurm job array of " << spec.points << " tasks)\n"
            << "wrote " << parallel << " (" << spec.points << " commands for GNU parallel)\n"
            << "run:   sbatch " << sweep::ShellQuote(slurm) << "   or   parallel -j 8 < "
            << sweep::ShellQuote(parallel) << "\n"
            << "merge: retarget sweep-merge " << sweep::ShellQuote(spec.dir + "/parts")
            << "/point-*.csv --csv sweep.csv\n";
  return kExitOk;
}

}  // namespace

int64_t ParsePointIndex(const std::string& flag, const std::string& value) {
  int64_t index = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), index);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || index < 0 ||
      index >= sweep::kMaxSweepPoints) {
    throw UsageError(flag + " needs a point index from 0 to " +
                     std::to_string(sweep::kMaxSweepPoints - 1) + ", got '" + value + "'");
  }
  return index;
}

CommandSpec SweepSpec() {
  CommandSpec spec;
  spec.name = "sweep";
  spec.arguments = "FILE";
  spec.summary = "what-if studies over accelerator parameters";
  std::string aliases;
  for (const sweep::KeyAlias& alias : sweep::KeyAliases()) {
    aliases += "  " + std::string(alias.alias) + std::string(12 - alias.alias.size(), ' ') +
               std::string(alias.doc) + "\n";
  }
  spec.details =
      "Evaluates FILE on every point of the cross product of the --set axes (the last axis\n"
      "varies fastest), each point in its own child process, and writes one CSV row per point:\n"
      "point, the swept values, config, latency_ms, latency_source, utilization,\n"
      "host_fallback_share, energy_mj, energy_source, cost_per_1m_usd, error, note. Latency is "
      "'simulated' (the systolic backend\n"
      "on the SystemC simulator) when the cost model estimates at most --max-run-seconds for the\n"
      "point, else 'estimated' (the cost model, as in 'retarget report'). Keys: every key of\n"
      "docs/accelerator.md, and the aliases\n" +
      aliases +
      "A point whose process crashes or hangs (--timeout) is retried with the cost model alone;\n"
      "one that still fails keeps its row with the error (exit status 1 at the end).\n"
      "Guide: docs/sweep.md.\n"
      "\nexamples:\n"
      "  retarget sweep examples/mlp.hlo --set array=16x16,32x32,64x64,128x128\n"
      "  retarget sweep m.hlo --set dram_gbps=10,20,40 --set sram_kib=256,1024 --csv s.csv --html "
      "s.html\n"
      "  retarget sweep m.hlo --set array=64x64,128x128 --manifest cluster/   # Slurm + GNU "
      "parallel\n";
  spec.min_positional = 1;
  spec.max_positional = 1;
  spec.flags = {
      {"--target", "T", "the target whose parameters vary (systolic, the default)", ""},
      {"--config", "PRESET|FILE",
       "the base configuration: tpu-v1 (default), gemmini, tpu-v4-mxu "
       "or a file",
       ""},
      {"--set", "KEY=V1,V2,...", "one axis of the sweep (repeatable)", "", false, true},
      {"--csv", "OUT", "write the table to OUT (default: stdout)", ""},
      {"--html", "OUT", "write a self-contained HTML page plotting the sweep", ""},
      {"--jobs", "N", "points evaluated at once (default: one per core)", "-j"},
      {"--point", "K", "evaluate only point K (what each cluster task runs)", ""},
      {"--manifest", "DIR", "write DIR/sweep.sbatch and DIR/commands.txt instead of running", ""},
      {"--max-run-seconds", "S",
       "simulate points estimated at most S seconds (default " +
           hlo::JsonNumber(sweep::kDefaultMaxSimulatedSeconds) + ")",
       ""},
      {"--estimate-only", "", "never simulate: every figure from the cost model", ""},
      {"--prices", "FILE", "$/hour per target, as 'retarget report --prices' (docs/report.md)", ""},
      {"--timeout", "S", "kill a point running longer than S seconds (default 600)", ""},
      {"--force", "", "replace outputs that exist (never FILE)", ""},
  };
  return spec;
}

int RunSweep(const ParsedArgs& args, const Context&) {
  CheckTarget(args);
  const std::string config = ConfigArgument(args);
  const systolic::ArchConfig base = systolic::LoadArchConfig(config, {});
  std::vector<std::string> sets;
  if (auto it = args.all.find("--set"); it != args.all.end()) sets = it->second;
  if (sets.empty())
    throw UsageError("give at least one --set KEY=V1,V2,... (keys: " + sweep::ValidSweepKeys() +
                     ")");
  const sweep::SweepSpace space = sweep::BuildSweepSpace(sets, base);
  const std::optional<std::string> csv = args.Get("--csv"), html = args.Get("--html");
  if (csv && html && *csv == *html) throw UsageError("--csv and --html name the same file");
  const double timeout = args.Has("--timeout")
                             ? ParseNonNegativeDouble("--timeout", *args.Get("--timeout"))
                             : kDefaultTimeoutSeconds;
  if (auto seconds = args.Get("--max-run-seconds")) {
    ParseNonNegativeDouble("--max-run-seconds", *seconds);  // checked here, used by the children
  }
  if (auto prices = args.Get("--prices")) report::LoadPrices(*prices);  // errors before any point
  const int jobs = JobsArgument(args);
  std::vector<int64_t> indices;
  if (auto point = args.Get("--point")) {
    const int64_t index = ParsePointIndex("--point", *point);
    space.Point(index);  // hlo::Error naming the valid range
    indices.push_back(index);
  }
  if (args.Has("--manifest") && (csv || html || !indices.empty())) {
    throw UsageError("--manifest writes job lists instead of running: no --csv, --html or --point");
  }
  CheckOutput(csv, args);
  CheckOutput(html, args);
  std::string chart_js;
  if (html) chart_js = report::ReadChartJs(report::kDebianChartJs);
  const std::string& file = args.positional[0];
  hlo::LoadedModule loaded = hlo::LoadModule(file);  // one clear error for a bad model
  if (auto manifest = args.Get("--manifest")) return WriteManifest(args, *manifest, space, config);
  if (indices.empty()) {
    for (int64_t k = 0; k < space.size(); ++k) indices.push_back(k);
  }

  std::vector<sweep::SweepPoint> points;
  for (int64_t index : indices) points.push_back(space.Point(index));
  sweep::PointRunOptions run;
  run.binary = SelfPath();
  run.file = file;
  run.shared_flags = SharedPointFlags(args, config);
  run.jobs = jobs;
  run.timeout_seconds = timeout;
  run.retry_estimated = !args.Has("--estimate-only");
  run.progress = &std::cerr;
  std::cerr << "retarget sweep: " << points.size() << " point" << (points.size() == 1 ? "" : "s")
            << " of " << file << ", " << std::min<size_t>(jobs, points.size()) << " at a time\n";
  const std::vector<std::vector<std::string>> results = sweep::RunPoints(points, run);

  const sweep::SweepTable table = sweep::ResultTable(space, points, results);
  WarnOnMixedSources(table);
  bool failed = false;
  for (const auto& result : results)
    failed = failed || !result[sweep::ResultColumn("error")].empty();

  const bool force = args.Has("--force");
  if (csv) {
    WriteOutputFile(*csv, sweep::WriteCsv(table), force, args.positional);
    std::cout << "wrote " << *csv << " (" << table.rows.size() << " points)\n";
  } else {
    std::cout << sweep::WriteCsv(table);
  }
  if (html) {
    const std::string title = std::filesystem::path(file).filename().string();
    WriteOutputFile(*html, sweep::SweepToHtml(table, title, chart_js), force, args.positional);
    std::cout << "wrote " << *html << "\n";
  }
  if (failed) {
    std::cerr << "retarget sweep: error: some points failed (see their error column)\n";
    return kExitFailure;
  }
  return std::cout.flush() ? kExitOk : kExitFailure;
}

}  // namespace cli

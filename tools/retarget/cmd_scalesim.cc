// `retarget scalesim --config X.cfg --topology Y.csv [--gemm] -o DIR [--force]`: reads SCALE-Sim's
// config and topology files, times every layer with the simulator's matrix-unit timing model in
// SCALE-Sim-compatible mode, and writes DIR/COMPUTE_REPORT.csv (docs/scalesim.md). An existing
// report is never replaced without --force; malformed files are FILE:LINE:COL errors (exit 1).
#include "tools/retarget/cmd_scalesim.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "hlo/diagnostic.h"
#include "simulator/scalesim_compat.h"

namespace cli {
namespace {

// Bounds the memory a wrong path (a huge file) can cost; real SCALE-Sim files are a few KiB.
constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{64} << 20;

std::string ReadInputFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw hlo::Error(hlo::SourceLocation{std::make_shared<const std::string>(path), 0, 0},
                     "cannot read (no such file, or not a regular file)");
  }
  if (std::filesystem::file_size(path, ec) > kMaxInputBytes) {
    throw hlo::Error(hlo::SourceLocation{std::make_shared<const std::string>(path), 0, 0},
                     "file too large for a SCALE-Sim input (over 64 MiB)");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw hlo::Error(path + ": read failed");
  return text.str();
}

}  // namespace

CommandSpec ScalesimSpec() {
  CommandSpec spec;
  spec.name = "scalesim";
  spec.summary = "SCALE-Sim-compatible mode (same inputs and report columns)";
  spec.details =
      "Reads a SCALE-Sim v2 config (.cfg) and topology (.csv: conv layers, or GEMM layers\n"
      "`name, M, N, K,` with --gemm) and writes DIR/COMPUTE_REPORT.csv with SCALE-Sim v2's\n"
      "columns: LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %,\n"
      "Compute Util %. Cycles come from the simulator's matrix-unit timing model with folds run\n"
      "back to back and stall-free memory (SCALE-Sim's CALC mode): stall cycles are 0.\n"
      "See docs/scalesim.md for the formulas and the comparison with SCALE-Sim itself.\n"
      "\nexample:\n"
      "  retarget scalesim --config ../shared/anchors/scalesim/configs/scale.cfg \\\n"
      "      --topology ../shared/anchors/scalesim/topologies/NCF.csv --gemm -o out/ncf\n";
  spec.min_positional = 0;
  spec.max_positional = 0;
  spec.flags = {
      {"--config", "X.cfg", "SCALE-Sim configuration", "", /*required=*/true},
      {"--topology", "Y.csv", "SCALE-Sim topology", "", /*required=*/true},
      {"--gemm", "", "the topology lists GEMMs (name, M, N, K)", ""},
      {"--output", "DIR", "report directory (created if missing)", "-o", /*required=*/true},
      {"--force", "", "replace an existing DIR/COMPUTE_REPORT.csv", ""},
  };
  return spec;
}

int RunScalesim(const ParsedArgs& args, const Context&) {
  for (const char* flag : {"--config", "--topology", "--output"}) {
    if (!args.Has(flag)) throw UsageError(std::string("missing ") + flag);
  }
  const std::string config_path = *args.Get("--config");
  const std::string topology_path = *args.Get("--topology");
  const std::string out_dir = *args.Get("--output");

  simulator::ScaleSimConfig config =
      simulator::ParseScaleSimConfig(ReadInputFile(config_path), config_path);
  std::vector<simulator::TopologyLayer> layers = simulator::ParseScaleSimTopology(
      ReadInputFile(topology_path), topology_path, args.Has("--gemm"));
  std::vector<simulator::MxuTiming> timings = simulator::TimeTopology(config, layers);

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec || !std::filesystem::is_directory(out_dir, ec)) {
    throw hlo::Error(out_dir + ": cannot create the report directory");
  }
  const std::string report = (std::filesystem::path(out_dir) / "COMPUTE_REPORT.csv").string();
  WriteOutputFile(report, simulator::FormatComputeReport(timings), args.Has("--force"),
                  {config_path, topology_path});

  int64_t total = 0;
  for (const simulator::MxuTiming& t : timings) total += t.total_cycles;
  std::cout << "scalesim: " << config.run_name << ": " << layers.size() << " layers, "
            << total << " compute cycles (" << config.array.rows << "x" << config.array.cols
            << " " << systolic::DataflowName(config.array.dataflow)
            << ", folds not overlapped, stall-free); wrote " << report << "\n";
  return kExitOk;
}

}  // namespace cli

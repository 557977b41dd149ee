// `retarget sim PROGRAM(.sasm|.bin) [--config PRESET|FILE] [--set k=v]... [--inputs mem.npz]
// [--output mem.npz] [--trace out.json] [--vcd out.vcd] [--stats-json out.json]
// [--max-cycles N] [--force]`: assembles or decodes PROGRAM, places the --inputs arrays in the
// accelerator's memories (sim_memory_io.h), simulates, prints a summary and writes the outputs.
//
// Guarantees: every output file is checked before the run (never replaced without --force,
// never one of the inputs, no two flags naming the same file) and written through a temporary
// file renamed at the end, so a failed run leaves no half-written file. Traces stream to disk while
// the simulation runs (bounded memory). Bad programs, configs and memory files are hlo::Errors
// (exit 1, `FILE:LINE:COL: error: ...` for .sasm); flag mistakes are usage errors (exit 2).
#include "tools/retarget/cmd_sim.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "hlo/diagnostic.h"
#include "simulator/sim_stats_json.h"
#include "simulator/simulator.h"
#include "simulator/trace.h"
#include "simulator/isa/arch_config.h"
#include "simulator/isa/assembler.h"
#include "simulator/isa/encoding.h"
#include "tools/retarget/run_support.h"
#include "tools/retarget/sim_memory_io.h"

namespace cli {
namespace {

// Bounds what a wrong path costs; a million-instruction .sasm is about 60 MiB.
constexpr std::uintmax_t kMaxProgramBytes = std::uintmax_t{256} << 20;
constexpr int64_t kMaxCyclesLimit = int64_t{1} << 62;

struct SimCommandOptions {
  std::string program;
  std::string config = "tpu-v1";
  std::vector<std::string> overrides;
  std::optional<std::string> inputs, output, trace, vcd, stats_json;
  int64_t max_cycles = simulator::SimOptions{}.max_cycles;
  bool force = false;
};

SimCommandOptions ReadOptions(const ParsedArgs& args) {
  SimCommandOptions options;
  options.program = args.positional[0];
  options.config = args.Get("--config").value_or(options.config);
  if (auto it = args.all.find("--set"); it != args.all.end()) options.overrides = it->second;
  options.inputs = args.Get("--inputs");
  options.output = args.Get("--output");
  options.trace = args.Get("--trace");
  options.vcd = args.Get("--vcd");
  options.stats_json = args.Get("--stats-json");
  if (auto limit = args.Get("--max-cycles")) {
    options.max_cycles = ParsePositiveInt("--max-cycles", *limit, kMaxCyclesLimit);
  }
  options.force = args.Has("--force");
  return options;
}

hlo::Error FileError(const std::string& path, const std::string& message) {
  return hlo::Error(hlo::SourceLocation{std::make_shared<const std::string>(path), 0, 0}, message);
}

systolic::Program LoadProgram(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw FileError(path, "cannot read (no such file, or not a regular file)");
  }
  if (std::filesystem::file_size(path, ec) > kMaxProgramBytes) {
    throw FileError(path, "file too large for a program (over 256 MiB)");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in && !in.eof()) throw FileError(path, "read failed");
  // .bin is the binary format of encoding.h; anything else is assembly text.
  if (std::filesystem::path(path).extension() == ".bin") {
    return systolic::ReadBinary(bytes.str(), path);
  }
  return systolic::Assemble(bytes.str(), path);
}

// Every output is checked before the (possibly long) run, so a mistake costs nothing.
void CheckOutputs(const SimCommandOptions& options) {
  std::vector<std::string> inputs = {options.program};
  if (options.inputs) inputs.push_back(*options.inputs);
  std::error_code ec;
  if (std::filesystem::is_regular_file(options.config, ec)) inputs.push_back(options.config);
  std::vector<std::filesystem::path> outputs;  // resolved, so ./x and x compare equal
  for (const auto* output : {&options.output, &options.trace, &options.vcd, &options.stats_json}) {
    if (!*output) continue;
    // Made absolute first: libstdc++'s weakly_canonical leaves "x" relative but not "./x".
    std::filesystem::path resolved = std::filesystem::absolute(**output, ec).lexically_normal();
    if (!ec) resolved = std::filesystem::weakly_canonical(resolved, ec).lexically_normal();
    if (ec) resolved = std::filesystem::path(**output).lexically_normal();
    for (const std::filesystem::path& earlier : outputs) {
      if (earlier == resolved) {
        throw UsageError("two outputs name the same file '" + **output + "'");
      }
    }
    outputs.push_back(resolved);
    RefuseToOverwriteInputs(**output, inputs);
    if (!options.force && std::filesystem::exists(**output, ec)) {
      throw hlo::Error(**output + ": already exists (use --force to overwrite)");
    }
  }
}

// An output file written under a temporary name and renamed into place by Commit(); dropped
// (removed) if the run fails first.
class StagedFile {
 public:
  explicit StagedFile(std::string path)
      : path_(std::move(path)), temporary_(path_ + ".tmp" + std::to_string(getpid())) {}
  ~StagedFile() {
    if (!committed_) {
      stream_.close();
      std::error_code ec;
      std::filesystem::remove(temporary_, ec);
    }
  }
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  std::ostream& Open() {
    stream_.open(temporary_, std::ios::binary | std::ios::trunc);
    if (!stream_) throw hlo::Error(path_ + ": cannot write");
    return stream_;
  }
  const std::string& temporary() const { return temporary_; }
  void Commit() {
    if (stream_.is_open()) {
      stream_.close();
      if (!stream_) throw hlo::Error(path_ + ": write failed (disk full?)");
    }
    std::error_code ec;
    std::filesystem::rename(temporary_, path_, ec);
    if (ec) throw hlo::Error(path_ + ": cannot write (" + ec.message() + ")");
    committed_ = true;
  }

 private:
  std::string path_, temporary_;
  std::ofstream stream_;
  bool committed_ = false;
};

}  // namespace

CommandSpec SimSpec() {
  CommandSpec spec;
  spec.name = "sim";
  spec.arguments = "PROGRAM";
  spec.summary = "run a systolic-array program (.sasm or .bin) on the simulator";
  spec.details =
      "PROGRAM is assembly text (.sasm, docs/isa.md) or the binary format (.bin). The machine\n"
      "is --config (a preset: tpu-v1 (default), gemmini, tpu-v4-mxu; or a `key = value` file)\n"
      "with --set overrides applied in order (keys: docs/accelerator.md).\n"
      "Memory files (.npz): an array named dram@0xADDR, ub@0xADDR or acc@0xADDR holds bytes\n"
      "placed at that byte address (row-major, little-endian, any dtype). --output writes every\n"
      "--inputs array back with its contents after the run (same name, dtype, shape), plus one\n"
      "u8 array dram@0xADDR per contiguous DRAM range the program wrote outside the inputs (give\n"
      "a zero array of the right dtype at a result's address to get it typed).\n"
      "Prints cycles, time, MAC utilization, busy % per unit, stalls, bytes and energy.\n"
      "--trace writes Chrome/Perfetto trace-event JSON (open in ui.perfetto.dev), --vcd a\n"
      "waveform, --stats-json every statistic (docs/simulator-output.md).\n"
      "\nexamples:\n"
      "  retarget sim examples/systolic/matmul_tile.sasm --config gemmini --trace trace.json\n"
      "  retarget sim prog.bin --set array.rows=64 --set array.cols=64 --inputs mem.npz \\\n"
      "      --output result.npz --stats-json stats.json --vcd waves.vcd\n";
  spec.min_positional = 1;
  spec.max_positional = 1;
  spec.flags = {
      {"--config", "PRESET|FILE", "accelerator configuration (default tpu-v1)", ""},
      {"--set", "K=V", "override one configuration key (repeatable)", "", false, true},
      {"--inputs", "MEM.npz", "initial memory contents (dram@0x..., ub@0x..., acc@0x...)", ""},
      {"--output", "MEM.npz", "write the input arrays and the DRAM the program wrote", "-o"},
      {"--trace", "OUT.json", "write a Chrome/Perfetto trace", ""},
      {"--vcd", "OUT.vcd", "write a value-change dump", ""},
      {"--stats-json", "OUT", "write cycle, byte and energy statistics as JSON", ""},
      {"--max-cycles", "N", "fail if the program runs longer than N cycles", ""},
      {"--force", "", "replace existing output files (inputs are never replaced)", ""},
  };
  return spec;
}

int RunSim(const ParsedArgs& args, const Context&) {
  const SimCommandOptions options = ReadOptions(args);
  CheckOutputs(options);
  const systolic::ArchConfig config = systolic::LoadArchConfig(options.config, options.overrides);
  const systolic::Program program = LoadProgram(options.program);

  simulator::Memories memories(config);
  std::vector<io::NpyArray> inputs;
  if (options.inputs) {
    inputs = io::ReadNpz(*options.inputs);
    LoadMemoryInputs(inputs, *options.inputs, memories);
  }

  // Trace writers stream into their temporary files while the simulation runs.
  std::optional<StagedFile> trace_file, vcd_file;
  std::unique_ptr<simulator::ChromeTraceWriter> chrome;
  std::unique_ptr<simulator::VcdWriter> vcd;
  std::vector<simulator::TraceSink*> sinks;
  if (options.trace) {
    trace_file.emplace(*options.trace);
    chrome = std::make_unique<simulator::ChromeTraceWriter>(trace_file->Open(), config.clock_mhz,
                                                            "retarget sim " + config.name);
    sinks.push_back(chrome.get());
  }
  if (options.vcd) {
    vcd_file.emplace(*options.vcd);
    vcd = std::make_unique<simulator::VcdWriter>(vcd_file->Open(), config.clock_mhz);
    sinks.push_back(vcd.get());
  }
  simulator::FanOutSink fan_out(sinks);
  simulator::SimOptions sim_options;
  sim_options.max_cycles = options.max_cycles;
  if (!sinks.empty()) sim_options.trace = &fan_out;

  simulator::SimStats stats;
  {
    Heartbeat heartbeat("simulating " + options.program);
    stats = simulator::Simulate(program, config, memories, sim_options);
  }
  if (!sinks.empty()) fan_out.Finish(stats.cycles);  // a no-op if the simulator already did
  std::cout << simulator::SimStatsSummary(stats, config);

  if (chrome && !chrome->ok()) throw hlo::Error(*options.trace + ": write failed (disk full?)");
  if (vcd && !vcd->ok()) throw hlo::Error(*options.vcd + ": write failed (disk full?)");
  // CheckOutputs vetted every path before the run; Commit renames over the checked path.
  if (trace_file) trace_file->Commit();
  if (vcd_file) vcd_file->Commit();
  if (options.stats_json) {
    WriteOutputFile(*options.stats_json, simulator::SimStatsJson(stats, config, options.program),
                    options.force, {options.program});
  }
  if (options.output) {
    StagedFile output(*options.output);
    io::WriteNpz(output.temporary(), CollectMemoryOutputs(inputs, memories));
    output.Commit();
  }
  for (const auto* path : {&options.trace, &options.vcd, &options.stats_json, &options.output}) {
    if (*path) std::cout << "wrote " << **path << "\n";
  }
  return kExitOk;
}

}  // namespace cli

// The systolic Backend and Executable (targets/systolic/systolic_backend.h).
#include "targets/systolic/systolic_backend.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "hlo/multi_device.h"
#include "hlo/progress.h"
#include "simulator/replay.h"
#include "simulator/simulator.h"
#include "targets/systolic/chip_links.h"
#include "targets/systolic/lowering/lowering.h"
#include "targets/systolic/description.h"

namespace targets {
namespace {

using systolic::lowering::AcceleratorStep;
using systolic::lowering::BranchStep;
using systolic::lowering::DramBuffer;
using systolic::lowering::HostStep;
using systolic::lowering::LoopStep;

// A mapped host array still as it was comes back without a copy (simulator/memory.h).
hlo::Literal ReadBuffer(const simulator::Dram& dram, const DramBuffer& buffer) {
  if (std::optional<hlo::Literal> mapped = dram.MappedArray(buffer.address, buffer.shape))
    return std::move(*mapped);
  hlo::Literal literal(buffer.shape);
  dram.Read(buffer.address, literal.mutable_bytes());
  return literal;
}

// Rebuilds a (possibly nested tuple) literal of `shape` from its leaves, depth-first.
hlo::Literal Assemble(const hlo::Shape& shape, const simulator::Dram& dram,
                      const std::vector<DramBuffer>& leaves, size_t& next) {
  if (!shape.IsTuple()) return ReadBuffer(dram, leaves.at(next++));
  std::vector<hlo::Literal> elements;
  for (const hlo::Shape& element : shape.tuple_shapes) {
    elements.push_back(Assemble(element, dram, leaves, next));
  }
  return hlo::Literal::Tuple(std::move(elements));
}

// Host values (the run's inputs, host steps' results) are mapped into DRAM, not copied: the
// weights of a model are held once, by the host (simulator/memory.h).
void MapLeaves(simulator::Dram& dram, const hlo::Literal& literal,
               const std::vector<DramBuffer>& leaves, size_t& next) {
  if (!literal.IsTuple()) {
    dram.Map(leaves.at(next++).address, literal);
    return;
  }
  for (const hlo::Literal& element : literal.elements()) MapLeaves(dram, element, leaves, next);
}

// SystemC's kernel is one per process: the chips of a multi-chip run simulate their segments
// one at a time (a chip waiting at a collective holds no segment).
std::mutex simulation_turn;

// Forwards a segment's events shifted by the cycles the run spent before it.
class ShiftedTrace final : public simulator::TraceSink {
 public:
  ShiftedTrace(simulator::TraceSink& sink, int64_t offset) : sink_(sink), offset_(offset) {}
  void Busy(systolic::Unit unit, int64_t start, int64_t end, size_t index,
            std::string_view mnemonic) override {
    sink_.Busy(unit, start + offset_, end + offset_, index, mnemonic);
  }
  void Stall(systolic::Unit unit, int64_t start, int64_t end, std::string_view cause) override {
    sink_.Stall(unit, start + offset_, end + offset_, cause);
  }
  void Counter(std::string_view name, int64_t cycle, double value) override {
    sink_.Counter(name, cycle + offset_, value);
  }
  void Finish(int64_t) override {}  // the run finishes the real sink once

 private:
  simulator::TraceSink& sink_;
  int64_t offset_;
};

// What a run (or a loop's condition / body run) adds up.
struct Totals {
  // macs: the model's multiply-adds (lowering.h, AcceleratorStep::useful_macs); executed_macs:
  // what the array ran, padding included (a convolution's dropped columns, partial tiles).
  int64_t accelerator_cycles = 0, macs = 0, executed_macs = 0, vector_ops = 0, segments = 0,
          iterations = 0;
  // What loops pay per trip besides their bodies' work (RunLoop), in clock cycles: the state's
  // DMA, and reading the predicate: the host's batch under host control, the condition's
  // ctrl.test on the device. device_iterations: the trips of loops on the device;
  // device_branches: the conditionals the control unit chose.
  int64_t loop_control_cycles = 0, device_iterations = 0, device_branches = 0;
  // Segment runs whose counts were taken from their first simulated run (simulator/replay.h).
  int64_t replayed_segments = 0;
  int64_t dram_read = 0, dram_written = 0, ub_read = 0, ub_written = 0, acc_read = 0,
          acc_written = 0;
  double energy_pj = 0, host_seconds = 0, host_bytes = 0;
  // Multi-chip runs (chip_links.h): collectives over the links, the link time, the cycles spent
  // waiting for the group's last chip, the bytes sent.
  int64_t collectives = 0, link_cycles = 0, wait_cycles = 0;
  double link_bytes = 0;
  void Add(const simulator::SimStats& s) {
    accelerator_cycles += s.cycles;
    executed_macs += s.macs;
    vector_ops += s.vector_element_ops;
    dram_read += s.dram_bytes_read;
    dram_written += s.dram_bytes_written;
    ub_read += s.ub_bytes_read;
    ub_written += s.ub_bytes_written;
    acc_read += s.acc_bytes_read;
    acc_written += s.acc_bytes_written;
    energy_pj += s.total_energy_pj();
  }
};

// Lowers `module` and checks that no op without accelerator program is one the description
// calls native (lowering.h, CheckHostStepsAgainst).
systolic::lowering::LoweredModule LowerChecked(const hlo::Module& module,
                                               const systolic::ArchConfig& config) {
  systolic::lowering::LoweredModule lowered = systolic::lowering::Lower(module, config);
  systolic::lowering::CheckHostStepsAgainst(module, lowered, targets::SystolicDescription());
  return lowered;
}

// Runs one lowered module (the entry, or a loop's condition or body): its host steps on the
// host backend, its loops through runners of their own. The memories are allocated once and
// reused by every run (a loop runs its body once per iteration); each run writes its inputs and
// constants first, and nothing reads what a previous run left (the zero region is never
// written).
class LoweredRunner {
 public:
  LoweredRunner(const systolic::ArchConfig& config,
                std::shared_ptr<const systolic::lowering::LoweredModule> lowered, Backend* host)
      : config_(config), lowered_(std::move(lowered)), recorded_(lowered_->steps.size()) {
    for (const auto& step : lowered_->steps) {
      if (const auto* host_step = std::get_if<HostStep>(&step)) {
        if (!host) {
          throw hlo::Error("instruction " + host_step->instruction +
                           " needs the host, but the systolic backend has no host backend");
        }
        host_executables_.push_back(host->Compile(*host_step->module));
      } else if (const auto* loop = std::get_if<LoopStep>(&step)) {
        loops_.push_back({CalledRunner(*loop->condition, loop->lowered_condition, host),
                          CalledRunner(*loop->body, loop->lowered_body, host)});
      } else if (const auto* branch_step = std::get_if<BranchStep>(&step)) {
        std::vector<std::unique_ptr<LoweredRunner>> branches;
        for (size_t b = 0; b < branch_step->branches.size(); ++b) {
          branches.push_back(CalledRunner(*branch_step->branches[b],
                                        branch_step->lowered_branches.at(b), host));
        }
        branches_.push_back(std::move(branches));
      }
    }
  }

  const systolic::lowering::LoweredModule& lowered() const { return *lowered_; }

  hlo::Literal Run(std::span<const hlo::Literal> inputs, Totals& totals,
                   simulator::TraceSink* trace) {
    if (inputs.size() != lowered_->parameters.size()) {
      throw hlo::Error("expected " + std::to_string(lowered_->parameters.size()) + " inputs, got " +
                       std::to_string(inputs.size()));
    }
    simulator::Memories& memories = Memories();
    for (size_t i = 0; i < inputs.size(); ++i) {
      size_t next = 0;
      MapLeaves(memories.dram, inputs[i], lowered_->parameters[i], next);
    }
    RunSteps(totals, trace);
    size_t next = 0;
    return Assemble(lowered_->result_shape, memories.dram, lowered_->result, next);
  }

  // A segment's run: its counts, and the flag of a loop condition's ctrl.test.
  void Account(const simulator::SimStats& stats, const AcceleratorStep& step, Totals& totals) {
    totals.Add(stats);
    if (stats.test_flag) {
      test_flag_ = stats.test_flag;
      test_cycles_ = stats.test_cycles;
    }
    if (stats.branch_index) {
      branch_index_ = stats.branch_index;
      test_cycles_ = stats.test_cycles;
    }
    totals.macs += step.useful_macs;
    ++totals.segments;
  }

  // Runs with the parameters already in this runner's DRAM (a loop keeps its state there):
  // the result leaves are left at lowered().result.
  void RunInPlace(Totals& totals) { RunSteps(totals, nullptr); }

  simulator::Memories& Memories() {
    if (!memories_) memories_.emplace(config_);
    return *memories_;
  }

 private:
  // Writes the constants and runs every step.
  void RunSteps(Totals& totals, simulator::TraceSink* trace) {
    simulator::Memories& memories = Memories();
    for (const auto& [buffer, literal] : lowered_->constants) {
      memories.dram.Write(buffer.address, literal.bytes());
    }
    size_t host_index = 0, loop_index = 0, branch_index = 0, segment_index = 0;
    test_flag_.reset();
    branch_index_.reset();
    for (const auto& step : lowered_->steps) {
      const int64_t now = Now(totals);
      if (const auto* accel = std::get_if<AcceleratorStep>(&step)) {
        std::optional<simulator::SimStats>& recorded = recorded_[segment_index++];
        if (recorded && trace == nullptr) {  // simulated before, and its time cannot differ
          simulator::SimStats stats = *recorded;
          simulator::Replay(accel->program, config_, memories, stats);
          Account(stats, *accel, totals);
          ++totals.replayed_segments;
          continue;
        }
        std::optional<ShiftedTrace> shifted;
        simulator::SimOptions options;
        if (trace) options.trace = &shifted.emplace(*trace, now);
        std::lock_guard<std::mutex> turn(simulation_turn);
        const simulator::SimStats stats =
            simulator::Simulate(accel->program, config_, memories, options);
        if (simulator::TimingIsDataIndependent(accel->program)) recorded = stats;
        Account(stats, *accel, totals);
        continue;
      }
      std::string name;
      if (const auto* host = std::get_if<HostStep>(&step)) {
        RunHost(*host, *host_executables_[host_index++], memories, totals);
        name = host->instruction;
      } else if (const auto* loop = std::get_if<LoopStep>(&step)) {
        RunLoop(*loop, loops_[loop_index++], memories, totals);
        name = loop->instruction;
      } else {
        const BranchStep& branch = std::get<BranchStep>(step);
        RunBranch(branch, branches_[branch_index++], memories, totals);
        name = branch.instruction;
      }
      if (trace) trace->Busy(systolic::Unit::kControl, now, Now(totals), 0, "host:" + name);
    }
  }

 public:
  int64_t HostCycles(double seconds) const {
    return static_cast<int64_t>(seconds * config_.clock_mhz * 1e6 + 0.5);
  }
  // The chip's clock: its simulated cycles, the host's work, its links and its waits.
  int64_t Now(const Totals& totals) const {
    return totals.accelerator_cycles + HostCycles(totals.host_seconds) + totals.link_cycles +
           totals.wait_cycles;
  }
  // What the last ctrl.test of the latest run read, and its cycles (a loop condition's).
  std::optional<bool> test_flag() const { return test_flag_; }
  int64_t test_cycles() const { return test_cycles_; }
  // The chip this runner runs as in a multi-chip run (nullptr: one chip); loop bodies and
  // branches run as the same chip.
  void SetDevice(const hlo::DeviceView* device) {
    device_ = device;
    for (Loop& loop : loops_) {
      loop.condition->SetDevice(device);
      loop.body->SetDevice(device);
    }
    for (auto& branches : branches_) {
      for (auto& branch : branches) branch->SetDevice(device);
    }
  }

 private:
  struct Loop {
    std::unique_ptr<LoweredRunner> condition, body;
  };

  // A loop's condition or body, or a branch, lowered with its step (lowering.h).
  std::unique_ptr<LoweredRunner> CalledRunner(
      const hlo::Module& module, std::shared_ptr<const systolic::lowering::LoweredModule> lowered,
      Backend* host) {
    systolic::lowering::CheckHostStepsAgainst(module, *lowered, targets::SystolicDescription());
    return std::make_unique<LoweredRunner>(config_, std::move(lowered), host);
  }

  // Operands travel to the host and the result back over the host link; each step also pays
  // the fixed cost of one host-issued batch (targets/systolic/description.cc's figures).
  // On several chips, a collective's chips first wait for the group's last one, then exchange
  // over the links (chip_links.h); replica-id and partition-id answer for this chip.
  void RunHost(const HostStep& step, Executable& executable, simulator::Memories& memories,
               Totals& totals) {
    std::vector<hlo::Literal> operands;
    double bytes = 0;
    for (size_t i = 0; i < step.operands.size(); ++i) {
      size_t next = 0;
      const hlo::Shape& shape = step.module->entry()->parameter(static_cast<int64_t>(i))->shape();
      operands.push_back(Assemble(shape, memories.dram, step.operands[i], next));
      for (const DramBuffer& leaf : step.operands[i]) bytes += static_cast<double>(leaf.bytes());
    }
    const hlo::Instruction& root = *step.module->entry()->root();
    const bool per_chip = device_ != nullptr &&
                          hlo::OpcodeClass(root.opcode()) == hlo::OpClass::kCollective;
    const bool exchanges = per_chip && root.opcode() != hlo::Opcode::kPartitionId &&
                           root.opcode() != hlo::Opcode::kReplicaId;
    std::vector<int64_t> group;
    if (exchanges) {
      group = hlo::CollectiveGroup(root, device_->grid, device_->device);
      const int64_t now = Now(totals);
      totals.wait_cycles += LastArrival(root, *device_, group, now) - now;
    }
    hlo::Literal result = per_chip ? executable.RunAsDevice(operands, *device_)
                                   : executable.Run(operands);
    size_t next = 0;
    MapLeaves(memories.dram, result, step.result, next);
    for (const DramBuffer& leaf : step.result) bytes += static_cast<double>(leaf.bytes());
    if (group.size() > 1 && config_.link_bandwidth_gbps > 0) {
      const LinkCost link = CollectiveLinkCost(root, static_cast<int64_t>(group.size()), config_);
      ++totals.collectives;
      totals.link_cycles += link.cycles;
      totals.link_bytes += link.bytes_sent;
      totals.energy_pj += link.energy_pj;
      return;
    }
    const compiler::PeakRates& peak = targets::SystolicDescription().peak;
    totals.host_bytes += bytes;
    totals.host_seconds += bytes / peak.host_link_bytes_per_second + peak.kernel_launch_seconds;
  }

  // The predicate is read each iteration: on the device by the condition's ctrl.test (the
  // control unit's loop sequencer goes on while its flag is set), under host control by the
  // host (one host-issued batch). The loop state lives in the body's DRAM from the first trip
  // to the last: each trip moves only the leaves the body computes (result to parameter,
  // within that DRAM) and the leaves the condition reads (into the condition's DRAM), charged
  // at the DRAM bandwidth.
  void RunLoop(const LoopStep& step, Loop& loop, simulator::Memories& memories, Totals& totals) {
    const int64_t max_iterations = hlo::GlobalLimits().max_while_iterations;
    LoweredRunner& condition = *loop.condition;
    LoweredRunner& body = *loop.body;
    const std::vector<DramBuffer>& condition_state = condition.lowered().parameters.at(0);
    const std::vector<DramBuffer>& body_state = body.lowered().parameters.at(0);
    const std::vector<DramBuffer>& body_result = body.lowered().result;
    simulator::Dram& condition_dram = condition.Memories().dram;
    simulator::Dram& body_dram = body.Memories().dram;
    const std::vector<size_t> read_by_condition = LeavesRead(*step.condition, body_state.size());
    for (size_t i = 0; i < step.state.size(); ++i)
      CopyBytes(memories.dram, step.state[i], body_dram, body_state.at(i));
    for (size_t leaf : read_by_condition)
      CopyBytes(memories.dram, step.state.at(leaf), condition_dram, condition_state.at(leaf));
    // Leaves the body computes (a pass-through leaf is its parameter's own bytes).
    std::vector<size_t> computed;
    for (size_t i = 0; i < body_result.size(); ++i) {
      if (body_result[i].address != body_state.at(i).address) computed.push_back(i);
    }
    std::vector<std::vector<uint8_t>> staged(computed.size());
    // Leaves the condition reads that change from trip to trip: the only ones it receives again.
    std::vector<size_t> refreshed;
    for (size_t leaf : read_by_condition)
      if (std::find(computed.begin(), computed.end(), leaf) != computed.end())
        refreshed.push_back(leaf);
    // What a trip costs besides the bodies' work: the host's batch reading the predicate, and
    // the DMA of what moves — the computed leaves, result to parameter (read and written), and
    // those of them the condition reads. A leaf the body passes through stays where it is.
    double computed_bytes = 0, refreshed_bytes = 0;
    for (size_t leaf : computed) computed_bytes += static_cast<double>(body_result[leaf].bytes());
    for (size_t leaf : refreshed)
      refreshed_bytes += static_cast<double>(body_state[leaf].bytes());
    const double dram_bytes_per_cycle = config_.dram_bandwidth_gbps * 1e3 / config_.clock_mhz;
    const int64_t condition_dma_cycles =
        static_cast<int64_t>(refreshed_bytes / dram_bytes_per_cycle);
    const int64_t body_dma_cycles = static_cast<int64_t>(2 * computed_bytes / dram_bytes_per_cycle);
    const compiler::PeakRates& peak = targets::SystolicDescription().peak;
    const double batch_seconds = 1 / peak.host_link_bytes_per_second + peak.kernel_launch_seconds;
    const int64_t batch_cycles = HostCycles(batch_seconds);
    uint8_t go = 0;
    hlo::LoopProgressScope progress(step.instruction);
    for (int64_t i = 0;; ++i) {
      progress.Trip(i);
      if (i >= max_iterations) {
        throw hlo::Error("while " + step.instruction + " ran more than " +
                         std::to_string(max_iterations) + " iterations");
      }
      condition.RunInPlace(totals);
      if (step.on_device) {
        const std::optional<bool> flag = condition.test_flag();
        if (!flag) {
          throw hlo::Error("while " + step.instruction +
                           " runs on the device, but its condition ran no ctrl.test");
        }
        go = *flag ? 1 : 0;
        totals.loop_control_cycles += condition.test_cycles() + condition_dma_cycles;
        if (go != 0) ++totals.device_iterations;
      } else {
        condition_dram.Read(condition.lowered().result.at(0).address,
                            std::span<uint8_t>(&go, 1));
        totals.host_seconds += batch_seconds;
        totals.host_bytes += 1;
        totals.loop_control_cycles += batch_cycles + condition_dma_cycles;
      }
      totals.accelerator_cycles += condition_dma_cycles;
      if (go == 0) break;
      body.RunInPlace(totals);
      // The carry: every computed leaf read before any is written (a body may swap leaves).
      for (size_t k = 0; k < computed.size(); ++k) {
        staged[k].resize(static_cast<size_t>(body_result[computed[k]].bytes()));
        body_dram.Read(body_result[computed[k]].address, staged[k]);
      }
      for (size_t k = 0; k < computed.size(); ++k) {
        body_dram.Write(body_state[computed[k]].address, staged[k]);
      }
      for (size_t leaf : refreshed) {
        CopyBytes(body_dram, body_state[leaf], condition_dram, condition_state.at(leaf));
      }
      totals.accelerator_cycles += body_dma_cycles;
      totals.loop_control_cycles += body_dma_cycles;
      ++totals.iterations;
    }
    for (size_t i = 0; i < step.result.size(); ++i) {
      CopyBytes(body_dram, body_state.at(i), memories.dram, step.result[i]);
    }
  }

  // One array leaf from one DRAM to another; a mapped host array is mapped again (no copy).
  void CopyBytes(const simulator::Dram& from, const DramBuffer& source, simulator::Dram& to,
                 const DramBuffer& destination) {
    if (std::optional<hlo::Literal> mapped = from.MappedArray(source.address, source.shape)) {
      to.Map(destination.address, *mapped);
      return;
    }
    scratch_.resize(static_cast<size_t>(source.bytes()));
    from.Read(source.address, scratch_);
    to.Write(destination.address, scratch_);
  }

  // The leaves of a loop condition's parameter it reads: for a flat tuple read only through
  // get-tuple-element, those elements (a get-tuple-element nothing uses reads nothing);
  // otherwise all `count` leaves.
  static std::vector<size_t> LeavesRead(const hlo::Module& condition, size_t count) {
    std::vector<size_t> all(count);
    for (size_t i = 0; i < count; ++i) all[i] = i;
    const hlo::Instruction* state = condition.entry()->parameter(0);
    if (!state->shape().IsTuple()) return all;
    for (const hlo::Shape& element : state->shape().tuple_shapes) {
      if (!element.IsArray()) return all;
    }
    std::set<size_t> read;
    for (const hlo::Instruction* user : state->users()) {
      if (user->opcode() != hlo::Opcode::kGetTupleElement) return all;
      if (user->users().empty() && user != condition.entry()->root()) continue;
      read.insert(static_cast<size_t>(user->attr<hlo::TupleIndexAttrs>().index));
    }
    return std::vector<size_t>(read.begin(), read.end());
  }

  // The selector is read by the control unit (the ctrl.test / ctrl.index that ended the program
  // before, on the device) or by the host (one host-issued batch), and the chosen branch runs;
  // its operand and result move by DMA (charged at the DRAM bandwidth).
  void RunBranch(const BranchStep& step, std::vector<std::unique_ptr<LoweredRunner>>& branches,
                 simulator::Memories& memories, Totals& totals) {
    const int64_t count = static_cast<int64_t>(branches.size());
    int64_t index = 0;
    if (step.on_device) {
      if (branch_index_) {
        index = *branch_index_;
      } else if (test_flag_) {
        index = *test_flag_ ? 0 : 1;
      } else {
        throw hlo::Error("conditional " + step.instruction +
                         " runs on the device, but no ctrl.test or ctrl.index read its selector");
      }
      test_flag_.reset();
      branch_index_.reset();
      ++totals.device_branches;  // the ctrl.* cycles are its program's
    } else {
      const hlo::Literal selector = ReadBuffer(memories.dram, step.selector.at(0));
      index = selector.GetAsInt64(0);
      if (selector.shape().type == hlo::PrimitiveType::kPred) index = index != 0 ? 0 : 1;
      const compiler::PeakRates& peak = targets::SystolicDescription().peak;
      totals.host_seconds += 1 / peak.host_link_bytes_per_second + peak.kernel_launch_seconds;
      totals.host_bytes += 1;
    }
    if (index < 0 || index >= count) index = count - 1;
    LoweredRunner& branch = *branches[static_cast<size_t>(index)];
    const std::vector<DramBuffer>& operand = step.operands.at(static_cast<size_t>(index));
    size_t next = 0;  // a branch computation has exactly one parameter
    hlo::Literal input =
        Assemble(branch.lowered().parameter_shapes.at(0), memories.dram, operand, next);
    hlo::Literal result = branch.Run(std::span<const hlo::Literal>(&input, 1), totals, nullptr);
    next = 0;
    MapLeaves(memories.dram, result, step.result, next);
    double bytes = 0;
    for (const DramBuffer& leaf : operand) bytes += static_cast<double>(leaf.bytes());
    for (const DramBuffer& leaf : step.result) bytes += static_cast<double>(leaf.bytes());
    totals.accelerator_cycles +=
        static_cast<int64_t>(bytes * config_.clock_mhz / (config_.dram_bandwidth_gbps * 1e3));
  }

  const systolic::ArchConfig& config_;
  std::shared_ptr<const systolic::lowering::LoweredModule> lowered_;
  std::vector<std::unique_ptr<Executable>> host_executables_;  // one per host step, in order
  std::vector<Loop> loops_;                                     // one per loop step, in order
  std::vector<std::vector<std::unique_ptr<LoweredRunner>>> branches_;  // per branch step
  std::optional<simulator::Memories> memories_;
  std::vector<uint8_t> scratch_;  // CopyBytes
  const hlo::DeviceView* device_ = nullptr;  // SetDevice
  std::optional<bool> test_flag_;            // test_flag()
  std::optional<int64_t> branch_index_;      // a ctrl.index's, for the branch step after it
  // Per step, a segment's first simulated run when its time cannot depend on its data
  // (simulator/replay.h): later runs replay its data effects and take these counts.
  std::vector<std::optional<simulator::SimStats>> recorded_;
  int64_t test_cycles_ = 0;
};

class SystolicExecutable final : public Executable {
 public:
  SystolicExecutable(systolic::ArchConfig config, systolic::lowering::LoweredModule lowered,
                     Backend* host, simulator::TraceSink* trace)
      : config_(std::move(config)), runner_(config_,
                std::make_shared<const systolic::lowering::LoweredModule>(std::move(lowered)),
                host), trace_(trace) {}

  hlo::Literal Run(std::span<const hlo::Literal> inputs) override {
    return RunOn(inputs, nullptr);
  }
  // One chip of a multi-chip system; the trace (when given) follows chip 0.
  hlo::Literal RunAsDevice(std::span<const hlo::Literal> inputs,
                           const hlo::DeviceView& device) override {
    if (device.device != 0) trace_ = nullptr;
    return RunOn(inputs, &device);
  }

  hlo::Literal RunOn(std::span<const hlo::Literal> inputs, const hlo::DeviceView* device) {
    auto start = std::chrono::steady_clock::now();
    Totals totals;
    simulator::TraceSink* trace = std::exchange(trace_, nullptr);  // the first Run only
    runner_.SetDevice(device);
    hlo::Literal result = runner_.Run(inputs, totals, trace);
    runner_.SetDevice(nullptr);
    if (trace) trace->Finish(runner_.Now(totals));
    Record(totals);
    profile_.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    return result;
  }

  Profile profile() const override { return profile_; }
  std::map<std::string, std::string> artifacts() const override {
    return {{"program.sasm", runner_.lowered().Assembly()}};
  }

 private:
  void Record(const Totals& t) {
    const double hz = config_.clock_mhz * 1e6;
    const int64_t host_cycles = runner_.HostCycles(t.host_seconds);
    const int64_t cycles = runner_.Now(t);
    const double seconds = static_cast<double>(cycles) / hz;
    const auto& lowered = runner_.lowered();
    auto& c = profile_.counters;
    c.clear();
    c["cycles"] = static_cast<double>(cycles);
    c["clock_mhz"] = config_.clock_mhz;
    c["seconds"] = seconds;
    c["accelerator_cycles"] = static_cast<double>(t.accelerator_cycles);
    c["host_fallback_cycles"] = static_cast<double>(host_cycles);
    c["host_fallback_share"] = cycles ? static_cast<double>(host_cycles) / cycles : 0.0;
    c["host_fallback_bytes"] = t.host_bytes;
    c["collectives"] = static_cast<double>(t.collectives);
    c["link_cycles"] = static_cast<double>(t.link_cycles);
    c["link_share"] = cycles ? static_cast<double>(t.link_cycles) / cycles : 0.0;
    c["link_bytes"] = t.link_bytes;
    c["collective_wait_cycles"] = static_cast<double>(t.wait_cycles);
    c["macs"] = static_cast<double>(t.macs);
    c["executed_macs"] = static_cast<double>(t.executed_macs);
    c["achieved_tops"] = seconds > 0 ? 2.0 * static_cast<double>(t.macs) / seconds / 1e12 : 0.0;
    c["mac_utilization"] =
        t.accelerator_cycles > 0
            ? static_cast<double>(t.macs) /
                  (static_cast<double>(t.accelerator_cycles) * config_.array_rows *
                   config_.array_cols)
            : 0.0;
    c["vector_element_ops"] = static_cast<double>(t.vector_ops);
    c["dram_bytes_read"] = static_cast<double>(t.dram_read);
    c["dram_bytes_written"] = static_cast<double>(t.dram_written);
    c["ub_bytes_read"] = static_cast<double>(t.ub_read);
    c["ub_bytes_written"] = static_cast<double>(t.ub_written);
    c["acc_bytes_read"] = static_cast<double>(t.acc_read);
    c["acc_bytes_written"] = static_cast<double>(t.acc_written);
    c["energy_pj"] = t.energy_pj;
    c["segments"] = static_cast<double>(t.segments);
    c["replayed_segments"] = static_cast<double>(t.replayed_segments);
    c["loop_iterations"] = static_cast<double>(t.iterations);
    c["loop_control_cycles"] = static_cast<double>(t.loop_control_cycles);
    c["loop_control_cycles_per_trip"] =
        t.iterations > 0 ? static_cast<double>(t.loop_control_cycles) / t.iterations : 0.0;
    c["native_instructions"] = static_cast<double>(lowered.native_instructions);
    c["host_instructions"] = static_cast<double>(lowered.host_instructions);
    c["loops"] = static_cast<double>(lowered.loops);
    c["device_loops"] = static_cast<double>(lowered.device_loops);
    c["loop_iterations_on_device"] = static_cast<double>(t.device_iterations);
    c["branches_on_device"] = static_cast<double>(t.device_branches);
    c["dram_bytes_allocated"] = static_cast<double>(lowered.dram_bytes);
  }

  systolic::ArchConfig config_;
  LoweredRunner runner_;
  simulator::TraceSink* trace_;  // until the first Run
  Profile profile_;
};

class SystolicBackend final : public Backend {
 public:
  SystolicBackend(systolic::ArchConfig config, Backend* host, simulator::TraceSink* trace)
      : config_(std::move(config)), host_(host), trace_(trace) {}
  std::string name() const override { return "systolic"; }
  std::vector<std::string> emit_kinds() const override { return {"asm"}; }
  // Run simulates: its profile holds the simulated seconds.
  LatencySource latency_source() const override { return LatencySource::kSimulated; }
  // N chips, each this accelerator running its own executable, exchanging over the links
  // (chip_links.h).
  bool multi_device() const override { return true; }
  std::string description() const override {
    return "systolic-array accelerator (" + config_.name + ", " +
           std::to_string(config_.array_rows) + "x" + std::to_string(config_.array_cols) +
           ") on the SystemC simulator, host fallback on " + (host_ ? host_->name() : "none");
  }
  // --emit asm: the accelerator programs (.sasm, with a comment line per host step and why).
  Emitted Emit(const hlo::Module& module, const std::string& kind,
               const std::string& dump_dir) override {
    Emitted emitted;
    emitted.main = Compile(module)->artifacts().at("program.sasm");
    return emitted;
  }
  std::optional<std::map<std::string, std::string>> HostSteps(
      const hlo::Module& optimized) override {
    return systolic::lowering::HostStepReasons(optimized, config_);
  }
  std::unique_ptr<Executable> Compile(const hlo::Module& module) override {
    std::unique_ptr<hlo::Module> optimized = module.Clone();
    compiler::MakeTargetPipeline(targets::SystolicDescription()).Run(*optimized);
    return std::make_unique<SystolicExecutable>(config_, LowerChecked(*optimized, config_), host_,
                                                trace_);
  }

 private:
  systolic::ArchConfig config_;
  Backend* host_;
  simulator::TraceSink* trace_;
};

}  // namespace

std::unique_ptr<Backend> MakeSystolicBackend(systolic::ArchConfig config, Backend* host,
                                             simulator::TraceSink* trace) {
  return std::make_unique<SystolicBackend>(std::move(config), host, trace);
}

}  // namespace targets

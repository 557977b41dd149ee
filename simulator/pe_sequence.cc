// The processing-element model of a weight-stationary instruction sequence (pe_sequence.h). Each
// cycle computes the next value of every register from the current ones, as in pe_reference.cc.
#include "simulator/pe_sequence.h"

#include <algorithm>
#include <string>
#include <utility>

#include "hlo/diagnostic.h"
#include "simulator/numeric_mxu.h"
#include "simulator/pe_plane.h"

namespace simulator {
namespace {

constexpr int64_t kMaxArraySide = 64;
constexpr int64_t kMaxCycles = 1'000'000;

[[noreturn]] void Hazard(int64_t cycle, int64_t row, int64_t col, const std::string& what) {
  throw hlo::Error("pe_sequence: structural hazard at cycle " + std::to_string(cycle) +
                   " in PE(" + std::to_string(row) + "," + std::to_string(col) + "): " + what);
}

struct Operand {
  bool valid = false;
  size_t step = 0;  // the matmul it belongs to
  int64_t t = 0;    // its row of A
  uint32_t bits = 0;
};

struct PartialSum {
  bool valid = false;
  size_t step = 0;
  int64_t t = 0;
  uint32_t bits = 0;
};

struct Weight {
  bool valid = false;  // a real tile element (not a column beyond the tile's n)
  size_t tile = 0;     // the ldw step that wrote it
  uint32_t bits = 0;
};

// A matmul step with its tile resolved.
struct MatmulInfo {
  size_t tile = 0;  // the ldw step whose weights it multiplies with
  int64_t m = 0, k = 0, n = 0;
};

class Machine {
 public:
  Machine(const ArrayShape& array, systolic::Dtype dtype, const std::vector<PeStep>& steps)
      : R_(array.rows), C_(array.cols), dtype_(dtype), steps_(steps),
        weights_{Plane<Weight>(R_, C_), Plane<Weight>(R_, C_)},
        flow_(R_, C_), next_flow_(R_, C_), psum_(R_, C_), next_psum_(R_, C_) {
    Resolve();
  }

  PeSequenceRun Run();

 private:
  void Resolve();
  Operand Incoming(int64_t cycle, int64_t i, int64_t j) const;
  bool CanStart(size_t index, int64_t cycle) const;
  bool BufferReleased(size_t ldw, int64_t cycle) const;
  void Step(int64_t cycle);

  const int64_t R_, C_;
  const systolic::Dtype dtype_;
  const std::vector<PeStep>& steps_;
  std::vector<MatmulInfo> info_;  // per step (meaningful for matmuls)
  Plane<Weight> weights_[2];
  Plane<Operand> flow_, next_flow_;
  Plane<PartialSum> psum_, next_psum_;
  PeSequenceRun run_;
  std::vector<size_t> started_matmuls_;
  size_t next_ = 0;              // next step to issue
  int64_t loading_ = -1;         // the ldw step writing rows, if any
  int64_t loader_free_ = 0;
  int64_t outputs_left_ = 0;
};

void Machine::Resolve() {
  info_.resize(steps_.size());
  run_.steps.resize(steps_.size());
  int64_t tile_of_buffer[2] = {-1, -1};
  for (size_t s = 0; s < steps_.size(); ++s) {
    const PeStep& step = steps_[s];
    const std::string where = "pe_sequence: step " + std::to_string(s) + ": ";
    if (step.buffer > 1) throw hlo::Error(where + "buffer must be 0 or 1");
    if (step.kind == PeStep::Kind::kLoadWeights) {
      if (step.k < 1 || step.k > R_ || step.n < 1 || step.n > C_) {
        throw hlo::Error(where + "need 1 <= k <= R and 1 <= n <= C");
      }
      if (step.data.size() != static_cast<size_t>(step.k * step.n)) {
        throw hlo::Error(where + "weights are not k x n");
      }
      tile_of_buffer[step.buffer] = static_cast<int64_t>(s);
      continue;
    }
    const int64_t tile = tile_of_buffer[step.buffer];
    if (tile < 0) throw hlo::Error(where + "matmul on a buffer no earlier ldw filled");
    const PeStep& ldw = steps_[static_cast<size_t>(tile)];
    if (step.m < 1 || step.data.size() != static_cast<size_t>(step.m * ldw.k)) {
      throw hlo::Error(where + "activations are not m x k with m >= 1");
    }
    info_[s] = MatmulInfo{static_cast<size_t>(tile), step.m, ldw.k, ldw.n};
    run_.steps[s].out.assign(static_cast<size_t>(step.m * ldw.n), 0);
    outputs_left_ += step.m * ldw.n;
  }
}

// The operand in PE(i,j) this cycle: from its left neighbour, or at the skewed left edge, where
// row i sees row t of matmul X's A at s_X + t + i (rows beyond the tile's k carry nothing).
Operand Machine::Incoming(int64_t cycle, int64_t i, int64_t j) const {
  if (j > 0) return flow_.at(i, j - 1);
  for (size_t x : started_matmuls_) {
    const MatmulInfo& mm = info_[x];
    const int64_t t = cycle - i - run_.steps[x].start;
    if (t < 0 || t >= mm.m || i >= mm.k) continue;
    return Operand{true, x, t, steps_[x].data[static_cast<size_t>(t * mm.k + i)]};
  }
  return Operand{};
}

// No operand of an earlier matmul reading the ldw's buffer is still to enter, or sits in row 0
// left of its last column: rewriting row r at L + r stays behind every such operand.
bool Machine::BufferReleased(size_t ldw, int64_t cycle) const {
  const size_t buffer = steps_[ldw].buffer;
  for (size_t x : started_matmuls_) {
    if (x > ldw || steps_[x].buffer != buffer) continue;
    if (cycle < run_.steps[x].start + info_[x].m - 1) return false;  // rows still to enter
  }
  for (int64_t j = 0; j < C_; ++j) {
    const Operand in = Incoming(cycle, 0, j);
    if (in.valid && in.step < ldw && steps_[in.step].buffer == buffer && j < info_[in.step].n - 1) {
      return false;
    }
  }
  return true;
}

bool Machine::CanStart(size_t index, int64_t cycle) const {
  const PeStep& step = steps_[index];
  if (step.kind == PeStep::Kind::kLoadWeights) {
    return loading_ < 0 && cycle >= loader_free_ && BufferReleased(index, cycle);
  }
  const size_t tile = info_[index].tile;
  const bool loaded = tile < next_ && loading_ != static_cast<int64_t>(tile) &&
                      run_.steps[tile].end <= cycle;
  if (!loaded) return false;
  if (started_matmuls_.empty()) return true;
  const size_t previous = started_matmuls_.back();
  return cycle >= run_.steps[previous].start + info_[previous].m;
}

void Machine::Step(int64_t cycle) {
  // Issue, in program order, every step whose resources are free this cycle.
  while (next_ < steps_.size() && CanStart(next_, cycle)) {
    run_.steps[next_].start = cycle;
    if (steps_[next_].kind == PeStep::Kind::kLoadWeights) {
      loading_ = static_cast<int64_t>(next_);
    } else {
      started_matmuls_.push_back(next_);
    }
    ++next_;
  }
  for (int64_t i = 0; i < R_; ++i) {
    for (int64_t j = 0; j < C_; ++j) {
      const Operand in = Incoming(cycle, i, j);
      PartialSum out = i > 0 ? psum_.at(i - 1, j) : PartialSum{};
      if (in.valid && j < info_[in.step].n) {
        const MatmulInfo& mm = info_[in.step];
        if (i == 0) out = PartialSum{true, in.step, in.t, kMxuZeroSum};
        if (!out.valid || out.step != in.step || out.t != in.t) {
          Hazard(cycle, i, j, "partial sum and operand out of step");
        }
        const Weight& w = weights_[steps_[in.step].buffer].at(i, j);
        if (!w.valid || w.tile != mm.tile) Hazard(cycle, i, j, "operand meets another tile's weight");
        out.bits = MxuMac(dtype_, out.bits, in.bits, w.bits);
      }
      next_flow_.at(i, j) = in;
      next_psum_.at(i, j) = out;
    }
  }
  // The tile being loaded: row r written at L + r, after the PEs read their registers.
  if (loading_ >= 0) {
    const auto s = static_cast<size_t>(loading_);
    const PeStep& ldw = steps_[s];
    const int64_t r = cycle - run_.steps[s].start;
    for (int64_t j = 0; j < C_; ++j) {
      const bool real = j < ldw.n;
      weights_[ldw.buffer].at(r, j) =
          Weight{real, s, real ? ldw.data[static_cast<size_t>(r * ldw.n + j)] : 0u};
    }
    if (r == ldw.k - 1) {
      run_.steps[s].end = loader_free_ = cycle + 1;
      loading_ = -1;
    }
  }
  std::swap(flow_, next_flow_);
  std::swap(psum_, next_psum_);
  for (int64_t j = 0; j < C_; ++j) {  // outputs leave below the bottom row
    const PartialSum& leaving = psum_.at(R_ - 1, j);
    if (!leaving.valid) continue;
    PeStepRun& x = run_.steps[leaving.step];
    x.out[static_cast<size_t>(leaving.t * info_[leaving.step].n + j)] = leaving.bits;
    x.end = cycle + 1;
    --outputs_left_;
  }
}

PeSequenceRun Machine::Run() {
  for (int64_t cycle = 0; next_ < steps_.size() || loading_ >= 0 || outputs_left_ > 0; ++cycle) {
    if (cycle > kMaxCycles) throw hlo::Error("pe_sequence: run exceeds a million cycles");
    Step(cycle);
  }
  for (const PeStepRun& step : run_.steps) run_.cycles = std::max(run_.cycles, step.end);
  return std::move(run_);
}

}  // namespace

PeSequenceRun RunPeSequence(const ArrayShape& array, systolic::Dtype dtype,
                            const std::vector<PeStep>& steps) {
  if (array.dataflow != systolic::Dataflow::kWs) {
    throw hlo::Error("pe_sequence: only the weight-stationary dataflow overlaps instructions");
  }
  if (array.rows < 1 || array.cols < 1 || array.rows > kMaxArraySide ||
      array.cols > kMaxArraySide) {
    throw hlo::Error("pe_sequence: the array must be between 1x1 and 64x64");
  }
  MxuAccumulatorDtype(dtype);  // rejects non-MXU dtypes
  return Machine(array, dtype, steps).Run();
}

}  // namespace simulator

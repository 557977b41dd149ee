// The processing-element reference model (pe_reference.h). Each cycle computes the next value of
// every register from the current ones (two copies of each register plane), so the order in
// which PEs are visited never matters -- as in synchronous hardware.
#include "simulator/pe_reference.h"

#include <algorithm>
#include <functional>
#include <string>

#include "hlo/diagnostic.h"
#include "simulator/numeric_mxu.h"
#include "simulator/pe_plane.h"

namespace simulator {
namespace {

constexpr int64_t kMaxArraySide = 64;
constexpr int64_t kMaxCycles = 1'000'000;

[[noreturn]] void Hazard(int64_t cycle, int64_t row, int64_t col, const std::string& what) {
  throw hlo::Error("pe_reference: structural hazard at cycle " + std::to_string(cycle) +
                   " in PE(" + std::to_string(row) + "," + std::to_string(col) + "): " + what);
}

// A value moving through the array with the bookkeeping that lets the model check itself.
struct Operand {
  bool valid = false;
  bool token = false;  // stationary dataflows: first operand of a fold -> swap in the new tile
  int64_t fold = -1;
  int64_t index = 0;  // stream position: t (ws/is) or kk (os)
  uint32_t bits = 0;
};

struct PartialSum {
  bool valid = false;
  int64_t fold = -1;
  int64_t t = 0;
  uint32_t bits = 0;
};

struct StationaryCell {
  bool valid = false;  // holds a real tile element (not padding)
  bool pending = false;  // shadow only: loaded and not yet swapped in
  int64_t fold = -1;
  uint32_t bits = 0;
};

// ws and is: a stationary tile of `tile_rows` x `tile_cols` (the latter folded over C), a stream
// of `stream_length` vectors of `tile_rows` operands. The callbacks give the data and the
// destination of each result.
struct StationaryProblem {
  int64_t tile_rows = 0;
  int64_t tile_cols = 0;
  int64_t stream_length = 0;
  std::function<uint32_t(int64_t row, int64_t col)> stationary;
  std::function<uint32_t(int64_t t, int64_t row)> stream;
  std::function<uint32_t(uint32_t sum, uint32_t stream, uint32_t stationary)> mac;
  std::function<void(int64_t t, int64_t col, uint32_t bits)> emit;
};

struct StationaryTiming {
  int64_t first_load_done = 0;  // cycle after the first tile's last row write
  int64_t first_stream = 0;     // cycle fold 0 starts streaming
  int64_t last_exit = 0;
  int64_t folds = 0;
};

StationaryTiming RunStationary(const ArrayShape& array, const StationaryProblem& p) {
  const int64_t R = array.rows, C = array.cols;
  const int64_t folds = (p.tile_cols + C - 1) / C;
  auto fold_cols = [&](int64_t f) { return std::min(C, p.tile_cols - f * C); };

  Plane<StationaryCell> shadow(R, C), active(R, C);
  Plane<Operand> flow(R, C), next_flow(R, C);
  Plane<PartialSum> psum(R, C), next_psum(R, C);
  std::vector<int64_t> stream_start;  // per started fold
  int64_t load_fold = -1, load_start = 0, loads_done = 0;  // the tile being written, if any
  std::vector<int64_t> load_done_at;  // per loaded fold: the cycle after its last row write
  int64_t outputs_left = p.tile_cols * p.stream_length;
  StationaryTiming timing;
  timing.folds = folds;

  for (int64_t cycle = 0; outputs_left > 0; ++cycle) {
    if (cycle > kMaxCycles) throw hlo::Error("pe_reference: run exceeds a million cycles");
    // The operand entering PE(i,j) this cycle: from its left neighbour, or at the skewed left
    // edge, where row i sees fold f's element t at s_f + t + i.
    auto incoming = [&](int64_t i, int64_t j) {
      if (j > 0) return flow.at(i, j - 1);
      Operand in;
      for (int64_t f = 0; f < static_cast<int64_t>(stream_start.size()); ++f) {
        const int64_t t = cycle - i - stream_start[f];
        if (t < 0 || t >= p.stream_length) continue;
        in = Operand{i < p.tile_rows, t == 0, f, t, i < p.tile_rows ? p.stream(t, i) : 0u};
      }
      return in;
    };
    // Controller, from the state at the start of the cycle. A fold streams once its tile is
    // loaded and the previous fold's operands have all entered.
    const int64_t next = static_cast<int64_t>(stream_start.size());
    if (next < folds && next < static_cast<int64_t>(load_done_at.size()) &&
        load_done_at[next] <= cycle &&
        (next == 0 || cycle >= stream_start.back() + p.stream_length)) {
      stream_start.push_back(cycle);
    }
    // The next tile's rows may be written from the cycle in which the last shadow of row 0 is
    // swapped in (a register is read and rewritten at the same clock edge).
    if (load_fold < 0 && loads_done < folds) {
      bool row0_free = true;
      for (int64_t j = 0; j < C; ++j) {
        const StationaryCell& sh = shadow.at(0, j);
        const Operand in = incoming(0, j);
        row0_free = row0_free && (!sh.pending || (in.token && in.fold == sh.fold));
      }
      if (row0_free) {
        load_fold = loads_done;
        load_start = cycle;
      }
    }

    for (int64_t i = 0; i < R; ++i) {
      for (int64_t j = 0; j < C; ++j) {
        const Operand in = incoming(i, j);
        StationaryCell& act = active.at(i, j);
        if (in.token) {  // swap in this fold's tile before using it
          StationaryCell& sh = shadow.at(i, j);
          const bool ready = sh.pending && sh.fold == in.fold;
          if (i < p.tile_rows && !ready) Hazard(cycle, i, j, "tile not loaded when its fold arrives");
          act = StationaryCell{ready && sh.valid, false, in.fold, sh.bits};
          sh.pending = false;
        }
        PartialSum out = i > 0 ? psum.at(i - 1, j) : PartialSum{};
        if (in.valid && act.valid) {
          if (act.fold != in.fold) Hazard(cycle, i, j, "operand meets another fold's tile");
          if (i == 0) out = PartialSum{true, in.fold, in.index, kMxuZeroSum};
          if (!out.valid || out.fold != in.fold || out.t != in.index) {
            Hazard(cycle, i, j, "partial sum and operand out of step");
          }
          out.bits = p.mac(out.bits, in.bits, act.bits);
        }
        next_flow.at(i, j) = in;
        next_psum.at(i, j) = out;
      }
    }
    // The tile being loaded: row r is written at cycle L + r (after the PEs read their shadows).
    if (load_fold >= 0) {
      const int64_t r = cycle - load_start;
      for (int64_t j = 0; j < C; ++j) {
        StationaryCell& sh = shadow.at(r, j);
        if (sh.pending) Hazard(cycle, r, j, "shadow overwritten before it was used");
        const bool real = j < fold_cols(load_fold);
        sh = StationaryCell{real, true, load_fold, real ? p.stationary(r, load_fold * C + j) : 0u};
      }
      if (r == p.tile_rows - 1) {
        load_done_at.push_back(cycle + 1);
        if (load_fold == 0) timing.first_load_done = cycle + 1;
        load_fold = -1;
        ++loads_done;
      }
    }
    std::swap(flow, next_flow);
    std::swap(psum, next_psum);
    for (int64_t j = 0; j < C; ++j) {  // outputs leave below the bottom row
      const PartialSum& leaving = psum.at(R - 1, j);
      if (!leaving.valid) continue;
      p.emit(leaving.t, leaving.fold * C + j, leaving.bits);
      timing.last_exit = cycle;
      --outputs_left;
    }
  }
  timing.first_stream = stream_start.front();
  return timing;
}

// os: fold f holds output rows [f*R, f*R + rows_f) in the PEs.
PeRun RunOutputStationary(const ArrayShape& array, const PeGemm& g) {
  const int64_t R = array.rows, C = array.cols;
  const int64_t folds = (g.m + R - 1) / R;
  auto fold_rows = [&](int64_t f) { return std::min(R, g.m - f * R); };
  // Fold starts: the next fold waits for its operands' edge slots (k cycles) and for the column
  // bus, which carries fold f's rows_f results one per cycle.
  std::vector<int64_t> start(static_cast<size_t>(folds), 0);
  for (int64_t f = 1; f < folds; ++f) start[f] = start[f - 1] + std::max(g.k, fold_rows(f - 1));

  Plane<Operand> from_left(R, C), next_left(R, C), from_top(R, C), next_top(R, C);
  Plane<PartialSum> acc(R, C);  // t is the last kk accumulated
  PeRun run;
  run.folds = folds;
  run.out.assign(static_cast<size_t>(g.m * g.n), 0);
  int64_t outputs_left = g.m * g.n, last_exit = 0;
  for (int64_t cycle = 0; outputs_left > 0; ++cycle) {
    if (cycle > kMaxCycles) throw hlo::Error("pe_reference: run exceeds a million cycles");
    // The skewed edges: row i sees A[f*R + i][kk] at start_f + kk + i, column j W[kk][j] at
    // start_f + kk + j.
    auto edge = [&](int64_t lane, bool is_row) {
      for (int64_t f = 0; f < folds; ++f) {
        const int64_t kk = cycle - lane - start[f];
        if (kk < 0 || kk >= g.k) continue;
        if (is_row && lane < fold_rows(f)) {
          return Operand{true, false, f, kk, g.a[(f * R + lane) * g.k + kk]};
        }
        if (!is_row && lane < g.n) return Operand{true, false, f, kk, g.w[kk * g.n + lane]};
      }
      return Operand{};
    };
    std::vector<bool> bus_busy(static_cast<size_t>(C), false);
    for (int64_t i = 0; i < R; ++i) {
      for (int64_t j = 0; j < C; ++j) {
        const Operand a = j > 0 ? from_left.at(i, j - 1) : edge(i, true);
        const Operand w = i > 0 ? from_top.at(i - 1, j) : edge(j, false);
        if (a.valid && w.valid) {
          if (a.fold != w.fold || a.index != w.index) Hazard(cycle, i, j, "operands out of step");
          PartialSum& sum = acc.at(i, j);
          if (a.index == 0) {
            sum = PartialSum{true, a.fold, 0, kMxuZeroSum};
          } else if (!sum.valid || sum.fold != a.fold || sum.t != a.index - 1) {
            Hazard(cycle, i, j, "accumulation out of order");
          }
          sum.bits = MxuMac(g.dtype, sum.bits, a.bits, w.bits);
          sum.t = a.index;
          if (a.index == g.k - 1) {  // finished: onto column j's output bus this cycle
            if (bus_busy[j]) Hazard(cycle, i, j, "two results on one column bus");
            bus_busy[j] = true;
            run.out[(a.fold * R + i) * g.n + j] = sum.bits;
            last_exit = cycle;
            --outputs_left;
          }
        }
        next_left.at(i, j) = a;
        next_top.at(i, j) = w;
      }
    }
    std::swap(from_left, next_left);
    std::swap(from_top, next_top);
  }
  run.cycles = last_exit + 1;
  return run;
}

}  // namespace

PeRun RunPeReference(const ArrayShape& array, const PeGemm& g) {
  if (array.rows < 1 || array.cols < 1 || array.rows > kMaxArraySide ||
      array.cols > kMaxArraySide) {
    throw hlo::Error("pe_reference: the array must be between 1x1 and 64x64");
  }
  if (g.m < 1 || g.k < 1 || g.n < 1 || g.k > array.rows || g.n > array.cols) {
    throw hlo::Error("pe_reference: need 1 <= m, 1 <= k <= R, 1 <= n <= C");
  }
  if (g.a.size() != static_cast<size_t>(g.m * g.k) ||
      g.w.size() != static_cast<size_t>(g.k * g.n)) {
    throw hlo::Error("pe_reference: operand sizes do not match m, k, n");
  }
  MxuAccumulatorDtype(g.dtype);  // rejects non-MXU dtypes
  if (array.dataflow == systolic::Dataflow::kOs) return RunOutputStationary(array, g);

  PeRun run;
  run.out.assign(static_cast<size_t>(g.m * g.n), 0);
  StationaryProblem p;
  p.tile_rows = g.k;
  const bool ws = array.dataflow == systolic::Dataflow::kWs;
  if (ws) {  // stationary W (k x n), stream rows of A, result (t, col) = C[t][col]
    p.tile_cols = g.n;
    p.stream_length = g.m;
    p.stationary = [&](int64_t r, int64_t c) { return g.w[r * g.n + c]; };
    p.stream = [&](int64_t t, int64_t r) { return g.a[t * g.k + r]; };
    p.mac = [&](uint32_t sum, uint32_t x, uint32_t s) { return MxuMac(g.dtype, sum, x, s); };
    p.emit = [&](int64_t t, int64_t c, uint32_t bits) { run.out[t * g.n + c] = bits; };
  } else {  // is: stationary A^T (k x m), stream columns of W, result (t, col) = C[col][t]
    p.tile_cols = g.m;
    p.stream_length = g.n;
    p.stationary = [&](int64_t r, int64_t c) { return g.a[c * g.k + r]; };
    p.stream = [&](int64_t t, int64_t r) { return g.w[r * g.n + t]; };
    p.mac = [&](uint32_t sum, uint32_t x, uint32_t s) { return MxuMac(g.dtype, sum, s, x); };
    p.emit = [&](int64_t t, int64_t c, uint32_t bits) { run.out[c * g.n + t] = bits; };
  }
  const StationaryTiming timing = RunStationary(array, p);
  run.folds = timing.folds;
  if (ws) {  // the first tile load is the mxu.ldw; the matmul starts with the first operand
    run.weight_load_cycles = timing.first_load_done;
    run.cycles = timing.last_exit + 1 - timing.first_stream;
  } else {
    run.cycles = timing.last_exit + 1;
  }
  return run;
}

}  // namespace simulator

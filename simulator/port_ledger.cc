// PortLedger (port_ledger.h).
#include "simulator/port_ledger.h"

#include <algorithm>
#include <vector>

namespace simulator {

int64_t PortLedger::Reserve(int64_t start, int64_t bytes, int64_t max_rate) {
  if (bytes <= 0) return start;
  max_rate = std::clamp<int64_t>(max_rate, 1, capacity_);
  // Walk the usage step function from `start`, taking min(max_rate, free) in each segment.
  int64_t usage = base_;
  auto it = steps_.begin();
  for (; it != steps_.end() && it->first <= start; ++it) usage += it->second;
  struct Piece {
    int64_t from, to, rate;
  };
  std::vector<Piece> pieces;
  int64_t t = start, remaining = bytes;
  while (remaining > 0) {
    const bool last_segment = it == steps_.end();
    const int64_t rate = std::min(max_rate, capacity_ - usage);
    if (rate > 0) {
      // Whole cycles at `rate`, then (if the segment reaches it) one cycle with the rest:
      // the last cycle takes only what is left, and the remainder stays free for others.
      const int64_t whole = remaining / rate;
      const int64_t to = last_segment ? t + whole : std::min(it->first, t + whole);
      if (to > t) pieces.push_back({t, to, rate});
      remaining -= rate * (to - t);
      t = to;
      if (remaining > 0 && remaining < rate && (last_segment || t < it->first)) {
        pieces.push_back({t, t + 1, remaining});
        remaining = 0;
        ++t;
      }
    } else {
      // Full until the next step. After the last step nothing is reserved any more, so the
      // last segment always has room.
      t = it->first;
    }
    if (!last_segment && t == it->first) {
      usage += it->second;
      ++it;
    }
  }
  auto add = [&](int64_t cycle, int64_t delta) {
    auto [step, inserted] = steps_.try_emplace(cycle, 0);
    step->second += delta;
    if (step->second == 0) steps_.erase(step);  // adjacent pieces of one request cancel
  };
  for (const Piece& piece : pieces) {
    add(piece.from, piece.rate);
    add(piece.to, -piece.rate);
  }
  return t;
}

void PortLedger::Forget(int64_t cycle) {
  auto it = steps_.begin();
  for (; it != steps_.end() && it->first <= cycle; ++it) base_ += it->second;
  steps_.erase(steps_.begin(), it);
}

}  // namespace simulator

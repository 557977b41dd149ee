#include "hlo/progress.h"

#include <atomic>

namespace hlo {
namespace {
std::atomic<int> loop_depth{0};
std::atomic<const std::string*> outer_loop{nullptr};
std::atomic<int64_t> outer_trip{0};
}  // namespace

LoopProgressScope::LoopProgressScope(const std::string& loop_name)
    : outermost_(loop_depth.fetch_add(1, std::memory_order_relaxed) == 0) {
  if (!outermost_) return;
  outer_trip.store(0, std::memory_order_relaxed);
  outer_loop.store(&loop_name, std::memory_order_release);
}

LoopProgressScope::~LoopProgressScope() {
  if (outermost_) outer_loop.store(nullptr, std::memory_order_release);
  loop_depth.fetch_sub(1, std::memory_order_relaxed);
}

void LoopProgressScope::Trip(int64_t trip) {
  if (outermost_) outer_trip.store(trip, std::memory_order_relaxed);
}

std::string CurrentLoopProgress() {
  const std::string* name = outer_loop.load(std::memory_order_acquire);
  if (name == nullptr) return {};
  std::string text = *name;
  text += " trip ";
  text += std::to_string(outer_trip.load(std::memory_order_relaxed) + 1);
  return text;
}

}  // namespace hlo

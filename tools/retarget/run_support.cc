// Progress, timing and JSON helpers of `retarget run` (run_support.h).
#include "tools/retarget/run_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <sys/resource.h>

#include "hlo/progress.h"

namespace cli {

Heartbeat::Heartbeat(std::string what, std::chrono::seconds interval)
    : what_(std::move(what)), interval_(interval) {
  thread_ = std::thread([this] {
    auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_changed_.wait_for(lock, interval_, [this] { return done_; })) {
      auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::steady_clock::now() - start);
      const std::string loop = hlo::CurrentLoopProgress();
      std::cerr << "retarget: " << what_ << ": still running (" << seconds.count() << " s"
                << (loop.empty() ? "" : ", " + loop) << ")\n";
    }
  });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_changed_.notify_all();
  thread_.join();
}

std::function<void(int64_t, int64_t)> EvaluatorProgress(std::string what) {
  auto start = std::chrono::steady_clock::now();
  auto last = start;
  return [what = std::move(what), start, last](int64_t done, int64_t total) mutable {
    constexpr auto kEvery = std::chrono::seconds(2);
    auto now = std::chrono::steady_clock::now();
    if (now - start < kEvery || now - last < kEvery) return;
    last = now;
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
    const std::string loop = hlo::CurrentLoopProgress();
    std::cerr << "retarget: " << what << ": " << done << "/" << total << " instructions ("
              << seconds << " s" << (loop.empty() ? "" : ", " + loop) << ")\n";
  };
}

double PeakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

Timing Summarize(std::vector<double> times_ms) {
  if (times_ms.empty()) return {};
  std::sort(times_ms.begin(), times_ms.end());
  size_t n = times_ms.size();
  double median = n % 2 ? times_ms[n / 2] : (times_ms[n / 2 - 1] + times_ms[n / 2]) / 2;
  return {median, times_ms.front()};
}

std::string FormatTiming(const Timing& timing, size_t runs) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "time: median %.3f ms, min %.3f ms over %zu runs",
                timing.median_ms, timing.min_ms, runs);
  return buf;
}


JsonObject& JsonObject::Add(const std::string& key, nlohmann::ordered_json value) {
  json_[key] = std::move(value);
  return *this;
}
JsonObject& JsonObject::AddRaw(const std::string& key, const std::string& json) {
  return Add(key, nlohmann::ordered_json::parse(json));
}
JsonObject& JsonObject::Add(const std::string& key, const std::string& value) {
  return Add(key, nlohmann::ordered_json(value));
}
JsonObject& JsonObject::Add(const std::string& key, double value) {
  return Add(key, hlo::JsonNumberValue(value));
}
JsonObject& JsonObject::Add(const std::string& key, bool value) {
  return Add(key, nlohmann::ordered_json(value));
}
JsonObject& JsonObject::Add(const std::string& key, const std::vector<double>& values) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (double value : values) list.push_back(hlo::JsonNumberValue(value));
  return Add(key, std::move(list));
}
std::string JsonObject::ToString() const {
  return hlo::JsonText(json_);
}

}  // namespace cli

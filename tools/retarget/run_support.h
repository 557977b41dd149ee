// Helpers of `retarget run`: progress on stderr for long work, timing statistics and the
// --stats-json document. Kept apart from cmd_run.cc so that file reads as the command's flow.
#pragma once

#include <nlohmann/json.hpp>

#include "hlo/json_text.h"
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cli {

// While alive, prints "retarget: WHAT: still running (N s)" on stderr every `interval` after the
// first `interval`, so a long run on any backend shows it is alive; short runs print nothing.
class Heartbeat {
 public:
  explicit Heartbeat(std::string what, std::chrono::seconds interval = std::chrono::seconds(5));
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::string what_;
  std::chrono::seconds interval_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

// A progress callback for the evaluator: "retarget: WHAT: K/N instructions (T s)" on stderr at
// most every two seconds, starting after two seconds.
std::function<void(int64_t, int64_t)> EvaluatorProgress(std::string what);

// The largest resident set this process has had so far, in bytes (getrusage).
double PeakResidentBytes();

struct Timing {
  double median_ms = 0, min_ms = 0;
};
Timing Summarize(std::vector<double> times_ms);  // median of an even count: mean of the middle two
// "time: median 1.234 ms, min 1.200 ms over 5 runs"
std::string FormatTiming(const Timing& timing, size_t runs);

// A JSON object for --stats-json files, an nlohmann::ordered_json underneath (keys in insertion
// order; non-finite numbers are null; strings escaped, invalid UTF-8 replaced by U+FFFD).
class JsonObject {
 public:
  JsonObject& Add(const std::string& key, const std::string& value);
  JsonObject& Add(const std::string& key, const char* value) {
    return Add(key, std::string(value));
  }
  JsonObject& Add(const std::string& key, double value);
  JsonObject& Add(const std::string& key, bool value);
  JsonObject& Add(const std::string& key, const std::vector<double>& values);
  JsonObject& AddRaw(const std::string& key, const std::string& json);  // already-encoded value
  JsonObject& Add(const std::string& key, nlohmann::ordered_json value);
  // Two spaces an indent, `"key": value` on each line.
  std::string ToString() const;
  const nlohmann::ordered_json& json() const { return json_; }

 private:
  nlohmann::ordered_json json_ = nlohmann::ordered_json::object();
};
using hlo::JsonNumber;  // null for NaN/inf, which JSON cannot carry
using hlo::JsonString;

}  // namespace cli

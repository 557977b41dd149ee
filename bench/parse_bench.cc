// parse_bench: HLO text parsing and verification speed on real models from the corpus.
//
// For gemma3_1b_flax_call.hlo (2.3 MB, the floor: parse + verify < 0.5 s) and
// resnet50_keras_jax_f32.hlo it measures parse alone, verify alone and both together, and reports
// bytes_per_second (input text) and instructions_per_second counters. The file is read once,
// outside the timed loop. Run through scripts/bench.sh, which writes the JSON results.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/bench_util.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace {

struct LoadedText {
  std::string text;
  int64_t instructions = 0;  // of the parsed module, for the instructions/s counter
};

// Reads and parses once; throws hlo::Error while the parser cannot handle the file.
LoadedText Load(const std::string& file) {
  LoadedText loaded;
  loaded.text = bench::ReadFileOrThrow(bench::CorpusPath(file));
  loaded.instructions = bench::ParseAndVerify(loaded.text, file)->instruction_count();
  return loaded;
}

void SetThroughputCounters(benchmark::State& state, const LoadedText& loaded) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(loaded.text.size()));
  state.counters["instructions_per_second"] = benchmark::Counter(
      static_cast<double>(loaded.instructions), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["instructions"] = static_cast<double>(loaded.instructions);
  state.counters["input_bytes"] = static_cast<double>(loaded.text.size());
}

hlo::ParseOptions Quiet() {
  hlo::ParseOptions options;
  options.warn = [](const std::string&) {};
  return options;
}

void BM_ParseAndVerify(benchmark::State& state, const std::string& file) {
  try {
    const LoadedText loaded = Load(file);
    const hlo::ParseOptions options = Quiet();
    for (auto _ : state) {
      auto module = hlo::ParseHloText(loaded.text, file, options);
      hlo::Verify(*module);
      benchmark::DoNotOptimize(module.get());
    }
    SetThroughputCounters(state, loaded);
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

void BM_Parse(benchmark::State& state, const std::string& file) {
  try {
    const LoadedText loaded = Load(file);
    const hlo::ParseOptions options = Quiet();
    for (auto _ : state) {
      auto module = hlo::ParseHloText(loaded.text, file, options);
      benchmark::DoNotOptimize(module.get());
    }
    SetThroughputCounters(state, loaded);
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

void BM_Verify(benchmark::State& state, const std::string& file) {
  try {
    const LoadedText loaded = Load(file);
    const auto module = bench::ParseAndVerify(loaded.text, file);
    for (auto _ : state) hlo::Verify(*module);
    SetThroughputCounters(state, loaded);
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

// The 2.3 MB Gemma file takes tens of milliseconds per iteration: report milliseconds.
BENCHMARK_CAPTURE(BM_ParseAndVerify, gemma3_1b_flax_call, std::string("gemma3_1b_flax_call.hlo"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ParseAndVerify, resnet50_keras_jax_f32,
                  std::string("resnet50_keras_jax_f32.hlo"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Parse, gemma3_1b_flax_call, std::string("gemma3_1b_flax_call.hlo"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Parse, resnet50_keras_jax_f32, std::string("resnet50_keras_jax_f32.hlo"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Verify, gemma3_1b_flax_call, std::string("gemma3_1b_flax_call.hlo"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Verify, resnet50_keras_jax_f32, std::string("resnet50_keras_jax_f32.hlo"))
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

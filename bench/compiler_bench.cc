// compiler_bench: how long the shared optimizer takes on the largest corpus module
// (gemma3_1b_flax_call.hlo, ~10k instructions). The floors of docs/perf.md ("Optimizer speed"):
// each basic pass < 100 ms, buffer assignment < 200 ms, the whole CPU pipeline < 1 s. They are
// measured here rather than asserted in the test suite, where a loaded machine would turn them
// into random failures. Run through scripts/bench.sh or directly:
//   build/bin/compiler_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "bench/bench_util.h"
#include "compiler/memory/buffer_assignment.h"
#include "compiler/pass_registry.h"
#include "compiler/target_pipelines.h"
#include "targets/descriptions.h"

namespace {

constexpr char kGemma3[] = "gemma3_1b_flax_call.hlo";

std::unique_ptr<hlo::Module> LoadGemma3() {
  return bench::ParseAndVerify(bench::ReadFileOrThrow(bench::CorpusPath(kGemma3)), kGemma3);
}

// One basic pass on the module the passes before it in the pipeline made (each iteration starts
// from a copy: a pass's second run finds nothing to do).
void BM_BasicPassOnGemma3(benchmark::State& state, const std::string& pass_name) {
  try {
    const compiler::TargetDescription& cpu = targets::CpuDescription();
    std::unique_ptr<hlo::Module> module = LoadGemma3();
    for (const char* earlier : {"call-inliner", "tuple-simplifier", "constant-folding", "cse",
                                "dce"}) {
      if (earlier == pass_name) break;
      compiler::MakePass(earlier, cpu)->Run(*module);
    }
    std::unique_ptr<compiler::Pass> pass = compiler::MakePass(pass_name, cpu);
    for (auto _ : state) {
      state.PauseTiming();
      std::unique_ptr<hlo::Module> copy = module->Clone();
      state.ResumeTiming();
      benchmark::DoNotOptimize(pass->Run(*copy));
      state.PauseTiming();
      copy.reset();
      state.ResumeTiming();
    }
    state.counters["instructions"] = static_cast<double>(module->instruction_count());
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

void BM_BufferAssignmentOnGemma3(benchmark::State& state) {
  try {
    std::unique_ptr<hlo::Module> module = LoadGemma3();
    for (auto _ : state) {
      compiler::BufferAssignment assignment = compiler::AssignBuffers(*module,
                                                                      targets::CpuDescription());
      benchmark::DoNotOptimize(assignment.peak_bytes());
    }
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

void BM_CpuPipelineOnGemma3(benchmark::State& state) {
  try {
    std::unique_ptr<hlo::Module> original = LoadGemma3();
    for (auto _ : state) {
      state.PauseTiming();
      std::unique_ptr<hlo::Module> module = original->Clone();
      compiler::Pipeline pipeline = compiler::MakeTargetPipeline(targets::CpuDescription());
      state.ResumeTiming();
      compiler::PipelineReport report = pipeline.Run(*module, {});
      state.counters["passes_ms"] = report.total_milliseconds;
      state.PauseTiming();
      module.reset();
      state.ResumeTiming();
    }
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_BasicPassOnGemma3, call_inliner, std::string("call-inliner"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BasicPassOnGemma3, tuple_simplifier, std::string("tuple-simplifier"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BasicPassOnGemma3, constant_folding, std::string("constant-folding"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BasicPassOnGemma3, cse, std::string("cse"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BasicPassOnGemma3, dce, std::string("dce"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BasicPassOnGemma3, while_loop_invariant_hoisting,
                  std::string("while-loop-invariant-hoisting"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BufferAssignmentOnGemma3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuPipelineOnGemma3)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

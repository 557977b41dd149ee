// interp_bench: speed of the reference evaluator (hlo/evaluator.h) on its hot spots and on a whole
// model, plus the machine's memcpy bandwidth as a baseline.
//
//   BM_DotF32/512            f32[512,512] x f32[512,512]            -> flop_rate counter
//   BM_Conv3x3NHWC           f32[1,56,56,64] * f32[3,3,64,64], pad 1 -> flop_rate counter
//   BM_ResNet50Batch1        resnet50_keras_jax_f32.hlo end to end, one iteration (the floor:
//                            < 30 s); flop_rate over its dots and convolutions
//   BM_Memcpy/256MiB         std::memcpy bandwidth (bytes copied per second), the yardstick for
//                            data-movement-bound ops
// FLOPs are counted from shapes (bench_util.h), independently of the evaluator. Arguments are
// built and modules parsed outside the timed region. scripts/bench.sh compares these figures with
// numpy/OpenBLAS and writes the JSON results.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "hlo/evaluator.h"

namespace {

// Parses a module, builds its arguments and runs it in the timed loop.
void RunModule(benchmark::State& state, const std::string& text, const std::string& name) {
  try {
    const auto module = bench::ParseAndVerify(text, name);
    const std::vector<hlo::Literal> arguments = bench::MakeArguments(*module);
    const double flops = bench::ContractionFlops(*module);
    for (auto _ : state) {
      hlo::Literal result = hlo::Evaluate(*module, arguments);
      benchmark::DoNotOptimize(result.bytes().data());
    }
    // Shown as e.g. "flop_rate=17.7G/s"; the JSON holds plain FLOP/s and FLOP per run.
    state.counters["flop_rate"] = benchmark::Counter(
        flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
    state.counters["flop_per_run"] = flops;
    state.counters["instructions"] = static_cast<double>(module->instruction_count());
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

void BM_DotF32(benchmark::State& state) {
  const std::string n = std::to_string(state.range(0));
  const std::string matrix = "f32[" + n + "," + n + "]{1,0}";
  const std::string text = "HloModule dot_f32\n\nENTRY main {\n"
                           "  a = " + matrix + " parameter(0)\n"
                           "  b = " + matrix + " parameter(1)\n"
                           "  ROOT d = " + matrix + " dot(a, b), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n}\n";
  RunModule(state, text, "dot_f32.hlo");
}

void BM_Conv3x3NHWC(benchmark::State& state) {
  // ResNet-50's conv2_x 3x3 layer: 56x56x64 -> 56x56x64, stride 1, same padding.
  const std::string text =
      "HloModule conv3x3_nhwc\n\nENTRY main {\n"
      "  input = f32[1,56,56,64]{3,2,1,0} parameter(0)\n"
      "  kernel = f32[3,3,64,64]{3,2,1,0} parameter(1)\n"
      "  ROOT conv = f32[1,56,56,64]{3,2,1,0} convolution(input, kernel), "
      "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";
  RunModule(state, text, "conv3x3_nhwc.hlo");
}

void BM_ResNet50Batch1(benchmark::State& state) {
  try {
    const std::string file = "resnet50_keras_jax_f32.hlo";
    RunModule(state, bench::ReadFileOrThrow(bench::CorpusPath(file)), file);
  } catch (const hlo::Error& e) {
    state.SkipWithError(e.what());
  }
}

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  // Touch both buffers first so page faults are not timed.
  std::vector<char> source(bytes, 1), destination(bytes, 0);
  for (auto _ : state) {
    std::memcpy(destination.data(), source.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes));
}

// Rates use CPU time (Google Benchmark's default): the evaluator is single-threaded and the
// build machines are shared, so CPU time is what the code costs; the JSON has wall time too.
BENCHMARK(BM_DotF32)->Arg(512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv3x3NHWC)->Unit(benchmark::kMillisecond);
// Seconds per run: a single iteration, as the floor is stated for one inference.
BENCHMARK(BM_ResNet50Batch1)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Memcpy)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

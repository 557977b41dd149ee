// bandwidth_bench: the memory-bound yardstick for CPU kernels. std::memcpy between 64 MiB
// buffers vs simple elementwise loops compiled by g++ (-O3), at 1 and 2 threads (cpu::ThreadPool
// splitting the range). The CPU backend's generated elementwise kernels are later compared with
// the same memcpy figure.
//
//   BM_Memcpy/<threads>          dst = src                    (1 read + 1 write stream)
//   BM_ScaleShift/<threads>      y[i] = 2 * x[i] + 1          (1 read + 1 write)
//   BM_Add/<threads>             c[i] = a[i] + b[i]           (2 reads + 1 write)
//   BM_StreamScale/<MiB>/<threads>  y[i] = 3 * x[i] over one pair of MiB-sized buffers, reused
//                                every iteration: STREAM's "scale", the yardstick for a kernel
//                                that reads and writes arrays of that size once per run
//                                (bench/row_kernel_bandwidth.py runs both in one run)
//
// `bytes_per_second` counts bytes read plus bytes written. Four sets of buffers are used in turn
// (4 x 64 MiB per stream) so that consecutive iterations do not find their data in the large L3
// this VM reports. Wall time (UseRealTime), medians over repetitions on a shared machine.
#include <benchmark/benchmark.h>

#include <cstring>
#include <thread>
#include <vector>

#include "targets/cpu/thread_pool.h"

namespace {

constexpr int64_t kFloats = (int64_t{64} << 20) / sizeof(float);  // 64 MiB per buffer
constexpr int kBufferSets = 4;

struct Buffers {
  std::vector<std::vector<float>> streams;  // [set * count + stream]
  int count;
  Buffers(int streams_per_set) : count(streams_per_set) {
    for (int i = 0; i < kBufferSets * streams_per_set; ++i)
      streams.emplace_back(kFloats, 1.0f + i);  // touches every page before timing
  }
  float* Stream(int set, int stream) { return streams[set * count + stream].data(); }
};

// Runs `body(begin, end)` over [0, count) (default: one 64 MiB buffer) on the pool's threads.
template <typename Body>
void Split(cpu::ThreadPool& pool, const Body& body, int64_t count = kFloats) {
  pool.ParallelFor(count, int64_t{1} << 16, body);
}

void SetBytes(benchmark::State& state, int streams) {
  state.SetBytesProcessed(state.iterations() * streams * kFloats * int64_t{sizeof(float)});
}

void BM_Memcpy(benchmark::State& state) {
  Buffers buffers(2);
  cpu::ThreadPool pool(static_cast<int>(state.range(0)));
  int set = 0;
  for (auto _ : state) {
    float* dst = buffers.Stream(set, 0);
    const float* src = buffers.Stream(set, 1);
    Split(pool, [&](int64_t begin, int64_t end) {
      std::memcpy(dst + begin, src + begin, sizeof(float) * (end - begin));
    });
    benchmark::DoNotOptimize(dst);
    set = (set + 1) % kBufferSets;
  }
  SetBytes(state, 2);
}

void BM_ScaleShift(benchmark::State& state) {
  Buffers buffers(2);
  cpu::ThreadPool pool(static_cast<int>(state.range(0)));
  int set = 0;
  for (auto _ : state) {
    float* __restrict y = buffers.Stream(set, 0);
    const float* __restrict x = buffers.Stream(set, 1);
    Split(pool, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = 2.0f * x[i] + 1.0f;
    });
    benchmark::DoNotOptimize(y);
    set = (set + 1) % kBufferSets;
  }
  SetBytes(state, 2);
}

void BM_Add(benchmark::State& state) {
  Buffers buffers(3);
  cpu::ThreadPool pool(static_cast<int>(state.range(0)));
  int set = 0;
  for (auto _ : state) {
    float* __restrict c = buffers.Stream(set, 0);
    const float* __restrict a = buffers.Stream(set, 1);
    const float* __restrict b = buffers.Stream(set, 2);
    Split(pool, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) c[i] = a[i] + b[i];
    });
    benchmark::DoNotOptimize(c);
    set = (set + 1) % kBufferSets;
  }
  SetBytes(state, 3);
}

void BM_StreamScale(benchmark::State& state) {
  const int64_t floats = state.range(0) * (int64_t{1} << 20) / int64_t{sizeof(float)};
  std::vector<float> input(static_cast<size_t>(floats), 1.5f), output(input.size(), 0.0f);
  cpu::ThreadPool pool(static_cast<int>(state.range(1)));
  for (auto _ : state) {
    float* __restrict y = output.data();
    const float* __restrict x = input.data();
    Split(pool, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = 3.0f * x[i];
    }, floats);
    benchmark::DoNotOptimize(y);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * floats * int64_t{sizeof(float)});
}

BENCHMARK(BM_Memcpy)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScaleShift)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Add)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
// 1 and 2 threads, and every core of a larger machine (bench/row_kernel_bandwidth.py asks for
// as many threads as it may use).
void StreamScaleArguments(benchmark::internal::Benchmark* benchmark) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  for (int64_t mib : {8, 32, 64, 256}) {
    for (int threads : {1, 2}) benchmark->Args({mib, threads});
    if (cores > 2) benchmark->Args({mib, cores});
  }
}
BENCHMARK(BM_StreamScale)
    ->Apply(StreamScaleArguments)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

// gemm_bench: cpu::Sgemm / cpu::Conv2D (targets/cpu's runtime) against OpenBLAS's cblas_sgemm and
// Eigen on the same shapes, at 1 and 2 threads (issue 4: "dot and convolution as calls into a
// fast GEMM ... whichever measures faster").
//
//   BM_Sgemm{Ours,OpenBlas,EigenTensor}/<m>/<n>/<k>/<threads>   C = A * B, f32, row-major
//   BM_SgemmEigenMatrix/<m>/<n>/<k>                              Eigen::Matrix product (1 thread:
//                                                                no OpenMP, so Eigen never threads)
//   BM_SgemmKernel/<variant>                                     1024^3, 1 thread, each AVX-512
//                                                                micro-kernel shape (label = shape)
//   BM_Conv{Ours,Im2colOpenBlas}/<threads>                       ResNet-50 conv2_x 3x3
//   BM_ConvDepthwise{Direct,Gemm}/<threads>                      MobileNet 3x3 depthwise layer
//   BM_FmaPeak/<threads>                                         the machine's FMA peak: 12
//                                                                independent 512-bit (else
//                                                                256-bit) FMA chains per thread
//
// Every benchmark uses wall time (UseRealTime): with 2 threads the caller's CPU time would miss
// the worker. `gflops` is 2*m*n*k (or the convolution's MACs x 2) per second of wall time. The
// machine is shared: bench/cpu_runtime_numbers.sh runs repetitions, randomly interleaved, and
// also reports one-thread rates by CPU time. Run with OPENBLAS_CORETYPE=SkylakeX on Xeons that
// Debian's OpenBLAS 0.3.21 does not recognize (the label shows the core used). This file is
// compiled with AVX-512 flags where the build machine has them, for Eigen (bench/CMakeLists.txt).
#include <benchmark/benchmark.h>
#include <cblas.h>

#define EIGEN_USE_THREADS
#include <Eigen/Dense>
#include <unsupported/Eigen/CXX11/Tensor>

#include <immintrin.h>

#include <random>
#include <string>
#include <vector>

#include "targets/cpu/gemm.h"
#include "targets/cpu/gemm_conv.h"
#include "targets/cpu/gemm_driver.h"
#include "targets/cpu/gemm_kernels.h"
#include "targets/cpu/thread_pool.h"

namespace {

std::vector<float> RandomVector(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(size);
  for (float& x : v) x = dist(rng);
  return v;
}

// Debian's OpenBLAS 0.3.21 does not recognize recent Xeons and falls back to its Prescott (SSE3)
// kernels, ~4.6x slower here; OPENBLAS_CORETYPE=SkylakeX selects its AVX-512 kernels. The label
// shows which ran so that a table never compares against the wrong one by accident.
void OpenBlasLabel(benchmark::State& state) {
  state.SetLabel(std::string("openblas core=") + openblas_get_corename());
}

void SetFlops(benchmark::State& state, double flops_per_iteration) {
  state.counters["gflops"] = benchmark::Counter(
      flops_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

struct Matrices {
  int64_t m, n, k;
  std::vector<float> a, b, c;
  explicit Matrices(const benchmark::State& state)
      : m(state.range(0)), n(state.range(1)), k(state.range(2)),
        a(RandomVector(m * k, 1)), b(RandomVector(k * n, 2)), c(m * n, 0.0f) {}
  double Flops() const { return 2.0 * m * n * k; }
};

void BM_SgemmOurs(benchmark::State& state) {
  Matrices x(state);
  cpu::ThreadPool pool(static_cast<int>(state.range(3)));
  cpu::GemmArgs args;
  args.m = x.m, args.n = x.n, args.k = x.k;
  args.a = x.a.data(), args.lda = x.k;
  args.b = x.b.data(), args.ldb = x.n;
  args.c = x.c.data(), args.ldc = x.n;
  for (auto _ : state) {
    cpu::Sgemm(args, &pool);
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, x.Flops());
  state.SetLabel(cpu::GemmKernelName());
}

void BM_SgemmOpenBlas(benchmark::State& state) {
  Matrices x(state);
  openblas_set_num_threads(static_cast<int>(state.range(3)));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x.m, x.n, x.k, 1.0f, x.a.data(), x.k,
                x.b.data(), x.n, 0.0f, x.c.data(), x.n);
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, x.Flops());
  OpenBlasLabel(state);
}

void BM_SgemmEigenTensor(benchmark::State& state) {
  Matrices x(state);
  const int threads = static_cast<int>(state.range(3));
  Eigen::ThreadPool eigen_pool(threads);
  Eigen::ThreadPoolDevice device(&eigen_pool, threads);
  using Tensor2 = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>>;
  Tensor2 a(x.a.data(), x.m, x.k), b(x.b.data(), x.k, x.n), c(x.c.data(), x.m, x.n);
  const Eigen::array<Eigen::IndexPair<int>, 1> contract = {Eigen::IndexPair<int>(1, 0)};
  for (auto _ : state) {
    c.device(device) = a.contract(b, contract);
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, x.Flops());
  state.SetLabel(std::string("eigen ") + Eigen::SimdInstructionSetsInUse());
}

void BM_SgemmEigenMatrix(benchmark::State& state) {
  Matrices x(state);
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<Matrix> a(x.a.data(), x.m, x.k), b(x.b.data(), x.k, x.n), c(x.c.data(), x.m, x.n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, x.Flops());
  state.SetLabel(std::string("eigen ") + Eigen::SimdInstructionSetsInUse() +
                 " threads=" + std::to_string(Eigen::nbThreads()));
}

void BM_SgemmKernel(benchmark::State& state) {
  const std::vector<cpu::gemm_detail::MicroKernel> kernels = cpu::gemm_detail::Avx512Kernels();
  if (state.range(0) >= static_cast<int64_t>(kernels.size())) {
    state.SkipWithError("no such AVX-512 kernel on this CPU");
    return;
  }
  const cpu::gemm_detail::MicroKernel& kernel = kernels[state.range(0)];
  const int64_t size = 1024;
  std::vector<float> a = RandomVector(size * size, 1), b = RandomVector(size * size, 2);
  std::vector<float> c(size * size);
  const cpu::gemm_detail::MatrixAPacker packer(a.data(), size, false);
  cpu::gemm_detail::DriverArgs d;
  d.m = d.n = d.k = size;
  d.a = &packer, d.b = b.data(), d.ldb = size, d.c = c.data(), d.ldc = size;
  for (auto _ : state) {
    cpu::gemm_detail::RunGemm(d, nullptr, kernel);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * size * size * size);
  state.SetLabel(kernel.name);
}

// ResNet-50 conv2_x: 1x56x56x64 * 3x3x64x64, stride 1, padding 1.
struct ResNetConv {
  std::vector<float> input = RandomVector(56 * 56 * 64, 3), filter = RandomVector(9 * 64 * 64, 4);
  std::vector<float> output = std::vector<float>(56 * 56 * 64);
  cpu::Conv2DArgs Args() {
    cpu::Conv2DArgs a;
    a.batch = 1, a.in_h = a.in_w = 56, a.in_c = 64, a.k_h = a.k_w = 3, a.out_c = 64;
    a.out_h = a.out_w = 56, a.pad_top = a.pad_left = 1;
    a.input = input.data(), a.filter = filter.data(), a.output = output.data();
    return a;
  }
  static double Flops() { return 2.0 * 56 * 56 * 64 * 9 * 64; }
};

void BM_ConvOurs(benchmark::State& state) {
  ResNetConv conv;
  cpu::ThreadPool pool(static_cast<int>(state.range(0)));
  const cpu::Conv2DArgs args = conv.Args();
  for (auto _ : state) {
    cpu::Conv2D(args, &pool);
    benchmark::DoNotOptimize(conv.output.data());
  }
  SetFlops(state, ResNetConv::Flops());
}

// The textbook alternative: materialize the whole im2col matrix (3136 x 576, 7 MiB) and call
// OpenBLAS. The im2col is part of the timed work, as it would be in a real lowering.
void BM_ConvIm2colOpenBlas(benchmark::State& state) {
  ResNetConv conv;
  openblas_set_num_threads(static_cast<int>(state.range(0)));
  std::vector<float> columns(56 * 56 * 576);
  for (auto _ : state) {
    for (int oh = 0; oh < 56; ++oh)
      for (int ow = 0; ow < 56; ++ow)
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            float* dst = columns.data() + (oh * 56 + ow) * 576 + (kh * 3 + kw) * 64;
            const int ih = oh + kh - 1, iw = ow + kw - 1;
            if (ih < 0 || ih >= 56 || iw < 0 || iw >= 56) {
              std::fill(dst, dst + 64, 0.0f);
            } else {
              std::copy_n(conv.input.data() + (ih * 56 + iw) * 64, 64, dst);
            }
          }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 3136, 64, 576, 1.0f, columns.data(),
                576, conv.filter.data(), 64, 0.0f, conv.output.data(), 64);
    benchmark::DoNotOptimize(conv.output.data());
  }
  SetFlops(state, ResNetConv::Flops());
  OpenBlasLabel(state);
}

// MobileNet v1's first depthwise layer: 1x112x112x32, 3x3, stride 1, padding 1, multiplier 1.
void RunDepthwise(benchmark::State& state, cpu::gemm_detail::ConvPath path) {
  std::vector<float> input = RandomVector(112 * 112 * 32, 5), filter = RandomVector(9 * 32, 6);
  std::vector<float> output(112 * 112 * 32);
  cpu::ThreadPool pool(static_cast<int>(state.range(0)));
  cpu::Conv2DArgs a;
  a.batch = 1, a.in_h = a.in_w = 112, a.in_c = 32, a.k_h = a.k_w = 3, a.out_c = 32;
  a.out_h = a.out_w = 112, a.pad_top = a.pad_left = 1, a.feature_groups = 32;
  a.input = input.data(), a.filter = filter.data(), a.output = output.data();
  for (auto _ : state) {
    cpu::gemm_detail::Conv2DWithPath(a, &pool, path);
    benchmark::DoNotOptimize(output.data());
  }
  SetFlops(state, 2.0 * 112 * 112 * 32 * 9);
}
void BM_ConvDepthwiseDirect(benchmark::State& state) {
  RunDepthwise(state, cpu::gemm_detail::ConvPath::kDirectDepthwise);
}
void BM_ConvDepthwiseGemm(benchmark::State& state) {
  RunDepthwise(state, cpu::gemm_detail::ConvPath::kGemm);
}

// Square sizes, plus ResNet's 3x3 conv as a GEMM (3136 x 64 x 576) and a batch-1 dense layer.
void GemmShapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    for (int size : {256, 512, 1024}) b->Args({size, size, size, threads});
    b->Args({3136, 64, 576, threads});
    b->Args({1, 4096, 4096, threads});
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

// Floating-point operations per second the cores can issue: 12 independent FMA chains (more than
// FMA latency x FMA ports on any x86 core) on registers only, no memory traffic. The yardstick
// for "GEMM at N % of peak".
void BM_FmaPeak(benchmark::State& state) {
#if defined(__AVX512F__)
  using Vector = __m512;
  constexpr int kLanes = 16;
  auto fma = [](Vector a, Vector b, Vector c) { return _mm512_fmadd_ps(a, b, c); };
  auto splat = [](float x) { return _mm512_set1_ps(x); };
  auto sum = [](Vector v) { return _mm512_reduce_add_ps(v); };
#elif defined(__FMA__)
  using Vector = __m256;
  constexpr int kLanes = 8;
  auto fma = [](Vector a, Vector b, Vector c) { return _mm256_fmadd_ps(a, b, c); };
  auto splat = [](float x) { return _mm256_set1_ps(x); };
  auto sum = [](Vector v) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, v);
    float total = 0;
    for (float lane : lanes) total += lane;
    return total;
  };
#else
  state.SkipWithError("built without FMA instructions");
  return;
#endif
#if defined(__AVX512F__) || defined(__FMA__)
  constexpr int kChains = 12;
  constexpr int64_t kSteps = 1 << 20;
  const int threads = static_cast<int>(state.range(0));
  cpu::ThreadPool pool(threads);
  std::vector<float> sink(static_cast<size_t>(threads), 0.0f);
  for (auto _ : state) {
    pool.ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        Vector chains[kChains];
        for (int i = 0; i < kChains; ++i) chains[i] = splat(1.0f + 0.01f * static_cast<float>(i));
        const Vector scale = splat(0.999999f), shift = splat(1e-7f);
        for (int64_t step = 0; step < kSteps; ++step) {
          for (int i = 0; i < kChains; ++i) chains[i] = fma(chains[i], scale, shift);
        }
        float total = 0;
        for (int i = 0; i < kChains; ++i) total += sum(chains[i]);
        sink[static_cast<size_t>(t)] = total;
      }
    });
    benchmark::DoNotOptimize(sink.data());
  }
  SetFlops(state, 2.0 * kLanes * kChains * static_cast<double>(kSteps) * threads);
#endif
}

BENCHMARK(BM_SgemmOurs)->Apply(GemmShapes);
BENCHMARK(BM_SgemmOpenBlas)->Apply(GemmShapes);
BENCHMARK(BM_SgemmEigenTensor)->Apply(GemmShapes);
BENCHMARK(BM_SgemmEigenMatrix)->Args({1024, 1024, 1024, 1})->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SgemmKernel)->DenseRange(0, 3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvOurs)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvIm2colOpenBlas)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvDepthwiseDirect)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvDepthwiseGemm)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FmaPeak)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

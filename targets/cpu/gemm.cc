// cpu::Sgemm / SgemmBatched: argument checks, then the blocked driver (gemm_driver.h) with the
// best micro-kernel of this CPU (gemm_kernels.h), or, for a few rows, the unpacked streaming loop
// (gemm_small_m.h).
//
// Guarantees: bad arguments (negative sizes, null pointers for non-empty operands, leading
// dimensions smaller than a row) throw hlo::Error before any memory is touched.
#include "targets/cpu/gemm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "targets/cpu/gemm_driver.h"
#include "targets/cpu/gemm_kernels.h"
#include "targets/cpu/gemm_small_m.h"

namespace cpu {
namespace {

void Check(bool ok, const std::string& message) {
  if (!ok) throw hlo::Error("sgemm: " + message);
}

void ValidateGemmArgs(const GemmArgs& args) {
  Check(args.m >= 0 && args.n >= 0 && args.k >= 0,
        "negative size m=" + std::to_string(args.m) + " n=" + std::to_string(args.n) +
            " k=" + std::to_string(args.k));
  if (args.m == 0 || args.n == 0) return;
  Check(args.c != nullptr, "C is null");
  Check(args.ldc >= args.n, "ldc " + std::to_string(args.ldc) + " < n " + std::to_string(args.n));
  if (args.k == 0) return;
  Check(args.a != nullptr && args.b != nullptr, "A or B is null");
  const int64_t a_row = args.trans_a ? args.m : args.k;
  const int64_t b_row = args.trans_b ? args.k : args.n;
  Check(args.lda >= a_row, "lda " + std::to_string(args.lda) + " < " + std::to_string(a_row));
  Check(args.ldb >= b_row, "ldb " + std::to_string(args.ldb) + " < " + std::to_string(b_row));
}

void RunOne(const GemmArgs& args, int64_t batch_index, ThreadPool* pool) {
  if (args.m <= gemm_detail::kSmallM && !args.trans_b) {
    gemm_detail::SmallMGemm(args, batch_index, pool);
    return;
  }
  const gemm_detail::MatrixAPacker a(args.a, args.lda, args.trans_a);
  gemm_detail::DriverArgs driver;
  driver.m = args.m;
  driver.n = args.n;
  driver.k = args.k;
  driver.a = &a;
  driver.b = args.b;
  driver.ldb = args.ldb;
  driver.trans_b = args.trans_b;
  driver.c = args.c;
  driver.ldc = args.ldc;
  driver.accumulate = args.accumulate;
  driver.epilogue = &args.epilogue;
  driver.batch_index = batch_index;
  gemm_detail::RunGemm(driver, pool, gemm_detail::KernelForShape(args.m, args.n));
}

}  // namespace

void Sgemm(const GemmArgs& args, ThreadPool* pool) {
  ValidateGemmArgs(args);
  RunOne(args, 0, pool);
}

void SgemmBatched(const GemmArgs& args, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c, ThreadPool* pool) {
  Check(batch >= 0, "negative batch " + std::to_string(batch));
  Check(stride_a >= 0 && stride_b >= 0 && stride_c >= 0, "negative batch stride");
  ValidateGemmArgs(args);
  if (batch == 0 || args.m == 0 || args.n == 0) return;
  auto run_range = [&](int64_t begin, int64_t end, ThreadPool* inner_pool) {
    for (int64_t i = begin; i < end; ++i) {
      GemmArgs one = args;
      if (one.a) one.a += i * stride_a;
      if (one.b) one.b += i * stride_b;
      one.c += i * stride_c;
      RunOne(one, i, inner_pool);
    }
  };
  // Many small GEMMs: one per thread at a time (each then runs inline). Few large ones: one
  // after the other, each parallel inside.
  const int64_t threads = pool ? pool->threads() : 1;
  const double macs = static_cast<double>(args.m) * static_cast<double>(args.n) *
                      std::max<double>(args.k, 1);  // double: may exceed int64
  if (pool && batch >= threads && macs < double{1 << 24}) {
    pool->ParallelFor(batch, 1, [&](int64_t begin, int64_t end) { run_range(begin, end, nullptr); });
  } else {
    run_range(0, batch, pool);
  }
}

const char* GemmKernelName() {
  // "avx512 6x64 (+3 shapes)": the preferred kernel, and how many others KernelForShape may use.
  static const std::string name = [] {
    const gemm_detail::MicroKernel& best = gemm_detail::BestKernel();
    const std::vector<gemm_detail::MicroKernel> avx512 = gemm_detail::Avx512Kernels();
    const bool is_avx512 = !avx512.empty() && avx512.front().fn == best.fn;
    std::string text = best.name;
    if (is_avx512) {
      text += " (+";
      text += std::to_string(avx512.size() - 1);
      text += " shapes)";
    }
    return text;
  }();
  return name.c_str();
}

}  // namespace cpu

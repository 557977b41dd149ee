// cpu::Sgemm / SgemmBatched against a naive double-precision reference: odd and degenerate
// shapes, transposes, padded leading dimensions, accumulation, every micro-kernel this CPU has,
// epilogue coverage, re-entrancy, and argument errors.
#include "targets/cpu/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <atomic>
#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "targets/cpu/gemm_driver.h"
#include "targets/cpu/gemm_kernels.h"
#include "targets/cpu/gemm_rows.h"
#include "targets/cpu/thread_pool.h"

namespace {

constexpr float kSentinel = 12345.0f;  // fills the padding beyond each row; must survive

struct Problem {
  int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  int64_t pad = 0;  // extra elements per row in A, B and C
  bool accumulate = false;
};

std::string Describe(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
         (p.trans_a ? " At" : "") + (p.trans_b ? " Bt" : "") + " pad " + std::to_string(p.pad) +
         (p.accumulate ? " acc" : "");
}

// Operands in [-1, 1) (so max|a| * max|b| <= 1), C padded with sentinels.
struct Operands {
  int64_t lda, ldb, ldc;
  std::vector<float> a, b, c;
  std::vector<double> expected;  // row-major m x n

  Operands(const Problem& p, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const int64_t a_rows = p.trans_a ? p.k : p.m, a_cols = p.trans_a ? p.m : p.k;
    const int64_t b_rows = p.trans_b ? p.n : p.k, b_cols = p.trans_b ? p.k : p.n;
    lda = a_cols + p.pad;
    ldb = b_cols + p.pad;
    ldc = p.n + p.pad;
    a.assign(std::max<int64_t>(a_rows * lda, 1), kSentinel);
    b.assign(std::max<int64_t>(b_rows * ldb, 1), kSentinel);
    c.assign(std::max<int64_t>(p.m * ldc, 1), kSentinel);
    for (int64_t r = 0; r < a_rows; ++r)
      for (int64_t col = 0; col < a_cols; ++col) a[r * lda + col] = dist(rng);
    for (int64_t r = 0; r < b_rows; ++r)
      for (int64_t col = 0; col < b_cols; ++col) b[r * ldb + col] = dist(rng);
    for (int64_t r = 0; r < p.m; ++r)
      for (int64_t col = 0; col < p.n; ++col) c[r * ldc + col] = p.accumulate ? dist(rng) : NAN;
    // The reference: a triple loop in double, reading the operands through their own indexing.
    expected.assign(p.m * p.n, 0.0);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        double sum = p.accumulate ? c[i * ldc + j] : 0.0;
        for (int64_t q = 0; q < p.k; ++q) {
          const double x = p.trans_a ? a[q * lda + i] : a[i * lda + q];
          const double y = p.trans_b ? b[j * ldb + q] : b[q * ldb + j];
          sum += x * y;
        }
        expected[i * p.n + j] = sum;
      }
  }

  cpu::GemmArgs Args(const Problem& p) {
    cpu::GemmArgs args;
    args.m = p.m, args.n = p.n, args.k = p.k;
    args.a = a.data(), args.lda = lda, args.trans_a = p.trans_a;
    args.b = b.data(), args.ldb = ldb, args.trans_b = p.trans_b;
    args.c = c.data(), args.ldc = ldc, args.accumulate = p.accumulate;
    return args;
  }

  // |err| <= 1e-5 * k * max|a| * max|b| (+ slack for the accumulated C), and padding untouched.
  void ExpectMatches(const Problem& p) const {
    const double tolerance = 1e-5 * std::max<int64_t>(p.k, 1) + (p.accumulate ? 1e-6 : 0.0);
    int reported = 0;
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        const double got = c[i * ldc + j], want = expected[i * p.n + j];
        if (!(std::abs(got - want) <= tolerance) && reported++ < 5)
          ADD_FAILURE() << Describe(p) << ": C[" << i << "][" << j << "] = " << got
                        << ", expected " << want;
      }
      for (int64_t j = p.n; j < ldc; ++j)
        if (c[i * ldc + j] != kSentinel && reported++ < 5)
          ADD_FAILURE() << Describe(p) << ": padding C[" << i << "][" << j << "] overwritten";
    }
  }
};

std::vector<Problem> Shapes() {
  std::vector<Problem> shapes;
  const int64_t sizes[][3] = {{1, 1, 1},    {1, 1, 7},     {3, 5, 2},      {13, 17, 19},
                              {1, 100, 37}, {37, 1, 100},  {14, 32, 256},  {15, 33, 257},
                              {29, 65, 600}, {300, 70, 40}, {130, 131, 129}, {2, 4200, 3}};
  int variant = 0;
  for (const auto& s : sizes) {
    for (int t = 0; t < 4; ++t) {
      Problem p{s[0], s[1], s[2]};
      p.trans_a = t & 1;
      p.trans_b = t & 2;
      p.pad = (variant % 3) * 3;  // 0, 3, 6
      p.accumulate = variant % 2 == 1;
      shapes.push_back(p);
      ++variant;
    }
  }
  return shapes;
}

TEST(Sgemm, MatchesReferenceSingleThreaded) {
  uint32_t seed = 1;
  for (const Problem& p : Shapes()) {
    Operands ops(p, seed++);
    cpu::Sgemm(ops.Args(p), nullptr);
    ops.ExpectMatches(p);
  }
}

TEST(Sgemm, MatchesReferenceOnPool) {
  cpu::ThreadPool pool(2);
  uint32_t seed = 100;
  for (Problem p : Shapes()) {
    Operands ops(p, seed++);
    cpu::Sgemm(ops.Args(p), &pool);
    ops.ExpectMatches(p);
  }
  // Large enough to be split across threads in rows and k-blocks.
  Problem big{517, 300, 700, true, false, 5, true};
  Operands ops(big, 7);
  cpu::Sgemm(ops.Args(big), &pool);
  ops.ExpectMatches(big);
}

TEST(Sgemm, EveryMicroKernelMatches) {
  using cpu::gemm_detail::MicroKernel;
  std::vector<MicroKernel> kernels = cpu::gemm_detail::Avx512Kernels();
  if (const MicroKernel* avx2 = cpu::gemm_detail::Avx2Kernel()) kernels.push_back(*avx2);
  kernels.push_back(cpu::gemm_detail::PortableKernel());
  cpu::ThreadPool pool(2);
  for (const MicroKernel& kernel : kernels) {
    SCOPED_TRACE(kernel.name);
    for (Problem p : {Problem{1, 1, 1}, Problem{23, 71, 300, false, true, 2, true},
                      Problem{100, 90, 80, true, false, 0, false}}) {
      Operands ops(p, 3);
      const cpu::gemm_detail::MatrixAPacker a(ops.a.data(), ops.lda, p.trans_a);
      cpu::gemm_detail::DriverArgs d;
      d.m = p.m, d.n = p.n, d.k = p.k, d.a = &a;
      d.b = ops.b.data(), d.ldb = ops.ldb, d.trans_b = p.trans_b;
      d.c = ops.c.data(), d.ldc = ops.ldc, d.accumulate = p.accumulate;
      cpu::gemm_detail::RunGemm(d, &pool, kernel);
      ops.ExpectMatches(p);
    }
  }
}

TEST(Sgemm, KernelNameNamesTheInstructionSet) {
  const std::string name = cpu::GemmKernelName();
  EXPECT_TRUE(name.rfind("avx512", 0) == 0 || name.rfind("avx2", 0) == 0 ||
              name.rfind("portable", 0) == 0)
      << name;
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(name.rfind("avx512", 0), 0u) << name;
  }
}

TEST(Sgemm, KernelForShapeAvoidsWastefulTiles) {
  if (cpu::gemm_detail::Avx512Kernels().empty()) GTEST_SKIP() << "no AVX-512 on this CPU";
  using cpu::gemm_detail::KernelForShape;
  EXPECT_STREQ(KernelForShape(1024, 1024).name, "avx512 6x64");
  EXPECT_STREQ(KernelForShape(784, 128).name, "avx512 6x64");  // 0.3% padding: keep preferred
  EXPECT_STREQ(KernelForShape(100, 32).name, "avx512 14x32");  // 6x64 would do twice the work
  EXPECT_STREQ(KernelForShape(16, 48).name, "avx512 8x48");
}

TEST(Sgemm, ZeroSizes) {
  // m or n == 0: nothing is touched, no epilogue.
  for (Problem p : {Problem{0, 5, 3}, Problem{5, 0, 3}}) {
    Operands ops(p, 1);
    cpu::GemmArgs args = ops.Args(p);
    int calls = 0;
    args.epilogue = [&](const cpu::GemmBlock&) { ++calls; };
    cpu::Sgemm(args, nullptr);
    EXPECT_EQ(calls, 0);
  }
  // k == 0: an empty sum. C = 0, or unchanged when accumulating; epilogues still run.
  for (bool accumulate : {false, true}) {
    Problem p{6, 5, 0, false, false, 2, accumulate};
    Operands ops(p, 2);
    cpu::GemmArgs args = ops.Args(p);
    args.a = nullptr;
    args.b = nullptr;
    int64_t covered = 0;
    args.epilogue = [&](const cpu::GemmBlock& block) { covered += block.rows * block.cols; };
    cpu::Sgemm(args, nullptr);
    ops.ExpectMatches(p);
    EXPECT_EQ(covered, 30);
  }
}

// Every element of C belongs to exactly one epilogue block, which sees the finished values.
void CheckEpilogueCoverage(int64_t m, int64_t n, int64_t k, cpu::ThreadPool* pool) {
  Problem p{m, n, k, false, false, 1, false};
  Operands ops(p, 11);
  cpu::GemmArgs args = ops.Args(p);
  std::vector<std::atomic<int>> seen(m * n);
  std::atomic<int> wrong_values{0};
  args.epilogue = [&](const cpu::GemmBlock& block) {
    EXPECT_EQ(block.c, ops.c.data() + block.row * ops.ldc + block.col);
    EXPECT_EQ(block.ldc, ops.ldc);
    EXPECT_GT(block.rows, 0);
    EXPECT_GT(block.cols, 0);
    for (int64_t i = block.row; i < block.row + block.rows; ++i)
      for (int64_t j = block.col; j < block.col + block.cols; ++j) {
        seen[i * n + j].fetch_add(1);
        if (std::abs(ops.c[i * ops.ldc + j] - ops.expected[i * n + j]) > 1e-5 * k) ++wrong_values;
        ops.c[i * ops.ldc + j] = 2.0f * ops.c[i * ops.ldc + j] + 1.0f;  // e.g. a fused epilogue
      }
  };
  cpu::Sgemm(args, pool);
  for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(seen[i].load(), 1) << "element " << i;
  EXPECT_EQ(wrong_values.load(), 0);
  for (double& e : ops.expected) e = 2.0 * e + 1.0;
  ops.ExpectMatches(p);
}

TEST(Sgemm, EpilogueSeesEveryFinishedBlockOnce) {
  cpu::ThreadPool pool(2);
  CheckEpilogueCoverage(1, 1, 1, nullptr);
  CheckEpilogueCoverage(700, 50, 600, &pool);  // several row blocks and k-blocks
  CheckEpilogueCoverage(3, 500, 64, &pool);    // few rows: the unpacked small-m path
  CheckEpilogueCoverage(4, 9000, 41, &pool);   // small-m path, one column chunk per thread
  CheckEpilogueCoverage(5, 700, 64, &pool);    // just above small-m: driver splits columns
  CheckEpilogueCoverage(40, 4100, 8, nullptr); // more than one column block (NC = 4096)
}

TEST(Sgemm, EpilogueMayRunAGemmItself) {
  // Re-entrancy: the inner GEMM must not clobber the outer one's thread-local packing buffers.
  Problem outer{300, 200, 300};
  Operands ops(outer, 21);
  Problem inner{40, 40, 300};
  Operands inner_ops(inner, 22);
  cpu::GemmArgs args = ops.Args(outer);
  args.epilogue = [&](const cpu::GemmBlock&) {
    std::fill(inner_ops.c.begin(), inner_ops.c.end(), 0.0f);
    cpu::Sgemm(inner_ops.Args(inner), nullptr);
  };
  cpu::Sgemm(args, nullptr);
  ops.ExpectMatches(outer);
  inner_ops.ExpectMatches(inner);
}

TEST(Sgemm, NestedInsideParallelFor) {
  cpu::ThreadPool pool(2);
  Problem p{65, 70, 300};
  std::vector<Operands> ops;
  for (uint32_t s = 0; s < 4; ++s) ops.emplace_back(p, 30 + s);
  pool.ParallelFor(4, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) cpu::Sgemm(ops[i].Args(p), &pool);
  });
  for (const Operands& o : ops) o.ExpectMatches(p);
}

TEST(SgemmBatched, EachBatchMatchesAndEpilogueKnowsItsBatch) {
  cpu::ThreadPool pool(2);
  for (int64_t batch : {int64_t{1}, int64_t{5}}) {
    for (Problem p : {Problem{7, 9, 11, true, false, 0, false}, Problem{300, 130, 270}}) {
      std::vector<Operands> ops;
      for (int64_t i = 0; i < batch; ++i) ops.emplace_back(p, 50 + i);
      // Lay the batch out contiguously with fixed strides.
      const int64_t sa = ops[0].a.size(), sb = ops[0].b.size(), sc = ops[0].c.size();
      std::vector<float> a, b, c;
      for (const Operands& o : ops) {
        a.insert(a.end(), o.a.begin(), o.a.end());
        b.insert(b.end(), o.b.begin(), o.b.end());
        c.insert(c.end(), o.c.begin(), o.c.end());
      }
      cpu::GemmArgs args = ops[0].Args(p);
      args.a = a.data(), args.b = b.data(), args.c = c.data();
      std::mutex mutex;
      std::vector<int64_t> covered(batch, 0);
      args.epilogue = [&](const cpu::GemmBlock& block) {
        std::lock_guard<std::mutex> lock(mutex);
        ASSERT_GE(block.batch, 0);
        ASSERT_LT(block.batch, batch);
        EXPECT_EQ(block.c, c.data() + block.batch * sc + block.row * block.ldc + block.col);
        covered[block.batch] += block.rows * block.cols;
      };
      cpu::SgemmBatched(args, batch, sa, sb, sc, &pool);
      for (int64_t i = 0; i < batch; ++i) {
        std::copy(c.begin() + i * sc, c.begin() + (i + 1) * sc, ops[i].c.begin());
        ops[i].ExpectMatches(p);
        EXPECT_EQ(covered[i], p.m * p.n);
      }
    }
  }
}

void ExpectError(const cpu::GemmArgs& args, const std::string& fragment) {
  try {
    cpu::Sgemm(args, nullptr);
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find(fragment), std::string::npos) << error.message();
  }
}

TEST(Sgemm, RejectsBadArguments) {
  std::vector<float> buffer(64, 0.0f);
  cpu::GemmArgs good;
  good.m = 4, good.n = 4, good.k = 4;
  good.a = good.b = buffer.data();
  good.c = buffer.data() + 32;
  good.lda = good.ldb = good.ldc = 4;
  cpu::Sgemm(good, nullptr);  // sanity: valid as given

  cpu::GemmArgs bad = good;
  bad.m = -1;
  ExpectError(bad, "negative size m=-1");
  bad = good;
  bad.ldc = 3;
  ExpectError(bad, "ldc 3 < n 4");
  bad = good;
  bad.trans_a = true;
  bad.m = 5;
  bad.lda = 4;
  ExpectError(bad, "lda 4 < 5");
  bad = good;
  bad.ldb = 2;
  ExpectError(bad, "ldb 2 < 4");
  bad = good;
  bad.b = nullptr;
  ExpectError(bad, "A or B is null");
  bad = good;
  bad.c = nullptr;
  ExpectError(bad, "C is null");
  EXPECT_THROW(cpu::SgemmBatched(good, -1, 0, 0, 0, nullptr), hlo::Error);
  EXPECT_THROW(cpu::SgemmBatched(good, 2, -16, 0, 0, nullptr), hlo::Error);
}

// GemmTransposedRows: C = A · Bᵀ with B's n rows of k elements in f32 or bf16 bits, for every m
// from 1 to 16, k below, at and beyond the 16 lanes (tails), against a double reference of the
// same (bf16-rounded) values; every column chunk's epilogue sees its finished values once.
TEST(GemmTransposedRows, MatchesReferenceForEveryRowCountInF32AndBf16) {
  cpu::ThreadPool pool(2);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (bool bf16 : {false, true}) {
    for (int64_t m = 1; m <= cpu::kTransposedRowsMaxM; ++m) {
      for (int64_t k : {1, 15, 16, 37, 300}) {
        const int64_t n = m % 2 == 0 ? 700 : 3;  // several chunks of 256 columns, or one
        const int64_t lda = k + 2, ldc = n + 1;
        std::vector<float> a(m * lda, kSentinel), b(n * k), c(m * ldc, kSentinel);
        std::vector<uint16_t> b_bits(n * k);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) a[i * lda + p] = dist(rng);
        for (int64_t i = 0; i < n * k; ++i) {
          b_bits[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(dist(rng)) >> 16);
          b[i] = bf16 ? std::bit_cast<float>(static_cast<uint32_t>(b_bits[i]) << 16) : dist(rng);
        }
        cpu::TransposedRowsArgs args;
        args.m = m, args.n = n, args.k = k;
        args.a = a.data(), args.lda = lda;
        args.b = bf16 ? static_cast<const void*>(b_bits.data()) : b.data();
        args.b_bf16 = bf16;
        args.c = c.data(), args.ldc = ldc;
        std::vector<std::atomic<int>> seen(m * n);
        args.epilogue = [&](const cpu::GemmBlock& block) {
          EXPECT_EQ(block.row, 0);
          EXPECT_EQ(block.rows, m);
          EXPECT_EQ(block.c, c.data() + block.col);
          for (int64_t i = 0; i < block.rows; ++i)
            for (int64_t j = block.col; j < block.col + block.cols; ++j) seen[i * n + j] += 1;
        };
        cpu::GemmTransposedRows(args, m % 3 == 0 ? nullptr : &pool);
        int reported = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t p = 0; p < k; ++p)
              want += static_cast<double>(a[i * lda + p]) * static_cast<double>(b[j * k + p]);
            const double got = c[i * ldc + j];
            if (!(std::abs(got - want) <= 1e-5 * static_cast<double>(k)) && reported++ < 3)
              ADD_FAILURE() << (bf16 ? "bf16" : "f32") << " m=" << m << " k=" << k << ": C[" << i
                            << "][" << j << "] = " << got << ", expected " << want;
            if (seen[i * n + j].load() != 1 && reported++ < 3)
              ADD_FAILURE() << "element " << i << "," << j << " in " << seen[i * n + j].load()
                            << " epilogue blocks";
          }
          EXPECT_EQ(c[i * ldc + n], kSentinel);  // the row's padding is left alone
        }
      }
    }
  }
}

}  // namespace

// Tests of the evaluator's contraction family: dot, convolution and batch-norm-*.
//
// dot is checked against hand values and a direct triple-sum formula; convolution against a
// reference written differently from the implementation (it materializes the padded, base-
// dilated input and the window-dilated, reversed kernel, then runs a plain valid correlation),
// over several dim_labels permutations, strides, negative padding, dilations, reversal,
// feature groups and batch groups. batch-norm uses hand-computed values. Two timing tests print
// GFLOP/s for the report (they assert correctness, not speed, so a loaded machine cannot fail
// them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "hlo/evaluator.h"
#include "hlo/evaluator_internal.h"
#include "tests/test_support.h"

namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

constexpr double kInf = std::numeric_limits<double>::infinity();

Literal Make(PrimitiveType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal literal(Shape::Array(type, std::move(dims)));
  EXPECT_EQ(static_cast<int64_t>(values.size()), literal.element_count());
  for (size_t i = 0; i < values.size(); ++i)
    literal.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return literal;
}

// Small integers from a fixed formula: sums of their products are exact in f32.
std::vector<double> Pattern(int64_t count, int64_t seed) {
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<double>((i * 7 + seed * 3) % 11 - 5);
  return v;
}

std::vector<double> Values(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

// CPU time of this thread in seconds: the evaluator is single-threaded, and CPU time stays
// meaningful when the machine is shared (wall time then mostly measures the other processes).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Literal EvalHlo(const std::string& text, std::vector<Literal> args) {
  auto module = testing_support::ParseAndVerify(text);
  return hlo::Evaluate(*module, args);
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// dot

TEST(Dot, MatrixTimesMatrix) {
  // [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[1+3, 2+3], [4+6, 5+6]].
  Literal out = EvalHlo(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                        {Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                         Make(PrimitiveType::kF32, {3, 2}, {1, 0, 0, 1, 1, 1})});
  EXPECT_EQ(Values(out), (std::vector<double>{4, 5, 10, 11}));
}

TEST(Dot, BatchDimsAndTransposedContractingDims) {
  // lhs [b=2, k=3, m=2], rhs [b=2, n=4, k=3]: result [b, m, n] = sum_k lhs[b,k,m] * rhs[b,n,k].
  const std::vector<double> lhs = Pattern(12, 1), rhs = Pattern(24, 2);
  Literal out = EvalHlo(
      R"(
HloModule m
ENTRY e {
  a = f32[2,3,2] parameter(0)
  b = f32[2,4,3] parameter(1)
  ROOT d = f32[2,2,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2}
}
)",
      {Make(PrimitiveType::kF32, {2, 3, 2}, lhs), Make(PrimitiveType::kF32, {2, 4, 3}, rhs)});
  std::vector<double> expected;
  for (int b = 0; b < 2; ++b)
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 4; ++n) {
        double sum = 0;
        for (int k = 0; k < 3; ++k) sum += lhs[b * 6 + k * 2 + m] * rhs[b * 12 + n * 3 + k];
        expected.push_back(sum);
      }
  EXPECT_EQ(Values(out), expected);
}

TEST(Dot, TwoContractingDimsInSwappedOrder) {
  // lhs [2,3,4] contracts dims {0,2} with rhs [4,5,2] dims {2,0}: lhs dim 0 pairs with rhs
  // dim 2 (size 2), lhs dim 2 with rhs dim 0 (size 4). Result [3 (lhs free), 5 (rhs free)].
  const std::vector<double> lhs = Pattern(24, 3), rhs = Pattern(40, 4);
  Literal out = EvalHlo(
      R"(
HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[4,5,2] parameter(1)
  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={0,2}, rhs_contracting_dims={2,0}
}
)",
      {Make(PrimitiveType::kF32, {2, 3, 4}, lhs), Make(PrimitiveType::kF32, {4, 5, 2}, rhs)});
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      double sum = 0;
      for (int p = 0; p < 2; ++p)
        for (int q = 0; q < 4; ++q) sum += lhs[p * 12 + i * 4 + q] * rhs[q * 10 + j * 2 + p];
      expected.push_back(sum);
    }
  EXPECT_EQ(Values(out), expected);
}

TEST(Dot, EveryOperandOrderAndEdgeSizes) {
  // A is 6x5 stored as [m][k] or [k][m]; B is 5x7 stored as [k][n] or [n][k]. Sizes are not
  // multiples of the kernels' 4-row/4-column blocks, so the edge handling is exercised too.
  const int64_t m = 6, k = 5, n = 7;
  const std::vector<double> a_mk = Pattern(m * k, 7), b_kn = Pattern(k * n, 8);
  std::vector<double> expected;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a_mk[i * k + p] * b_kn[p * n + j];
      expected.push_back(sum);
    }
  for (bool lhs_transposed : {false, true}) {
    for (bool rhs_transposed : {false, true}) {
      std::vector<double> a(a_mk.size()), b(b_kn.size());
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) a[lhs_transposed ? p * m + i : i * k + p] = a_mk[i * k + p];
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) b[rhs_transposed ? j * k + p : p * n + j] = b_kn[p * n + j];
      const std::string text =
          std::string("HloModule m\nENTRY e {\n  a = f32[") + (lhs_transposed ? "5,6" : "6,5") +
          "] parameter(0)\n  b = f32[" + (rhs_transposed ? "7,5" : "5,7") +
          "] parameter(1)\n  ROOT d = f32[6,7] dot(a, b), lhs_contracting_dims={" +
          (lhs_transposed ? "0" : "1") + "}, rhs_contracting_dims={" +
          (rhs_transposed ? "1" : "0") + "}\n}\n";
      SCOPED_TRACE(text);
      Literal out = EvalHlo(
          text,
          {Make(PrimitiveType::kF32,
                lhs_transposed ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, a),
           Make(PrimitiveType::kF32,
                rhs_transposed ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, b)});
      EXPECT_EQ(Values(out), expected);
    }
  }
}

TEST(Dot, MatrixVectorAndF64) {
  // [[1,2],[3,4],[5,6]] . [10, 100] = [210, 430, 650] both ways round. The f64 dot accumulates
  // in f64: doubles near 1e16 are 2 apart, so 1e16 + 2 - 1e16 = 2 (an f32 accumulator gives 0).
  Literal out = EvalHlo(
      R"(
HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  v = f32[2] parameter(1)
  x = f64[3] parameter(2)
  y = f64[3] parameter(3)
  mv = f32[3] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vm = f32[3] dot(v, a), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  d = f64[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[3], f32[3], f64[]) tuple(mv, vm, d)
}
)",
      {Make(PrimitiveType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6}),
       Make(PrimitiveType::kF32, {2}, {10, 100}), Make(PrimitiveType::kF64, {3}, {1e16, 2, -1e16}),
       Make(PrimitiveType::kF64, {3}, {1, 1, 1})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{210, 430, 650}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{210, 430, 650}));
  EXPECT_EQ(out.elements()[2].GetAsDouble(0), 2);
}

TEST(Dot, IntegerOverflowWraps) {
  // 2147483647 * 2 + 1 * 3 = 4294967297 = 2^32 + 1, which wraps to 1 in s32.
  Literal out = EvalHlo(R"(
HloModule m
ENTRY e {
  a = s32[1,2] parameter(0)
  b = s32[2,1] parameter(1)
  ROOT d = s32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                        {Make(PrimitiveType::kS32, {1, 2}, {2147483647, 1}),
                         Make(PrimitiveType::kS32, {2, 1}, {2, 3})});
  EXPECT_EQ(out.GetAsInt64(0), 1);
}

TEST(Dot, Bf16AccumulatesInF32AndRoundsOnce) {
  // 256 + 1 + 1 + 1 + 1 = 260 in f32, exactly representable in bf16; a bf16 accumulator would
  // have stayed at 256 (257 rounds to even).
  Literal out = EvalHlo(R"(
HloModule m
ENTRY e {
  a = bf16[1,5] parameter(0)
  b = bf16[5] parameter(1)
  ROOT d = bf16[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                        {Make(PrimitiveType::kBF16, {1, 5}, {256, 1, 1, 1, 1}),
                         Make(PrimitiveType::kBF16, {5}, {1, 1, 1, 1, 1})});
  EXPECT_EQ(out.GetAsDouble(0), 260);
}

TEST(Dot, InfTimesZeroIsNaNAndEmptyContractionIsZero) {
  Literal out =
      EvalHlo(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2,0] parameter(2)
  d = f32[0,3] parameter(3)
  x = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  y = f32[2,3] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[], f32[2,3]) tuple(x, y)
}
)",
              {Make(PrimitiveType::kF32, {2}, {kInf, 1}), Make(PrimitiveType::kF32, {2}, {0, 1}),
               Make(PrimitiveType::kF32, {2, 0}, {}), Make(PrimitiveType::kF32, {0, 3}, {})});
  EXPECT_TRUE(std::isnan(out.elements()[0].GetAsDouble(0)));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>(6, 0.0)));
}

TEST(Dot, F32Gemm512Throughput) {
  const int64_t n = 512;
  Literal a(Shape::Array(PrimitiveType::kF32, {n, n})),
      b(Shape::Array(PrimitiveType::kF32, {n, n}));
  auto ad = a.mutable_data<float>();
  auto bd = b.mutable_data<float>();
  for (int64_t i = 0; i < n * n; ++i) {
    ad[i] = static_cast<float>((i * 13) % 7 - 3);
    bd[i] = static_cast<float>((i * 5) % 9 - 4);
  }
  auto module = testing_support::ParseAndVerify(R"(
HloModule m
ENTRY e {
  a = f32[512,512] parameter(0)
  b = f32[512,512] parameter(1)
  ROOT d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  std::vector<Literal> args;
  args.push_back(a);
  args.push_back(b);
  double best = 1e30;
  Literal out;
  for (int rep = 0; rep < 3; ++rep) {
    const double start = ThreadCpuSeconds();
    out = hlo::Evaluate(*module, args);
    best = std::min(best, ThreadCpuSeconds() - start);
  }
  std::printf("dot f32 512x512x512: %.3f s CPU, %.2f GFLOP/s\n", best,
              2.0 * n * n * n / best / 1e9);
  // Spot-check a few elements against the direct sum (integers: exact).
  auto od = out.data<float>();
  for (int64_t i : {int64_t{0}, int64_t{77}, n - 1}) {
    for (int64_t j : {int64_t{0}, int64_t{301}, n - 1}) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += double(ad[i * n + k]) * double(bd[k * n + j]);
      EXPECT_EQ(od[i * n + j], sum) << i << "," << j;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// convolution

// One convolution case: logical sizes, window and dim_labels (any permutation).
struct ConvCase {
  std::string input_labels, kernel_labels, output_labels;  // e.g. "b01f", "01io", "b01f"
  int64_t batch, in_features, out_features;
  std::vector<int64_t> in_spatial, kernel_spatial;
  std::vector<int64_t> stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate, reversal;
  int64_t feature_groups = 1, batch_groups = 1;
};

int64_t PaddedSize(const ConvCase& c, size_t s) {
  const int64_t dilated = (c.in_spatial[s] - 1) * c.lhs_dilate[s] + 1;
  return dilated + c.pad_lo[s] + c.pad_hi[s];
}
int64_t DilatedKernel(const ConvCase& c, size_t s) {
  return (c.kernel_spatial[s] - 1) * c.rhs_dilate[s] + 1;
}
std::vector<int64_t> OutSpatial(const ConvCase& c) {
  std::vector<int64_t> out;
  for (size_t s = 0; s < c.in_spatial.size(); ++s) {
    out.push_back((PaddedSize(c, s) - DilatedKernel(c, s)) / c.stride[s] + 1);
  }
  return out;
}

// Physical dims of a tensor whose labels name 'b'/'f' (or 'i'/'o') and spatial digits.
std::vector<int64_t> PhysicalDims(const std::string& labels, const std::map<char, int64_t>& size) {
  std::vector<int64_t> dims;
  for (char ch : labels) dims.push_back(size.at(ch));
  return dims;
}
// Row-major linear index of a logical position given by label -> coordinate.
int64_t PhysicalIndex(const std::string& labels, const std::map<char, int64_t>& size,
                      const std::map<char, int64_t>& at) {
  int64_t linear = 0;
  for (char ch : labels) linear = linear * size.at(ch) + at.at(ch);
  return linear;
}

// The reference: materialize padded/dilated input and dilated/reversed kernel, then correlate.
// Spatial rank is 1 or 2 here (a 1-D case uses a dummy second dim of size 1).
std::vector<double> ReferenceConvolution(const ConvCase& c, const std::vector<double>& input,
                                         const std::vector<double>& kernel,
                                         std::vector<int64_t>& out_dims) {
  const bool two_d = c.in_spatial.size() == 2;
  auto sp = [&](const std::vector<int64_t>& v, size_t s) { return s < v.size() ? v[s] : 1; };
  std::map<char, int64_t> in_size{{'b', c.batch}, {'f', c.in_features}, {'0', c.in_spatial[0]}};
  std::map<char, int64_t> k_size{
      {'i', c.in_features / c.feature_groups}, {'o', c.out_features}, {'0', c.kernel_spatial[0]}};
  const std::vector<int64_t> os = OutSpatial(c);
  std::map<char, int64_t> o_size{
      {'b', c.batch / c.batch_groups}, {'f', c.out_features}, {'0', os[0]}};
  if (two_d) {
    in_size['1'] = c.in_spatial[1];
    k_size['1'] = c.kernel_spatial[1];
    o_size['1'] = os[1];
  }
  const int64_t p0 = PaddedSize(c, 0), p1 = two_d ? PaddedSize(c, 1) : 1;
  const int64_t d0 = DilatedKernel(c, 0), d1 = two_d ? DilatedKernel(c, 1) : 1;
  // padded[b][f][y][x]
  std::vector<double> padded(static_cast<size_t>(c.batch * c.in_features * p0 * p1), 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t f = 0; f < c.in_features; ++f)
      for (int64_t y = 0; y < c.in_spatial[0]; ++y)
        for (int64_t x = 0; x < sp(c.in_spatial, 1); ++x) {
          const int64_t py = c.pad_lo[0] + y * c.lhs_dilate[0];
          const int64_t px = two_d ? c.pad_lo[1] + x * c.lhs_dilate[1] : 0;
          if (py < 0 || py >= p0 || px < 0 || px >= p1) continue;  // cropped by negative padding
          std::map<char, int64_t> at{{'b', b}, {'f', f}, {'0', y}, {'1', x}};
          padded[((b * c.in_features + f) * p0 + py) * p1 + px] =
              input[PhysicalIndex(c.input_labels, in_size, at)];
        }
  const int64_t cin_g = c.in_features / c.feature_groups;
  // dilated[o][i][y][x], with reversal applied.
  std::vector<double> dilated(static_cast<size_t>(c.out_features * cin_g * d0 * d1), 0.0);
  for (int64_t o = 0; o < c.out_features; ++o)
    for (int64_t i = 0; i < cin_g; ++i)
      for (int64_t y = 0; y < c.kernel_spatial[0]; ++y)
        for (int64_t x = 0; x < sp(c.kernel_spatial, 1); ++x) {
          const int64_t ry = c.reversal[0] ? c.kernel_spatial[0] - 1 - y : y;
          const int64_t rx = two_d && c.reversal[1] ? c.kernel_spatial[1] - 1 - x : x;
          std::map<char, int64_t> at{{'i', i}, {'o', o}, {'0', ry}, {'1', rx}};
          dilated[((o * cin_g + i) * d0 + y * c.rhs_dilate[0]) * d1 +
                  (two_d ? x * c.rhs_dilate[1] : 0)] =
              kernel[PhysicalIndex(c.kernel_labels, k_size, at)];
        }
  out_dims = PhysicalDims(c.output_labels, o_size);
  int64_t out_count = 1;
  for (int64_t d : out_dims) out_count *= d;
  std::vector<double> out(static_cast<size_t>(out_count), 0.0);
  const int64_t out_batch = c.batch / c.batch_groups;
  for (int64_t ob = 0; ob < out_batch; ++ob)
    for (int64_t o = 0; o < c.out_features; ++o)
      for (int64_t y = 0; y < os[0]; ++y)
        for (int64_t x = 0; x < sp(os, 1); ++x) {
          const int64_t fgroup = o / (c.out_features / c.feature_groups);
          const int64_t bgroup = o / (c.out_features / c.batch_groups);
          const int64_t b = bgroup * out_batch + ob;
          double sum = 0;
          for (int64_t i = 0; i < cin_g; ++i)
            for (int64_t dy = 0; dy < d0; ++dy)
              for (int64_t dx = 0; dx < d1; ++dx) {
                const int64_t py = y * c.stride[0] + dy;
                const int64_t px = two_d ? x * c.stride[1] + dx : 0;
                sum += padded[((b * c.in_features + fgroup * cin_g + i) * p0 + py) * p1 + px] *
                       dilated[((o * cin_g + i) * d0 + dy) * d1 + dx];
              }
          std::map<char, int64_t> at{{'b', ob}, {'f', o}, {'0', y}, {'1', x}};
          out[PhysicalIndex(c.output_labels, o_size, at)] = sum;
        }
  return out;
}

std::string WindowText(const ConvCase& c) {
  auto join = [](const std::vector<int64_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s += "x";
      s += std::to_string(v[i]);
    }
    return s;
  };
  std::string pad;
  for (size_t i = 0; i < c.pad_lo.size(); ++i) {
    if (i) pad += "x";
    pad += std::to_string(c.pad_lo[i]) + "_" + std::to_string(c.pad_hi[i]);
  }
  return "size=" + join(c.kernel_spatial) + " stride=" + join(c.stride) + " pad=" + pad +
         " lhs_dilate=" + join(c.lhs_dilate) + " rhs_dilate=" + join(c.rhs_dilate) +
         " rhs_reversal=" + join(c.reversal);
}

void CheckConvolution(const ConvCase& c) {
  const bool two_d = c.in_spatial.size() == 2;
  std::map<char, int64_t> in_size{{'b', c.batch}, {'f', c.in_features}, {'0', c.in_spatial[0]}};
  std::map<char, int64_t> k_size{
      {'i', c.in_features / c.feature_groups}, {'o', c.out_features}, {'0', c.kernel_spatial[0]}};
  if (two_d) {
    in_size['1'] = c.in_spatial[1];
    k_size['1'] = c.kernel_spatial[1];
  }
  const std::vector<int64_t> in_dims = PhysicalDims(c.input_labels, in_size);
  const std::vector<int64_t> k_dims = PhysicalDims(c.kernel_labels, k_size);
  int64_t in_count = 1, k_count = 1;
  for (int64_t d : in_dims) in_count *= d;
  for (int64_t d : k_dims) k_count *= d;
  const std::vector<double> input = Pattern(in_count, 5), kernel = Pattern(k_count, 6);
  std::vector<int64_t> out_dims;
  const std::vector<double> expected = ReferenceConvolution(c, input, kernel, out_dims);
  const std::string text =
      "HloModule m\nENTRY e {\n  x = f32[" + DimsText(in_dims) + "] parameter(0)\n  k = f32[" +
      DimsText(k_dims) + "] parameter(1)\n  ROOT c = f32[" + DimsText(out_dims) +
      "] convolution(x, k), window={" + WindowText(c) + "}, dim_labels=" + c.input_labels + "_" +
      c.kernel_labels + "->" + c.output_labels +
      ", feature_group_count=" + std::to_string(c.feature_groups) +
      ", batch_group_count=" + std::to_string(c.batch_groups) + "\n}\n";
  SCOPED_TRACE(text);
  Literal out = EvalHlo(
      text, {Make(PrimitiveType::kF32, in_dims, input), Make(PrimitiveType::kF32, k_dims, kernel)});
  EXPECT_EQ(Values(out), expected);
}

TEST(Convolution, NhwcStridePadding) {
  CheckConvolution({"b01f",
                    "01io",
                    "b01f",
                    2,
                    3,
                    4,
                    {5, 4},
                    {3, 2},
                    {2, 1},
                    {1, 0},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {0, 0}});
}

TEST(Convolution, NchwDilationsAndReversal) {
  CheckConvolution({"bf01",
                    "oi01",
                    "bf01",
                    1,
                    2,
                    3,
                    {4, 5},
                    {2, 3},
                    {1, 2},
                    {1, 2},
                    {0, 2},
                    {2, 1},
                    {1, 2},
                    {1, 0}});
}

TEST(Convolution, NegativePaddingAndPermutedLabels) {
  CheckConvolution({"0bf1",
                    "o01i",
                    "f01b",
                    2,
                    2,
                    3,
                    {6, 5},
                    {3, 2},
                    {1, 2},
                    {-1, 1},
                    {0, -1},
                    {1, 1},
                    {1, 1},
                    {0, 1}});
}

TEST(Convolution, FeatureGroupsAndDepthwise) {
  CheckConvolution({"b01f",
                    "01io",
                    "b01f",
                    1,
                    6,
                    6,
                    {4, 4},
                    {3, 3},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {0, 0},
                    /*feature_groups=*/3});
  CheckConvolution({"b01f",
                    "01io",
                    "b01f",
                    2,
                    4,
                    8,
                    {5, 5},
                    {3, 3},
                    {2, 2},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {0, 0},
                    /*feature_groups=*/4});
  // One output feature per group: depthwise (C = O = groups) and C/G = 2 inputs per output.
  CheckConvolution({"bf01",
                    "oi01",
                    "bf01",
                    2,
                    5,
                    5,
                    {4, 5},
                    {3, 3},
                    {1, 2},
                    {1, 1},
                    {1, 0},
                    {1, 1},
                    {1, 1},
                    {0, 1},
                    /*feature_groups=*/5});
  CheckConvolution({"b01f",
                    "01io",
                    "b01f",
                    1,
                    6,
                    3,
                    {4, 4},
                    {2, 3},
                    {1, 1},
                    {0, 1},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {1, 0},
                    /*feature_groups=*/3});
}

TEST(Convolution, BatchGroupCount) {
  CheckConvolution({"b01f",
                    "01io",
                    "b01f",
                    4,
                    3,
                    4,
                    {3, 3},
                    {2, 2},
                    {1, 1},
                    {0, 0},
                    {0, 0},
                    {1, 1},
                    {1, 1},
                    {0, 0},
                    1,
                    /*batch_groups=*/2});
  CheckConvolution({"fb01",
                    "io01",
                    "fb01",
                    3,
                    2,
                    6,
                    {4, 3},
                    {2, 1},
                    {1, 1},
                    {1, 0},
                    {0, 0},
                    {1, 1},
                    {2, 1},
                    {0, 0},
                    1,
                    /*batch_groups=*/3});
  // One output feature per batch group, as in depthwise weight gradients (fb01_io01->01bf).
  CheckConvolution({"fb01",
                    "io01",
                    "01bf",
                    3,
                    4,
                    3,
                    {5, 4},
                    {4, 3},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {0, 0},
                    1,
                    /*batch_groups=*/3});
}

TEST(Convolution, OneSpatialDim) {
  CheckConvolution({"bf0", "oi0", "bf0", 2, 3, 2, {7}, {3}, {2}, {2}, {1}, {1}, {2}, {1}});
}

TEST(Convolution, Conv3x3Throughput) {
  // 1x56x56x64 -> 64 features, 3x3, pad 1: 2*56*56*64*64*9 = 231 MFLOP.
  const int64_t hw = 56, c = 64;
  Literal x(Shape::Array(PrimitiveType::kF32, {1, hw, hw, c}));
  Literal k(Shape::Array(PrimitiveType::kF32, {3, 3, c, c}));
  auto xd = x.mutable_data<float>();
  auto kd = k.mutable_data<float>();
  for (size_t i = 0; i < xd.size(); ++i)
    xd[i] = static_cast<float>(static_cast<int64_t>(i * 7 % 5) - 2);
  for (size_t i = 0; i < kd.size(); ++i)
    kd[i] = static_cast<float>(static_cast<int64_t>(i * 3 % 7) - 3);
  auto module = testing_support::ParseAndVerify(R"(
HloModule m
ENTRY e {
  x = f32[1,56,56,64] parameter(0)
  k = f32[3,3,64,64] parameter(1)
  ROOT c = f32[1,56,56,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
)");
  std::vector<Literal> args;
  args.push_back(x);
  args.push_back(k);
  double best = 1e30;
  Literal out;
  for (int rep = 0; rep < 3; ++rep) {
    const double start = ThreadCpuSeconds();
    out = hlo::Evaluate(*module, args);
    best = std::min(best, ThreadCpuSeconds() - start);
  }
  const double flops = 2.0 * hw * hw * c * c * 9;
  std::printf("convolution 3x3 1x56x56x64->64: %.3f s CPU, %.2f GFLOP/s\n", best,
              flops / best / 1e9);
  // Spot-check a corner and an interior output against the direct sum (integers: exact).
  auto od = out.data<float>();
  for (auto [oy, ox, oc] : {std::tuple<int64_t, int64_t, int64_t>{0, 0, 0}, {17, 30, 41}}) {
    double sum = 0;
    for (int64_t ky = 0; ky < 3; ++ky)
      for (int64_t kx = 0; kx < 3; ++kx) {
        const int64_t iy = oy + ky - 1, ix = ox + kx - 1;
        if (iy < 0 || iy >= hw || ix < 0 || ix >= hw) continue;
        for (int64_t ci = 0; ci < c; ++ci) {
          sum +=
              double(xd[(iy * hw + ix) * c + ci]) * double(kd[((ky * 3 + kx) * c + ci) * c + oc]);
        }
      }
    EXPECT_EQ(od[(oy * hw + ox) * c + oc], sum);
  }
}

TEST(ContractionErrors, ConvolutionOutputShapeMismatchNamesTheDimension) {
  hlo::Instruction conv("c", hlo::Opcode::kConvolution,
                        Shape::Array(PrimitiveType::kF32, {1, 1, 4}));
  hlo::ConvolutionAttrs attrs;
  attrs.window.dims = {hlo::WindowDim{}};
  attrs.window.dims[0].size = 2;
  attrs.dnums.input_batch = 0;
  attrs.dnums.input_feature = 1;
  attrs.dnums.input_spatial = {2};
  attrs.dnums.kernel_output_feature = 0;
  attrs.dnums.kernel_input_feature = 1;
  attrs.dnums.kernel_spatial = {2};
  attrs.dnums.output_batch = 0;
  attrs.dnums.output_feature = 1;
  attrs.dnums.output_spatial = {2};
  conv.set_attrs(attrs);
  hlo::SourceLocation loc;
  loc.file = std::make_shared<const std::string>("bad.hlo");
  loc.line = 12;
  loc.column = 3;
  conv.set_location(loc);
  Literal x = Make(PrimitiveType::kF32, {1, 1, 4}, {1, 2, 3, 4});
  Literal k = Make(PrimitiveType::kF32, {1, 1, 2}, {1, 1});
  const Literal* operands[] = {&x, &k};
  try {
    hlo::eval::EvaluateContraction(conv, operands);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    // A size-2 window over 4 elements gives 3 outputs, not 4.
    EXPECT_NE(e.message().find("should be 3, got 4"), std::string::npos) << e.message();
    EXPECT_EQ(e.location().line, 12u);
  }
}

TEST(ContractionErrors, DotContractingSizeMismatch) {
  hlo::Instruction dot("d", hlo::Opcode::kDot, Shape::Array(PrimitiveType::kF32, {2, 2}));
  hlo::DotAttrs attrs;
  attrs.dnums.lhs_contracting = {1};
  attrs.dnums.rhs_contracting = {0};
  dot.set_attrs(attrs);
  Literal a = Make(PrimitiveType::kF32, {2, 3}, Pattern(6, 1));
  Literal b = Make(PrimitiveType::kF32, {4, 2}, Pattern(8, 2));
  const Literal* operands[] = {&a, &b};
  try {
    hlo::eval::EvaluateContraction(dot, operands);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("contracting dimension sizes differ"), std::string::npos)
        << e.message();
  }
}

// ---------------------------------------------------------------------------------------------
// batch-norm

TEST(BatchNorm, InferenceWithEpsilon) {
  // Feature dim 1. y = (x - mean) * scale / sqrt(var + eps) + offset with var + eps = 4 and 1:
  // [[(1-2)*2/2+1, (2-3)*1/1+0], [(3-2)*2/2+1, (4-3)*1/1+0]] = [[0,-1],[2,1]].
  Literal out = EvalHlo(
      R"(
HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  mean = f32[2] parameter(3)
  var = f32[2] parameter(4)
  ROOT y = f32[2,2] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.25, feature_index=1
}
)",
      {Make(PrimitiveType::kF32, {2, 2}, {1, 2, 3, 4}), Make(PrimitiveType::kF32, {2}, {2, 1}),
       Make(PrimitiveType::kF32, {2}, {1, 0}), Make(PrimitiveType::kF32, {2}, {2, 3}),
       Make(PrimitiveType::kF32, {2}, {3.75, 0.75})});
  EXPECT_EQ(Values(out), (std::vector<double>{0, -1, 2, 1}));
}

TEST(BatchNorm, TrainingReturnsBiasedMoments) {
  // Feature dim 0 of [2,3]: feature 0 = {1,2,3} (mean 2, biased var 2/3), feature 1 = {4,4,4}
  // (mean 4, var 0). With scale [3,1], offset [0,5], eps 1:
  // feature 0 -> (x-2)*3/sqrt(5/3); feature 1 -> 0 * 1/sqrt(1) + 5 = 5.
  Literal out =
      EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  scale = f32[2] parameter(1)
  offset = f32[2] parameter(2)
  ROOT t = (f32[2,3], f32[2], f32[2]) batch-norm-training(x, scale, offset), epsilon=1, feature_index=0
}
)",
              {Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 4, 4}),
               Make(PrimitiveType::kF32, {2}, {3, 1}), Make(PrimitiveType::kF32, {2}, {0, 5})});
  const std::vector<double> y = Values(out.elements()[0]);
  const double k = 3.0 / std::sqrt(5.0 / 3.0);
  EXPECT_FLOAT_EQ(y[0], -k);
  EXPECT_FLOAT_EQ(y[1], 0);
  EXPECT_FLOAT_EQ(y[2], k);
  EXPECT_EQ((std::vector<double>{y[3], y[4], y[5]}), (std::vector<double>{5, 5, 5}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{2, 4}));
  EXPECT_FLOAT_EQ(out.elements()[2].GetAsDouble(0), 2.0 / 3.0);
  EXPECT_EQ(out.elements()[2].GetAsDouble(1), 0);
}

TEST(BatchNorm, GradFormulas) {
  // One feature, x = [1,2,6], mean 2, var 1, eps 0, scale 2, dy = [1,0,2]:
  //   grad_offset = 1+0+2 = 3; sum(dy*(x-mean)) = -1 + 0 + 8 = 7; grad_scale = 7 / 1 = 7;
  //   grad_x = 2 * (dy - 3/3 - (x-2) * 7/3) = [14/3, -2, -50/3].
  Literal out =
      EvalHlo(R"(
HloModule m
ENTRY e {
  x = f32[3,1] parameter(0)
  scale = f32[1] parameter(1)
  mean = f32[1] parameter(2)
  var = f32[1] parameter(3)
  dy = f32[3,1] parameter(4)
  ROOT t = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0, feature_index=1
}
)",
              {Make(PrimitiveType::kF32, {3, 1}, {1, 2, 6}), Make(PrimitiveType::kF32, {1}, {2}),
               Make(PrimitiveType::kF32, {1}, {2}), Make(PrimitiveType::kF32, {1}, {1}),
               Make(PrimitiveType::kF32, {3, 1}, {1, 0, 2})});
  const std::vector<double> gx = Values(out.elements()[0]);
  EXPECT_FLOAT_EQ(gx[0], 14.0 / 3.0);
  EXPECT_FLOAT_EQ(gx[1], -2.0);
  EXPECT_FLOAT_EQ(gx[2], -50.0 / 3.0);
  EXPECT_EQ(out.elements()[1].GetAsDouble(0), 7);
  EXPECT_EQ(out.elements()[2].GetAsDouble(0), 3);
}

}  // namespace

// The hand-built sample artifact (see sample_artifact.h).
#include "tests/gpu/sample_artifact.h"

#include <algorithm>

namespace gpu::testing {

const std::string& AddOnePtx() {
  static const std::string ptx = R"(//
// y[i] = x[i] + 1 for i < count: written by hand for retarget's GPU runtime tests.
//
.version 8.0
.target sm_90
.address_size 64

.visible .entry add_one(
    .param .u64 add_one_param_x,
    .param .u64 add_one_param_y,
    .param .u32 add_one_param_count
)
{
    .reg .pred  %p<2>;
    .reg .b32   %r<6>;
    .reg .f32   %f<3>;
    .reg .b64   %rd<8>;

    ld.param.u64    %rd1, [add_one_param_x];
    ld.param.u64    %rd2, [add_one_param_y];
    ld.param.u32    %r1, [add_one_param_count];
    mov.u32         %r2, %ctaid.x;
    mov.u32         %r3, %ntid.x;
    mov.u32         %r4, %tid.x;
    mad.lo.s32      %r5, %r2, %r3, %r4;
    setp.ge.u32     %p1, %r5, %r1;
    @%p1 bra        DONE;
    cvta.to.global.u64  %rd3, %rd1;
    cvta.to.global.u64  %rd4, %rd2;
    mul.wide.u32    %rd5, %r5, 4;
    add.s64         %rd6, %rd3, %rd5;
    add.s64         %rd7, %rd4, %rd5;
    ld.global.f32   %f1, [%rd6];
    add.rn.f32      %f2, %f1, 0f3F800000;
    st.global.f32   [%rd7], %f2;
DONE:
    ret;
}
)";
  return ptx;
}

Sample MakeSample(int64_t m, int64_t n, int64_t k) {
  Sample s;
  // Small exact values (multiples of 1/8 and 1/16) keep the sums exact in f32 for small sizes.
  for (int64_t i = 0; i < m * k; ++i) s.x.push_back(static_cast<float>((i * 7) % 17 - 8) / 8.0f);
  for (int64_t i = 0; i < k * n; ++i) s.w.push_back(static_cast<float>((i * 5) % 13 - 6) / 16.0f);
  for (int64_t i = 0; i < n; ++i) s.b.push_back(static_cast<float>(i % 5) - 2.0f);
  for (int64_t row = 0; row < m; ++row) {
    for (int64_t col = 0; col < n; ++col) {
      double sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) sum += (double{s.x[row * k + kk]} + 1.0) * s.w[kk * n + col];
      s.expected.push_back(static_cast<float>(std::max(0.0, sum + s.b[col])));
    }
  }

  auto align = [](uint64_t v) { return (v + 255) / 256 * 256; };
  const uint64_t x_bytes = 4 * m * k, w_bytes = 4 * k * n, b_bytes = 4 * n, out_bytes = 4 * m * n;
  const Slice x{0, x_bytes};
  const Slice w{align(x.offset + x.bytes), w_bytes};
  const Slice b{align(w.offset + w.bytes), b_bytes};
  const Slice t{align(b.offset + b.bytes), x_bytes};
  const Slice out{align(t.offset + t.bytes), out_bytes};

  Manifest& mf = s.artifact.manifest;
  mf.producer = "retarget tests/gpu (hand-built)";
  mf.module_name = "sample_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  mf.arena_bytes = align(out.offset + out.bytes);
  mf.workspace_bytes = uint64_t{4} << 20;
  mf.parameters = {{"arg0", DType::kF32, {m, k}, x}, {"arg1", DType::kF32, {k, n}, w}, {"arg2", DType::kF32, {n}, b}};
  mf.results = {{"out0", DType::kF32, {m, n}, out}};
  mf.modules = {{"elementwise", "ptx.elementwise", "", ""}};
  s.artifact.sections["ptx.elementwise"] = AddOnePtx();

  KernelLaunch add_one;
  add_one.module = "elementwise";
  add_one.entry = "add_one";
  const uint64_t count = m * k;
  add_one.block = {256, 1, 1};
  add_one.grid = {static_cast<uint32_t>((count + 255) / 256), 1, 1};
  KernelArg in{KernelArg::Kind::kBuffer, x, 0, 0.0}, result{KernelArg::Kind::kBuffer, t, 0, 0.0};
  KernelArg n_arg{KernelArg::Kind::kS32, {}, 0, 0.0};
  n_arg.integer = static_cast<int64_t>(count);
  add_one.args = {in, result, n_arg};

  MatmulCall mm;
  mm.m = m;
  mm.n = n;
  mm.k = k;
  mm.lda = k;
  mm.ldb = n;
  mm.ldd = n;
  mm.epilogue = Epilogue::kReluBias;
  mm.a = t;
  mm.b = w;
  mm.d = out;
  mm.bias = b;
  mf.steps = {Step{"add.1", add_one}, Step{"dot.2", mm}};
  return s;
}

std::string SampleHlo(int64_t m, int64_t n, int64_t k) {
  const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  return "HloModule sample_" + M + "x" + N + "x" + K + "\n\n"
         "ENTRY main {\n"
         "  x = f32[" + M + "," + K + "] parameter(0)\n"
         "  w = f32[" + K + "," + N + "] parameter(1)\n"
         "  b = f32[" + N + "] parameter(2)\n"
         "  one = f32[] constant(1)\n"
         "  ones = f32[" + M + "," + K + "] broadcast(one), dimensions={}\n"
         "  t = f32[" + M + "," + K + "] add(x, ones)\n"
         "  d = f32[" + M + "," + N + "] dot(t, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
         "  bias = f32[" + M + "," + N + "] broadcast(b), dimensions={1}\n"
         "  s = f32[" + M + "," + N + "] add(d, bias)\n"
         "  zero = f32[] constant(0)\n"
         "  zeros = f32[" + M + "," + N + "] broadcast(zero), dimensions={}\n"
         "  ROOT r = f32[" + M + "," + N + "] maximum(s, zeros)\n"
         "}\n";
}

Sample MakeConvSample() {
  constexpr int64_t N = 2, C = 3, H = 16, W = 16, K = 8, R = 3, S = 3;
  Sample s;
  for (int64_t i = 0; i < N * C * H * W; ++i) s.x.push_back(static_cast<float>((i * 7) % 17 - 8) / 8.0f);
  for (int64_t i = 0; i < K * C * R * S; ++i) s.w.push_back(static_cast<float>((i * 5) % 13 - 6) / 16.0f);
  // Cross-correlation with zero padding 1: y[n,k,h,w] = sum x[n,c,h+r-1,w+s-1] * w[k,c,r,s].
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          double sum = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t q = 0; q < S; ++q) {
                const int64_t ih = h + r - 1, iw = w + q - 1;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                sum += double{s.x[((n * C + c) * H + ih) * W + iw]} * s.w[((k * C + c) * R + r) * S + q];
              }
          s.expected.push_back(static_cast<float>(sum));
        }
  const Slice x{0, 4 * N * C * H * W}, w{x.bytes, 4 * K * C * R * S};
  const Slice y{(w.offset + w.bytes + 255) / 256 * 256, 4 * N * K * H * W};
  Manifest& mf = s.artifact.manifest;
  mf.producer = "retarget tests/gpu (hand-built)";
  mf.module_name = "sample_conv_2x3x16x16_k8";
  mf.arena_bytes = y.offset + y.bytes;
  mf.parameters = {{"arg0", DType::kF32, {N, C, H, W}, x}, {"arg1", DType::kF32, {K, C, R, S}, w}};
  mf.results = {{"out0", DType::kF32, {N, K, H, W}, y}};
  ConvCall conv;
  conv.input_dims = {N, C, H, W};
  conv.filter_dims = {K, C, R, S};
  conv.output_dims = {N, K, H, W};
  conv.strides = conv.dilations = {1, 1};
  conv.padding_low = conv.padding_high = {1, 1};
  conv.input = x;
  conv.filter = w;
  conv.output = y;
  mf.steps = {Step{"convolution.1", conv}};
  return s;
}

std::string ConvSampleHlo() {
  return "HloModule sample_conv_2x3x16x16_k8\n\n"
         "ENTRY main {\n"
         "  x = f32[2,3,16,16] parameter(0)\n"
         "  w = f32[8,3,3,3] parameter(1)\n"
         "  ROOT y = f32[2,8,16,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n"
         "}\n";
}

}  // namespace gpu::testing

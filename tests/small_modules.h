// Small modules whose owners and costs are known by construction, shared by the ownership,
// report and fusion tests (one definition, so the expected figures stay consistent), and
// modules several backends' tests share.
#pragma once

#include <cstdint>
#include <string>

namespace small_modules {

// x[4,8] . w[8,16] + b, relu: dot (2*4*16*8 = 1024 FLOPs), 2 broadcasts (0), add (64),
// maximum (64): 5 non-trivial instructions, 1152 FLOPs.
inline constexpr char kDotBiasRelu[] = R"(HloModule dbr
ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  dot = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(b), dimensions={1}
  add = f32[4,16] add(dot, bb)
  zero = f32[] constant(0)
  zb = f32[4,16] broadcast(zero), dimensions={}
  ROOT relu = f32[4,16] maximum(add, zb)
}
)";

// softmax over rows of f32[2,8]: 2 reduces, 2 broadcasts, subtract, exp, divide = 7 non-trivial
// instructions; reduces, subtract, exp, divide touch 16 elements each: 80 FLOPs.
inline constexpr char kSoftmax[] = R"(HloModule softmax
max_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[2,8] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[2] reduce(p, ninf), dimensions={1}, to_apply=max_c
  mb = f32[2,8] broadcast(m), dimensions={0}
  s = f32[2,8] subtract(p, mb)
  e = f32[2,8] exponential(s)
  z = f32[] constant(0)
  sum = f32[2] reduce(e, z), dimensions={1}, to_apply=add_c
  sb = f32[2,8] broadcast(sum), dimensions={0}
  ROOT d = f32[2,8] divide(e, sb)
}
)";

// The same row softmax (max, subtract, exp, sum, divide) as kSoftmax, over f32[rows, columns]:
// for tests that need other shapes (long rows, odd sizes).
inline std::string SoftmaxRows(int64_t rows, int64_t columns) {
  const std::string r = std::to_string(rows);
  const std::string m = "f32[" + r + "," + std::to_string(columns) + "]";
  return "HloModule softmax_rows\n"
         "max_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT m = f32[] maximum(a, b)\n}\n"
         "add_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(a, b)\n}\n"
         "ENTRY main {\n"
         "  p = " + m + " parameter(0)\n"
         "  ninf = f32[] constant(-inf)\n"
         "  m = f32[" + r + "] reduce(p, ninf), dimensions={1}, to_apply=max_c\n"
         "  mb = " + m + " broadcast(m), dimensions={0}\n"
         "  s = " + m + " subtract(p, mb)\n"
         "  e = " + m + " exponential(s)\n"
         "  z = f32[] constant(0)\n"
         "  sum = f32[" + r + "] reduce(e, z), dimensions={1}, to_apply=add_c\n"
         "  sb = " + m + " broadcast(sum), dimensions={0}\n"
         "  ROOT d = " + m + " divide(e, sb)\n"
         "}\n";
}

// A while (`spin`) whose condition is always true, its s32 carry starting at parameter 0: only
// the iteration limit (GlobalLimits().max_while_iterations, `run --max-iterations`) stops it.
inline constexpr char kRunawayLoop[] = R"(HloModule runaway
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(p, one)
}
ENTRY e {
  x = s32[] parameter(0)
  ROOT spin = s32[] while(x), condition=cond, body=body
}
)";

}  // namespace small_modules

// Tests of the evaluator's reduction family: reduce, reduce-window, select-and-scatter, scatter,
// sort, topk and map. Expected values are worked out by hand in the comments (small shapes),
// covering both the inline fast paths (add/max/... bodies, LT/GT comparators) and the paths
// that call the computation per element, plus the edge cases ir.h fixes (NaN, -0, wrapping,
// bf16 accumulation, empty shapes, out-of-bounds scatter windows).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hlo/evaluator.h"
#include "hlo/evaluator_internal.h"
#include "hlo/parser.h"
#include "tests/test_support.h"

namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Literal Make(PrimitiveType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal literal(Shape::Array(type, std::move(dims)));
  EXPECT_EQ(static_cast<int64_t>(values.size()), literal.element_count());
  for (size_t i = 0; i < values.size(); ++i)
    literal.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return literal;
}

std::vector<double> Values(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

Literal EvalHlo(const std::string& text, std::vector<Literal> args) {
  auto module = testing_support::ParseAndVerify(text);
  return hlo::Evaluate(*module, args);
}

const char* const kAddF32 = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// acc * 10 + x: not a recognized body (so the computation is called), and not associative, so
// the result spells out the order in which elements were combined.
const char* const kDigitsF32 = R"(
digits {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ten = f32[] constant(10)
  m = f32[] multiply(a, ten)
  ROOT s = f32[] add(m, b)
}
)";

TEST(Reduce, RowsColumnsAllAndNoDims) {
  const std::string text = std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ten = f32[] constant(10)
  rows = f32[2] reduce(p, z), dimensions={1}, to_apply=add
  cols = f32[3] reduce(p, z), dimensions={0}, to_apply=add
  all = f32[] reduce(p, z), dimensions={0,1}, to_apply=add
  none = f32[2,3] reduce(p, ten), dimensions={}, to_apply=add
  ROOT t = (f32[2], f32[3], f32[], f32[2,3]) tuple(rows, cols, all, none)
}
)";
  // [[1,2,3],[4,5,6]]: rows 1+2+3, 4+5+6; columns 1+4, 2+5, 3+6; all 21; no dims: init + x.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.elements().size(), 4u);
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{6, 15}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(Values(out.elements()[2]), (std::vector<double>{21}));
  EXPECT_EQ(Values(out.elements()[3]), (std::vector<double>{11, 12, 13, 14, 15, 16}));
}

TEST(Reduce, EmptyInputGivesInitValue) {
  const std::string text = std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  p = f32[0,3] parameter(0)
  seven = f32[] constant(7)
  cols = f32[3] reduce(p, seven), dimensions={0}, to_apply=add
  all = f32[] reduce(p, seven), dimensions={0,1}, to_apply=add
  rows = f32[0] reduce(p, seven), dimensions={1}, to_apply=add
  ROOT t = (f32[3], f32[], f32[0]) tuple(cols, all, rows)
}
)";
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {0, 3}, {})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{7, 7, 7}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{7}));
  EXPECT_EQ(out.elements()[2].element_count(), 0);
}

TEST(Reduce, SequentialRowMajorOrderThroughCalledBody) {
  const std::string text = std::string("HloModule m\n") + kDigitsF32 + R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  rows = f32[2] reduce(p, z), dimensions={1}, to_apply=digits
  cols = f32[3] reduce(p, z), dimensions={0}, to_apply=digits
  all = f32[] reduce(p, z), dimensions={1,0}, to_apply=digits
  ROOT t = (f32[2], f32[3], f32[]) tuple(rows, cols, all)
}
)";
  // Row-major over the reduced elements: rows "123", "456"; columns "14", "25", "36";
  // all "123456" (the order of `dimensions` does not matter).
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{123, 456}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{14, 25, 36}));
  EXPECT_EQ(Values(out.elements()[2]), (std::vector<double>{123456}));
}

TEST(Reduce, VariadicArgmaxKeepsLowerIndexOnTies) {
  const std::string text = R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  v = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(v, idx, ninf, zero), dimensions={1}, to_apply=argmax
}
)";
  // Row 0 [3,7,7,1]: max 7 first at index 1. Row 1 [-1,-5,2,2]: max 2 first at index 2.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {2, 4}, {3, 7, 7, 1, -1, -5, 2, 2})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{7, 2}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{1, 2}));
}

TEST(Reduce, MaxPropagatesNaNAndIntegersWrap) {
  const std::string text = R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(b, a)
}
mul_u8 {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT m = u8[] multiply(a, b)
}
ENTRY e {
  f = f32[2,3] parameter(0)
  i = s32[2] parameter(1)
  u = u8[2] parameter(2)
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  one = u8[] constant(1)
  m = f32[2] reduce(f, ninf), dimensions={1}, to_apply=max
  s = s32[] reduce(i, zero), dimensions={0}, to_apply=add_s32
  p = u8[] reduce(u, one), dimensions={0}, to_apply=mul_u8
  ROOT t = (f32[2], s32[], u8[]) tuple(m, s, p)
}
)";
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {2, 3}, {1, kNaN, 3, -kInf, -1, -kInf}),
                               Make(PrimitiveType::kS32, {2}, {2147483647, 1}),
                               Make(PrimitiveType::kU8, {2}, {16, 16})});
  std::vector<double> m = Values(out.elements()[0]);
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], -1);
  EXPECT_EQ(out.elements()[1].GetAsInt64(0), -2147483648LL);  // INT_MAX + 1 wraps
  EXPECT_EQ(out.elements()[2].GetAsInt64(0), 0);              // 16 * 16 = 256 wraps to 0
}

TEST(Reduce, Bf16AccumulatesInBf16) {
  const std::string text = R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  p = bf16[5] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=add
}
)";
  // bf16 has 8 significant bits: 256 + 1 = 257 rounds (to even) back to 256 after every step,
  // so the sum stays 256 (an f32 accumulator would give 260).
  Literal out = EvalHlo(text, {Make(PrimitiveType::kBF16, {5}, {256, 1, 1, 1, 1})});
  EXPECT_EQ(out.GetAsDouble(0), 256);
}

TEST(ReduceWindow, PaddingAndWindowDilation) {
  const std::string text = std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  p = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce-window(p, z), window={size=2 pad=1_1 rhs_dilate=2}, to_apply=add
}
)";
  // Output o sums x[o - 1] and x[o + 1] (window taps 2 apart, shifted by the low pad of 1),
  // missing taps being padding: [0+2, 1+3, 2+4, 3+5, 4+0].
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {5}, {1, 2, 3, 4, 5})});
  EXPECT_EQ(Values(out), (std::vector<double>{2, 4, 6, 8, 4}));
}

TEST(ReduceWindow, BaseDilationSkipsHoles) {
  const std::string text = std::string("HloModule m\n") + kDigitsF32 + R"(
ENTRY e {
  p = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(p, z), window={size=3 stride=2 pad=1_1 lhs_dilate=2}, to_apply=digits
}
)";
  // Dilated input [1,_,2,_,3], padded to [P,1,_,2,_,3,P]; windows of 3 at stride 2 see
  // {P,1,_} -> 1, {_,2,_} -> 2, {_,3,P} -> 3.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {3}, {1, 2, 3})});
  EXPECT_EQ(Values(out), (std::vector<double>{1, 2, 3}));
}

TEST(ReduceWindow, MaxPool2dWithHighPaddingAndCalledBody) {
  const std::string text = std::string("HloModule m\n") + kDigitsF32 + R"(
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  p = f32[3,3] parameter(0)
  q = f32[4] parameter(1)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  pool = f32[3,3] reduce-window(p, ninf), window={size=2x2 pad=0_1x0_1}, to_apply=max
  dig = f32[3] reduce-window(q, z), window={size=2}, to_apply=digits
  ROOT t = (f32[3,3], f32[3]) tuple(pool, dig)
}
)";
  // 2x2 max over [[1,2,3],[4,5,6],[7,8,9]] padded by one row/column at the end.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                               Make(PrimitiveType::kF32, {4}, {1, 2, 3, 4})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{5, 6, 6, 8, 9, 9, 8, 9, 9}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{12, 23, 34}));
}

TEST(ReduceWindow, VariadicArgmaxWindows) {
  const std::string text = R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lower = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lower)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  v = f32[4] parameter(0)
  idx = s32[4] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[3], s32[3]) reduce-window(v, idx, ninf, zero), window={size=2}, to_apply=argmax
}
)";
  // Windows {3,7}, {7,7}, {7,1} over [3,7,7,1]: maxima 7 at indices 1, 1 (first of the tie), 2.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {4}, {3, 7, 7, 1})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{7, 7, 7}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{1, 1, 2}));
}

TEST(Reduce, PredAndIntegerBitwiseBodies) {
  const std::string text = R"(
HloModule m
and_pred {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] and(a, b)
}
or_u32 {
  a = u32[] parameter(0)
  b = u32[] parameter(1)
  ROOT r = u32[] or(a, b)
}
min_s8 {
  a = s8[] parameter(0)
  b = s8[] parameter(1)
  ROOT r = s8[] minimum(a, b)
}
ENTRY e {
  p = pred[2,3] parameter(0)
  u = u32[3] parameter(1)
  s = s8[3] parameter(2)
  t = pred[] constant(true)
  z = u32[] constant(0)
  big = s8[] constant(127)
  all = pred[2] reduce(p, t), dimensions={1}, to_apply=and_pred
  bits = u32[] reduce(u, z), dimensions={0}, to_apply=or_u32
  lo = s8[] reduce(s, big), dimensions={0}, to_apply=min_s8
  ROOT r = (pred[2], u32[], s8[]) tuple(all, bits, lo)
}
)";
  // Rows [1,1,1] -> true, [1,0,1] -> false; 1|4|16 = 21; min(5,-128,3) = -128.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kPred, {2, 3}, {1, 1, 1, 1, 0, 1}),
                               Make(PrimitiveType::kU32, {3}, {1, 4, 16}),
                               Make(PrimitiveType::kS8, {3}, {5, -128, 3})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{1, 0}));
  EXPECT_EQ(out.elements()[1].GetAsInt64(0), 21);
  EXPECT_EQ(out.elements()[2].GetAsInt64(0), -128);
}

const char* const kSelectAndScatterTemplate = R"(
HloModule m
select {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=DIR
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  operand = f32[OPSHAPE] parameter(0)
  source = f32[SRCSHAPE] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[OPSHAPE] select-and-scatter(operand, source, z), window={WINDOW}, select=select, scatter=add
}
)";

std::string SelectAndScatterText(const std::string& dir, const std::string& op_shape,
                                 const std::string& src_shape, const std::string& window) {
  std::string text = kSelectAndScatterTemplate;
  auto replace = [&](const std::string& key, const std::string& value) {
    for (size_t pos; (pos = text.find(key)) != std::string::npos;)
      text.replace(pos, key.size(), value);
  };
  replace("DIR", dir);
  replace("OPSHAPE", op_shape);
  replace("SRCSHAPE", src_shape);
  replace("WINDOW", window);
  return text;
}

TEST(SelectAndScatter, MaxPoolGradient) {
  // 2x2 windows at stride 2; each source value goes to its window's maximum:
  // TL {1,5,3,4} -> (0,1); TR {2,0,8,1} -> (1,2); BL {7,2,1,9} -> (3,1); BR {0,6,3,2} -> (2,3).
  Literal out =
      EvalHlo(SelectAndScatterText("GE", "4,4", "2,2", "size=2x2 stride=2x2"),
              {Make(PrimitiveType::kF32, {4, 4}, {1, 5, 2, 0, 3, 4, 8, 1, 7, 2, 0, 6, 1, 9, 3, 2}),
               Make(PrimitiveType::kF32, {2, 2}, {10, 20, 30, 40})});
  EXPECT_EQ(Values(out), (std::vector<double>{0, 10, 0, 0, 0, 0, 20, 0, 0, 0, 0, 40, 0, 30, 0, 0}));
}

TEST(SelectAndScatter, TiesAndOverlapFollowSelect) {
  // Operand [3,3,1], windows {0,1} and {1,2}. GE keeps the first of equal values (index 0);
  // GT moves to the later one (index 1). Overlapping windows add up.
  const auto operand = [] { return Make(PrimitiveType::kF32, {3}, {3, 3, 1}); };
  const auto source = [] { return Make(PrimitiveType::kF32, {2}, {1, 2}); };
  EXPECT_EQ(Values(EvalHlo(SelectAndScatterText("GE", "3", "2", "size=2"), {operand(), source()})),
            (std::vector<double>{1, 2, 0}));
  EXPECT_EQ(Values(EvalHlo(SelectAndScatterText("GT", "3", "2", "size=2"), {operand(), source()})),
            (std::vector<double>{0, 3, 0}));
  // Padding positions are never selected: with pad 1_1 the windows are {P,3},{3,3},{3,1},{1,P}.
  EXPECT_EQ(Values(EvalHlo(SelectAndScatterText("GE", "3", "4", "size=2 pad=1_1"),
                           {operand(), Make(PrimitiveType::kF32, {4}, {1, 2, 4, 8})})),
            (std::vector<double>{1 + 2, 4, 8}));
}

const char* const kScatterAdd = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(Scatter, SkipsUpdatesWhoseWindowIsOutOfBounds) {
  const std::string text = std::string("HloModule m\n") + kScatterAdd + R"(
ENTRY e {
  operand = f32[3,3] parameter(0)
  indices = s32[4,2] parameter(1)
  updates = f32[4,2] parameter(2)
  ROOT s = f32[3,3] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
}
)";
  // Windows of 1x2 starting at (0,0) ok, (1,2) would cover column 3 -> skipped entirely,
  // (2,1) ok, (-1,0) negative -> skipped.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
                               Make(PrimitiveType::kS32, {4, 2}, {0, 0, 1, 2, 2, 1, -1, 0}),
                               Make(PrimitiveType::kF32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(Values(out), (std::vector<double>{2, 3, 1, 1, 1, 1, 1, 6, 7}));
}

TEST(Scatter, DuplicatesCombineInUpdateOrderAndAssignKeepsLast) {
  const std::string text = std::string("HloModule m\n") + kDigitsF32 + R"(
assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  operand = f32[3] parameter(0)
  indices = s32[3] parameter(1)
  updates = f32[3] parameter(2)
  d = f32[3] scatter(operand, indices, updates), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=digits
  a = f32[3] scatter(operand, indices, updates), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
  ROOT t = (f32[3], f32[3]) tuple(d, a)
}
)";
  // Indices [2,0,2] (index_vector_dim = rank: one scalar index per update). digits combines
  // operand 5 at position 2 with 1 then 3: (5*10+1)*10+3 = 513; position 0: 5*10+2 = 52.
  Literal out = EvalHlo(
      text, {Make(PrimitiveType::kF32, {3}, {5, 5, 5}), Make(PrimitiveType::kS32, {3}, {2, 0, 2}),
             Make(PrimitiveType::kF32, {3}, {1, 2, 3})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{52, 5, 513}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{2, 5, 3}));
}

TEST(Scatter, BatchingDims) {
  const std::string text = std::string("HloModule m\n") + kScatterAdd + R"(
ENTRY e {
  operand = f32[2,3] parameter(0)
  indices = s32[2,1] parameter(1)
  updates = f32[2] parameter(2)
  ROOT s = f32[2,3] scatter(operand, indices, updates), update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add
}
)";
  // Batch b writes updates[b] at column indices[b] of operand row b.
  Literal out = EvalHlo(
      text, {Make(PrimitiveType::kF32, {2, 3}, {0, 0, 0, 0, 0, 0}),
             Make(PrimitiveType::kS32, {2, 1}, {2, 0}), Make(PrimitiveType::kF32, {2}, {10, 20})});
  EXPECT_EQ(Values(out), (std::vector<double>{0, 0, 10, 20, 0, 0}));
}

TEST(Sort, TotalOrderPutsNaNLastAndNegativeZeroFirst) {
  const std::string text = R"(
HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  p = f32[6] parameter(0)
  ROOT s = f32[6] sort(p), dimensions={0}, to_apply=less
}
)";
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {6}, {3, kNaN, 0, 3, -0.0, 1})});
  std::vector<double> v = Values(out);
  EXPECT_EQ(v[0], 0);
  EXPECT_TRUE(std::signbit(v[0]));  // -0 sorts before +0 in total order
  EXPECT_FALSE(std::signbit(v[1]));
  EXPECT_EQ(v[2], 1);
  EXPECT_EQ(v[3], 3);
  EXPECT_EQ(v[4], 3);
  EXPECT_TRUE(std::isnan(v[5]));
}

const char* const kKeyValueSort = R"(
HloModule m
less_keys {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  va = s32[] parameter(2)
  vb = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=LT
}
greater_keys_called {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  va = s32[] parameter(2)
  vb = s32[] parameter(3)
  na = s32[] negate(a)
  nb = s32[] negate(b)
  ROOT c = pred[] compare(na, nb), direction=LT
}
ENTRY e {
  k = s32[5] parameter(0)
  v = s32[5] parameter(1)
  up = (s32[5], s32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less_keys
  down = (s32[5], s32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=greater_keys_called
  ROOT t = ((s32[5], s32[5]), (s32[5], s32[5])) tuple(up, down)
}
)";

TEST(Sort, StableVariadicWithInlineAndCalledComparators) {
  // keys [2,1,2,1,0], values = positions. Stable ascending: 0(4) 1(1) 1(3) 2(0) 2(2);
  // stable descending (comparator -a < -b, called per comparison): 2(0) 2(2) 1(1) 1(3) 0(4).
  Literal out = EvalHlo(kKeyValueSort, {Make(PrimitiveType::kS32, {5}, {2, 1, 2, 1, 0}),
                                        Make(PrimitiveType::kS32, {5}, {0, 1, 2, 3, 4})});
  const Literal& up = out.elements()[0];
  const Literal& down = out.elements()[1];
  EXPECT_EQ(Values(up.elements()[0]), (std::vector<double>{0, 1, 1, 2, 2}));
  EXPECT_EQ(Values(up.elements()[1]), (std::vector<double>{4, 1, 3, 0, 2}));
  EXPECT_EQ(Values(down.elements()[0]), (std::vector<double>{2, 2, 1, 1, 0}));
  EXPECT_EQ(Values(down.elements()[1]), (std::vector<double>{0, 2, 1, 3, 4}));
}

TEST(Sort, AlongLeadingDimensionDescending) {
  const std::string text = R"(
HloModule m
greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  p = f32[3,2] parameter(0)
  ROOT s = f32[3,2] sort(p), dimensions={0}, to_apply=greater
}
)";
  // Columns [1,5,3] and [6,2,4] each sorted descending.
  Literal out = EvalHlo(text, {Make(PrimitiveType::kF32, {3, 2}, {1, 6, 5, 2, 3, 4})});
  EXPECT_EQ(Values(out), (std::vector<double>{5, 6, 3, 4, 1, 2}));
}

TEST(TopK, TiesKeepLowerIndexAndNaNIsLargest) {
  const std::string text = R"(
HloModule m
ENTRY e {
  p = f32[2,5] parameter(0)
  big = (f32[2,3], s32[2,3]) topk(p), k=3, largest=true
  small = (f32[2,3], s32[2,3]) topk(p), k=3, largest=false
  ROOT t = ((f32[2,3], s32[2,3]), (f32[2,3], s32[2,3])) tuple(big, small)
}
)";
  Literal out =
      EvalHlo(text, {Make(PrimitiveType::kF32, {2, 5}, {1, 5, 5, 3, 5, kNaN, 2, -1, 2, 0})});
  const Literal& big = out.elements()[0];
  const Literal& small = out.elements()[1];
  // Row 0 [1,5,5,3,5]: three 5s at 1,2,4. Row 1 [NaN,2,-1,2,0]: NaN, then the 2s at 1 and 3.
  std::vector<double> bv = Values(big.elements()[0]);
  EXPECT_EQ((std::vector<double>{bv[0], bv[1], bv[2]}), (std::vector<double>{5, 5, 5}));
  EXPECT_TRUE(std::isnan(bv[3]));
  EXPECT_EQ(bv[4], 2);
  EXPECT_EQ(bv[5], 2);
  EXPECT_EQ(Values(big.elements()[1]), (std::vector<double>{1, 2, 4, 0, 1, 3}));
  // Smallest: row 0 -> 1(0), 3(3), 5(1); row 1 -> -1(2), 0(4), 2(1).
  EXPECT_EQ(Values(small.elements()[0]), (std::vector<double>{1, 3, 5, -1, 0, 2}));
  EXPECT_EQ(Values(small.elements()[1]), (std::vector<double>{0, 3, 1, 2, 4, 1}));
}

TEST(Map, InlineAndCalledBodies) {
  const std::string text = std::string("HloModule m\n") + kAddF32 + kDigitsF32 + R"(
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  s = f32[3] map(a, b), dimensions={0}, to_apply=add
  d = f32[3] map(a, b), dimensions={0}, to_apply=digits
  ROOT t = (f32[3], f32[3]) tuple(s, d)
}
)";
  Literal out = EvalHlo(
      text, {Make(PrimitiveType::kF32, {3}, {1, 2, 3}), Make(PrimitiveType::kF32, {3}, {4, 5, 6})});
  EXPECT_EQ(Values(out.elements()[0]), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(Values(out.elements()[1]), (std::vector<double>{14, 25, 36}));
}

// Negative tests call the family entry point directly on hand-built instructions, so they check
// the evaluator's own validation (not the verifier's) and the error location it reports.
hlo::SourceLocation TestLocation() {
  hlo::SourceLocation loc;
  loc.file = std::make_shared<const std::string>("bad.hlo");
  loc.line = 4;
  loc.column = 9;
  return loc;
}

TEST(ReductionErrors, ReducedDimensionOutOfRange) {
  hlo::Computation body("add");
  hlo::Instruction reduce("r", hlo::Opcode::kReduce, Shape::Array(PrimitiveType::kF32, {2}));
  reduce.set_attrs(hlo::DimensionsAttrs{{2}});
  reduce.mutable_called_computations().push_back(&body);
  reduce.set_location(TestLocation());
  Literal input = Make(PrimitiveType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal init = Make(PrimitiveType::kF32, {}, {0});
  const Literal* operands[] = {&input, &init};
  hlo::EvaluatorOptions options;
  hlo::eval::EvalContext context(options);
  try {
    hlo::eval::EvaluateReduction(reduce, operands, context);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("reduced dimension 2 out of range"), std::string::npos)
        << e.message();
    EXPECT_EQ(e.location().line, 4u);
    EXPECT_EQ(e.location().column, 9u);
  }
}

TEST(ReductionErrors, TopKLargerThanRowAndScatterIndexVectorMismatch) {
  hlo::EvaluatorOptions options;
  hlo::eval::EvalContext context(options);
  Literal input = Make(PrimitiveType::kF32, {4}, {1, 2, 3, 4});
  hlo::Instruction topk("t", hlo::Opcode::kTopK,
                        Shape::Tuple({Shape::Array(PrimitiveType::kF32, {5}),
                                      Shape::Array(PrimitiveType::kS32, {5})}));
  topk.set_attrs(hlo::TopKAttrs{5, true});
  const Literal* one[] = {&input};
  EXPECT_THROW(hlo::eval::EvaluateReduction(topk, one, context), hlo::Error);

  hlo::Computation body("add");
  hlo::Instruction scatter("s", hlo::Opcode::kScatter, Shape::Array(PrimitiveType::kF32, {4}));
  hlo::ScatterAttrs attrs;
  attrs.dnums.inserted_window_dims = {0};
  attrs.dnums.scatter_dims_to_operand_dims = {0, 0};  // two entries for a 1-element index
  attrs.dnums.index_vector_dim = 1;
  scatter.set_attrs(attrs);
  scatter.mutable_called_computations().push_back(&body);
  Literal indices = Make(PrimitiveType::kS32, {2}, {0, 1});
  Literal updates = Make(PrimitiveType::kF32, {2}, {1, 2});
  const Literal* three[] = {&input, &indices, &updates};
  try {
    hlo::eval::EvaluateReduction(scatter, three, context);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("scatter_dims_to_operand_dims"), std::string::npos) << e.message();
  }
}

TEST(ReduceWindow, HugeWindowAttributesStayFastOrFail) {
  // A window of 2^40 elements padded to match: only the 3 real elements are visited, so this
  // finishes at once instead of looping over the window. (Built by hand: the verifier is not
  // the subject here.)
  hlo::Computation body("add");
  auto parameter = [&](const char* name, int64_t number) {
    auto p = std::make_unique<hlo::Instruction>(name, hlo::Opcode::kParameter,
                                                Shape::Scalar(PrimitiveType::kF32));
    p->set_attrs(hlo::ParameterAttrs{number});
    return body.AddInstruction(std::move(p));
  };
  hlo::Instruction* a = parameter("a", 0);
  hlo::Instruction* b = parameter("b", 1);
  auto* sum = body.AddInstruction(std::make_unique<hlo::Instruction>(
      "s", hlo::Opcode::kAdd, Shape::Scalar(PrimitiveType::kF32)));
  sum->AppendOperand(a);
  sum->AppendOperand(b);
  body.set_root(sum);
  hlo::Instruction rw("rw", hlo::Opcode::kReduceWindow, Shape::Array(PrimitiveType::kF32, {1}));
  hlo::WindowAttrs attrs;
  attrs.window.dims.resize(1);
  attrs.window.dims[0].size = int64_t{1} << 40;
  attrs.window.dims[0].pad_lo = (int64_t{1} << 40) - 3;
  rw.set_attrs(attrs);
  rw.mutable_called_computations().push_back(&body);
  Literal input = Make(PrimitiveType::kF32, {3}, {1, 2, 3});
  Literal init = Make(PrimitiveType::kF32, {}, {0});
  const Literal* operands[] = {&input, &init};
  hlo::EvaluatorOptions options;
  hlo::eval::EvalContext context(options);
  EXPECT_EQ(Values(hlo::eval::EvaluateReduction(rw, operands, context)), (std::vector<double>{6}));
  // Dilation large enough to overflow int64 is rejected, not wrapped.
  attrs.window.dims[0].size = 3;
  attrs.window.dims[0].pad_lo = 0;
  attrs.window.dims[0].window_dilation = int64_t{1} << 62;
  rw.set_attrs(attrs);
  try {
    hlo::eval::EvaluateReduction(rw, operands, context);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("too large"), std::string::npos) << e.message();
  }
}

TEST(ReductionErrors, SortComparatorReturningNonPred) {
  const std::string text = R"(
HloModule m
bad {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[3] parameter(0)
  ROOT s = f32[3] sort(p), dimensions={0}, to_apply=bad
}
)";
  // The verifier may already reject this; either way it must be an hlo::Error, not a crash.
  EXPECT_THROW(
      {
        auto module = hlo::ParseHloText(text, "test.hlo");
        std::vector<Literal> args;
        args.push_back(Make(PrimitiveType::kF32, {3}, {3, 1, 2}));
        hlo::Evaluate(*module, args);
      },
      hlo::Error);
}

}  // namespace

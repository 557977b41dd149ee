// Data-movement ops of the reference evaluator against hand-computed values: broadcast,
// transpose, slice with strides, reverse, concatenate, pad (negative and interior), reshape,
// bitcast with non-default layouts, dynamic-slice / dynamic-update-slice clamping with several
// index types, gather (incl. batching dims and clamping), iota, empty shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "hlo/parser.h"
#include "tests/hlo/eval_test_util.h"

namespace {

using namespace eval_test;
constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType S32 = PrimitiveType::kS32;

Literal Iota(PrimitiveType type, std::vector<int64_t> dims, double start = 0) {
  Literal literal(Shape::Array(type, std::move(dims)));
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetFromDouble(i, start + static_cast<double>(i));
  return literal;
}

TEST(EvalDataMovement, Broadcast) {
  Literal v = Make(F32, {2}, {1, 2});
  EXPECT_FLOATS(RunOp("f32[2,3]", "broadcast(p0), dimensions={0}", {v}), {1, 1, 1, 2, 2, 2});
  EXPECT_FLOATS(RunOp("f32[3,2]", "broadcast(p0), dimensions={1}", {v}), {1, 2, 1, 2, 1, 2});
  EXPECT_FLOATS(RunOp("f32[2,2]", "broadcast(p0), dimensions={}", {Scalar(F32, 7)}), {7, 7, 7, 7});
  // Operand dims 0,1 -> result dims 2,0: result[i,j,k] = operand[k,i].
  Literal m = Make(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal r = RunOp("f32[3,2,2]", "broadcast(p0), dimensions={2,0}", {m});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 2; ++k)
        EXPECT_EQ(r.GetAsDouble(i * 4 + j * 2 + k), m.GetAsDouble(k * 3 + i)) << i << j << k;
}

TEST(EvalDataMovement, Transpose) {
  Literal m = Make(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_FLOATS(RunOp("f32[3,2]", "transpose(p0), dimensions={1,0}", {m}), {1, 4, 2, 5, 3, 6});
  // result[i,j,k] = operand[j,k,i] for permutation {2,0,1} of a [2,3,4] operand.
  Literal t = Iota(F32, {2, 3, 4});
  Literal r = RunOp("f32[4,2,3]", "transpose(p0), dimensions={2,0,1}", {t});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_EQ(r.GetAsDouble(i * 6 + j * 3 + k), static_cast<double>(j * 12 + k * 4 + i));
}

// Row-major multi-index of `linear` in `dims` (written independently of the evaluator).
std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = linear % dims[d];
    linear /= dims[d];
  }
  return index;
}
int64_t Ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

// Every permutation of a rank-4 iota against the definition result[i] = operand[i permuted]
// (covers the contiguous-run merging of the strided copy).
TEST(EvalDataMovement, TransposeAllRank4PermutationsMatchDefinition) {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  Literal operand = Iota(S32, dims);
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    std::vector<int64_t> out_dims;
    std::string text = "s32[";
    for (size_t i = 0; i < 4; ++i) {
      out_dims.push_back(dims[perm[i]]);
      if (i > 0) text += ",";
      text += std::to_string(dims[perm[i]]);
    }
    std::string attr = "transpose(p0), dimensions={" + std::to_string(perm[0]) + "," +
                       std::to_string(perm[1]) + "," + std::to_string(perm[2]) + "," +
                       std::to_string(perm[3]) + "}";
    Literal result = RunOp(text + "]", attr, {operand});
    for (int64_t i = 0; i < result.element_count(); ++i) {
      std::vector<int64_t> out_index = Unravel(i, out_dims);
      std::vector<int64_t> in_index(4);
      for (size_t d = 0; d < 4; ++d) in_index[perm[d]] = out_index[d];
      ASSERT_EQ(result.GetAsInt64(i), Ravel(in_index, dims)) << attr << " element " << i;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(EvalDataMovement, Rank4SliceAndBroadcastMatchDefinition) {
  const std::vector<int64_t> dims = {3, 4, 5, 6};
  Literal operand = Iota(S32, dims);
  // Whole trailing dims (mergeable) plus a strided leading one.
  Literal sliced = RunOp("s32[2,2,5,6]", "slice(p0), slice={[0:3:2], [1:3], [0:5], [0:6]}", {operand});
  const std::vector<int64_t> out_dims = {2, 2, 5, 6};
  for (int64_t i = 0; i < sliced.element_count(); ++i) {
    std::vector<int64_t> index = Unravel(i, out_dims);
    index[0] *= 2;
    index[1] += 1;
    ASSERT_EQ(sliced.GetAsInt64(i), Ravel(index, dims)) << i;
  }
  Literal small = Iota(S32, {4, 6});
  Literal broadcast = RunOp("s32[3,4,5,6]", "broadcast(p0), dimensions={1,3}", {small});
  for (int64_t i = 0; i < broadcast.element_count(); ++i) {
    std::vector<int64_t> index = Unravel(i, dims);
    ASSERT_EQ(broadcast.GetAsInt64(i), index[1] * 6 + index[3]) << i;
  }
}

TEST(EvalDataMovement, SliceWithStrides) {
  EXPECT_EQ(Ints(RunOp("s32[3]", "slice(p0), slice={[1:8:3]}", {Iota(S32, {10})})),
            (std::vector<int64_t>{1, 4, 7}));
  // Rows 0 and 2, columns 1..3 of a 3x4 iota.
  EXPECT_EQ(Ints(RunOp("s32[2,2]", "slice(p0), slice={[0:3:2], [1:3]}", {Iota(S32, {3, 4})})),
            (std::vector<int64_t>{1, 2, 9, 10}));
  EXPECT_EQ(RunOp("s32[0]", "slice(p0), slice={[2:2]}", {Iota(S32, {4})}).element_count(), 0);
}

TEST(EvalDataMovement, Reverse) {
  Literal m = Make(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_FLOATS(RunOp("f32[2,3]", "reverse(p0), dimensions={1}", {m}), {3, 2, 1, 6, 5, 4});
  EXPECT_FLOATS(RunOp("f32[2,3]", "reverse(p0), dimensions={0,1}", {m}), {6, 5, 4, 3, 2, 1});
}

TEST(EvalDataMovement, Concatenate) {
  EXPECT_FLOATS(RunOp("f32[3]", "concatenate(p0, p1, p2), dimensions={0}",
                      {Make(F32, {2}, {1, 2}), Make(F32, {1}, {3}), Make(F32, {0}, {})}),
                {1, 2, 3});
  EXPECT_FLOATS(RunOp("f32[2,3]", "concatenate(p0, p1), dimensions={1}",
                      {Make(F32, {2, 1}, {1, 4}), Make(F32, {2, 2}, {2, 3, 5, 6})}),
                {1, 2, 3, 4, 5, 6});
}

TEST(EvalDataMovement, PadLowHighInteriorAndNegative) {
  Literal zero = Scalar(F32, 0);
  EXPECT_FLOATS(RunOp("f32[6]", "pad(p0, p1), padding=1_2_1", {Make(F32, {2}, {1, 2}), zero}),
                {0, 1, 0, 2, 0, 0});
  // Interior first gives [1,0,2,0,3]; lo=-1 drops the 1, hi=-2 drops "0,3".
  EXPECT_FLOATS(RunOp("f32[2]", "pad(p0, p1), padding=-1_-2_1", {Make(F32, {3}, {1, 2, 3}), zero}),
                {0, 2});
  EXPECT_FLOATS(RunOp("f32[3,3]", "pad(p0, p1), padding=1_0x0_1",
                      {Make(F32, {2, 2}, {1, 2, 3, 4}), Scalar(F32, -1)}),
                {-1, -1, -1, 1, 2, -1, 3, 4, -1});
  // An empty operand is all padding.
  EXPECT_FLOATS(RunOp("f32[3]", "pad(p0, p1), padding=2_1", {Make(F32, {0}, {}), Scalar(F32, 9)}),
                {9, 9, 9});
}

TEST(EvalDataMovement, ReshapeKeepsRowMajorOrder) {
  EXPECT_FLOATS(RunOp("f32[3,2]", "reshape(p0)", {Make(F32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
                {1, 2, 3, 4, 5, 6});
  EXPECT_FLOATS(RunOp("f32[]", "reshape(p0)", {Make(F32, {1, 1}, {5})}), {5});
}

TEST(EvalDataMovement, BitcastFollowsPhysicalLayout) {
  // f32[2,3]{0,1} stores column-major: physical order 1,4,2,5,3,6.
  std::string text = R"(HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  ROOT b = f32[6]{0} bitcast(p)
})";
  Literal m = Make(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_FLOATS(RunHlo(text, {m}), {1, 4, 2, 5, 3, 6});
  // A layout-changing bitcast [2,3]{1,0} -> [3,2]{0,1} is a transpose.
  std::string transpose = R"(HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT b = f32[3,2]{0,1} bitcast(p)
})";
  EXPECT_FLOATS(RunHlo(transpose, {m}), {1, 4, 2, 5, 3, 6});
  // Default layouts on both sides: a reshape.
  EXPECT_FLOATS(RunOp("f32[3,2]", "bitcast(p0)", {m}), {1, 2, 3, 4, 5, 6});
}

TEST(EvalDataMovement, DynamicSliceClampsStartIndices) {
  Literal v = Iota(S32, {5});
  auto slice = [&](Literal index) {
    return Ints(RunOp("s32[3]", "dynamic-slice(p0, p1), dynamic_slice_sizes={3}", {v, index}));
  };
  EXPECT_EQ(slice(MakeInt(S32, {}, {1})), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(slice(MakeInt(S32, {}, {3})), (std::vector<int64_t>{2, 3, 4}));    // 3 -> 2
  EXPECT_EQ(slice(MakeInt(S32, {}, {-5})), (std::vector<int64_t>{0, 1, 2}));   // -5 -> 0
  EXPECT_EQ(slice(MakeInt(PrimitiveType::kU8, {}, {200})), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(slice(MakeInt(PrimitiveType::kS64, {}, {int64_t{1} << 40})), (std::vector<int64_t>{2, 3, 4}));
  // The largest u64 is a huge start (clamped to the end), not -1.
  EXPECT_EQ(slice(MakeInt(PrimitiveType::kU64, {}, {-1})), (std::vector<int64_t>{2, 3, 4}));
  // Two dimensions, each clamped on its own.
  Literal m = Iota(S32, {3, 4});
  EXPECT_EQ(Ints(RunOp("s32[2,2]", "dynamic-slice(p0, p1, p2), dynamic_slice_sizes={2,2}",
                       {m, MakeInt(S32, {}, {7}), MakeInt(S32, {}, {1})})),
            (std::vector<int64_t>{5, 6, 9, 10}));
}

TEST(EvalDataMovement, DynamicUpdateSliceClamps) {
  Literal v = Iota(S32, {5});
  EXPECT_EQ(Ints(RunOp("s32[5]", "dynamic-update-slice(p0, p1, p2)",
                       {v, MakeInt(S32, {2}, {9, 9}), MakeInt(S32, {}, {4})})),
            (std::vector<int64_t>{0, 1, 2, 9, 9}));
  EXPECT_EQ(Ints(RunOp("s32[5]", "dynamic-update-slice(p0, p1, p2)",
                       {v, MakeInt(S32, {2}, {7, 8}), MakeInt(S32, {}, {-3})})),
            (std::vector<int64_t>{7, 8, 2, 3, 4}));
  // The in-place path (operand produced in the module and dying here) gives the same result.
  std::string text = R"(HloModule m
ENTRY e {
  p = s32[5] parameter(0)
  u = s32[2] parameter(1)
  i = s32[] parameter(2)
  n = s32[5] negate(p)
  ROOT d = s32[5] dynamic-update-slice(n, u, i)
})";
  EXPECT_EQ(Ints(RunHlo(text, {v, MakeInt(S32, {2}, {9, 9}), MakeInt(S32, {}, {1})})),
            (std::vector<int64_t>{0, 9, 9, -3, -4}));
}

TEST(EvalDataMovement, GatherRowsWithClamping) {
  Literal table = Make(F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  Literal rows = MakeInt(S32, {4}, {2, 0, 5, -1});
  EXPECT_FLOATS(RunOp("f32[4,2]",
                      "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, "
                      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}",
                      {table, rows}),
                {5, 6, 1, 2, 5, 6, 1, 2});
}

TEST(EvalDataMovement, GatherWindowsAndIndexVectors) {
  // 2x2 windows of a 3x3 iota at (row, col) starts {(0,1), (2,2)}; (2,2) clamps to (1,1).
  Literal m = Iota(F32, {3, 3});
  Literal starts = MakeInt(S32, {2, 2}, {0, 1, 2, 2});
  EXPECT_FLOATS(RunOp("f32[2,2,2]",
                      "gather(p0, p1), offset_dims={1,2}, collapsed_slice_dims={}, "
                      "start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}",
                      {m, starts}),
                {1, 2, 4, 5, 4, 5, 7, 8});
  // Offset dims before the batch dim: result [2 (window), 2 (batch)].
  EXPECT_FLOATS(RunOp("f32[2,2]",
                      "gather(p0, p1), offset_dims={0}, collapsed_slice_dims={0}, "
                      "start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2}",
                      {m, starts}),
                {1, 7, 2, 8});
}

TEST(EvalDataMovement, GatherWithBatchingDims) {
  // result[b] = operand[b, indices[b]]: operand dim 0 is batched with indices dim 0.
  Literal operand = Make(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal indices = MakeInt(S32, {2, 1}, {2, 0});
  EXPECT_FLOATS(RunOp("f32[2]",
                      "gather(p0, p1), offset_dims={}, collapsed_slice_dims={1}, "
                      "start_index_map={1}, operand_batching_dims={0}, "
                      "start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}",
                      {operand, indices}),
                {3, 4});
}

TEST(EvalDataMovement, IotaAnyTypeAndDimension) {
  std::string text = R"(HloModule m
ENTRY e {
  ROOT i = s32[2,3] iota(), iota_dimension=1
})";
  EXPECT_EQ(Ints(RunHlo(text)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  std::string rows = R"(HloModule m
ENTRY e {
  ROOT i = bf16[3,2] iota(), iota_dimension=0
})";
  EXPECT_FLOATS(RunHlo(rows), {0, 0, 1, 1, 2, 2});
}

TEST(EvalDataMovement, TupleAndGetTupleElement) {
  std::string text = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  t = (f32[2], s32[]) tuple(a, b)
  n = f32[2] negate(a)
  t2 = ((f32[2], s32[]), f32[2]) tuple(t, n)
  inner = (f32[2], s32[]) get-tuple-element(t2), index=0
  ROOT x = f32[2] get-tuple-element(inner), index=0
})";
  EXPECT_FLOATS(RunHlo(text, {Make(F32, {2}, {1, -2}), MakeInt(S32, {}, {3})}), {1, -2});
}

TEST(EvalDataMovement, EmptyShapes) {
  EXPECT_EQ(RunOp("f32[0,3]", "broadcast(p0), dimensions={1}", {Make(F32, {3}, {1, 2, 3})}).element_count(), 0);
  EXPECT_EQ(RunOp("f32[3,0]", "transpose(p0), dimensions={1,0}", {Make(F32, {0, 3}, {})}).element_count(), 0);
  EXPECT_EQ(RunOp("f32[0]", "reverse(p0), dimensions={0}", {Make(F32, {0}, {})}).element_count(), 0);
  EXPECT_EQ(RunOp("f32[0,2]",
                  "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, "
                  "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}",
                  {Make(F32, {3, 2}, {1, 2, 3, 4, 5, 6}), MakeInt(S32, {0}, {})})
                .element_count(),
            0);
}

// Modules that skipped the verifier must still give an hlo::Error naming the instruction, never
// an out-of-bounds access (each case below is rejected by the evaluator's own checks).
TEST(EvalDataMovement, MalformedAttributesAreErrorsWithoutTheVerifier) {
  struct Case {
    const char* root;
    const char* expected;
  };
  const Case cases[] = {
      {"ROOT s = f32[5] slice(p), slice={[0:5]}", "out of bounds"},
      {"ROOT b = f32[2,4] broadcast(p), dimensions={1}", "does not map"},
      {"ROOT t = f32[3] transpose(p), dimensions={1}", "permutation"},
      {"ROOT d = f32[4] pad(p, p), padding=0_1", "scalar"},
      {"ROOT g = f32[3] gather(p, p), offset_dims={}, collapsed_slice_dims={0}, "
       "start_index_map={0}, index_vector_dim=1, slice_sizes={1}",
       "integer"},
  };
  int evaluated = 0;
  for (const Case& c : cases) {
    std::string text = std::string("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n  ") + c.root + "\n}\n";
    std::unique_ptr<hlo::Module> module;
    try {
      module = hlo::ParseHloText(text, "bad.hlo");
    } catch (const hlo::Error&) {
      continue;  // the parser already refuses it: fine too
    }
    ++evaluated;
    try {
      hlo::Evaluate(*module, std::vector<Literal>{Make(F32, {3}, {1, 2, 3})});
      ADD_FAILURE() << "expected an error for " << c.root;
    } catch (const hlo::Error& e) {
      EXPECT_NE(e.message().find(c.expected), std::string::npos) << c.root << ": " << e.message();
      EXPECT_EQ(e.location().line, 4u) << c.root;
    }
  }
  std::cout << "[          ] " << evaluated << " of " << std::size(cases)
            << " malformed modules reached the evaluator\n";
}

}  // namespace

// Shape inference per op family, on IR built by hand. Expected shapes are worked out by hand
// from XLA's operation semantics (the arithmetic is spelled out next to each case).
#include <gtest/gtest.h>

#include "tests/hlo/ir_builder_for_tests.h"

namespace {

using namespace hlo;
using namespace verifier_test;

std::string Inferred(const Instruction* inst) { return InferShape(*inst).ToString(false); }

// ----- Elementwise -----------------------------------------------------------------------------

TEST(ShapeInferenceElementwise, BinaryKeepsShapeCompareGivesPred) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 3}));
  auto* y = b.Param(1, F32({2, 3}));
  EXPECT_EQ(Inferred(b.Add("add.3", Opcode::kAdd, F32({2, 3}), {x, y})), "f32[2,3]");
  EXPECT_EQ(Inferred(b.Add("lt", Opcode::kCompare, Pred({2, 3}), {x, y},
                           CompareAttrs{ComparisonDirection::kLt})),
            "pred[2,3]");
  EXPECT_EQ(Inferred(b.Add("fin", Opcode::kIsFinite, Pred({2, 3}), {x})), "pred[2,3]");
}

TEST(ShapeInferenceElementwise, BinaryOperandMismatchNamesOperand) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 3}));
  auto* y = b.Param(1, F32({3}));
  auto* add = b.Add("add.3", Opcode::kAdd, F32({2, 3}), {x, y});
  uint32_t line = ExpectErrorContaining([&] { InferShape(*add); },
                                        "add.3: operand 1 has shape f32[3] but f32[2,3] was expected");
  EXPECT_EQ(line, 3u);  // the third instruction built
}

TEST(ShapeInferenceElementwise, MixedElementTypesRejected) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({4}));
  auto* y = b.Param(1, BF16({4}));
  auto* mul = b.Add("mul", Opcode::kMultiply, F32({4}), {x, y});
  ExpectErrorContaining([&] { InferShape(*mul); }, "operand 1 has shape bf16[4] but f32[4]");
}

TEST(ShapeInferenceElementwise, TypeClassesOfTranscendentalAndBitwiseOps) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* i = b.Param(0, S32({4}));
  auto* f = b.Param(1, F32({4}));
  auto* exp = b.Add("exp", Opcode::kExp, S32({4}), {i});
  ExpectErrorContaining([&] { InferShape(*exp); }, "exponential needs a floating-point");
  auto* shl = b.Add("shl", Opcode::kShiftLeft, F32({4}), {f, f});
  ExpectErrorContaining([&] { InferShape(*shl); }, "shift-left needs an integer");
  auto* p = b.Param(2, Pred({4}));
  EXPECT_EQ(Inferred(b.Add("not", Opcode::kNot, Pred({4}), {p})), "pred[4]");
  EXPECT_EQ(Inferred(b.Add("xor", Opcode::kXor, S32({4}), {i, i})), "s32[4]");
}

TEST(ShapeInferenceElementwise, ConvertKeepsDeclaredTypeAndOperandDims) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, BF16({1, 4096}));
  EXPECT_EQ(Inferred(b.Add("c", Opcode::kConvert, F32({1, 4096}), {x})), "f32[1,4096]");
  // Declaring other dims is caught: the result must keep the operand's dims.
  EXPECT_EQ(Inferred(b.Add("c2", Opcode::kConvert, F32({4096}), {x})), "f32[1,4096]");
}

TEST(ShapeInferenceElementwise, BitcastConvertAddsOrRemovesMinorDimension) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* f = b.Param(0, F32({4}));
  // Same width: same dims.
  EXPECT_EQ(Inferred(b.Add("a", Opcode::kBitcastConvert, S32({4}), {f})), "s32[4]");
  // 32 -> 16 bits: each element becomes 2, in a new minor dimension.
  EXPECT_EQ(Inferred(b.Add("b", Opcode::kBitcastConvert, Shape::Array(PrimitiveType::kU16, {}),
                           {f})),
            "u16[4,2]");
  // 16 -> 32 bits: the minor dimension of size 2 is consumed.
  auto* h = b.Param(1, Shape::Array(PrimitiveType::kU16, {4, 2}));
  EXPECT_EQ(Inferred(b.Add("c", Opcode::kBitcastConvert, F32({}), {h})), "f32[4]");
  auto* bad = b.Param(2, Shape::Array(PrimitiveType::kU16, {4, 3}));
  auto* d = b.Add("d", Opcode::kBitcastConvert, F32({4}), {bad});
  ExpectErrorContaining([&] { InferShape(*d); }, "needs a minor dimension of size 2");
}

TEST(ShapeInferenceElementwise, SelectPredicateAndClampBounds) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* p = b.Param(0, Pred({3}));
  auto* x = b.Param(1, F32({3}));
  auto* lo = b.Param(2, F32({}));
  EXPECT_EQ(Inferred(b.Add("s", Opcode::kSelect, F32({3}), {p, x, x})), "f32[3]");
  // A scalar predicate picks a whole array (as XLA allows); a predicate of other dims does not.
  auto* sp = b.Param(3, Pred({}));
  EXPECT_EQ(Inferred(b.Add("s1", Opcode::kSelect, F32({3}), {sp, x, x})), "f32[3]");
  auto* p2 = b.Param(5, Pred({2}));
  auto* bad = b.Add("s2", Opcode::kSelect, F32({3}), {p2, x, x});
  ExpectErrorContaining([&] { InferShape(*bad); },
                        "operand 0 has shape pred[2] but pred[3] or pred[] was expected");
  auto* ints = b.Add("s3", Opcode::kSelect, F32({3}), {x, x, x});
  ExpectErrorContaining([&] { InferShape(*ints); }, "operand 0 has shape f32[3] but pred[3]");
  EXPECT_EQ(Inferred(b.Add("cl", Opcode::kClamp, F32({3}), {lo, x, lo})), "f32[3]");
  auto* wrong = b.Param(4, F32({2}));
  auto* cl2 = b.Add("cl2", Opcode::kClamp, F32({3}), {wrong, x, lo});
  ExpectErrorContaining([&] { InferShape(*cl2); }, "operand 0 has shape f32[2]");
}

TEST(ShapeInferenceElementwise, EmptyShapesAreFine) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({0, 5}));
  EXPECT_EQ(Inferred(b.Add("n", Opcode::kNegate, F32({0, 5}), {x})), "f32[0,5]");
}

// ----- Data movement ---------------------------------------------------------------------------

TEST(ShapeInferenceDataMovement, BroadcastChecksMappedSizes) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({3}));
  EXPECT_EQ(Inferred(b.Add("b", Opcode::kBroadcast, F32({2, 3}), {x}, DimensionsAttrs{{1}})),
            "f32[2,3]");
  auto* bad = b.Add("b2", Opcode::kBroadcast, F32({3, 2}), {x}, DimensionsAttrs{{1}});
  ExpectErrorContaining([&] { InferShape(*bad); },
                        "operand dimension 0 has size 3 but result dimension 1 has size 2");
  auto* out = b.Add("b3", Opcode::kBroadcast, F32({3}), {x}, DimensionsAttrs{{1}});
  ExpectErrorContaining([&] { InferShape(*out); }, "out of range for rank 1");
}

TEST(ShapeInferenceDataMovement, ReshapeKeepsElementCount) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 3, 4}));
  EXPECT_EQ(Inferred(b.Add("r", Opcode::kReshape, F32({6, 4}), {x})), "f32[6,4]");
  auto* bad = b.Add("r2", Opcode::kReshape, F32({5, 5}), {x});
  ExpectErrorContaining([&] { InferShape(*bad); }, "(24 elements) to f32[5,5] (25 elements)");
}

TEST(ShapeInferenceDataMovement, TransposePermutesDims) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 3, 4}));
  // result dim i = operand dim perm[i]: {4, 2, 3}.
  EXPECT_EQ(Inferred(b.Add("t", Opcode::kTranspose, F32({4, 2, 3}), {x},
                           DimensionsAttrs{{2, 0, 1}})),
            "f32[4,2,3]");
  auto* bad = b.Add("t2", Opcode::kTranspose, F32({2, 2, 3}), {x}, DimensionsAttrs{{0, 0, 1}});
  ExpectErrorContaining([&] { InferShape(*bad); }, "repeat dimension 0");
}

TEST(ShapeInferenceDataMovement, SliceWithStrides) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({10, 5}));
  // [1:8:3] picks 1, 4, 7 -> 3 elements; [0:5:2] picks 0, 2, 4 -> 3; [2:2] is empty.
  EXPECT_EQ(Inferred(b.Add("s", Opcode::kSlice, F32({3, 3}), {x},
                           SliceAttrs{{{1, 8, 3}, {0, 5, 2}}})),
            "f32[3,3]");
  EXPECT_EQ(Inferred(b.Add("e", Opcode::kSlice, F32({0, 5}), {x},
                           SliceAttrs{{{2, 2, 1}, {0, 5, 1}}})),
            "f32[0,5]");
  auto* bad = b.Add("s2", Opcode::kSlice, F32({3, 3}), {x}, SliceAttrs{{{0, 11, 1}, {0, 5, 1}}});
  ExpectErrorContaining([&] { InferShape(*bad); }, "slice [0:11:1] is invalid for dimension 0");
}

TEST(ShapeInferenceDataMovement, DynamicSliceAndUpdate) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, BF16({1, 2048, 768}));
  auto* i = b.Param(1, S32({}));
  EXPECT_EQ(Inferred(b.Add("ds", Opcode::kDynamicSlice, BF16({1, 32, 768}), {x, i, i, i},
                           DynamicSliceAttrs{{1, 32, 768}})),
            "bf16[1,32,768]");
  auto* few = b.Add("ds2", Opcode::kDynamicSlice, BF16({1, 32, 768}), {x, i, i},
                    DynamicSliceAttrs{{1, 32, 768}});
  ExpectErrorContaining([&] { InferShape(*few); }, "expects 3 start indices, got 2");
  auto* u = b.Param(2, BF16({1, 32, 768}));
  EXPECT_EQ(Inferred(b.Add("dus", Opcode::kDynamicUpdateSlice, BF16({1, 2048, 768}),
                           {x, u, i, i, i})),
            "bf16[1,2048,768]");
  auto* big = b.Param(3, BF16({1, 4096, 768}));
  auto* dus2 = b.Add("dus2", Opcode::kDynamicUpdateSlice, BF16({1, 2048, 768}),
                     {x, big, i, i, i});
  ExpectErrorContaining([&] { InferShape(*dus2); }, "does not fit in operand");
  auto* f = b.Param(4, F32({}));
  auto* fidx = b.Add("ds3", Opcode::kDynamicSlice, BF16({1, 32, 768}), {x, f, f, f},
                     DynamicSliceAttrs{{1, 32, 768}});
  ExpectErrorContaining([&] { InferShape(*fidx); }, "a scalar integer index was expected");
}

TEST(ShapeInferenceDataMovement, ConcatenateSumsAlongAxis) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 3}));
  auto* y = b.Param(1, F32({2, 5}));
  EXPECT_EQ(Inferred(b.Add("c", Opcode::kConcatenate, F32({2, 8}), {x, y},
                           DimensionsAttrs{{1}})),
            "f32[2,8]");
  auto* bad = b.Add("c2", Opcode::kConcatenate, F32({4, 3}), {x, y}, DimensionsAttrs{{0}});
  ExpectErrorContaining([&] { InferShape(*bad); }, "operand 1 has shape f32[2,5]");
}

TEST(ShapeInferenceDataMovement, PadWithNegativeAndInteriorPadding) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({4, 0}));
  auto* v = b.Param(1, F32({}));
  // dim 0: lo -1 + hi 2 + 4 elements + 3 gaps * interior 1 = 8.
  // dim 1: an empty dimension has no gaps: 1 + 1 + 0 = 2.
  EXPECT_EQ(Inferred(b.Add("p", Opcode::kPad, F32({8, 2}), {x, v},
                           PadAttrs{{{-1, 2, 1}, {1, 1, 5}}})),
            "f32[8,2]");
  auto* neg = b.Add("p2", Opcode::kPad, F32({0, 0}), {x, v}, PadAttrs{{{-3, -2, 0}, {0, 0, 0}}});
  ExpectErrorContaining([&] { InferShape(*neg); }, "padding makes dimension 0 negative (-1)");
  auto* wrong_value = b.Add("p3", Opcode::kPad, F32({4, 0}), {x, x}, PadAttrs{{{0, 0, 0}, {0, 0, 0}}});
  ExpectErrorContaining([&] { InferShape(*wrong_value); }, "but f32[] was expected");
}

TEST(ShapeInferenceDataMovement, TupleGetTupleElementReverseIota) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2}));
  auto* y = b.Param(1, S32({}));
  auto* t = b.Add("t", Opcode::kTuple, Shape::Tuple({F32({2}), S32({})}), {x, y});
  EXPECT_EQ(Inferred(t), "(f32[2], s32[])");
  EXPECT_EQ(Inferred(b.Add("g", Opcode::kGetTupleElement, S32({}), {t}, TupleIndexAttrs{1})),
            "s32[]");
  auto* g2 = b.Add("g2", Opcode::kGetTupleElement, S32({}), {t}, TupleIndexAttrs{2});
  ExpectErrorContaining([&] { InferShape(*g2); }, "index 2 is out of range");
  EXPECT_EQ(Inferred(b.Add("r", Opcode::kReverse, F32({2}), {x}, DimensionsAttrs{{0}})), "f32[2]");
  EXPECT_EQ(Inferred(b.Add("i", Opcode::kIota, S32({4, 5}), {}, IotaAttrs{1})), "s32[4,5]");
  auto* i2 = b.Add("i2", Opcode::kIota, S32({4}), {}, IotaAttrs{1});
  ExpectErrorContaining([&] { InferShape(*i2); }, "iota_dimension 1 is out of range");
}

TEST(ShapeInferenceDataMovement, GatherEmbeddingLookup) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* table = b.Param(0, BF16({50000, 768}));
  auto* ids = b.Param(1, S32({1, 11, 1}));
  GatherAttrs attrs;
  attrs.dnums.offset_dims = {2};
  attrs.dnums.collapsed_slice_dims = {0};
  attrs.dnums.start_index_map = {0};
  attrs.dnums.index_vector_dim = 2;
  attrs.slice_sizes = {1, 768};
  // batch dims = index dims without index_vector_dim = [1, 11]; offset dim 2 = 768.
  EXPECT_EQ(Inferred(b.Add("g", Opcode::kGather, BF16({1, 11, 768}), {table, ids}, attrs)),
            "bf16[1,11,768]");
  // Implicit index vector (index_vector_dim == rank): s32[5] indexes dimension 0.
  auto* flat = b.Param(2, S32({5}));
  attrs.dnums.offset_dims = {1};
  attrs.dnums.index_vector_dim = 1;
  EXPECT_EQ(Inferred(b.Add("g2", Opcode::kGather, BF16({5, 768}), {table, flat}, attrs)),
            "bf16[5,768]");
  attrs.slice_sizes = {2, 768};
  auto* bad = b.Add("g3", Opcode::kGather, BF16({5, 768}), {table, flat}, attrs);
  ExpectErrorContaining([&] { InferShape(*bad); }, "must have slice size <= 1");
}

TEST(ShapeInferenceDataMovement, ScatterVariadicAndReducerSignature) {
  Module m("m");
  Computation* add = AddBinaryComputation(m, "add", PrimitiveType::kF32);
  Computation* pair = [&] {
    ComputationBuilder c(m, "pair");
    std::vector<Instruction*> p;
    for (const char* name : {"p0", "p1", "p2", "p3"}) {
      p.push_back(c.Param(static_cast<int64_t>(p.size()), F32({}), name));
    }
    c.Add("t", Opcode::kTuple, Shape::Tuple({F32({}), F32({})}), {p[0], p[1]});
    return c.computation();
  }();
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({10, 4}));
  auto* idx = b.Param(1, S32({5, 1}));
  auto* upd = b.Param(2, F32({5, 4}));
  ScatterAttrs attrs;
  attrs.dnums.update_window_dims = {1};
  attrs.dnums.inserted_window_dims = {0};
  attrs.dnums.scatter_dims_to_operand_dims = {0};
  attrs.dnums.index_vector_dim = 1;
  EXPECT_EQ(Inferred(b.Add("s", Opcode::kScatter, F32({10, 4}), {x, idx, upd}, attrs, {add})),
            "f32[10,4]");
  EXPECT_EQ(Inferred(b.Add("s2", Opcode::kScatter, Shape::Tuple({F32({10, 4}), F32({10, 4})}),
                           {x, x, idx, upd, upd}, attrs, {pair})),
            "(f32[10,4], f32[10,4])");
  auto* wrong = b.Add("s3", Opcode::kScatter, F32({10, 4}), {x, x, idx, upd, upd}, attrs, {add});
  ExpectErrorContaining([&] { InferShape(*wrong); },
                        "to_apply computation 'add' takes 2 parameters but 4 were expected");
  auto* bad_upd = b.Param(3, F32({6, 4}));
  auto* s4 = b.Add("s4", Opcode::kScatter, F32({10, 4}), {x, idx, bad_upd}, attrs, {add});
  ExpectErrorContaining([&] { InferShape(*s4); }, "update scatter dimension 0 has size 6");
}

// ----- Contractions ----------------------------------------------------------------------------

TEST(ShapeInferenceContraction, DotBatchFreeContracting) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* lhs = b.Param(0, F32({8, 2, 3}));
  auto* rhs = b.Param(1, F32({8, 3, 5}));
  DotAttrs attrs;
  attrs.dnums = {{0}, {2}, {0}, {1}};
  // batch [8] + lhs free [2] + rhs free [5].
  EXPECT_EQ(Inferred(b.Add("d", Opcode::kDot, F32({8, 2, 5}), {lhs, rhs}, attrs)), "f32[8,2,5]");
  // No contracting dims: an outer product per batch.
  DotAttrs outer;
  outer.dnums = {{0}, {}, {0}, {}};
  EXPECT_EQ(Inferred(b.Add("o", Opcode::kDot, F32({8, 2, 3, 3, 5}), {lhs, rhs}, outer)),
            "f32[8,2,3,3,5]");
  DotAttrs wrong;
  wrong.dnums = {{0}, {1}, {0}, {1}};
  auto* bad = b.Add("d2", Opcode::kDot, F32({8, 3, 5}), {lhs, rhs}, wrong);
  ExpectErrorContaining([&] { InferShape(*bad); },
                        "lhs dimension 1 has size 2 but rhs dimension 1 has size 3");
}

TEST(ShapeInferenceContraction, DotMixedPrecisionTakesDeclaredType) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* lhs = b.Param(0, BF16({4, 6}));
  auto* rhs = b.Param(1, BF16({6, 2}));
  DotAttrs attrs;
  attrs.dnums = {{}, {1}, {}, {0}};
  EXPECT_EQ(Inferred(b.Add("d", Opcode::kDot, F32({4, 2}), {lhs, rhs}, attrs)), "f32[4,2]");
  auto* ints = b.Param(2, S32({6, 2}));
  auto* bad = b.Add("d2", Opcode::kDot, F32({4, 2}), {lhs, ints}, attrs);
  ExpectErrorContaining([&] { InferShape(*bad); }, "operand types bf16 and s32 do not agree");
}

ConvolutionAttrs Conv2D(int64_t size, int64_t stride, int64_t pad, int64_t lhs_dilate = 1,
                        int64_t rhs_dilate = 1) {
  ConvolutionAttrs attrs;
  // bf01_oi01->bf01
  attrs.dnums.input_batch = 0;
  attrs.dnums.input_feature = 1;
  attrs.dnums.input_spatial = {2, 3};
  attrs.dnums.kernel_output_feature = 0;
  attrs.dnums.kernel_input_feature = 1;
  attrs.dnums.kernel_spatial = {2, 3};
  attrs.dnums.output_batch = 0;
  attrs.dnums.output_feature = 1;
  attrs.dnums.output_spatial = {2, 3};
  for (int i = 0; i < 2; ++i) {
    attrs.window.dims.push_back(WindowDim{size, stride, pad, pad, lhs_dilate, rhs_dilate, false});
  }
  return attrs;
}

TEST(ShapeInferenceContraction, ConvolutionDepthwiseFromCorpus) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, BF16({1, 256, 56, 56}));
  auto* k = b.Param(1, BF16({256, 1, 3, 3}));
  ConvolutionAttrs attrs = Conv2D(3, 1, 1);
  attrs.feature_group_count = 256;
  // 56 + 1 + 1 - 3 + 1 = 56.
  EXPECT_EQ(Inferred(b.Add("c", Opcode::kConvolution, BF16({1, 256, 56, 56}), {x, k}, attrs)),
            "bf16[1,256,56,56]");
  attrs.feature_group_count = 128;
  auto* bad = b.Add("c2", Opcode::kConvolution, BF16({1, 256, 56, 56}), {x, k}, attrs);
  ExpectErrorContaining([&] { InferShape(*bad); },
                        "input feature size 256 must equal kernel input features 1 * "
                        "feature_group_count 128");
}

TEST(ShapeInferenceContraction, ConvolutionStrideDilationBatchGroups) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({4, 2, 7, 7}));
  auto* k = b.Param(1, F32({6, 2, 3, 3}));
  // Stride 2, no padding: (7 - 3) / 2 + 1 = 3.
  EXPECT_EQ(Inferred(b.Add("s", Opcode::kConvolution, F32({4, 6, 3, 3}), {x, k}, Conv2D(3, 2, 0))),
            "f32[4,6,3,3]");
  // lhs dilation 2: the input spans (7 - 1) * 2 + 1 = 13; 13 - 3 + 1 = 11.
  EXPECT_EQ(Inferred(b.Add("l", Opcode::kConvolution, F32({4, 6, 11, 11}), {x, k},
                           Conv2D(3, 1, 0, 2, 1))),
            "f32[4,6,11,11]");
  // rhs dilation 3: the window spans (3 - 1) * 3 + 1 = 7; 7 - 7 + 1 = 1.
  EXPECT_EQ(Inferred(b.Add("r", Opcode::kConvolution, F32({4, 6, 1, 1}), {x, k},
                           Conv2D(3, 1, 0, 1, 3))),
            "f32[4,6,1,1]");
  // batch_group_count 2: output batch 4 / 2 = 2, output features stay 6.
  ConvolutionAttrs grouped = Conv2D(3, 1, 1);
  grouped.batch_group_count = 2;
  EXPECT_EQ(Inferred(b.Add("g", Opcode::kConvolution, F32({2, 6, 7, 7}), {x, k}, grouped)),
            "f32[2,6,7,7]");
  // A window larger than the padded input gives an empty output.
  EXPECT_EQ(Inferred(b.Add("e", Opcode::kConvolution, F32({4, 6, 0, 0}), {x, k},
                           Conv2D(3, 1, -3))),
            "f32[4,6,0,0]");
}

TEST(ShapeInferenceContraction, BatchNorm) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 4, 3}));
  auto* v = b.Param(1, F32({3}));
  BatchNormAttrs attrs{0.001f, 2};
  EXPECT_EQ(Inferred(b.Add("i", Opcode::kBatchNormInference, F32({2, 4, 3}), {x, v, v, v, v},
                           attrs)),
            "f32[2,4,3]");
  EXPECT_EQ(Inferred(b.Add("t", Opcode::kBatchNormTraining, F32({}), {x, v, v}, attrs)),
            "(f32[2,4,3], f32[3], f32[3])");
  EXPECT_EQ(Inferred(b.Add("g", Opcode::kBatchNormGrad, F32({}), {x, v, v, v, x}, attrs)),
            "(f32[2,4,3], f32[3], f32[3])");
  auto* bad = b.Add("b", Opcode::kBatchNormTraining, F32({}), {x, v, v}, BatchNormAttrs{0, 1});
  ExpectErrorContaining([&] { InferShape(*bad); }, "operand 1 has shape f32[3] but f32[4]");
}

}  // namespace

namespace {

using namespace hlo;
using namespace verifier_test;

TEST(ShapeInferenceRobustness, AbsurdAttributesAreErrorsNotWrappedSizes) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({4}));
  auto* v = b.Param(1, F32({}));
  // 3 gaps * 2^62 interior padding overflows int64.
  auto* pad = b.Add("pad", Opcode::kPad, F32({4}), {x, v},
                    PadAttrs{{{0, 0, int64_t{1} << 62}}});
  ExpectErrorContaining([&] { InferShape(*pad); }, "pad: padding makes dimension 0 too large");
  // A huge stride is fine (one element), a huge slice limit is not.
  EXPECT_EQ(InferShape(*b.Add("s", Opcode::kSlice, F32({1}), {x},
                              SliceAttrs{{{1, 4, INT64_MAX}}}))
                .ToString(false),
            "f32[1]");
  WindowAttrs window;
  window.window.dims.push_back(WindowDim{2, 1, 0, 0, INT64_MAX, 1, false});
  Computation* add = AddBinaryComputation(m, "add", PrimitiveType::kF32);
  auto* rw = b.Add("rw", Opcode::kReduceWindow, F32({1}), {x, v}, window, {add});
  ExpectErrorContaining([&] { InferShape(*rw); }, "rw: window dimension 0 is too large");
}

TEST(ShapeInferenceRobustness, WrongAttributeFamilyAndMissingCallee) {
  Module m("m");
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({4}));
  auto* bc = b.Add("bc", Opcode::kBroadcast, F32({4}), {x}, SliceAttrs{});
  ExpectErrorContaining([&] { InferShape(*bc); },
                        "bc: carries attributes of the wrong kind (expected dimensions)");
  auto* call = b.Add("call", Opcode::kCall, F32({4}), {x});
  ExpectErrorContaining([&] { InferShape(*call); }, "call: expects 1 called computation, got 0");
  auto* neg = b.Add("neg", Opcode::kNegate, F32({4}), {});
  ExpectErrorContaining([&] { InferShape(*neg); }, "neg: expects 1 operand, got 0");
}

TEST(ShapeInferenceRobustness, ResultHasDefaultLayout) {
  Module m("m");
  ComputationBuilder b(m, "e");
  Shape column_major = F32({2, 3});
  column_major.has_layout = true;
  column_major.minor_to_major = {0, 1};
  auto* x = b.Param(0, column_major);
  const Shape copied = InferShape(*b.Add("c", Opcode::kCopy, column_major, {x}));
  EXPECT_FALSE(copied.has_layout);
  EXPECT_EQ(copied.ToString(), "f32[2,3]");
}

}  // namespace

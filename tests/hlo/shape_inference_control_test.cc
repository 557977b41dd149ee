// Shape inference for reductions, windows, sort/topk/map, calls, control flow, collectives and
// the leaf ops, on IR built by hand. Expected shapes are worked out by hand.
#include <gtest/gtest.h>

#include "tests/hlo/ir_builder_for_tests.h"

namespace {

using namespace hlo;
using namespace verifier_test;

std::string Inferred(const Instruction* inst) { return InferShape(*inst).ToString(false); }

WindowAttrs Window2D(int64_t h, int64_t w, int64_t sh, int64_t sw, int64_t pad = 0) {
  WindowAttrs attrs;
  attrs.window.dims.push_back(WindowDim{h, sh, pad, pad, 1, 1, false});
  attrs.window.dims.push_back(WindowDim{w, sw, pad, pad, 1, 1, false});
  return attrs;
}

TEST(ShapeInferenceReduction, ReduceDropsReducedDims) {
  Module m("m");
  Computation* add = AddBinaryComputation(m, "add", PrimitiveType::kF32);
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 3, 4}));
  auto* zero = b.Param(1, F32({}));
  EXPECT_EQ(Inferred(b.Add("r", Opcode::kReduce, F32({3}), {x, zero}, DimensionsAttrs{{0, 2}},
                           {add})),
            "f32[3]");
  // Reducing every dimension gives a scalar; reducing none keeps the shape.
  EXPECT_EQ(Inferred(b.Add("all", Opcode::kReduce, F32({}), {x, zero},
                           DimensionsAttrs{{0, 1, 2}}, {add})),
            "f32[]");
  EXPECT_EQ(Inferred(b.Add("none", Opcode::kReduce, F32({2, 3, 4}), {x, zero},
                           DimensionsAttrs{{}}, {add})),
            "f32[2,3,4]");
}

TEST(ShapeInferenceReduction, VariadicReduceArgmax) {
  Module m("m");
  ComputationBuilder r(m, "argmax");
  auto* v0 = r.Param(0, F32({}), "v0");
  auto* i0 = r.Param(1, S32({}), "i0");
  auto* v1 = r.Param(2, F32({}), "v1");
  auto* i1 = r.Param(3, S32({}), "i1");
  auto* gt = r.Add("gt", Opcode::kCompare, Pred({}), {v0, v1},
                   CompareAttrs{ComparisonDirection::kGt});
  auto* v = r.Add("v", Opcode::kSelect, F32({}), {gt, v0, v1});
  auto* i = r.Add("i", Opcode::kSelect, S32({}), {gt, i0, i1});
  r.Add("t", Opcode::kTuple, Shape::Tuple({F32({}), S32({})}), {v, i});
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 5}));
  auto* idx = b.Param(1, S32({2, 5}));
  auto* fi = b.Param(2, F32({}));
  auto* ii = b.Param(3, S32({}));
  EXPECT_EQ(Inferred(b.Add("am", Opcode::kReduce, F32({}), {x, idx, fi, ii},
                           DimensionsAttrs{{1}}, {r.computation()})),
            "(f32[2], s32[2])");
  // Swapping the init values breaks the reducer's accumulator types.
  auto* bad = b.Add("am2", Opcode::kReduce, F32({}), {x, idx, ii, fi}, DimensionsAttrs{{1}},
                    {r.computation()});
  ExpectErrorContaining([&] { InferShape(*bad); }, "operand 2 (init value) has shape s32[]");
}

TEST(ShapeInferenceReduction, ReducerSignatureErrors) {
  Module m("m");
  Computation* add_s32 = AddBinaryComputation(m, "add_s32", PrimitiveType::kS32);
  Computation* cmp = AddBinaryComputation(m, "cmp", PrimitiveType::kF32, Opcode::kCompare);
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({4}));
  auto* zero = b.Param(1, F32({}));
  auto* r1 = b.Add("r1", Opcode::kReduce, F32({}), {x, zero}, DimensionsAttrs{{0}}, {add_s32});
  ExpectErrorContaining([&] { InferShape(*r1); },
                        "to_apply computation 'add_s32' parameter 0 has shape s32[] but f32[]");
  auto* r2 = b.Add("r2", Opcode::kReduce, F32({}), {x, zero}, DimensionsAttrs{{0}}, {cmp});
  ExpectErrorContaining([&] { InferShape(*r2); },
                        "to_apply computation 'cmp' returns pred[] but f32[] was expected");
  auto* r3 = b.Add("r3", Opcode::kReduce, F32({}), {x, zero}, DimensionsAttrs{{0}}, {});
  ExpectErrorContaining([&] { InferShape(*r3); }, "expects 1 called computation, got 0");
}

TEST(ShapeInferenceReduction, BF16InputWithF32AccumulatorIsAccepted) {
  // XLA compares reducer inputs ignoring floating-point precision.
  Module m("m");
  ComputationBuilder r(m, "mixed");
  auto* acc = r.Param(0, F32({}), "acc");
  auto* in = r.Param(1, BF16({}), "in");
  auto* c = r.Add("c", Opcode::kConvert, F32({}), {in});
  r.Add("s", Opcode::kAdd, F32({}), {acc, c});
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, BF16({8}));
  auto* zero = b.Param(1, F32({}));
  EXPECT_EQ(Inferred(b.Add("r", Opcode::kReduce, F32({}), {x, zero}, DimensionsAttrs{{0}},
                           {r.computation()})),
            "f32[]");
}

TEST(ShapeInferenceReduction, ReduceWindowAndSelectAndScatter) {
  Module m("m");
  Computation* max = AddBinaryComputation(m, "max", PrimitiveType::kF32, Opcode::kMaximum);
  Computation* ge = AddBinaryComputation(m, "ge", PrimitiveType::kF32, Opcode::kCompare);
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({4, 6}));
  auto* init = b.Param(1, F32({}));
  // (4 - 2) / 2 + 1 = 2 and (6 - 3) / 3 + 1 = 2.
  EXPECT_EQ(Inferred(b.Add("rw", Opcode::kReduceWindow, F32({2, 2}), {x, init},
                           Window2D(2, 3, 2, 3), {max})),
            "f32[2,2]");
  // Padding 1 on each side, window 3, stride 1: 4 + 2 - 3 + 1 = 4 and 6 + 2 - 3 + 1 = 6.
  EXPECT_EQ(Inferred(b.Add("same", Opcode::kReduceWindow, F32({4, 6}), {x, init},
                           Window2D(3, 3, 1, 1, 1), {max})),
            "f32[4,6]");
  auto* source = b.Param(2, F32({2, 2}));
  EXPECT_EQ(Inferred(b.Add("sas", Opcode::kSelectAndScatter, F32({4, 6}), {x, source, init},
                           Window2D(2, 3, 2, 3), {ge, max})),
            "f32[4,6]");
  auto* bad = b.Add("sas2", Opcode::kSelectAndScatter, F32({4, 6}), {x, source, init},
                    Window2D(2, 3, 2, 3), {max, max});
  ExpectErrorContaining([&] { InferShape(*bad); },
                        "select computation 'max' returns f32[] but pred[] was expected");
  auto* zero_stride = b.Add("rw0", Opcode::kReduceWindow, F32({2, 2}), {x, init},
                            Window2D(2, 3, 0, 3), {max});
  ExpectErrorContaining([&] { InferShape(*zero_stride); },
                        "window dimension 0 needs size, stride and dilations >= 1");
}

TEST(ShapeInferenceReduction, SortTopKMap) {
  Module m("m");
  ComputationBuilder cmp(m, "cmp2");
  std::vector<Instruction*> p;
  p.push_back(cmp.Param(0, F32({}), "a"));
  p.push_back(cmp.Param(1, F32({}), "b"));
  p.push_back(cmp.Param(2, S32({}), "c"));
  p.push_back(cmp.Param(3, S32({}), "d"));
  cmp.Add("lt", Opcode::kCompare, Pred({}), {p[0], p[1]}, CompareAttrs{ComparisonDirection::kLt});
  Computation* add = AddBinaryComputation(m, "add", PrimitiveType::kF32);
  ComputationBuilder b(m, "e");
  auto* keys = b.Param(0, F32({3, 7}));
  auto* vals = b.Param(1, S32({3, 7}));
  EXPECT_EQ(Inferred(b.Add("s", Opcode::kSort, F32({}), {keys, vals}, SortAttrs{1, true},
                           {cmp.computation()})),
            "(f32[3,7], s32[3,7])");
  auto* one = b.Add("s1", Opcode::kSort, F32({3, 7}), {keys}, SortAttrs{1, false},
                    {cmp.computation()});
  ExpectErrorContaining([&] { InferShape(*one); },
                        "comparator computation 'cmp2' takes 4 parameters but 2 were expected");
  auto* logits = b.Param(2, BF16({1, 50000}));
  EXPECT_EQ(Inferred(b.Add("k", Opcode::kTopK, BF16({}), {logits}, TopKAttrs{10, true})),
            "(bf16[1,10], s32[1,10])");
  auto* k2 = b.Add("k2", Opcode::kTopK, BF16({}), {logits}, TopKAttrs{50001, true});
  ExpectErrorContaining([&] { InferShape(*k2); }, "k=50001 is out of range");
  EXPECT_EQ(Inferred(b.Add("m", Opcode::kMap, F32({3, 7}), {keys, keys},
                           DimensionsAttrs{{0, 1}}, {add})),
            "f32[3,7]");
}

TEST(ShapeInferenceControl, CallWhileConditional) {
  Module m("m");
  ComputationBuilder callee(m, "callee");
  auto* a = callee.Param(0, F32({2}), "a");
  callee.Add("n", Opcode::kNegate, F32({2}), {a});
  ComputationBuilder cond(m, "cond");
  auto* s = cond.Param(0, S32({}), "s");
  cond.Add("lt", Opcode::kCompare, Pred({}), {s, s}, CompareAttrs{ComparisonDirection::kLt});
  ComputationBuilder body(m, "body");
  auto* t = body.Param(0, S32({}), "t");
  body.Add("inc", Opcode::kAdd, S32({}), {t, t});
  ComputationBuilder bad_cond(m, "bad_cond");
  bad_cond.Param(0, S32({}), "s");

  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2}));
  auto* i = b.Param(1, S32({}));
  auto* pr = b.Param(2, Pred({}));
  EXPECT_EQ(Inferred(b.Add("c", Opcode::kCall, F32({2}), {x}, {}, {callee.computation()})),
            "f32[2]");
  auto* c2 = b.Add("c2", Opcode::kCall, F32({2}), {i}, {}, {callee.computation()});
  ExpectErrorContaining([&] { InferShape(*c2); },
                        "to_apply computation 'callee' parameter 0 has shape f32[2] but s32[]");
  EXPECT_EQ(Inferred(b.Add("w", Opcode::kWhile, S32({}), {i}, {},
                           {cond.computation(), body.computation()})),
            "s32[]");
  auto* w2 = b.Add("w2", Opcode::kWhile, S32({}), {i}, {},
                   {bad_cond.computation(), body.computation()});
  ExpectErrorContaining([&] { InferShape(*w2); },
                        "condition computation 'bad_cond' returns s32[] but pred[] was expected");
  // Two branches with a pred index; s32 index with three branches.
  EXPECT_EQ(Inferred(b.Add("if", Opcode::kConditional, F32({2}), {pr, x, x}, {},
                           {callee.computation(), callee.computation()})),
            "f32[2]");
  EXPECT_EQ(Inferred(b.Add("sw", Opcode::kConditional, F32({2}), {i, x, x, x}, {},
                           {callee.computation(), callee.computation(), callee.computation()})),
            "f32[2]");
  auto* if3 = b.Add("if3", Opcode::kConditional, F32({2}), {pr, x, x, x}, {},
                    {callee.computation(), callee.computation(), callee.computation()});
  ExpectErrorContaining([&] { InferShape(*if3); }, "a pred index needs exactly 2");
  auto* fidx = b.Add("fi", Opcode::kConditional, F32({2}), {x, x}, {}, {callee.computation()});
  ExpectErrorContaining([&] { InferShape(*fidx); }, "but pred[] or s32[] was expected");
}

TEST(ShapeInferenceControl, LeavesCustomCallRng) {
  Module m("m");
  ComputationBuilder b(m, "e");
  EXPECT_EQ(Inferred(b.Add("pid", Opcode::kPartitionId, S32({}), {})), "u32[]");
  EXPECT_EQ(Inferred(b.Add("rid", Opcode::kReplicaId, S32({}), {})), "u32[]");
  auto* tok = b.Add("tok", Opcode::kAfterAll, Shape::Token(), {});
  EXPECT_EQ(Inferred(tok), "token[]");
  auto* x = b.Param(0, F32({}));
  auto* bad_tok = b.Add("tok2", Opcode::kAfterAll, Shape::Token(), {tok, x});
  ExpectErrorContaining([&] { InferShape(*bad_tok); }, "operand 1 has shape f32[] but a token");
  CustomCallAttrs cc;
  cc.target = "te_fused_attn_forward_ffi";
  auto* custom = b.Add("cc", Opcode::kCustomCall, Shape::Tuple({F32({7}), S32({})}), {x}, cc);
  EXPECT_EQ(Inferred(custom), "(f32[7], s32[])");
  EXPECT_EQ(Inferred(b.Add("rng", Opcode::kRng, F32({3, 3}), {x, x}, RngAttrs{})), "f32[3,3]");
  auto* i = b.Param(1, S32({}));
  auto* rng2 = b.Add("rng2", Opcode::kRng, F32({3}), {x, i}, RngAttrs{});
  ExpectErrorContaining([&] { InferShape(*rng2); }, "operand 1 has shape s32[] but f32[]");
}

TEST(ShapeInferenceControl, ConstantLiteralMustMatch) {
  Module m("m");
  ComputationBuilder b(m, "e");
  ConstantAttrs attrs;
  attrs.literal = Literal(F32({2}));
  EXPECT_EQ(Inferred(b.Add("c", Opcode::kConstant, F32({2}), {}, attrs)), "f32[2]");
  auto* bad = b.Add("c2", Opcode::kConstant, F32({3}), {}, attrs);
  ExpectErrorContaining([&] { InferShape(*bad); },
                        "literal has shape f32[2] but the constant declares f32[3]");
}

TEST(ShapeInferenceCollective, GatherScatterReduce) {
  Module m("m");
  Computation* add = AddBinaryComputation(m, "add", PrimitiveType::kF32);
  ComputationBuilder b(m, "e");
  auto* x = b.Param(0, F32({2, 8}));
  CollectiveAttrs groups;
  groups.replica_groups = {{0, 1, 2, 3}};
  groups.dimension = 1;
  // 4 participants: gathering multiplies dimension 1 by 4, scattering divides it.
  EXPECT_EQ(Inferred(b.Add("ag", Opcode::kAllGather, F32({2, 32}), {x}, groups)), "f32[2,32]");
  EXPECT_EQ(Inferred(b.Add("rs", Opcode::kReduceScatter, F32({2, 2}), {x}, groups, {add})),
            "f32[2,2]");
  EXPECT_EQ(Inferred(b.Add("ar", Opcode::kAllReduce, F32({2, 8}), {x}, groups, {add})),
            "f32[2,8]");
  // No listed groups: the group size is unknown, so the declared size along `dimension` stands.
  CollectiveAttrs unknown;
  unknown.dimension = 0;
  EXPECT_EQ(Inferred(b.Add("ag2", Opcode::kAllGather, F32({16, 8}), {x}, unknown)), "f32[16,8]");
  groups.replica_groups = {{0, 1, 2}};
  auto* odd = b.Add("rs2", Opcode::kReduceScatter, F32({2, 2}), {x}, groups, {add});
  ExpectErrorContaining([&] { InferShape(*odd); }, "does not divide into 3 groups");
  Computation* add_s32 = AddBinaryComputation(m, "add_s32", PrimitiveType::kS32);
  auto* ar2 = b.Add("ar2", Opcode::kAllReduce, F32({2, 8}), {x}, groups, {add_s32});
  ExpectErrorContaining([&] { InferShape(*ar2); }, "parameter 0 has shape s32[] but f32[]");
}

}  // namespace

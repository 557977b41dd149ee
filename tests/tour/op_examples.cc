// One small HLO module per opcode (see op_examples.h). The hand-written modules use XLA's text
// syntax as its dumps print it; each is the smallest module that exercises the opcode's typed
// attributes and called computations.
#include "tests/tour/op_examples.h"

#include <map>
#include <string_view>

#include "hlo/shape.h"
#include "hlo/shape_inference.h"

namespace tour {
namespace {

using hlo::Opcode;

// Scalar computations the examples call.
constexpr std::string_view kAddF32 = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";
constexpr std::string_view kGeF32 = R"(
ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
}
)";
constexpr std::string_view kLtF32 = R"(
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
)";

std::string Module(std::string_view computations, std::string_view entry) {
  return "HloModule example\n" + std::string(computations) + "\nENTRY e {\n" +
         std::string(entry) + "}\n";
}

// The element type an elementwise example computes in: the first of f32, s32, pred it accepts.
hlo::PrimitiveType ExampleType(Opcode op) {
  for (hlo::PrimitiveType type :
       {hlo::PrimitiveType::kF32, hlo::PrimitiveType::kS32, hlo::PrimitiveType::kPred}) {
    if (hlo::ElementwiseAcceptsType(op, type)) return type;
  }
  return hlo::PrimitiveType::kF32;
}

std::string ElementwiseExample(Opcode op) {
  const std::string name(hlo::OpcodeName(op));
  std::string t(hlo::PrimitiveTypeName(ExampleType(op)));
  std::string result = t;
  std::string attributes;
  switch (op) {
    case Opcode::kComplex: result = "c64"; break;
    case Opcode::kReal:
    case Opcode::kImag: t = "c64"; break;  // the f32 part of a complex value
    case Opcode::kConvert:
    case Opcode::kBitcastConvert: result = "s32"; break;
    case Opcode::kIsFinite: result = "pred"; break;
    case Opcode::kCompare: result = "pred"; attributes = ", direction=LT"; break;
    case Opcode::kReducePrecision: attributes = ", exponent_bits=5, mantissa_bits=10"; break;
    default: break;  // the result has the operands' type and no attributes
  }
  std::string entry;
  switch (hlo::OpcodeClass(op)) {
    case hlo::OpClass::kElementwiseUnary:
      entry = "  p0 = " + t + "[2,3] parameter(0)\n  ROOT subject = " + result + "[2,3] " + name +
              "(p0)" + attributes + "\n";
      break;
    case hlo::OpClass::kElementwiseBinary:
      entry = "  p0 = " + t + "[2,3] parameter(0)\n  p1 = " + t + "[2,3] parameter(1)\n" +
              "  ROOT subject = " + result + "[2,3] " + name + "(p0, p1)" + attributes + "\n";
      break;
    default: {  // ternary: select takes a pred first, clamp three of the same type
      const std::string first = op == Opcode::kSelect ? "pred" : t;
      entry = "  p0 = " + first + "[2,3] parameter(0)\n  p1 = " + t + "[2,3] parameter(1)\n" +
              "  p2 = " + t + "[2,3] parameter(2)\n  ROOT subject = " + result + "[2,3] " + name +
              "(p0, p1, p2)" + attributes + "\n";
      break;
    }
  }
  return Module("", entry);
}

const std::map<Opcode, std::string>& HandWritten() {
  static const std::map<Opcode, std::string> examples = {
      {Opcode::kParameter, Module("", "  ROOT subject = f32[2,3] parameter(0)\n")},
      {Opcode::kConstant, Module("", "  ROOT subject = f32[3] constant({1.5, -2, 4})\n")},
      {Opcode::kIota, Module("", "  ROOT subject = s32[2,3] iota(), iota_dimension=1\n")},
      {Opcode::kPartitionId, Module("", "  ROOT subject = u32[] partition-id()\n")},
      {Opcode::kReplicaId, Module("", "  ROOT subject = u32[] replica-id()\n")},
      {Opcode::kRngGetAndUpdateState, Module("", R"(
  ROOT subject = u64[2] rng-get-and-update-state(), delta=1
)")},
      {Opcode::kAfterAll, Module("", "  ROOT subject = token[] after-all()\n")},
      {Opcode::kBitcast, Module("", R"(
  p = f32[2,3] parameter(0)
  ROOT subject = f32[6] bitcast(p)
)")},
      {Opcode::kBroadcast, Module("", R"(
  p = f32[3] parameter(0)
  ROOT subject = f32[2,3] broadcast(p), dimensions={1}
)")},
      {Opcode::kConcatenate, Module("", R"(
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT subject = f32[5] concatenate(a, b), dimensions={0}
)")},
      {Opcode::kDynamicSlice, Module("", R"(
  p = f32[4,8] parameter(0)
  i = s32[] parameter(1)
  ROOT subject = f32[2,8] dynamic-slice(p, i, i), dynamic_slice_sizes={2,8}
)")},
      {Opcode::kDynamicUpdateSlice, Module("", R"(
  p = f32[5] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT subject = f32[5] dynamic-update-slice(p, u, i)
)")},
      {Opcode::kGather, Module("", R"(
  a = f32[5,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT subject = f32[3,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
)")},
      {Opcode::kGetTupleElement, Module("", R"(
  p = (f32[2], s32[]) parameter(0)
  ROOT subject = f32[2] get-tuple-element(p), index=0
)")},
      {Opcode::kPad, Module("", R"(
  p = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT subject = f32[5,4] pad(p, z), padding=1_2x0_1
)")},
      {Opcode::kReshape, Module("", R"(
  p = f32[2,3] parameter(0)
  ROOT subject = f32[3,2] reshape(p)
)")},
      {Opcode::kReverse, Module("", R"(
  p = f32[2,3] parameter(0)
  ROOT subject = f32[2,3] reverse(p), dimensions={1}
)")},
      {Opcode::kSlice, Module("", R"(
  p = f32[4,6] parameter(0)
  ROOT subject = f32[2,3] slice(p), slice={[0:4:2], [1:4]}
)")},
      {Opcode::kTranspose, Module("", R"(
  p = f32[2,3] parameter(0)
  ROOT subject = f32[3,2] transpose(p), dimensions={1,0}
)")},
      {Opcode::kTuple, Module("", R"(
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  ROOT subject = (f32[2], s32[]) tuple(a, b)
)")},
      {Opcode::kOptimizationBarrier, Module("", R"(
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  t = (f32[2], s32[]) tuple(a, b)
  ROOT subject = (f32[2], s32[]) opt-barrier(t)
)")},
      {Opcode::kReduce, Module(kAddF32, R"(
  a = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT subject = f32[4] reduce(a, z), dimensions={1}, to_apply=add
)")},
      {Opcode::kReduceWindow, Module(kAddF32, R"(
  a = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT subject = f32[2,3] reduce-window(a, z), window={size=2x2 stride=2x2}, to_apply=add
)")},
      {Opcode::kScatter, Module(kAddF32, R"(
  o = f32[3,3] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT subject = f32[3,3] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)")},
      {Opcode::kSelectAndScatter, Module(std::string(kGeF32) + std::string(kAddF32), R"(
  a = f32[4,6] parameter(0)
  w = f32[2,3] parameter(1)
  z = f32[] constant(0)
  ROOT subject = f32[4,6] select-and-scatter(a, w, z), window={size=2x2 stride=2x2}, select=ge,
      scatter=add
)")},
      {Opcode::kSort, Module(kLtF32, R"(
  a = f32[4,6] parameter(0)
  ROOT subject = f32[4,6] sort(a), dimensions={1}, to_apply=lt
)")},
      {Opcode::kTopK, Module("", R"(
  a = f32[4,6] parameter(0)
  ROOT subject = (f32[4,2], s32[4,2]) topk(a), k=2, largest=true
)")},
      {Opcode::kMap, Module(kAddF32, R"(
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT subject = f32[3] map(a, b), dimensions={0}, to_apply=add
)")},
      {Opcode::kConvolution, Module("", R"(
  x = f32[1,4,4,2] parameter(0)
  k = f32[3,3,2,3] parameter(1)
  ROOT subject = f32[1,4,4,3] convolution(x, k), window={size=3x3 pad=1_1x1_1},
      dim_labels=b01f_01io->b01f
)")},
      {Opcode::kDot, Module("", R"(
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT subject = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)")},
      {Opcode::kBatchNormGrad, Module("", R"(
  x = f32[3,2] parameter(0)
  s = f32[2] parameter(1)
  m = f32[2] parameter(2)
  v = f32[2] constant({1, 4})
  dy = f32[3,2] parameter(3)
  ROOT subject = (f32[3,2], f32[2], f32[2]) batch-norm-grad(x, s, m, v, dy), epsilon=0.001,
      feature_index=1
)")},
      {Opcode::kBatchNormInference, Module("", R"(
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  m = f32[2] parameter(3)
  v = f32[2] constant({1, 4})
  ROOT subject = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=0.25, feature_index=1
)")},
      {Opcode::kBatchNormTraining, Module("", R"(
  a = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT subject = (f32[2,3], f32[3], f32[3]) batch-norm-training(a, s, o), epsilon=0.001,
      feature_index=1
)")},
      {Opcode::kCall, Module(R"(
add3 {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT s = f32[3] add(x, y)
}
)", R"(
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT subject = f32[3] call(a, b), to_apply=add3
)")},
      {Opcode::kConditional, Module(R"(
on_true {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}

on_false {
  x = f32[2] parameter(0)
  ROOT e = f32[2] exponential(x)
}
)", R"(
  p = pred[] parameter(0)
  a = f32[2] parameter(1)
  b = f32[2] parameter(2)
  ROOT subject = f32[2] conditional(p, a, b), true_computation=on_true, false_computation=on_false
)")},
      {Opcode::kCustomCall, Module("", R"(
  a = f32[4,6] parameter(0)
  ROOT subject = (f32[4,2], s32[4,2]) custom-call(a), custom_call_target="TopK"
)")},
      {Opcode::kFusion, Module(R"(
fused {
  x = f32[3] parameter(0)
  n = f32[3] negate(x)
  ROOT m = f32[3] multiply(n, x)
}
)", R"(
  a = f32[3] parameter(0)
  ROOT subject = f32[3] fusion(a), kind=kLoop, calls=fused
)")},
      {Opcode::kWhile, Module(R"(
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[2] add(x, x)
  ROOT t = (s32[], f32[2]) tuple(j, y)
}
)", R"(
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[2]) tuple(zero, x)
  ROOT subject = (s32[], f32[2]) while(t), condition=cond, body=body
)")},
      {Opcode::kFft, Module("", R"(
  p = c64[2,8] parameter(0)
  ROOT subject = c64[2,8] fft(p), fft_type=FFT, fft_length={8}
)")},
      {Opcode::kRng, Module("", R"(
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  ROOT subject = f32[4] rng(lo, hi), distribution=rng_uniform
)")},
      {Opcode::kRngBitGenerator, Module("", R"(
  s = u64[2] parameter(0)
  ROOT subject = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_default
)")},
      {Opcode::kAllGather, Module("", R"(
  p = f32[4] parameter(0)
  ROOT subject = f32[4] all-gather(p), replica_groups={{0}}, dimensions={0}
)")},
      {Opcode::kAllReduce, Module(kAddF32, R"(
  p = f32[2] parameter(0)
  ROOT subject = f32[2] all-reduce(p), replica_groups={}, to_apply=add
)")},
      {Opcode::kAllToAll, Module("", R"(
  p = f32[4] parameter(0)
  ROOT subject = f32[4] all-to-all(p), replica_groups={{0}}, dimensions={0}
)")},
      {Opcode::kCollectivePermute, Module("", R"(
  p = f32[2] parameter(0)
  ROOT subject = f32[2] collective-permute(p), source_target_pairs={{0,0}}
)")},
      {Opcode::kReduceScatter, Module(kAddF32, R"(
  p = f32[4] parameter(0)
  ROOT subject = f32[4] reduce-scatter(p), replica_groups={{0}}, dimensions={0}, to_apply=add
)")},
      {Opcode::kAllGatherStart, Module("", R"(
  p = f32[4] parameter(0)
  ROOT subject = (f32[4], f32[4]) all-gather-start(p), replica_groups={{0}}, dimensions={0}
)")},
      {Opcode::kAllGatherDone, Module("", R"(
  start = (f32[4], f32[4]) parameter(0)
  ROOT subject = f32[4] all-gather-done(start)
)")},
      {Opcode::kAllReduceStart, Module(kAddF32, R"(
  p = f32[2] parameter(0)
  ROOT subject = f32[2] all-reduce-start(p), replica_groups={}, to_apply=add
)")},
      {Opcode::kAllReduceDone, Module("", R"(
  start = f32[2] parameter(0)
  ROOT subject = f32[2] all-reduce-done(start)
)")},
      {Opcode::kCollectivePermuteStart, Module("", R"(
  p = f32[2] parameter(0)
  ROOT subject = (f32[2], f32[2], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,0}}
)")},
      {Opcode::kCollectivePermuteDone, Module("", R"(
  start = (f32[2], f32[2], u32[], u32[]) parameter(0)
  ROOT subject = f32[2] collective-permute-done(start)
)")},
      {Opcode::kAsyncStart, Module(R"(
wrapped {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
)", R"(
  p = f32[3] parameter(0)
  ROOT subject = ((f32[3]), f32[3], s32[]) async-start(p), calls=wrapped
)")},
      {Opcode::kAsyncUpdate, Module("", R"(
  started = ((f32[3]), f32[3], s32[]) parameter(0)
  ROOT subject = ((f32[3]), f32[3], s32[]) async-update(started)
)")},
      {Opcode::kAsyncDone, Module("", R"(
  started = ((f32[3]), f32[3], s32[]) parameter(0)
  ROOT subject = f32[3] async-done(started)
)")},
  };
  return examples;
}

}  // namespace

std::optional<std::string> OpExample(Opcode op) {
  if (hlo::IsElementwise(op)) return ElementwiseExample(op);
  auto it = HandWritten().find(op);
  if (it == HandWritten().end()) return std::nullopt;
  return it->second;
}

}  // namespace tour

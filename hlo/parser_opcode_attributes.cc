// Which typed attributes each opcode reads, which are required, and the order of its called
// computations (ir.h). The switch is exhaustive over Opcode (no default), so adding an opcode to
// opcodes.def fails to compile until its attributes are decided here.
#include "hlo/parser_attribute_reader.h"

namespace hlo::parser_internal {
namespace {

void ReadToApply(AttributeReader& r, ParsedAttributes& out, bool required) {
  const RawAttribute* a = required ? &r.Require("to_apply") : r.Take("to_apply");
  if (a) out.called.push_back(r.Computation(*a));
}

CollectiveAttrs ReadCollective(AttributeReader& r) {
  CollectiveAttrs c;
  if (const RawAttribute* a = r.Take("replica_groups")) c.replica_groups = r.ReplicaGroups(*a);
  if (const RawAttribute* a = r.Take("channel_id")) c.channel_id = r.NonNegativeInt(*a);
  if (const RawAttribute* a = r.Take("use_global_device_ids")) c.use_global_device_ids = r.Bool(*a);
  if (const RawAttribute* a = r.Take("dimensions")) {
    std::vector<int64_t> dims = r.IntList(*a);
    if (dims.size() != 1) r.BadValue(*a, "exactly one dimension");
    c.dimension = dims[0];
  }
  return c;
}

ComparisonDirection ReadDirection(AttributeReader& r, const RawAttribute& a) {
  std::string_view w = r.Word(a);
  if (w == "EQ") return ComparisonDirection::kEq;
  if (w == "NE") return ComparisonDirection::kNe;
  if (w == "GE") return ComparisonDirection::kGe;
  if (w == "GT") return ComparisonDirection::kGt;
  if (w == "LE") return ComparisonDirection::kLe;
  if (w == "LT") return ComparisonDirection::kLt;
  r.BadValue(a, "EQ, NE, GE, GT, LE or LT");
}

ComparisonType ReadComparisonType(AttributeReader& r, const RawAttribute* a) {
  if (!a) return ComparisonType::kDefault;
  std::string_view w = r.Word(*a);
  if (w == "FLOAT") return ComparisonType::kFloat;
  if (w == "TOTALORDER") return ComparisonType::kTotalOrder;
  if (w == "SIGNED") return ComparisonType::kSigned;
  if (w == "UNSIGNED") return ComparisonType::kUnsigned;
  r.BadValue(*a, "FLOAT, TOTALORDER, SIGNED or UNSIGNED");
}

DotAttrs ReadDot(AttributeReader& r) {
  DotAttrs d;
  if (const RawAttribute* a = r.Take("lhs_batch_dims")) d.dnums.lhs_batch = r.IntList(*a);
  if (const RawAttribute* a = r.Take("lhs_contracting_dims")) d.dnums.lhs_contracting = r.IntList(*a);
  if (const RawAttribute* a = r.Take("rhs_batch_dims")) d.dnums.rhs_batch = r.IntList(*a);
  if (const RawAttribute* a = r.Take("rhs_contracting_dims")) d.dnums.rhs_contracting = r.IntList(*a);
  d.precision = r.Precision(r.Take("operand_precision"));
  return d;
}

ConvolutionAttrs ReadConvolution(AttributeReader& r) {
  ConvolutionAttrs c;
  if (const RawAttribute* a = r.Take("window")) c.window = r.ParseWindow(*a);
  c.dnums = r.DimLabels(r.Require("dim_labels"));
  if (const RawAttribute* a = r.Take("feature_group_count")) c.feature_group_count = r.Int(*a);
  if (const RawAttribute* a = r.Take("batch_group_count")) c.batch_group_count = r.Int(*a);
  c.precision = r.Precision(r.Take("operand_precision"));
  return c;
}

GatherAttrs ReadGather(AttributeReader& r) {
  GatherAttrs g;
  g.dnums.offset_dims = r.IntList(r.Require("offset_dims"));
  g.dnums.collapsed_slice_dims = r.IntList(r.Require("collapsed_slice_dims"));
  g.dnums.start_index_map = r.IntList(r.Require("start_index_map"));
  if (const RawAttribute* a = r.Take("operand_batching_dims")) g.dnums.operand_batching_dims = r.IntList(*a);
  if (const RawAttribute* a = r.Take("start_indices_batching_dims")) {
    g.dnums.start_indices_batching_dims = r.IntList(*a);
  }
  g.dnums.index_vector_dim = r.Int(r.Require("index_vector_dim"));
  g.slice_sizes = r.IntList(r.Require("slice_sizes"));
  if (const RawAttribute* a = r.Take("indices_are_sorted")) g.indices_are_sorted = r.Bool(*a);
  return g;
}

ScatterAttrs ReadScatter(AttributeReader& r) {
  ScatterAttrs s;
  s.dnums.update_window_dims = r.IntList(r.Require("update_window_dims"));
  s.dnums.inserted_window_dims = r.IntList(r.Require("inserted_window_dims"));
  s.dnums.scatter_dims_to_operand_dims = r.IntList(r.Require("scatter_dims_to_operand_dims"));
  if (const RawAttribute* a = r.Take("input_batching_dims")) s.dnums.input_batching_dims = r.IntList(*a);
  if (const RawAttribute* a = r.Take("scatter_indices_batching_dims")) {
    s.dnums.scatter_indices_batching_dims = r.IntList(*a);
  }
  s.dnums.index_vector_dim = r.Int(r.Require("index_vector_dim"));
  if (const RawAttribute* a = r.Take("indices_are_sorted")) s.indices_are_sorted = r.Bool(*a);
  if (const RawAttribute* a = r.Take("unique_indices")) s.unique_indices = r.Bool(*a);
  return s;
}

CustomCallAttrs ReadCustomCall(AttributeReader& r, ParsedAttributes& out) {
  CustomCallAttrs c;
  c.target = r.String(r.Require("custom_call_target"));
  if (const RawAttribute* a = r.Take("api_version")) {
    std::string_view w = r.Word(*a);
    if (w == "API_VERSION_ORIGINAL") c.api_version = 1;
    else if (w == "API_VERSION_STATUS_RETURNING") c.api_version = 2;
    else if (w == "API_VERSION_STATUS_RETURNING_UNIFIED") c.api_version = 3;
    else if (w == "API_VERSION_TYPED_FFI") c.api_version = 4;
    else r.BadValue(*a, "an API_VERSION_* name");
  }
  if (const RawAttribute* a = r.Take("backend_config")) c.backend_config = std::string(a->value.text);
  if (const RawAttribute* a = r.Take("custom_call_has_side_effect")) c.has_side_effect = r.Bool(*a);
  if (const RawAttribute* a = r.Take("called_computations")) {
    out.called = r.ComputationList(*a);
  } else {
    ReadToApply(r, out, /*required=*/false);
  }
  return c;
}

void ReadConditional(AttributeReader& r, ParsedAttributes& out) {
  if (const RawAttribute* a = r.Take("branch_computations")) {
    out.called = r.ComputationList(*a);
    return;
  }
  out.called.push_back(r.Computation(r.Require("true_computation")));
  out.called.push_back(r.Computation(r.Require("false_computation")));
}

}  // namespace

void ParseInstructionAttributes(Lexer& lexer, Opcode opcode, const LexPosition& opcode_pos,
                                const std::vector<RawAttribute>& raw, ParsedAttributes& out) {
  AttributeReader r(lexer, opcode, opcode_pos, raw);
  switch (opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
      break;  // read from the operand position by the instruction parser
    case Opcode::kIota:
      out.attrs = IotaAttrs{r.NonNegativeInt(r.Require("iota_dimension"))};
      break;
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
      out.attrs = DimensionsAttrs{r.IntList(r.Require("dimensions"))};
      break;
    case Opcode::kReduce:
      out.attrs = DimensionsAttrs{r.IntList(r.Require("dimensions"))};
      ReadToApply(r, out, true);
      break;
    case Opcode::kMap: {
      DimensionsAttrs d;
      if (const RawAttribute* a = r.Take("dimensions")) d.dimensions = r.IntList(*a);
      out.attrs = d;
      ReadToApply(r, out, true);
      break;
    }
    case Opcode::kSort: {
      SortAttrs s;
      const RawAttribute& dims = r.Require("dimensions");
      std::vector<int64_t> d = r.IntList(dims);
      if (d.size() != 1) r.BadValue(dims, "exactly one dimension");
      s.dimension = d[0];
      if (const RawAttribute* a = r.Take("is_stable")) s.is_stable = r.Bool(*a);
      out.attrs = s;
      ReadToApply(r, out, true);
      break;
    }
    case Opcode::kSlice:
      out.attrs = SliceAttrs{r.Slices(r.Require("slice"))};
      break;
    case Opcode::kDynamicSlice:
      out.attrs = DynamicSliceAttrs{r.IntList(r.Require("dynamic_slice_sizes"))};
      break;
    case Opcode::kPad:
      out.attrs = PadAttrs{r.Padding(r.Require("padding"))};
      break;
    case Opcode::kDot:
      out.attrs = ReadDot(r);
      break;
    case Opcode::kConvolution:
      out.attrs = ReadConvolution(r);
      break;
    case Opcode::kReduceWindow:
      out.attrs = WindowAttrs{r.ParseWindow(r.Require("window"))};
      ReadToApply(r, out, true);
      break;
    case Opcode::kSelectAndScatter:
      out.attrs = WindowAttrs{r.ParseWindow(r.Require("window"))};
      out.called.push_back(r.Computation(r.Require("select")));
      out.called.push_back(r.Computation(r.Require("scatter")));
      break;
    case Opcode::kCompare: {
      CompareAttrs c;
      c.direction = ReadDirection(r, r.Require("direction"));
      c.type = ReadComparisonType(r, r.Take("type"));
      out.attrs = c;
      break;
    }
    case Opcode::kGather:
      out.attrs = ReadGather(r);
      break;
    case Opcode::kScatter:
      out.attrs = ReadScatter(r);
      ReadToApply(r, out, true);
      break;
    case Opcode::kGetTupleElement:
      out.attrs = TupleIndexAttrs{r.NonNegativeInt(r.Require("index"))};
      break;
    case Opcode::kFusion: {
      const RawAttribute& kind = r.Require("kind");
      std::string_view w = r.Word(kind);
      FusionAttrs f;
      if (w == "kLoop") f.kind = FusionKind::kLoop;
      else if (w == "kInput") f.kind = FusionKind::kInput;
      else if (w == "kOutput") f.kind = FusionKind::kOutput;
      else if (w == "kCustom") f.kind = FusionKind::kCustom;
      else r.BadValue(kind, "kLoop, kInput, kOutput or kCustom");
      out.attrs = f;
      out.called.push_back(r.Computation(r.Require("calls")));
      break;
    }
    case Opcode::kCustomCall:
      out.attrs = ReadCustomCall(r, out);
      break;
    case Opcode::kTopK: {
      TopKAttrs t;
      t.k = r.NonNegativeInt(r.Require("k"));
      if (const RawAttribute* a = r.Take("largest")) t.largest = r.Bool(*a);
      out.attrs = t;
      break;
    }
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining: {
      BatchNormAttrs b;
      b.epsilon = r.Float(r.Require("epsilon"));
      b.feature_index = r.NonNegativeInt(r.Require("feature_index"));
      out.attrs = b;
      break;
    }
    case Opcode::kReducePrecision: {
      ReducePrecisionAttrs p;
      p.exponent_bits = r.NonNegativeInt(r.Require("exponent_bits"));
      p.mantissa_bits = r.NonNegativeInt(r.Require("mantissa_bits"));
      out.attrs = p;
      break;
    }
    case Opcode::kCall:
      ReadToApply(r, out, true);
      break;
    case Opcode::kAsyncStart:
      out.called.push_back(r.Computation(r.Require("calls")));
      break;
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:  // XLA prints the wrapped computation again, or not at all
      if (const RawAttribute* a = r.Take("calls")) out.called.push_back(r.Computation(*a));
      break;
    case Opcode::kConditional:
      ReadConditional(r, out);
      break;
    case Opcode::kWhile:
      out.called.push_back(r.Computation(r.Require("condition")));
      out.called.push_back(r.Computation(r.Require("body")));
      break;
    case Opcode::kFft: {
      const RawAttribute& a = r.Require("fft_type");
      std::string_view w = r.Word(a);
      FftAttrs fft;
      bool known = false;
      for (FftType t : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
        if (w == FftTypeName(t)) fft.type = t, known = true;
      }
      if (!known) r.BadValue(a, "FFT, IFFT, RFFT or IRFFT");
      fft.length = r.IntList(r.Require("fft_length"));
      out.attrs = std::move(fft);
      break;
    }
    case Opcode::kRng: {
      const RawAttribute& a = r.Require("distribution");
      std::string_view w = r.Word(a);
      RngAttrs rng;
      if (w == "rng_uniform") rng.distribution = RngDistribution::kUniform;
      else if (w == "rng_normal") rng.distribution = RngDistribution::kNormal;
      else r.BadValue(a, "rng_uniform or rng_normal");
      out.attrs = rng;
      break;
    }
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
      out.attrs = ReadCollective(r);
      ReadToApply(r, out, true);
      break;
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
      out.attrs = ReadCollective(r);
      break;
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
      break;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: {
      CollectiveAttrs c = ReadCollective(r);
      c.source_target_pairs = r.Pairs(r.Require("source_target_pairs"));
      out.attrs = c;
      break;
    }
    case Opcode::kRngGetAndUpdateState:
      // XLA prints `rng-get-and-update-state(), delta=N`: how far the call advances the module's
      // random state. The IR has no typed place for it (the evaluator's stream does not use
      // it), so it is checked to be an integer and kept verbatim like the opaque attributes,
      // which the printer writes back. Optional here; XLA's own parser requires it.
      if (const RawAttribute* a = r.Take("delta")) {
        r.Int(*a);
        out.opaque.push_back({"delta", std::string(a->value.text)});
      }
      break;
    // Ops without typed attributes.
    case Opcode::kPartitionId: case Opcode::kReplicaId:
    case Opcode::kAfterAll: case Opcode::kAbs: case Opcode::kBitcastConvert: case Opcode::kCbrt:
    case Opcode::kCeil: case Opcode::kClz: case Opcode::kConvert: case Opcode::kCopy:
    case Opcode::kCos: case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1:
    case Opcode::kFloor: case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kNegate: case Opcode::kNot:
    case Opcode::kPopulationCount: case Opcode::kRoundNearestAfz: case Opcode::kReal:
    case Opcode::kImag: case Opcode::kComplex:
    case Opcode::kRoundNearestEven: case Opcode::kRsqrt: case Opcode::kSign: case Opcode::kSin:
    case Opcode::kSqrt: case Opcode::kTan: case Opcode::kTanh: case Opcode::kAdd:
    case Opcode::kAnd: case Opcode::kAtan2: case Opcode::kDivide: case Opcode::kMaximum:
    case Opcode::kMinimum: case Opcode::kMultiply: case Opcode::kOr: case Opcode::kPower:
    case Opcode::kRemainder: case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kSubtract: case Opcode::kXor:
    case Opcode::kClamp: case Opcode::kSelect: case Opcode::kBitcast:
    case Opcode::kDynamicUpdateSlice: case Opcode::kReshape: case Opcode::kTuple:
    case Opcode::kOptimizationBarrier: case Opcode::kRngBitGenerator:
      break;
  }
  r.Finish(out);
}

}  // namespace hlo::parser_internal

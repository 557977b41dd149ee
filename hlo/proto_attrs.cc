// Typed attribute structs (hlo/attributes.h) <-> the HloInstructionProto fields XLA uses for them.
//
// Guarantees: for every attribute struct, AttrsFromProto(AttrsToProto(a)) == a, provided the
// opcode uses that struct (AttrsKindFor below is the single opcode -> struct table, exhaustive
// over Opcode). Field placement follows XLA: iota_dimension, concatenate/reduce/broadcast/
// transpose/reverse/sort dims and collective dims all live in `dimensions`; enums travel as
// XLA's strings (comparison_direction "LT", fusion_kind "kLoop") or enum numbers.
#include "hlo/proto_internal.h"

namespace hlo::proto_internal {
namespace {

template <typename Repeated>
std::vector<int64_t> ToVector(const Repeated& values) {
  return std::vector<int64_t>(values.begin(), values.end());
}
template <typename Repeated>
void Assign(Repeated* out, const std::vector<int64_t>& values) {
  out->Clear();
  for (int64_t v : values) out->Add(v);
}

// Which attribute struct an opcode carries.
enum class AttrsKind {
  kNone, kParameter, kConstant, kIota, kDimensions, kSlice, kDynamicSlice, kPad, kDot,
  kConvolution, kWindow, kCompare, kGather, kScatter, kTupleIndex, kFusion, kCustomCall, kSort,
  kTopK, kBatchNorm, kReducePrecision, kCollective, kRng, kFft,
};

AttrsKind AttrsKindFor(Opcode opcode) {
  switch (opcode) {
    case Opcode::kParameter: return AttrsKind::kParameter;
    case Opcode::kConstant: return AttrsKind::kConstant;
    case Opcode::kIota: return AttrsKind::kIota;
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
    case Opcode::kTranspose:
    case Opcode::kReduce:
    case Opcode::kMap: return AttrsKind::kDimensions;
    case Opcode::kSlice: return AttrsKind::kSlice;
    case Opcode::kDynamicSlice: return AttrsKind::kDynamicSlice;
    case Opcode::kPad: return AttrsKind::kPad;
    case Opcode::kDot: return AttrsKind::kDot;
    case Opcode::kConvolution: return AttrsKind::kConvolution;
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter: return AttrsKind::kWindow;
    case Opcode::kCompare: return AttrsKind::kCompare;
    case Opcode::kGather: return AttrsKind::kGather;
    case Opcode::kScatter: return AttrsKind::kScatter;
    case Opcode::kGetTupleElement: return AttrsKind::kTupleIndex;
    case Opcode::kFusion: return AttrsKind::kFusion;
    case Opcode::kCustomCall: return AttrsKind::kCustomCall;
    case Opcode::kSort: return AttrsKind::kSort;
    case Opcode::kTopK: return AttrsKind::kTopK;
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining: return AttrsKind::kBatchNorm;
    case Opcode::kReducePrecision: return AttrsKind::kReducePrecision;
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kReduceScatter: return AttrsKind::kCollective;
    case Opcode::kRng: return AttrsKind::kRng;
    case Opcode::kFft: return AttrsKind::kFft;
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kAfterAll:
    case Opcode::kAbs:
    case Opcode::kBitcastConvert:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kCos:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kComplex:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
    case Opcode::kClamp:
    case Opcode::kSelect:
    case Opcode::kBitcast:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kReshape:
    case Opcode::kTuple:
    case Opcode::kOptimizationBarrier:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kWhile:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kRngBitGenerator: return AttrsKind::kNone;
  }
  return AttrsKind::kNone;
}

void WindowToProto(const Window& window, xla::Window* proto) {
  for (const WindowDim& d : window.dims) {
    xla::WindowDimension* p = proto->add_dimensions();
    p->set_size(d.size);
    p->set_stride(d.stride);
    p->set_padding_low(d.pad_lo);
    p->set_padding_high(d.pad_hi);
    p->set_window_dilation(d.window_dilation);
    p->set_base_dilation(d.base_dilation);
    p->set_window_reversal(d.reversal);
  }
}

Window WindowFromProto(const xla::Window& proto) {
  Window window;
  for (const xla::WindowDimension& p : proto.dimensions()) {
    WindowDim d;
    // XLA leaves stride/dilations 0 in some hand-built protos; 0 means the default 1 there.
    d.size = p.size();
    d.stride = p.stride() == 0 ? 1 : p.stride();
    d.pad_lo = p.padding_low();
    d.pad_hi = p.padding_high();
    d.window_dilation = p.window_dilation() == 0 ? 1 : p.window_dilation();
    d.base_dilation = p.base_dilation() == 0 ? 1 : p.base_dilation();
    d.reversal = p.window_reversal();
    window.dims.push_back(d);
  }
  return window;
}

void PrecisionToProto(const PrecisionConfig& config, xla::HloInstructionProto* proto) {
  if (config.operand_precision.empty()) return;
  for (Precision p : config.operand_precision) {
    proto->mutable_precision_config()->add_operand_precision(
        static_cast<xla::PrecisionConfig::Precision>(p));
  }
}

PrecisionConfig PrecisionFromProto(const xla::HloInstructionProto& proto,
                                   const SourceLocation& loc, const std::string& what) {
  PrecisionConfig config;
  for (int p : proto.precision_config().operand_precision()) {
    if (p < 0 || p > static_cast<int>(Precision::kHighest)) {
      Fail(loc, what + ": unknown operand precision " + std::to_string(p));
    }
    config.operand_precision.push_back(static_cast<Precision>(p));
  }
  return config;
}

ComparisonDirection DirectionFromName(const std::string& name, const SourceLocation& loc,
                                      const std::string& what) {
  for (auto d : {ComparisonDirection::kEq, ComparisonDirection::kNe, ComparisonDirection::kGe,
                 ComparisonDirection::kGt, ComparisonDirection::kLe, ComparisonDirection::kLt}) {
    if (ComparisonDirectionName(d) == name) return d;
  }
  Fail(loc, what + ": unknown comparison_direction '" + name + "'");
}

ComparisonType ComparisonTypeFromName(const std::string& name, const SourceLocation& loc,
                                      const std::string& what) {
  if (name.empty()) return ComparisonType::kDefault;
  for (auto t : {ComparisonType::kFloat, ComparisonType::kTotalOrder, ComparisonType::kSigned,
                 ComparisonType::kUnsigned}) {
    if (ComparisonTypeName(t) == name) return t;
  }
  Fail(loc, what + ": unknown comparison_type '" + name + "'");
}

FusionKind FusionKindFromName(const std::string& name, const SourceLocation& loc,
                              const std::string& what) {
  for (auto k : {FusionKind::kLoop, FusionKind::kInput, FusionKind::kOutput, FusionKind::kCustom}) {
    if (FusionKindName(k) == name) return k;
  }
  Fail(loc, what + ": unknown fusion_kind '" + name + "'");
}

// One overload per attribute struct; std::visit picks the one the instruction holds.
struct AttrsWriter {
  const Instruction& instruction;
  xla::HloInstructionProto* p;

  void operator()(const NoAttrs&) const {}
  void operator()(const ParameterAttrs& a) const { p->set_parameter_number(a.number); }
  void operator()(const ConstantAttrs& a) const {
    LiteralToProto(a.literal, instruction.shape(), p->mutable_literal());
    p->set_retarget_elided_constant(a.elided);
  }
  void operator()(const IotaAttrs& a) const { p->add_dimensions(a.dimension); }
  void operator()(const DimensionsAttrs& a) const { Assign(p->mutable_dimensions(), a.dimensions); }
  void operator()(const SliceAttrs& a) const {
    for (const SliceDim& d : a.dims) {
      auto* s = p->add_slice_dimensions();
      s->set_start(d.start);
      s->set_limit(d.limit);
      s->set_stride(d.stride);
    }
  }
  void operator()(const DynamicSliceAttrs& a) const {
    Assign(p->mutable_dynamic_slice_sizes(), a.sizes);
  }
  void operator()(const PadAttrs& a) const {
    xla::PaddingConfig* config = p->mutable_padding_config();
    for (const PadDim& d : a.dims) {
      auto* dim = config->add_dimensions();
      dim->set_edge_padding_low(d.lo);
      dim->set_edge_padding_high(d.hi);
      dim->set_interior_padding(d.interior);
    }
  }
  void operator()(const DotAttrs& a) const {
    xla::DotDimensionNumbers* d = p->mutable_dot_dimension_numbers();
    Assign(d->mutable_lhs_batch_dimensions(), a.dnums.lhs_batch);
    Assign(d->mutable_lhs_contracting_dimensions(), a.dnums.lhs_contracting);
    Assign(d->mutable_rhs_batch_dimensions(), a.dnums.rhs_batch);
    Assign(d->mutable_rhs_contracting_dimensions(), a.dnums.rhs_contracting);
    PrecisionToProto(a.precision, p);
  }
  void operator()(const ConvolutionAttrs& a) const {
    WindowToProto(a.window, p->mutable_window());
    xla::ConvolutionDimensionNumbers* d = p->mutable_convolution_dimension_numbers();
    d->set_input_batch_dimension(a.dnums.input_batch);
    d->set_input_feature_dimension(a.dnums.input_feature);
    Assign(d->mutable_input_spatial_dimensions(), a.dnums.input_spatial);
    d->set_kernel_input_feature_dimension(a.dnums.kernel_input_feature);
    d->set_kernel_output_feature_dimension(a.dnums.kernel_output_feature);
    Assign(d->mutable_kernel_spatial_dimensions(), a.dnums.kernel_spatial);
    d->set_output_batch_dimension(a.dnums.output_batch);
    d->set_output_feature_dimension(a.dnums.output_feature);
    Assign(d->mutable_output_spatial_dimensions(), a.dnums.output_spatial);
    p->set_feature_group_count(a.feature_group_count);
    p->set_batch_group_count(a.batch_group_count);
    PrecisionToProto(a.precision, p);
  }
  void operator()(const WindowAttrs& a) const { WindowToProto(a.window, p->mutable_window()); }
  void operator()(const CompareAttrs& a) const {
    p->set_comparison_direction(std::string(ComparisonDirectionName(a.direction)));
    if (a.type != ComparisonType::kDefault) {
      p->set_comparison_type(std::string(ComparisonTypeName(a.type)));
    }
  }
  void operator()(const GatherAttrs& a) const {
    xla::GatherDimensionNumbers* d = p->mutable_gather_dimension_numbers();
    Assign(d->mutable_offset_dims(), a.dnums.offset_dims);
    Assign(d->mutable_collapsed_slice_dims(), a.dnums.collapsed_slice_dims);
    Assign(d->mutable_start_index_map(), a.dnums.start_index_map);
    Assign(d->mutable_operand_batching_dims(), a.dnums.operand_batching_dims);
    Assign(d->mutable_start_indices_batching_dims(), a.dnums.start_indices_batching_dims);
    d->set_index_vector_dim(a.dnums.index_vector_dim);
    Assign(p->mutable_gather_slice_sizes(), a.slice_sizes);
    p->set_indices_are_sorted(a.indices_are_sorted);
  }
  void operator()(const ScatterAttrs& a) const {
    xla::ScatterDimensionNumbers* d = p->mutable_scatter_dimension_numbers();
    Assign(d->mutable_update_window_dims(), a.dnums.update_window_dims);
    Assign(d->mutable_inserted_window_dims(), a.dnums.inserted_window_dims);
    Assign(d->mutable_scatter_dims_to_operand_dims(), a.dnums.scatter_dims_to_operand_dims);
    Assign(d->mutable_input_batching_dims(), a.dnums.input_batching_dims);
    Assign(d->mutable_scatter_indices_batching_dims(), a.dnums.scatter_indices_batching_dims);
    d->set_index_vector_dim(a.dnums.index_vector_dim);
    p->set_indices_are_sorted(a.indices_are_sorted);
    p->set_unique_indices(a.unique_indices);
  }
  void operator()(const TupleIndexAttrs& a) const { p->set_tuple_index(a.index); }
  void operator()(const FusionAttrs& a) const {
    p->set_fusion_kind(std::string(FusionKindName(a.kind)));
  }
  void operator()(const CustomCallAttrs& a) const {
    p->set_custom_call_target(a.target);
    p->set_custom_call_api_version(static_cast<xla::CustomCallApiVersion>(a.api_version));
    CustomCallBackendConfigToProto(a.backend_config, p);
    p->set_custom_call_has_side_effect(a.has_side_effect);
  }
  void operator()(const SortAttrs& a) const {
    p->add_dimensions(a.dimension);
    p->set_is_stable(a.is_stable);
  }
  void operator()(const TopKAttrs& a) const {
    p->set_k(a.k);
    p->set_largest(a.largest);
  }
  void operator()(const BatchNormAttrs& a) const {
    p->set_epsilon(a.epsilon);
    p->set_feature_index(a.feature_index);
  }
  void operator()(const FftAttrs& a) const {
    p->set_fft_type(static_cast<xla::FftType>(a.type));
    Assign(p->mutable_fft_length(), a.length);
  }
  void operator()(const ReducePrecisionAttrs& a) const {
    p->set_exponent_bits(static_cast<int32_t>(a.exponent_bits));
    p->set_mantissa_bits(static_cast<int32_t>(a.mantissa_bits));
  }
  void operator()(const CollectiveAttrs& a) const {
    for (const auto& group : a.replica_groups) {
      Assign(p->add_replica_groups()->mutable_replica_ids(), group);
    }
    for (const auto& [source, target] : a.source_target_pairs) {
      auto* pair = p->add_source_target_pairs();
      pair->set_source(source);
      pair->set_target(target);
    }
    if (a.dimension >= 0) p->add_dimensions(a.dimension);
    p->set_channel_id(a.channel_id);
    p->set_use_global_device_ids(a.use_global_device_ids);
  }
  void operator()(const RngAttrs& a) const {
    p->set_distribution(a.distribution == RngDistribution::kNormal ? xla::RNG_NORMAL
                                                                    : xla::RNG_UNIFORM);
  }
};

int64_t SingleDimension(const xla::HloInstructionProto& proto, const SourceLocation& loc,
                        const std::string& what, const char* field) {
  if (proto.dimensions_size() != 1) {
    Fail(loc, what + ": expected exactly one entry in `dimensions` (" + field + "), found " +
                  std::to_string(proto.dimensions_size()));
  }
  return proto.dimensions(0);
}

}  // namespace

void AttrsToProto(const Instruction& instruction, xla::HloInstructionProto* proto) {
  std::visit(AttrsWriter{instruction, proto}, instruction.attrs());
}

Attrs AttrsFromProto(Opcode opcode, const xla::HloInstructionProto& p, const Shape& shape,
                     const SourceLocation& loc, const std::string& what) {
  switch (AttrsKindFor(opcode)) {
    case AttrsKind::kNone: return NoAttrs{};
    case AttrsKind::kParameter: return ParameterAttrs{p.parameter_number()};
    case AttrsKind::kConstant: {
      if (!p.has_literal()) Fail(loc, what + ": constant has no literal");
      ConstantAttrs a;
      a.literal = LiteralFromProto(p.literal(), shape, loc, what);
      a.elided = p.retarget_elided_constant();
      return a;
    }
    case AttrsKind::kIota: return IotaAttrs{SingleDimension(p, loc, what, "iota_dimension")};
    case AttrsKind::kDimensions: return DimensionsAttrs{ToVector(p.dimensions())};
    case AttrsKind::kSlice: {
      SliceAttrs a;
      for (const auto& s : p.slice_dimensions()) {
        a.dims.push_back({s.start(), s.limit(), s.stride() == 0 ? 1 : s.stride()});
      }
      return a;
    }
    case AttrsKind::kDynamicSlice: return DynamicSliceAttrs{ToVector(p.dynamic_slice_sizes())};
    case AttrsKind::kPad: {
      PadAttrs a;
      for (const auto& d : p.padding_config().dimensions()) {
        a.dims.push_back({d.edge_padding_low(), d.edge_padding_high(), d.interior_padding()});
      }
      return a;
    }
    case AttrsKind::kDot: {
      DotAttrs a;
      const xla::DotDimensionNumbers& d = p.dot_dimension_numbers();
      a.dnums.lhs_batch = ToVector(d.lhs_batch_dimensions());
      a.dnums.lhs_contracting = ToVector(d.lhs_contracting_dimensions());
      a.dnums.rhs_batch = ToVector(d.rhs_batch_dimensions());
      a.dnums.rhs_contracting = ToVector(d.rhs_contracting_dimensions());
      a.precision = PrecisionFromProto(p, loc, what);
      return a;
    }
    case AttrsKind::kConvolution: {
      ConvolutionAttrs a;
      a.window = WindowFromProto(p.window());
      const xla::ConvolutionDimensionNumbers& d = p.convolution_dimension_numbers();
      a.dnums.input_batch = d.input_batch_dimension();
      a.dnums.input_feature = d.input_feature_dimension();
      a.dnums.input_spatial = ToVector(d.input_spatial_dimensions());
      a.dnums.kernel_input_feature = d.kernel_input_feature_dimension();
      a.dnums.kernel_output_feature = d.kernel_output_feature_dimension();
      a.dnums.kernel_spatial = ToVector(d.kernel_spatial_dimensions());
      a.dnums.output_batch = d.output_batch_dimension();
      a.dnums.output_feature = d.output_feature_dimension();
      a.dnums.output_spatial = ToVector(d.output_spatial_dimensions());
      // XLA: "If not specified, it will use a default value of 1."
      a.feature_group_count = p.feature_group_count() == 0 ? 1 : p.feature_group_count();
      a.batch_group_count = p.batch_group_count() == 0 ? 1 : p.batch_group_count();
      a.precision = PrecisionFromProto(p, loc, what);
      return a;
    }
    case AttrsKind::kWindow: return WindowAttrs{WindowFromProto(p.window())};
    case AttrsKind::kCompare:
      return CompareAttrs{DirectionFromName(p.comparison_direction(), loc, what),
                          ComparisonTypeFromName(p.comparison_type(), loc, what)};
    case AttrsKind::kGather: {
      GatherAttrs a;
      const xla::GatherDimensionNumbers& d = p.gather_dimension_numbers();
      a.dnums.offset_dims = ToVector(d.offset_dims());
      a.dnums.collapsed_slice_dims = ToVector(d.collapsed_slice_dims());
      a.dnums.start_index_map = ToVector(d.start_index_map());
      a.dnums.operand_batching_dims = ToVector(d.operand_batching_dims());
      a.dnums.start_indices_batching_dims = ToVector(d.start_indices_batching_dims());
      a.dnums.index_vector_dim = d.index_vector_dim();
      a.slice_sizes = ToVector(p.gather_slice_sizes());
      a.indices_are_sorted = p.indices_are_sorted();
      return a;
    }
    case AttrsKind::kScatter: {
      ScatterAttrs a;
      const xla::ScatterDimensionNumbers& d = p.scatter_dimension_numbers();
      a.dnums.update_window_dims = ToVector(d.update_window_dims());
      a.dnums.inserted_window_dims = ToVector(d.inserted_window_dims());
      a.dnums.scatter_dims_to_operand_dims = ToVector(d.scatter_dims_to_operand_dims());
      a.dnums.input_batching_dims = ToVector(d.input_batching_dims());
      a.dnums.scatter_indices_batching_dims = ToVector(d.scatter_indices_batching_dims());
      a.dnums.index_vector_dim = d.index_vector_dim();
      a.indices_are_sorted = p.indices_are_sorted();
      a.unique_indices = p.unique_indices();
      return a;
    }
    case AttrsKind::kTupleIndex: return TupleIndexAttrs{p.tuple_index()};
    case AttrsKind::kFusion: return FusionAttrs{FusionKindFromName(p.fusion_kind(), loc, what)};
    case AttrsKind::kCustomCall: {
      CustomCallAttrs a;
      a.target = p.custom_call_target();
      a.api_version = p.custom_call_api_version();
      if (a.api_version < 0 || a.api_version > 4) {
        Fail(loc, what + ": unknown custom_call_api_version " + std::to_string(a.api_version));
      }
      a.backend_config = CustomCallBackendConfigFromProto(p);
      a.has_side_effect = p.custom_call_has_side_effect();
      return a;
    }
    case AttrsKind::kSort:
      return SortAttrs{SingleDimension(p, loc, what, "sort dimension"), p.is_stable()};
    case AttrsKind::kTopK: return TopKAttrs{p.k(), p.largest()};
    case AttrsKind::kBatchNorm: return BatchNormAttrs{p.epsilon(), p.feature_index()};
    case AttrsKind::kReducePrecision:
      return ReducePrecisionAttrs{p.exponent_bits(), p.mantissa_bits()};
    case AttrsKind::kFft: {
      if (p.fft_type() < 0 || p.fft_type() > 3) {
        Fail(loc, what + ": unknown fft_type " + std::to_string(p.fft_type()));
      }
      return FftAttrs{static_cast<FftType>(p.fft_type()), ToVector(p.fft_length())};
    }
    case AttrsKind::kCollective: {
      CollectiveAttrs a;
      for (const auto& group : p.replica_groups()) {
        a.replica_groups.push_back(ToVector(group.replica_ids()));
      }
      for (const auto& pair : p.source_target_pairs()) {
        a.source_target_pairs.emplace_back(pair.source(), pair.target());
      }
      if (p.dimensions_size() > 1) {
        Fail(loc, what + ": a collective has at most one dimension, found " +
                      std::to_string(p.dimensions_size()));
      }
      a.dimension = p.dimensions_size() == 1 ? p.dimensions(0) : -1;
      a.channel_id = p.channel_id() > 0 ? p.channel_id() : 0;  // XLA: non-positive = none
      a.use_global_device_ids = p.use_global_device_ids();
      return a;
    }
    case AttrsKind::kRng:
      switch (p.distribution()) {
        case xla::RNG_UNIFORM: return RngAttrs{RngDistribution::kUniform};
        case xla::RNG_NORMAL: return RngAttrs{RngDistribution::kNormal};
        default: Fail(loc, what + ": rng needs distribution RNG_UNIFORM or RNG_NORMAL");
      }
  }
  return NoAttrs{};
}

}  // namespace hlo::proto_internal

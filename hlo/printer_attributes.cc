// Typed attributes and called computations in XLA's spelling. Every field that the parser reads
// is printed whenever it differs from the value an absent attribute parses to, so
// parse(print(x)) reproduces the attribute structs exactly.
#include <charconv>

#include "hlo/lexer.h"
#include "hlo/printer_internal.h"

namespace hlo::printer_internal {
namespace {

bool AnyNot(const std::vector<WindowDim>& dims, int64_t WindowDim::*field, int64_t value) {
  for (const WindowDim& d : dims) {
    if (d.*field != value) return true;
  }
  return false;
}

void AppendWindowField(std::string& out, const char* key, const std::vector<WindowDim>& dims,
                       int64_t WindowDim::*field) {
  out += ' ';
  out += key;
  out += '=';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(dims[i].*field);
  }
}

void AppendWindow(std::string& out, const Window& window) {
  const std::vector<WindowDim>& dims = window.dims;
  out += ", window={";
  size_t mark = out.size();
  if (!dims.empty()) {
    AppendWindowField(out, "size", dims, &WindowDim::size);
    if (AnyNot(dims, &WindowDim::stride, 1)) AppendWindowField(out, "stride", dims, &WindowDim::stride);
    if (AnyNot(dims, &WindowDim::pad_lo, 0) || AnyNot(dims, &WindowDim::pad_hi, 0)) {
      out += " pad=";
      for (size_t i = 0; i < dims.size(); ++i) {
        if (i) out += 'x';
        out += std::to_string(dims[i].pad_lo) + "_" + std::to_string(dims[i].pad_hi);
      }
    }
    if (AnyNot(dims, &WindowDim::base_dilation, 1)) {
      AppendWindowField(out, "lhs_dilate", dims, &WindowDim::base_dilation);
    }
    if (AnyNot(dims, &WindowDim::window_dilation, 1)) {
      AppendWindowField(out, "rhs_dilate", dims, &WindowDim::window_dilation);
    }
    bool any_reversal = false;
    for (const WindowDim& d : dims) any_reversal |= d.reversal;
    if (any_reversal) {
      out += " rhs_reversal=";
      for (size_t i = 0; i < dims.size(); ++i) {
        if (i) out += 'x';
        out += dims[i].reversal ? '1' : '0';
      }
    }
    out.erase(mark, 1);  // the space before the first field
  }
  out += '}';
}

// One label string: `first`/`second` letters and spatial digits at their dimension positions.
std::string Labels(int64_t first, char first_letter, int64_t second, char second_letter,
                   const std::vector<int64_t>& spatial) {
  std::string labels(spatial.size() + 2, '?');
  auto put = [&labels](int64_t at, char c) {
    if (at >= 0 && static_cast<size_t>(at) < labels.size()) labels[at] = c;
  };
  put(first, first_letter);
  put(second, second_letter);
  for (size_t i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>('0' + i));
  return labels;
}

void AppendPrecision(std::string& out, const PrecisionConfig& precision) {
  if (precision.operand_precision.empty()) return;
  out += ", operand_precision={";
  for (size_t i = 0; i < precision.operand_precision.size(); ++i) {
    if (i) out += ',';
    out += PrecisionName(precision.operand_precision[i]);
  }
  out += '}';
}

void AppendNamedInts(std::string& out, const char* name, const std::vector<int64_t>& values) {
  out += ", ";
  out += name;
  out += '=';
  AppendIntList(out, values);
}

const char* ApiVersionName(int64_t v) {
  switch (v) {
    case 1: return "API_VERSION_ORIGINAL";
    case 2: return "API_VERSION_STATUS_RETURNING";
    case 3: return "API_VERSION_STATUS_RETURNING_UNIFIED";
    case 4: return "API_VERSION_TYPED_FFI";
  }
  return nullptr;
}

struct TypedPrinter {
  std::string& out;
  const Instruction& inst;

  void operator()(const NoAttrs&) const {}
  void operator()(const ParameterAttrs&) const {}  // printed as the operand
  void operator()(const ConstantAttrs&) const {}   // printed as the operand
  void operator()(const IotaAttrs& a) const { out += ", iota_dimension=" + std::to_string(a.dimension); }
  void operator()(const DimensionsAttrs& a) const { AppendNamedInts(out, "dimensions", a.dimensions); }
  void operator()(const SliceAttrs& a) const {
    out += ", slice={";
    for (size_t i = 0; i < a.dims.size(); ++i) {
      if (i) out += ", ";
      out += '[' + std::to_string(a.dims[i].start) + ':' + std::to_string(a.dims[i].limit);
      if (a.dims[i].stride != 1) out += ':' + std::to_string(a.dims[i].stride);
      out += ']';
    }
    out += '}';
  }
  void operator()(const DynamicSliceAttrs& a) const { AppendNamedInts(out, "dynamic_slice_sizes", a.sizes); }
  void operator()(const PadAttrs& a) const {
    out += ", padding=";
    for (size_t i = 0; i < a.dims.size(); ++i) {
      if (i) out += 'x';
      out += std::to_string(a.dims[i].lo) + '_' + std::to_string(a.dims[i].hi);
      if (a.dims[i].interior != 0) out += '_' + std::to_string(a.dims[i].interior);
    }
  }
  void operator()(const DotAttrs& a) const {
    if (!a.dnums.lhs_batch.empty()) AppendNamedInts(out, "lhs_batch_dims", a.dnums.lhs_batch);
    if (!a.dnums.lhs_contracting.empty()) AppendNamedInts(out, "lhs_contracting_dims", a.dnums.lhs_contracting);
    if (!a.dnums.rhs_batch.empty()) AppendNamedInts(out, "rhs_batch_dims", a.dnums.rhs_batch);
    if (!a.dnums.rhs_contracting.empty()) AppendNamedInts(out, "rhs_contracting_dims", a.dnums.rhs_contracting);
    AppendPrecision(out, a.precision);
  }
  void operator()(const ConvolutionAttrs& a) const {
    AppendWindow(out, a.window);
    const ConvDimensionNumbers& d = a.dnums;
    out += ", dim_labels=" + Labels(d.input_batch, 'b', d.input_feature, 'f', d.input_spatial) + '_' +
           Labels(d.kernel_input_feature, 'i', d.kernel_output_feature, 'o', d.kernel_spatial) + "->" +
           Labels(d.output_batch, 'b', d.output_feature, 'f', d.output_spatial);
    if (a.feature_group_count != 1) out += ", feature_group_count=" + std::to_string(a.feature_group_count);
    if (a.batch_group_count != 1) out += ", batch_group_count=" + std::to_string(a.batch_group_count);
    AppendPrecision(out, a.precision);
  }
  void operator()(const WindowAttrs& a) const { AppendWindow(out, a.window); }
  void operator()(const CompareAttrs& a) const {
    out += ", direction=";
    out += ComparisonDirectionName(a.direction);
    if (a.type != ComparisonType::kDefault) {
      out += ", type=";
      out += ComparisonTypeName(a.type);
    }
  }
  void operator()(const GatherAttrs& a) const {
    const GatherDimensionNumbers& d = a.dnums;
    AppendNamedInts(out, "offset_dims", d.offset_dims);
    AppendNamedInts(out, "collapsed_slice_dims", d.collapsed_slice_dims);
    AppendNamedInts(out, "start_index_map", d.start_index_map);
    if (!d.operand_batching_dims.empty()) AppendNamedInts(out, "operand_batching_dims", d.operand_batching_dims);
    if (!d.start_indices_batching_dims.empty()) {
      AppendNamedInts(out, "start_indices_batching_dims", d.start_indices_batching_dims);
    }
    out += ", index_vector_dim=" + std::to_string(d.index_vector_dim);
    AppendNamedInts(out, "slice_sizes", a.slice_sizes);
    if (a.indices_are_sorted) out += ", indices_are_sorted=true";
  }
  void operator()(const ScatterAttrs& a) const {
    const ScatterDimensionNumbers& d = a.dnums;
    AppendNamedInts(out, "update_window_dims", d.update_window_dims);
    AppendNamedInts(out, "inserted_window_dims", d.inserted_window_dims);
    AppendNamedInts(out, "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims);
    if (!d.input_batching_dims.empty()) AppendNamedInts(out, "input_batching_dims", d.input_batching_dims);
    if (!d.scatter_indices_batching_dims.empty()) {
      AppendNamedInts(out, "scatter_indices_batching_dims", d.scatter_indices_batching_dims);
    }
    out += ", index_vector_dim=" + std::to_string(d.index_vector_dim);
    if (a.indices_are_sorted) out += ", indices_are_sorted=true";
    if (a.unique_indices) out += ", unique_indices=true";
  }
  void operator()(const TupleIndexAttrs& a) const { out += ", index=" + std::to_string(a.index); }
  void operator()(const FusionAttrs& a) const {
    out += ", kind=";
    out += FusionKindName(a.kind);
  }
  void operator()(const CustomCallAttrs& a) const {
    out += ", custom_call_target=\"" + EscapeString(a.target) + "\"";
    if (const char* name = ApiVersionName(a.api_version)) out += std::string(", api_version=") + name;
    if (!a.backend_config.empty()) out += ", backend_config=" + a.backend_config;
    if (a.has_side_effect) out += ", custom_call_has_side_effect=true";
  }
  void operator()(const SortAttrs& a) const {
    out += ", dimensions={" + std::to_string(a.dimension) + "}";
    if (a.is_stable) out += ", is_stable=true";
  }
  void operator()(const TopKAttrs& a) const {
    out += ", k=" + std::to_string(a.k) + ", largest=" + (a.largest ? "true" : "false");
  }
  void operator()(const BatchNormAttrs& a) const {
    char buf[32];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), a.epsilon, std::chars_format::general);
    out += ", epsilon=" + std::string(buf, ptr) + ", feature_index=" + std::to_string(a.feature_index);
  }
  void operator()(const FftAttrs& a) const {
    out += ", fft_type=" + std::string(FftTypeName(a.type)) + ", fft_length={";
    for (size_t i = 0; i < a.length.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(a.length[i]);
    }
    out += '}';
  }
  void operator()(const ReducePrecisionAttrs& a) const {
    out += ", exponent_bits=" + std::to_string(a.exponent_bits) +
           ", mantissa_bits=" + std::to_string(a.mantissa_bits);
  }
  void operator()(const CollectiveAttrs& a) const {
    const bool permute = inst.opcode() == Opcode::kCollectivePermute ||
                         inst.opcode() == Opcode::kCollectivePermuteStart;
    if (!permute || !a.replica_groups.empty()) {
      out += ", replica_groups={";
      for (size_t i = 0; i < a.replica_groups.size(); ++i) {
        if (i) out += ',';
        AppendIntList(out, a.replica_groups[i]);
      }
      out += '}';
    }
    if (a.channel_id != 0) out += ", channel_id=" + std::to_string(a.channel_id);
    if (a.use_global_device_ids) out += ", use_global_device_ids=true";
    if (a.dimension >= 0) out += ", dimensions={" + std::to_string(a.dimension) + "}";
    if (permute) {
      out += ", source_target_pairs={";
      for (size_t i = 0; i < a.source_target_pairs.size(); ++i) {
        if (i) out += ',';
        out += '{' + std::to_string(a.source_target_pairs[i].first) + ',' +
               std::to_string(a.source_target_pairs[i].second) + '}';
      }
      out += '}';
    }
  }
  void operator()(const RngAttrs& a) const {
    out += a.distribution == RngDistribution::kUniform ? ", distribution=rng_uniform"
                                                       : ", distribution=rng_normal";
  }
};

void AppendCalled(std::string& out, const char* key, const Computation* c) {
  out += ", ";
  out += key;
  out += '=';
  out += c ? c->name() : std::string("<null>");
}

void AppendCalledList(std::string& out, const char* key, const std::vector<Computation*>& calls) {
  out += ", ";
  out += key;
  out += "={";
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i) out += ", ";
    out += calls[i] ? calls[i]->name() : std::string("<null>");
  }
  out += '}';
}

// Called computations under the attribute names of ir.h's fixed order.
void AppendCalledComputations(std::string& out, const Instruction& inst) {
  const std::vector<Computation*>& calls = inst.called_computations();
  if (calls.empty()) return;
  switch (inst.opcode()) {
    case Opcode::kWhile:
      if (calls.size() == 2) {
        AppendCalled(out, "condition", calls[0]);
        AppendCalled(out, "body", calls[1]);
        return;
      }
      break;
    case Opcode::kSelectAndScatter:
      if (calls.size() == 2) {
        AppendCalled(out, "select", calls[0]);
        AppendCalled(out, "scatter", calls[1]);
        return;
      }
      break;
    case Opcode::kConditional:
      // A pred selector takes true/false computations; an s32 index takes a branch list.
      if (calls.size() == 2 && inst.operand_count() > 0 &&
          inst.operand(0)->shape().type == PrimitiveType::kPred) {
        AppendCalled(out, "true_computation", calls[0]);
        AppendCalled(out, "false_computation", calls[1]);
      } else {
        AppendCalledList(out, "branch_computations", calls);
      }
      return;
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      if (calls.size() == 1) return AppendCalled(out, "calls", calls[0]);
      break;
    case Opcode::kCustomCall:
      return AppendCalledList(out, "called_computations", calls);
    default:
      if (calls.size() == 1) return AppendCalled(out, "to_apply", calls[0]);
      break;
  }
  // A shape the parser would not produce: keep the information in a parseable spelling.
  AppendCalledList(out, "called_computations", calls);
}

}  // namespace

void AppendTypedAttributes(std::string& out, const Instruction& inst) {
  std::visit(TypedPrinter{out, inst}, inst.attrs());
  AppendCalledComputations(out, inst);
}

}  // namespace hlo::printer_internal

// Typed attributes, one struct per op family. An Instruction holds exactly one of them in its
// `attrs` variant (NoAttrs for ops without attributes); ir.h documents which op uses which.
// Attributes that Retarget does not interpret (metadata, sharding, frontend_attributes, …) are not
// here: they are kept verbatim in Instruction::opaque_attributes and printed back unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "hlo/literal.h"

namespace hlo {

struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};

// parameter(N)
struct ParameterAttrs {
  int64_t number = 0;
  bool operator==(const ParameterAttrs&) const = default;
};

// constant(...). `elided` is true for `constant({...})`: the dump omitted the values and the
// parser filled them deterministically (see ir.h).
struct ConstantAttrs {
  Literal literal;
  bool elided = false;
  bool operator==(const ConstantAttrs& o) const {
    return elided == o.elided && literal.BitwiseEqual(o.literal);
  }
};

// iota_dimension=N
struct IotaAttrs {
  int64_t dimension = 0;
  bool operator==(const IotaAttrs&) const = default;
};

// dimensions={...}: broadcast (operand dim i -> result dim dims[i]), transpose (permutation),
// reverse, reduce (reduced dims), concatenate (one dim), map, sort (one dim), all-gather /
// reduce-scatter / all-to-all (split/concat dim, at most one).
struct DimensionsAttrs {
  std::vector<int64_t> dimensions;
  bool operator==(const DimensionsAttrs&) const = default;
};

// slice={[start:limit:stride], ...}
struct SliceDim {
  int64_t start = 0, limit = 0, stride = 1;
  bool operator==(const SliceDim&) const = default;
};
struct SliceAttrs {
  std::vector<SliceDim> dims;
  bool operator==(const SliceAttrs&) const = default;
};

// dynamic_slice_sizes={...}
struct DynamicSliceAttrs {
  std::vector<int64_t> sizes;
  bool operator==(const DynamicSliceAttrs&) const = default;
};

// padding=lo_hi_interior x ...  (lo/hi may be negative)
struct PadDim {
  int64_t lo = 0, hi = 0, interior = 0;
  bool operator==(const PadDim&) const = default;
};
struct PadAttrs {
  std::vector<PadDim> dims;
  bool operator==(const PadAttrs&) const = default;
};

// operand_precision={default,high,highest}; kept for printing, the interpreter ignores it.
enum class Precision : uint8_t { kDefault, kHigh, kHighest };
struct PrecisionConfig {
  std::vector<Precision> operand_precision;
  bool operator==(const PrecisionConfig&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  bool operator==(const DotDimensionNumbers&) const = default;
};
struct DotAttrs {
  DotDimensionNumbers dnums;
  PrecisionConfig precision;
  bool operator==(const DotAttrs&) const = default;
};

// window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}
struct WindowDim {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;        // rhs_reversal
  bool operator==(const WindowDim&) const = default;
};
struct Window {
  std::vector<WindowDim> dims;
  bool operator==(const Window&) const = default;
};

// dim_labels=b01f_01io->b01f. Spatial dimension lists are in the order of the labels' digits.
struct ConvDimensionNumbers {
  int64_t input_batch = 0, input_feature = 1;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 1;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 1;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvDimensionNumbers&) const = default;
};
struct ConvolutionAttrs {
  Window window;
  ConvDimensionNumbers dnums;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  PrecisionConfig precision;
  bool operator==(const ConvolutionAttrs&) const = default;
};

// reduce-window and select-and-scatter.
struct WindowAttrs {
  Window window;
  bool operator==(const WindowAttrs&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
// kDefault means "not printed": floats compare as kFloat, signed/unsigned integers by their type.
enum class ComparisonType : uint8_t { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
struct CompareAttrs {
  ComparisonDirection direction = ComparisonDirection::kEq;
  ComparisonType type = ComparisonType::kDefault;
  bool operator==(const CompareAttrs&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimensionNumbers&) const = default;
};
struct GatherAttrs {
  GatherDimensionNumbers dnums;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;
  bool operator==(const GatherAttrs&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};
struct ScatterAttrs {
  ScatterDimensionNumbers dnums;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  bool operator==(const ScatterAttrs&) const = default;
};

// get-tuple-element index=N
struct TupleIndexAttrs {
  int64_t index = 0;
  bool operator==(const TupleIndexAttrs&) const = default;
};

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
struct FusionAttrs {
  FusionKind kind = FusionKind::kLoop;
  bool operator==(const FusionAttrs&) const = default;
};

// custom-call. backend_config of custom calls is part of their meaning, so it is typed here
// (for other ops it stays an opaque attribute).
struct CustomCallAttrs {
  std::string target;
  int64_t api_version = 0;  // 0 = not printed; 1..4 = API_VERSION_ORIGINAL..TYPED_FFI
  std::string backend_config;  // raw text as printed, without surrounding quotes/braces handling
  bool has_side_effect = false;
  bool operator==(const CustomCallAttrs&) const = default;
};

// sort: dimensions={d}, is_stable=true; the comparator is called_computations[0].
struct SortAttrs {
  int64_t dimension = 0;
  bool is_stable = false;
  bool operator==(const SortAttrs&) const = default;
};

// topk: k=N, largest=true
struct TopKAttrs {
  int64_t k = 1;
  bool largest = true;
  bool operator==(const TopKAttrs&) const = default;
};

// batch-norm-*: epsilon=0.001, feature_index=3
struct BatchNormAttrs {
  float epsilon = 0.0f;
  int64_t feature_index = 0;
  bool operator==(const BatchNormAttrs&) const = default;
};

// reduce-precision: exponent_bits=E, mantissa_bits=M
struct ReducePrecisionAttrs {
  int64_t exponent_bits = 8, mantissa_bits = 23;
  bool operator==(const ReducePrecisionAttrs&) const = default;
};

// fft: fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={...} (the transformed minor dimensions)
enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };  // proto numbers 0..3
struct FftAttrs {
  FftType type = FftType::kFft;
  std::vector<int64_t> length;
  bool operator==(const FftAttrs&) const = default;
};
std::string_view FftTypeName(FftType t);  // "FFT", "IFFT", "RFFT", "IRFFT"

// Collectives: replica_groups kept as parsed groups; dimension for all-gather / reduce-scatter /
// all-to-all (-1 if absent); source_target_pairs for collective-permute.
struct CollectiveAttrs {
  std::vector<std::vector<int64_t>> replica_groups;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  int64_t dimension = -1;
  int64_t channel_id = 0;  // 0 = absent
  bool use_global_device_ids = false;
  bool operator==(const CollectiveAttrs&) const = default;
};

// rng: distribution=rng_uniform|rng_normal
enum class RngDistribution : uint8_t { kUniform, kNormal };
struct RngAttrs {
  RngDistribution distribution = RngDistribution::kUniform;
  bool operator==(const RngAttrs&) const = default;
};

using Attrs = std::variant<NoAttrs, ParameterAttrs, ConstantAttrs, IotaAttrs, DimensionsAttrs,
                           SliceAttrs, DynamicSliceAttrs, PadAttrs, DotAttrs, ConvolutionAttrs,
                           WindowAttrs, CompareAttrs, GatherAttrs, ScatterAttrs, TupleIndexAttrs,
                           FusionAttrs, CustomCallAttrs, SortAttrs, TopKAttrs, BatchNormAttrs,
                           ReducePrecisionAttrs, CollectiveAttrs, RngAttrs, FftAttrs>;

std::string_view ComparisonDirectionName(ComparisonDirection d);  // "EQ", "LT", ...
std::string_view ComparisonTypeName(ComparisonType t);            // "FLOAT", "TOTALORDER", ...
std::string_view FusionKindName(FusionKind k);                    // "kLoop", ...
std::string_view PrecisionName(Precision p);                      // "default", "high", "highest"

}  // namespace hlo

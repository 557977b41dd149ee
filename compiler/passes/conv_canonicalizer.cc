#include "compiler/passes/conv_canonicalizer.h"

#include <algorithm>
#include <cctype>

#include "compiler/passes/rewrite_builder.h"
#include "hlo/diagnostic.h"

namespace compiler {
namespace {

using hlo::ConvDimensionNumbers;
using hlo::Instruction;
using hlo::Opcode;

// A label written for another spatial rank: the contiguous run of digits becomes 0..rank-1, so
// "b01f" serves 1-D and 3-D convolutions too. A label of the right rank is kept as written
// (its digit order matters: "10" is not "01"). Empty when the rank differs and the digits are
// not one contiguous run.
std::string WithSpatialRank(const std::string& label, int64_t rank) {
  const auto digit_count = std::count_if(label.begin(), label.end(),
                                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (digit_count == rank) return label;
  const size_t first = label.find_first_of("0123456789");
  if (first == std::string::npos || rank > 10) return {};
  size_t last = first;
  while (last < label.size() && std::isdigit(static_cast<unsigned char>(label[last]))) ++last;
  if (label.find_first_of("0123456789", last) != std::string::npos) return {};
  std::string digits;
  for (int64_t i = 0; i < rank; ++i) digits += static_cast<char>('0' + i);
  return label.substr(0, first) + digits + label.substr(last);
}

// Reads one label: `a`/`b` are the two non-spatial letters ('b','f' or 'i','o'); positions of
// digits go to `spatial` by digit value. False when a letter is missing or repeated.
bool ReadLabel(const std::string& label, char a, char b, int64_t rank, int64_t& pos_a,
               int64_t& pos_b, std::vector<int64_t>& spatial) {
  if (static_cast<int64_t>(label.size()) != rank + 2) return false;
  pos_a = pos_b = -1;
  spatial.assign(static_cast<size_t>(rank), -1);
  for (size_t j = 0; j < label.size(); ++j) {
    const char c = label[j];
    const int64_t pos = static_cast<int64_t>(j);
    if (c == a && pos_a < 0) {
      pos_a = pos;
    } else if (c == b && pos_b < 0) {
      pos_b = pos;
    } else if (std::isdigit(static_cast<unsigned char>(c)) && c - '0' < rank &&
               spatial[static_cast<size_t>(c - '0')] < 0) {
      spatial[static_cast<size_t>(c - '0')] = pos;
    } else {
      return false;
    }
  }
  return pos_a >= 0 && pos_b >= 0;
}

// One side (input, kernel or output) of the dimension numbers: [first letter, second, spatial].
struct Side {
  int64_t a, b;
  std::vector<int64_t> spatial;
};
Side InputSide(const ConvDimensionNumbers& d) { return {d.input_batch, d.input_feature, d.input_spatial}; }
Side KernelSide(const ConvDimensionNumbers& d) {
  return {d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial};
}
Side OutputSide(const ConvDimensionNumbers& d) { return {d.output_batch, d.output_feature, d.output_spatial}; }

// perm[j] = the dimension of `from` that holds the role which `to` places at position j.
std::vector<int64_t> Permutation(const Side& from, const Side& to) {
  std::vector<int64_t> perm(to.spatial.size() + 2);
  perm[static_cast<size_t>(to.a)] = from.a;
  perm[static_cast<size_t>(to.b)] = from.b;
  for (size_t s = 0; s < to.spatial.size(); ++s) perm[static_cast<size_t>(to.spatial[s])] = from.spatial[s];
  return perm;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

Instruction* TransposeIfNeeded(RewriteBuilder& b, Instruction* x, const std::vector<int64_t>& perm) {
  return IsIdentity(perm) ? x : b.Transpose(x, perm);
}

bool CanonicalizeConv(RewriteBuilder& b, hlo::Computation& computation, Instruction* conv,
                      const ConvDimensionNumbers& target) {
  const hlo::ConvolutionAttrs& attrs = conv->attr<hlo::ConvolutionAttrs>();
  const ConvDimensionNumbers& d = attrs.dnums;
  b.set_origin(conv);
  Instruction* input = TransposeIfNeeded(b, conv->operand(0), Permutation(InputSide(d), InputSide(target)));
  Instruction* kernel = TransposeIfNeeded(b, conv->operand(1), Permutation(KernelSide(d), KernelSide(target)));
  const std::vector<int64_t> out_perm = Permutation(OutputSide(d), OutputSide(target));
  std::vector<int64_t> out_dims;
  for (int64_t old_dim : out_perm) out_dims.push_back(conv->shape().dims[static_cast<size_t>(old_dim)]);
  hlo::ConvolutionAttrs new_attrs = attrs;
  new_attrs.dnums = target;
  Instruction* new_conv = b.Add(Opcode::kConvolution, hlo::Shape::Array(conv->shape().type, out_dims),
                                {input, kernel}, std::move(new_attrs));
  new_conv->mutable_opaque_attributes() = conv->opaque_attributes();
  // Back to the original order: original dim i holds the role new_conv has at out_perm^-1[i].
  std::vector<int64_t> back(out_perm.size());
  for (size_t j = 0; j < out_perm.size(); ++j) back[static_cast<size_t>(out_perm[j])] = static_cast<int64_t>(j);
  Instruction* result = TransposeIfNeeded(b, new_conv, back);
  result->mutable_shape() = conv->shape();  // same dims; keeps the original layout
  conv->ReplaceAllUsesWith(result);
  RemoveDeadChain(computation, {conv});
  return true;
}

}  // namespace

bool IsDepthwiseConvolution(const hlo::Instruction& inst) {
  if (inst.opcode() != Opcode::kConvolution || !inst.has_attr<hlo::ConvolutionAttrs>() ||
      inst.operand_count() != 2) {
    return false;
  }
  const hlo::ConvolutionAttrs& attrs = inst.attr<hlo::ConvolutionAttrs>();
  const hlo::Shape& input = inst.operand(0)->shape();
  const hlo::Shape& kernel = inst.operand(1)->shape();
  if (!input.IsArray() || !kernel.IsArray()) return false;
  const auto in_f = static_cast<size_t>(attrs.dnums.input_feature);
  const auto k_in = static_cast<size_t>(attrs.dnums.kernel_input_feature);
  return attrs.feature_group_count > 1 && in_f < input.dims.size() && k_in < kernel.dims.size() &&
         input.dims[in_f] == attrs.feature_group_count && kernel.dims[k_in] == 1;
}

std::optional<ConvDimensionNumbers> ConvDimensionNumbersFromLabels(const std::string& labels,
                                                                   int64_t spatial_rank) {
  const size_t underscore = labels.find('_');
  const size_t arrow = labels.find("->");
  if (underscore == std::string::npos || arrow == std::string::npos || arrow < underscore) {
    return std::nullopt;
  }
  const std::string in = WithSpatialRank(labels.substr(0, underscore), spatial_rank);
  const std::string kernel =
      WithSpatialRank(labels.substr(underscore + 1, arrow - underscore - 1), spatial_rank);
  const std::string out = WithSpatialRank(labels.substr(arrow + 2), spatial_rank);
  ConvDimensionNumbers d;
  if (!ReadLabel(in, 'b', 'f', spatial_rank, d.input_batch, d.input_feature, d.input_spatial) ||
      !ReadLabel(kernel, 'i', 'o', spatial_rank, d.kernel_input_feature,
                 d.kernel_output_feature, d.kernel_spatial) ||
      !ReadLabel(out, 'b', 'f', spatial_rank, d.output_batch, d.output_feature, d.output_spatial)) {
    return std::nullopt;
  }
  return d;
}

bool ConvCanonicalizer::Run(hlo::Module& module) {
  if (preferred_labels_.empty()) return false;
  // A label the target cannot mean is a bug in its description: say so instead of skipping
  // every convolution silently.
  const auto digits = std::count_if(preferred_labels_.begin(), preferred_labels_.end(),
                                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (!ConvDimensionNumbersFromLabels(preferred_labels_, digits / 3)) {
    throw hlo::Error("conv-canonicalizer: malformed preferred_conv_dim_labels '" +
                     preferred_labels_ + "' (expected the form b01f_01io->b01f)");
  }
  bool changed = false;
  for (const auto& computation : module.computations()) {
    std::vector<std::pair<Instruction*, ConvDimensionNumbers>> todo;
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() != Opcode::kConvolution || !inst->has_attr<hlo::ConvolutionAttrs>()) continue;
      const ConvDimensionNumbers& d = inst->attr<hlo::ConvolutionAttrs>().dnums;
      auto target = ConvDimensionNumbersFromLabels(
          preferred_labels_, static_cast<int64_t>(d.input_spatial.size()));
      if (target && !(*target == d)) todo.emplace_back(inst.get(), *target);
    }
    if (todo.empty()) continue;
    RewriteBuilder builder(*computation);
    for (auto& [conv, target] : todo) changed |= CanonicalizeConv(builder, *computation, conv, target);
    computation->SortTopologically();
  }
  return changed;
}

}  // namespace compiler

// Value-range inference for integer parameters; see index_ranges.h for the rules.
#include "tools/io/index_ranges.h"

#include <algorithm>
#include <set>

namespace io {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Bounds deeper than this are not worth the walk (and the limit guards against odd graphs).
constexpr int kMaxWalkDepth = 32;

std::optional<int64_t> Tighter(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// Number of valid start positions along `dim` for a window of `window` elements.
std::optional<int64_t> StartPositions(const hlo::Shape& operand, int64_t dim, int64_t window) {
  if (dim < 0 || dim >= operand.rank()) return std::nullopt;
  return std::max<int64_t>(1, operand.dims[static_cast<size_t>(dim)] - window + 1);
}

std::optional<int64_t> DynamicSliceBound(const Instruction& user, int64_t operand_index) {
  if (operand_index < 1 || !user.has_attr<hlo::DynamicSliceAttrs>()) return std::nullopt;
  const hlo::Shape& operand = user.operand(0)->shape();
  const auto& sizes = user.attr<hlo::DynamicSliceAttrs>().sizes;
  auto window = [&](int64_t d) { return d < static_cast<int64_t>(sizes.size()) ? sizes[d] : 1; };
  if (user.operand_count() == 2 && operand.rank() > 1) {  // old form: one index vector
    std::optional<int64_t> bound;
    for (int64_t d = 0; d < operand.rank(); ++d)
      bound = Tighter(bound, StartPositions(operand, d, window(d)));
    return bound;
  }
  return StartPositions(operand, operand_index - 1, window(operand_index - 1));
}

std::optional<int64_t> DynamicUpdateSliceBound(const Instruction& user, int64_t operand_index) {
  if (operand_index < 2) return std::nullopt;
  const hlo::Shape& operand = user.operand(0)->shape();
  const hlo::Shape& update = user.operand(1)->shape();
  int64_t dim = operand_index - 2;
  if (dim >= update.rank()) return std::nullopt;
  return StartPositions(operand, dim, update.dims[static_cast<size_t>(dim)]);
}

std::optional<int64_t> GatherBound(const Instruction& user, int64_t operand_index) {
  if (operand_index != 1 || !user.has_attr<hlo::GatherAttrs>()) return std::nullopt;
  const auto& attrs = user.attr<hlo::GatherAttrs>();
  const hlo::Shape& operand = user.operand(0)->shape();
  std::optional<int64_t> bound;
  for (int64_t d : attrs.dnums.start_index_map) {
    int64_t window = d < static_cast<int64_t>(attrs.slice_sizes.size()) ? attrs.slice_sizes[d] : 1;
    bound = Tighter(bound, StartPositions(operand, d, window));
  }
  return bound;
}

std::optional<int64_t> ScatterBound(const Instruction& user, int64_t operand_index) {
  int64_t n = (user.operand_count() - 1) / 2;  // scatter(operands..., indices, updates...)
  if (operand_index != n || n < 1 || !user.has_attr<hlo::ScatterAttrs>()) return std::nullopt;
  const auto& dnums = user.attr<hlo::ScatterAttrs>().dnums;
  const hlo::Shape& operand = user.operand(0)->shape();
  const hlo::Shape& updates = user.operand(n + 1)->shape();
  // Operand dims that are neither inserted nor batching take their window size, in order, from
  // the update_window_dims of the updates; the others have window 1.
  std::vector<int64_t> window(static_cast<size_t>(operand.rank()), 1);
  size_t next_window_dim = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    auto listed = [d](const std::vector<int64_t>& v) {
      return std::find(v.begin(), v.end(), d) != v.end();
    };
    if (listed(dnums.inserted_window_dims) || listed(dnums.input_batching_dims)) continue;
    if (next_window_dim < dnums.update_window_dims.size()) {
      int64_t update_dim = dnums.update_window_dims[next_window_dim++];
      if (update_dim >= 0 && update_dim < updates.rank())
        window[static_cast<size_t>(d)] = updates.dims[static_cast<size_t>(update_dim)];
    }
  }
  std::optional<int64_t> bound;
  for (int64_t d : dnums.scatter_dims_to_operand_dims) {
    if (d >= 0 && d < operand.rank())
      bound = Tighter(bound, StartPositions(operand, d, window[static_cast<size_t>(d)]));
  }
  return bound;
}

class BoundWalker {
 public:
  // The tightest bound over every use of `value`.
  std::optional<int64_t> BoundFromUses(const Instruction& value, int depth) {
    const Instruction* call_site = calls_.empty() ? nullptr : calls_.back();
    if (depth > kMaxWalkDepth || !visited_.insert({&value, call_site}).second) return std::nullopt;
    std::optional<int64_t> bound;
    for (const Instruction* user : value.users()) {
      for (int64_t k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) == &value) bound = Tighter(bound, BoundFromUse(*user, k, depth));
      }
    }
    // The value is what a called computation returns: follow the call's own users.
    if (call_site != nullptr && value.parent() != nullptr && value.parent()->root() == &value) {
      calls_.pop_back();
      bound = Tighter(bound, BoundFromUses(*call_site, depth + 1));
      calls_.push_back(call_site);
    }
    return bound;
  }

  // Follows get-tuple-element users down `path` to the tuple leaf, then bounds its uses.
  std::optional<int64_t> BoundForLeaf(const Instruction& value, const std::vector<int64_t>& path,
                                      size_t at) {
    if (at == path.size()) return BoundFromUses(value, 0);
    std::optional<int64_t> bound;
    for (const Instruction* user : value.users()) {
      if (user->opcode() == Opcode::kGetTupleElement && user->has_attr<hlo::TupleIndexAttrs>() &&
          user->attr<hlo::TupleIndexAttrs>().index == path[at]) {
        bound = Tighter(bound, BoundForLeaf(*user, path, at + 1));
      }
    }
    return bound;
  }

 private:
  std::optional<int64_t> BoundFromUse(const Instruction& user, int64_t operand_index, int depth) {
    switch (user.opcode()) {
      case Opcode::kConvert:
        // Used as a predicate (e.g. of select): only 0 and 1 are meaningful.
        if (user.shape().type == hlo::PrimitiveType::kPred) return 2;
        return BoundFromUses(user, depth + 1);
      case Opcode::kReshape:
      case Opcode::kBitcast:
      case Opcode::kCopy:
      case Opcode::kBroadcast:
      case Opcode::kTranspose:
      case Opcode::kConcatenate:
      case Opcode::kSlice: return BoundFromUses(user, depth + 1);
      case Opcode::kSelect:  // the chosen values pass through (jnp.where in jnp.take)
        return operand_index >= 1 ? BoundFromUses(user, depth + 1) : std::nullopt;
      case Opcode::kCall: return BoundInCallee(user, operand_index, depth);
      case Opcode::kDynamicSlice: return DynamicSliceBound(user, operand_index);
      case Opcode::kDynamicUpdateSlice: return DynamicUpdateSliceBound(user, operand_index);
      case Opcode::kGather: return GatherBound(user, operand_index);
      case Opcode::kScatter: return ScatterBound(user, operand_index);
      default: return std::nullopt;  // arithmetic etc.: the value no longer indexes directly
    }
  }

  // JAX wraps jnp.take / jnp.where in calls: continue at the callee's parameter.
  std::optional<int64_t> BoundInCallee(const Instruction& call, int64_t operand_index, int depth) {
    if (call.called_computations().empty() || call.called_computations()[0] == nullptr)
      return std::nullopt;
    const hlo::Computation& callee = *call.called_computations()[0];
    if (operand_index >= callee.parameter_count() || callee.parameter(operand_index) == nullptr) {
      return std::nullopt;
    }
    calls_.push_back(&call);
    std::optional<int64_t> bound = BoundFromUses(*callee.parameter(operand_index), depth + 1);
    calls_.pop_back();
    return bound;
  }

  // (instruction, innermost call site) pairs already walked.
  std::set<std::pair<const Instruction*, const Instruction*>> visited_;
  std::vector<const Instruction*> calls_;  // the call instructions entered, innermost last
};

}  // namespace

namespace {

void CollectLeaves(const Instruction* parameter, const hlo::Shape& shape, std::vector<int64_t>& path,
                   std::vector<ParameterLeafPath>& out) {
  if (!shape.IsTuple()) {
    out.push_back({parameter, path});
    return;
  }
  for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
    path.push_back(static_cast<int64_t>(i));
    CollectLeaves(parameter, shape.tuple_shapes[i], path, out);
    path.pop_back();
  }
}

}  // namespace

std::vector<ParameterLeafPath> EntryParameterLeafPaths(const hlo::Module& module) {
  std::vector<ParameterLeafPath> leaves;
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return leaves;
  for (const Instruction* parameter : entry->parameters()) {
    if (parameter == nullptr) continue;
    std::vector<int64_t> path;
    CollectLeaves(parameter, parameter->shape(), path, leaves);
  }
  return leaves;
}

std::vector<std::optional<int64_t>> InferParameterValueBounds(const hlo::Module& module) {
  std::vector<std::optional<int64_t>> bounds;
  for (const ParameterLeafPath& leaf : EntryParameterLeafPaths(module)) {
    BoundWalker walker;  // fresh per leaf: a shared value may bound several leaves
    bounds.push_back(walker.BoundForLeaf(*leaf.parameter, leaf.path, 0));
  }
  return bounds;
}

}  // namespace io

// scatter for the evaluator: variadic operands/updates, update_computation, full dimension
// numbers including batching dimensions.
//
// Guarantees:
//  - Update elements are applied one at a time in row-major order of the updates, so duplicate
//    indices combine deterministically (in that order).
//  - An update slice whose whole window does not fit in the operand at its start index is
//    skipped entirely (ir.h); start indices are not clamped.
//  - Bodies that are a plain add/multiply/maximum/minimum/and/or, or that return the update
//    (`.at[].set()`), are applied inline; any other body is called per element.
//  - Dimension numbers and shapes are validated first; bad input throws hlo::Error.
#include <algorithm>

#include "hlo/evaluator_family_util.h"

namespace hlo::eval::rc {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The mapping from one update element to an operand element, derived from the dnums.
struct ScatterGeometry {
  std::vector<int64_t> operand_dims, update_dims, indices_dims;
  int64_t index_vector_dim = 0;
  bool implicit_index_vector = false;        // index_vector_dim == indices rank
  std::vector<int64_t> update_scatter_dims;  // update dims that select a scatter index
  std::vector<int64_t> indices_batch_dims;   // indices dims matching update_scatter_dims
  std::vector<int64_t> window_operand_dim;   // per update_window_dims entry: its operand dim
  std::vector<int64_t> window_size;          // per operand dim
  std::vector<int64_t> start_operand_dim;    // per index vector entry: its operand dim
  std::vector<std::pair<int64_t, int64_t>> batching;  // (operand dim, indices dim)
};

ScatterGeometry CheckScatter(const Instruction& inst, const Shape& operand, const Shape& indices,
                             const Shape& updates) {
  Require(inst.has_attr<ScatterAttrs>(), inst, "missing scatter dimension numbers");
  const ScatterDimensionNumbers& dn = inst.attr<ScatterAttrs>().dnums;
  ScatterGeometry g;
  g.operand_dims = operand.dims;
  g.update_dims = updates.dims;
  g.indices_dims = indices.dims;
  const int64_t operand_rank = operand.rank(), update_rank = updates.rank();
  const int64_t indices_rank = indices.rank();
  g.index_vector_dim = dn.index_vector_dim;
  Require(g.index_vector_dim >= 0 && g.index_vector_dim <= indices_rank, inst,
          "index_vector_dim out of range");
  g.implicit_index_vector = g.index_vector_dim == indices_rank;
  Require(IsInteger(indices.type), inst, "scatter indices must be integers");
  const int64_t index_vector_size = g.implicit_index_vector ? 1 : indices.dims[g.index_vector_dim];
  Require(static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) == index_vector_size, inst,
          "scatter_dims_to_operand_dims must have one entry per index vector element");
  for (int64_t d : dn.scatter_dims_to_operand_dims) {
    Require(d >= 0 && d < operand_rank, inst, "scatter_dims_to_operand_dims out of range");
  }
  g.start_operand_dim = dn.scatter_dims_to_operand_dims;
  for (int64_t d = 0; d < update_rank; ++d) {
    if (!Contains(dn.update_window_dims, d)) g.update_scatter_dims.push_back(d);
  }
  for (int64_t d = 0; d < indices_rank; ++d) {
    if (d != g.index_vector_dim) g.indices_batch_dims.push_back(d);
  }
  Require(g.update_scatter_dims.size() == g.indices_batch_dims.size(), inst,
          "updates must have one scatter dimension per index dimension");
  for (size_t k = 0; k < g.update_scatter_dims.size(); ++k) {
    Require(updates.dims[g.update_scatter_dims[k]] == indices.dims[g.indices_batch_dims[k]], inst,
            "update scatter dimensions must match the indices' dimensions");
  }
  for (int64_t d : dn.inserted_window_dims) {
    Require(d >= 0 && d < operand_rank, inst, "inserted_window_dims out of range");
  }
  Require(dn.input_batching_dims.size() == dn.scatter_indices_batching_dims.size(), inst,
          "input_batching_dims and scatter_indices_batching_dims differ in length");
  for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    const int64_t od = dn.input_batching_dims[i], id = dn.scatter_indices_batching_dims[i];
    Require(
        od >= 0 && od < operand_rank && id >= 0 && id < indices_rank && id != g.index_vector_dim,
        inst, "batching dimension out of range");
    g.batching.emplace_back(od, id);
  }
  g.window_size.assign(static_cast<size_t>(operand_rank), 1);
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d)) {
      g.window_operand_dim.push_back(d);
    }
  }
  Require(g.window_operand_dim.size() == dn.update_window_dims.size(), inst,
          "update_window_dims must cover the operand dims that are neither inserted nor batching");
  for (size_t k = 0; k < dn.update_window_dims.size(); ++k) {
    const int64_t ud = dn.update_window_dims[k];
    Require(ud >= 0 && ud < update_rank, inst, "update_window_dims out of range");
    g.window_size[g.window_operand_dim[k]] = updates.dims[ud];
    Require(updates.dims[ud] <= operand.dims[g.window_operand_dim[k]], inst,
            "update window is larger than the operand");
  }
  return g;
}

enum class UpdateKind { kCall, kAssign, kCombine };

}  // namespace

Literal EvaluateScatter(const Instruction& inst, Operands operands, EvalContext& context) {
  Require(operands.size() >= 3 && operands.size() % 2 == 1, inst,
          "expects N operands, the indices and N updates");
  Require(inst.called_computations().size() == 1, inst, "expects one update computation");
  const int64_t n = static_cast<int64_t>(operands.size() - 1) / 2;
  const Literal& indices = *operands[n];
  std::vector<Shape> results = ResultArrayShapes(inst);
  Require(static_cast<int64_t>(results.size()) == n, inst,
          "result must have one array per operand");
  for (int64_t i = 0; i < n; ++i) {
    const Shape& op = operands[i]->shape();
    const Shape& up = operands[n + 1 + i]->shape();
    Require(op.IsArray() && op.dims == operands[0]->shape().dims, inst,
            "operands must share dimensions");
    Require(up.IsArray() && up.dims == operands[n + 1]->shape().dims && up.type == op.type, inst,
            "updates must share dimensions and match their operand's type");
    Require(results[i].IsArray() && results[i].dims == op.dims && results[i].type == op.type, inst,
            "result must match the operands");
  }
  Require(indices.shape().IsArray(), inst, "indices must be an array");
  const ScatterGeometry g =
      CheckScatter(inst, operands[0]->shape(), indices.shape(), operands[n + 1]->shape());

  Literal result = NewResult(inst);
  std::vector<Literal*> outs;
  if (result.IsTuple()) {
    for (Literal& e : result.mutable_elements()) outs.push_back(&e);
  } else {
    outs.push_back(&result);
  }
  for (int64_t i = 0; i < n; ++i) {
    std::copy(operands[i]->bytes().begin(), operands[i]->bytes().end(),
              outs[i]->mutable_bytes().begin());
  }
  const Computation& body = *inst.called_computations()[0];
  const PrimitiveType type = operands[0]->shape().type;
  UpdateKind update_kind = UpdateKind::kCall;
  std::optional<BinaryKind> combine;
  if (n == 1) {
    combine = RecognizeBinaryBody(body, type);
    const Instruction* root = body.root();
    if (combine) {
      update_kind = UpdateKind::kCombine;
    } else if (body.parameter_count() == 2 && root != nullptr && root == body.parameter(1) &&
               root->shape().IsArray() && root->shape().type == type) {
      update_kind = UpdateKind::kAssign;
    }
  }

  const int64_t operand_rank = static_cast<int64_t>(g.operand_dims.size());
  const std::vector<int64_t> operand_strides = RowMajorStrides(g.operand_dims);
  const std::vector<int64_t> indices_strides = RowMajorStrides(g.indices_dims);
  const int64_t index_vector_stride =
      g.implicit_index_vector ? 0 : indices_strides[g.index_vector_dim];
  const std::vector<int64_t>& update_window_dims =
      inst.attr<ScatterAttrs>().dnums.update_window_dims;
  std::vector<int64_t> start(static_cast<size_t>(operand_rank));
  std::vector<int64_t> indices_index(g.indices_dims.size(), 0);
  int64_t update_linear = 0;
  ForEachIndex(g.update_dims, [&](std::span<const int64_t> u) {
    const int64_t this_update = update_linear++;
    // Start index: index vector at the scatter position, plus batching dims.
    for (size_t k = 0; k < g.update_scatter_dims.size(); ++k) {
      indices_index[g.indices_batch_dims[k]] = u[g.update_scatter_dims[k]];
    }
    int64_t indices_base = 0;
    for (size_t k = 0; k < g.indices_batch_dims.size(); ++k) {
      indices_base +=
          indices_index[g.indices_batch_dims[k]] * indices_strides[g.indices_batch_dims[k]];
    }
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < g.start_operand_dim.size(); ++k) {
      start[g.start_operand_dim[k]] =
          indices.GetAsInt64(indices_base + static_cast<int64_t>(k) * index_vector_stride);
    }
    for (const auto& [operand_dim, indices_dim] : g.batching) {
      start[operand_dim] = indices_index[indices_dim];
    }
    int64_t target = 0;
    for (int64_t d = 0; d < operand_rank; ++d) {
      // Skip the whole update slice when its window does not fit (overflow-safe comparison).
      if (start[d] < 0 || start[d] > g.operand_dims[d] - g.window_size[d]) return;
      target += start[d] * operand_strides[d];
    }
    for (size_t k = 0; k < update_window_dims.size(); ++k) {
      target += u[update_window_dims[k]] * operand_strides[g.window_operand_dim[k]];
    }
    switch (update_kind) {
      case UpdateKind::kAssign: {
        const int64_t size = ByteSize(type);
        std::copy_n(operands[n + 1]->bytes().begin() + this_update * size, size,
                    outs[0]->mutable_bytes().begin() + target * size);
        return;
      }
      case UpdateKind::kCombine:
        VisitArrayType(type, inst, [&](auto tag) {
          using Tag = decltype(tag);
          using A = Arith<Tag>;
          using S = typename A::Storage;
          S* out = outs[0]->mutable_data<S>().data();
          out[target] = A::Store(CombineAs<Tag>(*combine, A::Load(out[target]),
                                                A::Load(operands[n + 1]->data<S>()[this_update])));
        });
        return;
      case UpdateKind::kCall: {
        std::vector<Literal> scalars;
        std::vector<const Literal*> args;
        for (int64_t i = 0; i < n; ++i) scalars.push_back(ScalarAt(*outs[i], target));
        for (int64_t i = 0; i < n; ++i)
          scalars.push_back(ScalarAt(*operands[n + 1 + i], this_update));
        for (const Literal& s : scalars) args.push_back(&s);
        std::vector<Literal> values = SplitResult(context.Call(body, args), n, inst);
        for (int64_t i = 0; i < n; ++i) StoreScalar(*outs[i], target, values[i], inst);
        return;
      }
    }
  });
  return result;
}

}  // namespace hlo::eval::rc

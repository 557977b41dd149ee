// Collectives and partition-id / replica-id, with XLA's semantics on a grid of
// replicas × partitions (multi_device.h).
//
// Guarantees:
//  - Groups follow XLA's collective group modes (CollectiveGroup, multi_device.h); the group's
//    order is the order of its members in the list (in the replica-and-partition mode,
//    replica-major).
//  - all-reduce folds the group's operands in group order with to_apply (add, multiply,
//    maximum, minimum, and, or inline; any other body called per element); all-gather
//    concatenates them along `dimensions`; reduce-scatter gives member k the k-th slice of the
//    all-reduce; all-to-all sends member j the j-th slice (array form) or operand (tuple form);
//    collective-permute delivers each source's operand to its target, zeros to a device no
//    pair targets. The -start forms do the same and return XLA's start values, which -done
//    unpacks.
//  - On one device (no runtime) every group has one member and no thread waits.
//  - Errors name the problem: an id outside the grid, a device in no group or in two, pairs
//    that send twice from or to one device, operands whose shapes differ across the group.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/collective_runtime.h"
#include "hlo/evaluator_family.h"
#include "hlo/evaluator_family_util.h"
#include "hlo/multi_device.h"

namespace hlo::eval::rc {
namespace {

// The group's operands, met through the runtime (or just this device's on one device).
class Exchange {
 public:
  Exchange(const Instruction& inst, EvalContext& context, std::vector<int64_t> group,
           Operands operands)
      : group_(std::move(group)) {
    const DeviceView* view = context.device();
    const int64_t self = view ? view->device : 0;
    rank_ = std::find(group_.begin(), group_.end(), self) - group_.begin();
    if (group_.size() == 1) {
      own_ = operands;
      return;
    }
    Require(view != nullptr && view->runtime != nullptr, inst,
            "needs " + std::to_string(group_.size()) + " devices; this run has one");
    meeting_ = view->runtime->Meet(inst, self, group_, rank_, operands);
    for (int64_t k = 0; k < size(); ++k) {
      Operands theirs = meeting_->operands(k);
      Require(theirs.size() == operands.size(), inst,
              "device " + std::to_string(group_[k]) + " offers " + std::to_string(theirs.size()) +
                  " operand(s), device " + std::to_string(self) + " " +
                  std::to_string(operands.size()));
      for (size_t i = 0; i < theirs.size(); ++i) {
        Require(theirs[i]->shape().Compatible(operands[i]->shape()), inst,
                "operand " + std::to_string(i) + " is " +
                    theirs[i]->shape().ToString(false) + " on device " +
                    std::to_string(group_[k]) + " but " + operands[i]->shape().ToString(false) +
                    " on device " + std::to_string(self));
      }
    }
  }
  int64_t size() const { return static_cast<int64_t>(group_.size()); }
  int64_t rank() const { return rank_; }
  const Literal& operand(int64_t member, size_t i) const {
    return meeting_ ? *meeting_->operands(member)[i] : *own_[i];
  }

 private:
  std::vector<int64_t> group_;
  int64_t rank_ = 0;
  Operands own_;
  std::unique_ptr<CollectiveRuntime::Meeting> meeting_;
};

const DeviceGrid& GridOf(const EvalContext& context) {
  static const DeviceGrid kOneDevice;
  return context.device() ? context.device()->grid : kOneDevice;
}
int64_t SelfOf(const EvalContext& context) {
  return context.device() ? context.device()->device : 0;
}

// The array results of a collective whose result is `result` (one array or a tuple of them).
std::vector<Shape> ArrayResults(const Shape& result, size_t count, const Instruction& inst) {
  std::vector<Shape> shapes = result.IsTuple() ? result.tuple_shapes : std::vector<Shape>{result};
  Require(shapes.size() == count, inst,
          "result " + result.ToString(false) + " does not hold " + std::to_string(count) +
              " array(s)");
  for (const Shape& shape : shapes) {
    Require(shape.IsArray(), inst, "result " + result.ToString(false) + " holds a non-array");
  }
  return shapes;
}

Literal Pack(std::vector<Literal> arrays, const Shape& result) {
  if (!result.IsTuple()) return std::move(arrays[0]);
  return Literal::Tuple(std::move(arrays));
}

Literal NewArray(const Shape& shape, const Instruction& inst) {
  CheckAllocationLimit(shape, inst.location());
  return Literal(shape);
}

// Folds operand `i` of every member, in group order, with to_apply.
Literal Reduce(const Instruction& inst, const Exchange& exchange, size_t i, const Shape& shape,
               EvalContext& context) {
  Literal result = exchange.operand(0, i);
  result.mutable_shape() = shape;
  if (exchange.size() == 1) return result;
  const Computation& body = *inst.called_computations().at(0);
  const PrimitiveType type = shape.type;
  if (std::optional<BinaryKind> kind = RecognizeBinaryBody(body, type)) {
    for (int64_t k = 1; k < exchange.size(); ++k) {
      CombineInto(*kind, inst, result, exchange.operand(k, i));
    }
    return result;
  }
  for (int64_t k = 1; k < exchange.size(); ++k) {
    const Literal& in = exchange.operand(k, i);
    for (int64_t e = 0; e < result.element_count(); ++e) {
      Literal a = ScalarAt(result, e), b = ScalarAt(in, e);
      const Literal* args[] = {&a, &b};
      StoreScalar(result, e, context.Call(body, args), inst);
    }
  }
  return result;
}

// Copies `count` rows of `dimension` starting at row `from` of `src` to row `to` of `dst`
// (the arrays agree in every other dimension): the data-movement family's strided copy.
void CopyRows(const Literal& src, int64_t from, Literal& dst, int64_t to, int64_t count,
              int64_t dimension) {
  const std::vector<int64_t> src_strides = RowMajorStrides(src.shape().dims);
  const std::vector<int64_t> dst_strides = RowMajorStrides(dst.shape().dims);
  std::vector<int64_t> dims = src.shape().dims;
  dims[static_cast<size_t>(dimension)] = count;
  StridedCopy(dst.mutable_bytes().data(), to * dst_strides[static_cast<size_t>(dimension)],
              dst_strides, src.bytes().data(),
              from * src_strides[static_cast<size_t>(dimension)], src_strides, dims,
              ByteSize(src.shape().type));
}

int64_t CheckedDimension(const Instruction& inst, const Shape& shape) {
  const int64_t dimension = inst.attr<CollectiveAttrs>().dimension;
  Require(dimension >= 0 && dimension < shape.rank(), inst,
          "dimensions={" + std::to_string(dimension) + "} is not a dimension of " +
              shape.ToString(false));
  return dimension;
}

std::vector<int64_t> GroupOfThisDevice(const Instruction& inst, const EvalContext& context) {
  return CollectiveGroup(inst, GridOf(context), SelfOf(context));
}

// The collectives that treat each operand alone (all-reduce, all-gather, reduce-scatter): the
// group meets once, then result i is computed from operand i of every member by
// one(exchange, i, operand shape, result shape).
template <typename One>
Literal EachOperand(const Instruction& inst, Operands operands, const Shape& result,
                    EvalContext& context, One one) {
  Exchange exchange(inst, context, GroupOfThisDevice(inst, context), operands);
  std::vector<Shape> shapes = ArrayResults(result, operands.size(), inst);
  std::vector<Literal> arrays;
  for (size_t i = 0; i < operands.size(); ++i) {
    arrays.push_back(one(exchange, i, operands[i]->shape(), shapes[i]));
  }
  return Pack(std::move(arrays), result);
}

Literal AllReduce(const Instruction& inst, Operands operands, const Shape& result,
                  EvalContext& context) {
  return EachOperand(inst, operands, result, context,
                     [&](const Exchange& exchange, size_t i, const Shape& in, const Shape& out) {
    Require(out.dims == in.dims, inst,
            "result " + out.ToString(false) + " differs from operand " + in.ToString(false));
    return Reduce(inst, exchange, i, out, context);
  });
}

Literal AllGather(const Instruction& inst, Operands operands, const Shape& result,
                  EvalContext& context) {
  return EachOperand(inst, operands, result, context,
                     [&](const Exchange& exchange, size_t i, const Shape& in, const Shape& shape) {
    const int64_t dimension = CheckedDimension(inst, in);
    std::vector<int64_t> dims = in.dims;
    dims[dimension] *= exchange.size();
    Require(shape.dims == dims, inst,
            "result " + shape.ToString(false) + " is not " + std::to_string(exchange.size()) +
                " x " + in.ToString(false) + " along dimension " + std::to_string(dimension));
    Literal out = NewArray(shape, inst);
    const int64_t rows = in.dims[dimension];
    for (int64_t k = 0; k < exchange.size(); ++k) {
      CopyRows(exchange.operand(k, i), 0, out, k * rows, rows, dimension);
    }
    return out;
  });
}

Literal ReduceScatter(const Instruction& inst, Operands operands, const Shape& result,
                      EvalContext& context) {
  return EachOperand(inst, operands, result, context,
                     [&](const Exchange& exchange, size_t i, const Shape& in, const Shape& shape) {
    const int64_t dimension = CheckedDimension(inst, in);
    Require(in.dims[dimension] % exchange.size() == 0, inst,
            "dimension " + std::to_string(dimension) + " of " + in.ToString(false) +
                " does not split into " + std::to_string(exchange.size()) + " parts");
    const int64_t rows = in.dims[dimension] / exchange.size();
    std::vector<int64_t> dims = in.dims;
    dims[dimension] = rows;
    Require(shape.dims == dims, inst,
            "result " + shape.ToString(false) + " is not 1/" + std::to_string(exchange.size()) +
                " of " + in.ToString(false));
    Literal reduced = Reduce(inst, exchange, i, in, context);
    Literal out = NewArray(shape, inst);
    CopyRows(reduced, exchange.rank() * rows, out, 0, rows, dimension);
    return out;
  });
}

Literal AllToAll(const Instruction& inst, Operands operands, EvalContext& context) {
  Exchange exchange(inst, context, GroupOfThisDevice(inst, context), operands);
  const int64_t n = exchange.size();
  if (inst.attr<CollectiveAttrs>().dimension < 0) {
    // Tuple form: operand j goes to member j; result k comes from member k.
    Require(static_cast<int64_t>(operands.size()) == n, inst,
            std::to_string(operands.size()) + " operands for a group of " + std::to_string(n));
    std::vector<Shape> shapes = ArrayResults(inst.shape(), operands.size(), inst);
    std::vector<Literal> arrays;
    for (int64_t k = 0; k < n; ++k) {
      const Literal& from = exchange.operand(k, static_cast<size_t>(exchange.rank()));
      Require(from.shape().dims == shapes[k].dims, inst,
              "result " + shapes[k].ToString(false) + " receives " + from.shape().ToString(false));
      arrays.push_back(from);
      arrays.back().mutable_shape() = shapes[k];
    }
    return Pack(std::move(arrays), inst.shape());
  }
  Require(operands.size() == 1, inst, "the array form takes one operand");
  const Shape& in = operands[0]->shape();
  const int64_t dimension = CheckedDimension(inst, in);
  Require(in.dims[dimension] % n == 0, inst,
          "dimension " + std::to_string(dimension) + " of " + in.ToString(false) +
              " does not split into " + std::to_string(n) + " parts");
  Require(inst.shape().IsArray() && inst.shape().dims == in.dims, inst,
          "result " + inst.shape().ToString(false) + " differs from operand " +
              in.ToString(false));
  const int64_t rows = in.dims[dimension] / n;
  Literal out = NewArray(inst.shape(), inst);
  for (int64_t k = 0; k < n; ++k) {
    CopyRows(exchange.operand(k, 0), exchange.rank() * rows, out, k * rows, rows, dimension);
  }
  return out;
}

Literal CollectivePermute(const Instruction& inst, Operands operands, const Shape& result,
                          EvalContext& context) {
  Require(operands.size() == 1, inst,
          "only the one-operand form is supported (not the in-place form with buffers)");
  const DeviceGrid& grid = GridOf(context);
  const int64_t self = SelfOf(context);
  const int64_t source = PermuteSource(inst, grid, self);
  // Everyone on this device's line of the grid meets, so each source finds its target.
  std::vector<int64_t> line = CollectiveGroup(inst, grid, self);
  const auto source_rank = std::find(line.begin(), line.end(), source) - line.begin();
  Exchange exchange(inst, context, std::move(line), operands);
  Require(result.IsArray() && result.dims == operands[0]->shape().dims, inst,
          "result " + result.ToString(false) + " differs from operand " +
              operands[0]->shape().ToString(false));
  if (source < 0) return NewArray(result, inst);  // XLA: a device no pair targets gets zeros
  Literal out = exchange.operand(source_rank, 0);
  out.mutable_shape() = result;
  return out;
}

const Literal& StartedValue(const Instruction& inst, Operands operands, size_t element) {
  Require(operands.size() == 1 && operands[0]->IsTuple() &&
              operands[0]->elements().size() > element,
          inst, "operand is not the value of a -start");
  return operands[0]->elements()[element];
}

std::vector<Literal> Copies(Operands operands) {
  std::vector<Literal> copies;
  for (const Literal* operand : operands) copies.push_back(*operand);
  return copies;
}

}  // namespace
}  // namespace hlo::eval::rc

namespace hlo::eval {

Literal EvaluateCollective(const Instruction& inst, Operands operands, EvalContext& context) {
  using namespace rc;  // NOLINT: the helpers of this file
  const DeviceGrid& grid = GridOf(context);
  const int64_t self = SelfOf(context);
  const Shape& shape = inst.shape();
  switch (inst.opcode()) {
    case Opcode::kPartitionId:
    case Opcode::kReplicaId: {
      Literal id = MakeResult(inst);
      const int64_t value =
          inst.opcode() == Opcode::kPartitionId ? grid.Partition(self) : grid.Replica(self);
      Require(id.shape().IsArray() && id.element_count() == 1, inst, "result must be a scalar");
      id.SetFromInt64(0, value);
      return id;
    }
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return AllReduce(inst, operands, shape, context);
    case Opcode::kAllGather:
      return AllGather(inst, operands, shape, context);
    case Opcode::kAllGatherStart: {
      Require(shape.IsTuple() && shape.tuple_shapes.size() == 2, inst,
              "result must be (operands, results)");
      std::vector<Literal> copies = Copies(operands);
      Literal started = Pack(std::move(copies), shape.tuple_shapes[0]);
      return Literal::Tuple(
          {std::move(started), AllGather(inst, operands, shape.tuple_shapes[1], context)});
    }
    case Opcode::kReduceScatter:
      return ReduceScatter(inst, operands, shape, context);
    case Opcode::kAllToAll:
      return AllToAll(inst, operands, context);
    case Opcode::kCollectivePermute:
      return CollectivePermute(inst, operands, shape, context);
    case Opcode::kCollectivePermuteStart: {
      Require(shape.IsTuple() && shape.tuple_shapes.size() >= 2, inst,
              "result must be (operand, result, ...)");
      std::vector<Literal> elements;
      Literal permuted = CollectivePermute(inst, operands, shape.tuple_shapes[1], context);
      elements.push_back(*operands[0]);  // one operand: CollectivePermute checked
      elements.push_back(std::move(permuted));
      for (size_t k = 2; k < shape.tuple_shapes.size(); ++k) {
        elements.push_back(NewArray(shape.tuple_shapes[k], inst));  // XLA's context words
      }
      return Literal::Tuple(std::move(elements));
    }
    case Opcode::kAllReduceDone:
      return *operands[0];  // arity 1, checked by the core
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
      return StartedValue(inst, operands, 1);
    default:
      throw Error("'" + std::string(OpcodeName(inst.opcode())) + "' is not a collective");
  }
}

}  // namespace hlo::eval

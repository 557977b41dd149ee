// Collectives in GPU artifacts: NCCL calls over the module's device grid (XLA's replica_count x
// num_partitions), plus replica-id and partition-id.
//
// Each collective becomes gpu::CollectiveCall steps on contiguous blocks, which is what NCCL
// exchanges: rank r's block of an all-gather lands at offset r x block of the receive buffer.
// XLA's collectives work along a dimension instead. Where that dimension is the outermost of
// the physical layout (every more-major dimension has size 1) the blocks are the buffers
// themselves; otherwise strided_copy steps gather the dimension's slabs into a scratch of
// blocks first (reduce-scatter, all-to-all) or scatter them out after (all-gather,
// all-to-all).
//
// Guarantees:
//  - Groups are resolved here, for the grid compiled for (hlo::CollectiveGroup and
//    hlo::PermuteSource: XLA's group modes, the same functions the interpreter uses), into
//    lists of global device ids; the artifact names every device's group.
//  - all-reduce and reduce-scatter take a reduction NCCL has: the to_apply computation is one
//    add, multiply, maximum or minimum of its two parameters (also and / or on pred), as
//    hlo::RecognizeBinaryBody recognizes it; any other is refused naming the instruction, as
//    are s16/u16 reductions (no NCCL type).
//  - The -start forms compute at the start and return XLA's start values (operand copies,
//    zeroed context words); -done copies out the result. Every step is in program order on one
//    stream, so nothing overlaps the exchange yet.
#include <algorithm>

#include "hlo/binary_body.h"
#include "hlo/multi_device.h"
#include "targets/gpu/codegen/gpu_compiler_internal.h"

namespace gpu::codegen::internal {
namespace {

// The slabs of `dimension` in `shape`'s physical layout (Slabs, gpu_compiler_internal.h).
Slabs SlabsOf(const hlo::Shape& shape, int64_t dimension) {
  Slabs slabs;
  bool inside = false;
  const std::vector<int64_t> minor_to_major = shape.EffectiveMinorToMajor();
  for (auto it = minor_to_major.rbegin(); it != minor_to_major.rend(); ++it) {
    inside = inside || *it == dimension;
    const auto extent = static_cast<uint64_t>(shape.dims[static_cast<size_t>(*it)]);
    (inside ? slabs.row : slabs.outer) *= extent;
  }
  slabs.row_bytes = slabs.row * static_cast<uint64_t>(hlo::ByteSize(shape.type));
  return slabs;
}

// `name`, or `name.i` when the instruction has several leaves (built piecewise: GCC 12 warns,
// falsely, with -Wrestrict on "." + std::to_string(i) inside a conditional).
std::string LeafStepName(const std::string& name, size_t leaf, size_t leaves) {
  std::string step = name;
  if (leaves > 1) {
    step += '.';
    step += std::to_string(leaf);
  }
  return step;
}

// The NCCL operator of a reducer (hlo::RecognizeBinaryBody, the evaluator's own recognizer).
// pred's add / or are a max of 0/1 bytes, its multiply / and a min; NCCL has no bitwise and /
// or on integers.
std::optional<gpu::Reduction> ReductionOf(const Instruction& inst, hlo::PrimitiveType type) {
  const auto& called = inst.called_computations();
  if (called.empty() || called[0] == nullptr) return std::nullopt;
  const std::optional<hlo::BinaryKind> kind = hlo::RecognizeBinaryBody(*called[0], type);
  if (!kind) return std::nullopt;
  const bool pred = type == hlo::PrimitiveType::kPred;
  switch (*kind) {
    case hlo::BinaryKind::kAdd: return pred ? gpu::Reduction::kMax : gpu::Reduction::kSum;
    case hlo::BinaryKind::kMultiply: return pred ? gpu::Reduction::kMin : gpu::Reduction::kProd;
    case hlo::BinaryKind::kMaximum: return gpu::Reduction::kMax;
    case hlo::BinaryKind::kMinimum: return gpu::Reduction::kMin;
    case hlo::BinaryKind::kOr: return pred ? std::optional(gpu::Reduction::kMax) : std::nullopt;
    case hlo::BinaryKind::kAnd: return pred ? std::optional(gpu::Reduction::kMin) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::vector<int64_t>> ArtifactBuilder::GroupsOf(const Instruction& inst) {
  std::vector<std::vector<int64_t>> groups;
  for (int64_t device = 0; device < grid_.size(); ++device) {
    std::vector<int64_t> group = hlo::CollectiveGroup(inst, grid_, device);
    if (std::find(groups.begin(), groups.end(), group) == groups.end())
      groups.push_back(std::move(group));
  }
  return groups;
}

void ArtifactBuilder::AddCollective(const Instruction& inst, const std::string& name,
                                    gpu::CollectiveCall call, const hlo::Shape& element) {
  call.dtype = ToDType(inst, element.type);
  const bool reduces =
      call.op == gpu::Collective::kAllReduce || call.op == gpu::Collective::kReduceScatter;
  if (reduces) {
    std::optional<gpu::Reduction> reduction = ReductionOf(inst, element.type);
    if (!reduction) {
      Unsupported(inst, "its reduction is not one NCCL has (add, multiply, maximum or minimum; "
                        "and / or on pred)");
    }
    if (call.dtype == gpu::DType::kS16 || call.dtype == gpu::DType::kU16)
      Unsupported(inst, "NCCL has no 16-bit integer type to reduce");
    call.reduction = *reduction;
  }
  steps_->push_back({name, std::move(call)});
}

void ArtifactBuilder::StridedCopies(const std::string& name, uint64_t source,
                                    uint64_t destination, const Slabs& slabs, int64_t blocks,
                                    bool gather) {
  // gather: slab b of every row of `source` (rows of `blocks` slabs) -> block b of
  // `destination`; otherwise the reverse.
  const uint64_t block_bytes = slabs.outer * slabs.row_bytes;
  const uint64_t pitch = slabs.row_bytes * static_cast<uint64_t>(blocks);
  for (int64_t b = 0; b < blocks; ++b) {
    const auto index = static_cast<uint64_t>(b);
    gpu::StridedCopy copy;
    copy.rows = slabs.outer;
    copy.row_bytes = slabs.row_bytes;
    if (gather) {
      copy.source = source + index * slabs.row_bytes;
      copy.source_pitch = pitch;
      copy.destination = destination + index * block_bytes;
      copy.destination_pitch = slabs.row_bytes;
    } else {
      copy.source = source + index * block_bytes;
      copy.source_pitch = slabs.row_bytes;
      copy.destination = destination + index * slabs.row_bytes;
      copy.destination_pitch = pitch;
    }
    steps_->push_back({name + "." + std::to_string(b), copy});
  }
}

gpu::Slice ArtifactBuilder::AsBlocks(const std::string& name, gpu::Slice buffer,
                                     const Slabs& slabs, int64_t blocks) {
  if (slabs.outer == 1) return buffer;
  const gpu::Slice scratch = ScratchSlice(buffer.bytes);
  StridedCopies(name + ".blocks", buffer.offset, scratch.offset, slabs, blocks, /*gather=*/true);
  return scratch;
}

gpu::Slice ArtifactBuilder::BlocksFor(gpu::Slice result, const Slabs& slabs) {
  return slabs.outer == 1 ? result : ScratchSlice(result.bytes);
}

void ArtifactBuilder::SpreadBlocks(const std::string& name, gpu::Slice blocks, gpu::Slice result,
                                   const Slabs& slabs, int64_t count) {
  if (blocks == result) return;
  StridedCopies(name + ".slabs", blocks.offset, result.offset, slabs, count, /*gather=*/false);
}

void ArtifactBuilder::LowerCollective(const Instruction& inst) {
  const std::vector<gpu::Slice>& out = Slices(inst);
  switch (inst.opcode()) {
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      steps_->push_back({inst.name(), gpu::DeviceIdWrite{inst.opcode() == Opcode::kPartitionId,
                                                         ArraySlice(inst)}});
      AddOwner(inst, "device-id");
      return;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: {
      std::vector<hlo::Shape> leaves;
      CollectLeafShapes(inst.shape(), leaves);
      if (leaves.size() != static_cast<size_t>(inst.operand_count()))
        Unsupported(inst, "operands and results do not pair up");
      const std::vector<std::vector<int64_t>> groups = GroupsOf(inst);
      for (size_t i = 0; i < leaves.size(); ++i) {
        gpu::CollectiveCall call;
        call.op = gpu::Collective::kAllReduce;
        call.count = static_cast<uint64_t>(leaves[i].ElementCount());
        call.send = ArraySlice(*inst.operand(static_cast<int64_t>(i)));
        call.receive = out.at(i);
        call.groups = groups;
        AddCollective(inst, LeafStepName(inst.name(), i, leaves.size()),
                      std::move(call), leaves[i]);
      }
      break;
    }
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart: {
      const size_t operands = static_cast<size_t>(inst.operand_count());
      const bool start = inst.opcode() == Opcode::kAllGatherStart;
      if (start) {  // (operands, results): the operands' copies first
        std::vector<gpu::Slice> inputs;
        for (const Instruction* operand : inst.operands()) inputs.push_back(ArraySlice(*operand));
        CopyLeaves(inst.name() + ".operand", inputs,
                   std::vector<gpu::Slice>(out.begin(), out.begin() + operands), *steps_);
      }
      for (size_t i = 0; i < operands; ++i) {
        const Instruction& operand = *inst.operand(static_cast<int64_t>(i));
        LowerAllGather(inst, operand, out.at(start ? operands + i : i),
                       LeafStepName(inst.name(), i, operands),
                       inst.attr<hlo::CollectiveAttrs>().dimension);
      }
      break;
    }
    case Opcode::kReduceScatter: {
      if (inst.operand_count() != 1) Unsupported(inst, "more than one operand");
      const Instruction& operand = *inst.operand(0);
      const auto& attrs = inst.attr<hlo::CollectiveAttrs>();
      const std::vector<std::vector<int64_t>> groups = GroupsOf(inst);
      const auto size = static_cast<int64_t>(groups.front().size());
      if (attrs.dimension < 0 || attrs.dimension >= inst.shape().rank())
        Unsupported(inst, "no scatter dimension");
      const Slabs slabs = SlabsOf(inst.shape(), attrs.dimension);
      if (operand.shape().dims[static_cast<size_t>(attrs.dimension)] !=
              inst.shape().dims[static_cast<size_t>(attrs.dimension)] * size ||
          operand.shape().EffectiveMinorToMajor() != inst.shape().EffectiveMinorToMajor()) {
        Unsupported(inst, "the operand is not the group's blocks of the result");
      }
      gpu::CollectiveCall call;
      call.op = gpu::Collective::kReduceScatter;
      call.count = slabs.elements();
      call.send = AsBlocks(inst.name(), ArraySlice(operand), slabs, size);
      call.receive = ArraySlice(inst);
      call.groups = groups;
      AddCollective(inst, inst.name(), std::move(call), inst.shape());
      break;
    }
    case Opcode::kAllToAll:
      LowerAllToAll(inst);
      break;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: {
      if (inst.operand_count() != 1 || !inst.operand(0)->shape().IsArray())
        Unsupported(inst, "only the one-array form is supported");
      const gpu::Slice operand = ArraySlice(*inst.operand(0));
      gpu::CollectiveCall call;
      call.op = gpu::Collective::kSendReceive;
      call.count = static_cast<uint64_t>(inst.operand(0)->shape().ElementCount());
      call.send = operand;
      call.receive = inst.opcode() == Opcode::kCollectivePermute ? ArraySlice(inst) : out.at(1);
      for (int64_t device = 0; device < grid_.size(); ++device) {
        const int64_t source = hlo::PermuteSource(inst, grid_, device);
        if (source >= 0) call.pairs.emplace_back(source, device);
      }
      if (inst.opcode() == Opcode::kCollectivePermuteStart) {
        CopyLeaves(inst.name() + ".operand", {operand}, {out.at(0)}, *steps_);
        for (size_t k = 2; k < out.size(); ++k)  // XLA's context words, zero as the interpreter
          steps_->push_back({inst.name() + ".context" + std::to_string(k), gpu::Fill{out[k], 0}});
      }
      AddCollective(inst, inst.name(), std::move(call), inst.operand(0)->shape());
      break;
    }
    case Opcode::kAllReduceDone:
      CopyLeaves(inst.name(), Slices(*inst.operand(0)), out, *steps_);
      return;
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone: {
      // The start's value is (operands, results, ...): the results are element 1.
      const std::vector<gpu::Slice>& started = Slices(*inst.operand(0));
      const size_t first = LeafCount(inst.operand(0)->shape().tuple_shapes.at(0));
      if (first + out.size() > started.size()) Unsupported(inst, "the operand is not a -start");
      CopyLeaves(inst.name(),
                 std::vector<gpu::Slice>(started.begin() + static_cast<std::ptrdiff_t>(first),
                                         started.begin() +
                                             static_cast<std::ptrdiff_t>(first + out.size())),
                 out, *steps_);
      return;
    }
    default:
      Unsupported(inst);
  }
  AddOwner(inst, "NCCL");
}

void ArtifactBuilder::LowerAllGather(const Instruction& inst, const Instruction& operand,
                                     gpu::Slice result, const std::string& name,
                                     int64_t dimension) {
  const std::vector<std::vector<int64_t>> groups = GroupsOf(inst);
  const auto size = static_cast<int64_t>(groups.front().size());
  const hlo::Shape& shape = operand.shape();
  if (dimension < 0 || dimension >= shape.rank()) Unsupported(inst, "no gather dimension");
  const Slabs slabs = SlabsOf(shape, dimension);
  const hlo::Shape& gathered = inst.opcode() == Opcode::kAllGatherStart
                                  ? inst.shape().tuple_shapes.at(1)
                                  : inst.shape();
  if (result.bytes != static_cast<uint64_t>(size) * slabs.outer * slabs.row_bytes ||
      (gathered.IsArray() &&
       gathered.EffectiveMinorToMajor() != shape.EffectiveMinorToMajor())) {
    Unsupported(inst, "the result is not the group's operands side by side");
  }
  gpu::CollectiveCall call;
  call.op = gpu::Collective::kAllGather;
  call.count = slabs.elements();
  call.send = ArraySlice(operand);
  call.receive = BlocksFor(result, slabs);
  call.groups = groups;
  const gpu::Slice blocks = call.receive;
  AddCollective(inst, name, std::move(call), shape);
  SpreadBlocks(name, blocks, result, slabs, size);
}

void ArtifactBuilder::LowerAllToAll(const Instruction& inst) {
  const auto& attrs = inst.attr<hlo::CollectiveAttrs>();
  const std::vector<std::vector<int64_t>> groups = GroupsOf(inst);
  const auto size = static_cast<int64_t>(groups.front().size());
  const std::vector<gpu::Slice>& out = Slices(inst);
  gpu::CollectiveCall call;
  call.op = gpu::Collective::kAllToAll;
  call.groups = groups;
  const hlo::Shape& shape = inst.operand(0)->shape();
  const uint64_t element = static_cast<uint64_t>(hlo::ByteSize(shape.type));
  if (attrs.dimension < 0) {  // tuple form: operand j goes to rank j, result r comes from rank r
    if (inst.operand_count() != size || out.size() != static_cast<size_t>(size))
      Unsupported(inst, "the tuple form needs one operand and one result per group member");
    const uint64_t bytes = ArraySlice(*inst.operand(0)).bytes;
    const gpu::Slice send = ScratchSlice(bytes * static_cast<uint64_t>(size));
    const gpu::Slice receive = ScratchSlice(send.bytes);
    for (int64_t j = 0; j < size; ++j) {
      const gpu::Slice operand = ArraySlice(*inst.operand(j));
      if (operand.bytes != bytes || out[static_cast<size_t>(j)].bytes != bytes)
        Unsupported(inst, "operands of different sizes");
      const gpu::Slice block{send.offset + static_cast<uint64_t>(j) * bytes, bytes};
      if (bytes > 0) steps_->push_back({inst.name() + ".send" + std::to_string(j),
                                        gpu::DeviceCopy{operand, block}});
    }
    call.count = bytes / element;
    call.send = send;
    call.receive = receive;
    AddCollective(inst, inst.name(), std::move(call), shape);
    for (int64_t r = 0; r < size; ++r) {
      const gpu::Slice block{receive.offset + static_cast<uint64_t>(r) * bytes, bytes};
      if (bytes > 0) steps_->push_back({inst.name() + ".receive" + std::to_string(r),
                                        gpu::DeviceCopy{block, out[static_cast<size_t>(r)]}});
    }
    return;
  }
  if (inst.operand_count() != 1 || !inst.shape().IsArray())
    Unsupported(inst, "the array form with more than one operand");
  if (attrs.dimension >= shape.rank() ||
      shape.dims[static_cast<size_t>(attrs.dimension)] % size != 0)
    Unsupported(inst, "the dimension does not split evenly over the group");
  // Slabs of one block: the dimension's extent divided among the group.
  hlo::Shape block_shape = shape;
  block_shape.dims[static_cast<size_t>(attrs.dimension)] /= size;
  const Slabs slabs = SlabsOf(block_shape, attrs.dimension);
  const gpu::Slice result = ArraySlice(inst);
  call.count = slabs.elements();
  call.send = AsBlocks(inst.name(), ArraySlice(*inst.operand(0)), slabs, size);
  call.receive = BlocksFor(result, slabs);
  const gpu::Slice received = call.receive;
  AddCollective(inst, inst.name(), std::move(call), shape);
  SpreadBlocks(inst.name(), received, result, slabs, size);
}

}  // namespace gpu::codegen::internal

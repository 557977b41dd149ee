// EmulateCollective (emulated_collectives.h).
#include "targets/gpu/emulator/emulated_collectives.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "hlo/binary_body.h"
#include "hlo/literal.h"

namespace gpu::emulator {
namespace {

// The reduction as the interpreter's fold computes it (pred's max / min of 0/1 bytes are its
// or / and).
hlo::BinaryKind KindOf(gpu::Reduction reduction) {
  switch (reduction) {
    case gpu::Reduction::kSum: return hlo::BinaryKind::kAdd;
    case gpu::Reduction::kProd: return hlo::BinaryKind::kMultiply;
    case gpu::Reduction::kMax: return hlo::BinaryKind::kMaximum;
    case gpu::Reduction::kMin: return hlo::BinaryKind::kMinimum;
  }
  return hlo::BinaryKind::kAdd;
}

// out[i] = blocks[0][i] (+) blocks[1][i] (+) ... in rank order, as Storage elements computed in
// Compute and rounded back after every step.
template <typename Storage, typename Compute, typename Load, typename Store>
void FoldAs(gpu::Reduction reduction, const std::vector<const uint8_t*>& blocks, uint64_t count,
            uint8_t* out, Load load, Store store) {
  const hlo::BinaryKind kind = KindOf(reduction);
  for (uint64_t i = 0; i < count; ++i) {
    Storage acc;
    std::memcpy(&acc, blocks[0] + i * sizeof(Storage), sizeof(Storage));
    for (size_t r = 1; r < blocks.size(); ++r) {
      Storage next;
      std::memcpy(&next, blocks[r] + i * sizeof(Storage), sizeof(Storage));
      acc = store(hlo::Combine<Compute>(kind, load(acc), load(next)));
    }
    std::memcpy(out + i * sizeof(Storage), &acc, sizeof(Storage));
  }
}

template <typename T>
void Fold(gpu::Reduction reduction, const std::vector<const uint8_t*>& blocks, uint64_t count,
          uint8_t* out) {
  // Integers wrap as XLA's do: computed in the type's own width.
  FoldAs<T, T>(reduction, blocks, count, out, [](T v) { return v; }, [](T v) { return v; });
}

void Reduce(gpu::DType dtype, gpu::Reduction reduction,
            const std::vector<const uint8_t*>& blocks, uint64_t count, uint8_t* out) {
  switch (dtype) {
    case gpu::DType::kPred:
    case gpu::DType::kU8: return Fold<uint8_t>(reduction, blocks, count, out);
    case gpu::DType::kS8: return Fold<int8_t>(reduction, blocks, count, out);
    case gpu::DType::kS16: return Fold<int16_t>(reduction, blocks, count, out);
    case gpu::DType::kU16: return Fold<uint16_t>(reduction, blocks, count, out);
    case gpu::DType::kS32: return Fold<int32_t>(reduction, blocks, count, out);
    case gpu::DType::kU32: return Fold<uint32_t>(reduction, blocks, count, out);
    case gpu::DType::kS64: return Fold<int64_t>(reduction, blocks, count, out);
    case gpu::DType::kU64: return Fold<uint64_t>(reduction, blocks, count, out);
    case gpu::DType::kF32: return Fold<float>(reduction, blocks, count, out);
    case gpu::DType::kF64: return Fold<double>(reduction, blocks, count, out);
    case gpu::DType::kF16:
      return FoldAs<uint16_t, float>(reduction, blocks, count, out, hlo::F16ToFloat,
                                     hlo::FloatToF16);
    case gpu::DType::kBF16:
      return FoldAs<uint16_t, float>(reduction, blocks, count, out, hlo::BF16ToFloat,
                                     hlo::FloatToBF16);
  }
}

}  // namespace

void EmulateCollective(const std::string& step_name, const gpu::CollectiveCall& call,
                       uint8_t* arena, const hlo::DeviceView* device) {
  const int64_t self = device != nullptr ? device->device : 0;
  const int64_t devices = device != nullptr ? device->grid.size() : 1;
  const std::vector<int64_t> group = gpu::CollectiveGroupOf(call, self, devices);
  const auto rank = static_cast<size_t>(std::find(group.begin(), group.end(), self) -
                                        group.begin());
  if (rank >= group.size()) {
    throw std::runtime_error("collective '" + step_name + "': device " + std::to_string(self) +
                             " is in none of its groups");
  }
  // Every member's send buffer: this device's in place, the others' met through the runtime.
  std::vector<const uint8_t*> sends(group.size(), nullptr);
  sends[rank] = arena + call.send.offset;
  hlo::Literal mine;  // declared first: the meeting's end (which waits for readers) comes first
  std::unique_ptr<hlo::CollectiveRuntime::Meeting> meeting;
  if (group.size() > 1) {
    if (device == nullptr || device->runtime == nullptr) {
      throw std::runtime_error("collective '" + step_name + "' needs " +
                               std::to_string(group.size()) + " devices; this run has one");
    }
    mine = hlo::Literal(hlo::Shape::Array(hlo::PrimitiveType::kU8,
                                          {static_cast<int64_t>(call.send.bytes)}));
    if (call.send.bytes > 0)
      std::memcpy(mine.mutable_bytes().data(), sends[rank], call.send.bytes);
    const hlo::Literal* offered[] = {&mine};
    meeting = device->runtime->Meet(step_name, hlo::SourceLocation{}, self, group,
                                    static_cast<int64_t>(rank), offered);
    for (size_t r = 0; r < group.size(); ++r) {
      const hlo::Literal& theirs = *meeting->operands(static_cast<int64_t>(r)).front();
      if (theirs.bytes().size() != call.send.bytes) {
        throw std::runtime_error("collective '" + step_name + "': device " +
                                 std::to_string(group[r]) + " sends a buffer of another size");
      }
      sends[r] = theirs.bytes().data();
    }
  }
  const uint64_t block = call.count * static_cast<uint64_t>(gpu::DTypeBytes(call.dtype));
  std::vector<uint8_t> received(call.receive.bytes);
  auto blocks_at = [&](uint64_t offset) {
    std::vector<const uint8_t*> at;
    for (const uint8_t* send : sends) at.push_back(send + offset);
    return at;
  };
  switch (call.op) {
    case gpu::Collective::kAllReduce:
      Reduce(call.dtype, call.reduction, blocks_at(0), call.count, received.data());
      break;
    case gpu::Collective::kReduceScatter:
      Reduce(call.dtype, call.reduction, blocks_at(rank * block), call.count, received.data());
      break;
    case gpu::Collective::kAllGather:
      for (size_t r = 0; r < sends.size(); ++r)
        std::memcpy(received.data() + r * block, sends[r], block);
      break;
    case gpu::Collective::kAllToAll:
      for (size_t r = 0; r < sends.size(); ++r)
        std::memcpy(received.data() + r * block, sends[r] + rank * block, block);
      break;
    case gpu::Collective::kSendReceive:
      for (const auto& [source, target] : call.pairs) {
        if (target != self) continue;
        if (source >= static_cast<int64_t>(sends.size())) {
          throw std::runtime_error("collective '" + step_name + "' receives from device " +
                                   std::to_string(source) + ", outside this run");
        }
        std::memcpy(received.data(), sends[static_cast<size_t>(source)], block);
      }
      break;
  }
  meeting.reset();  // every member has read every send buffer
  if (!received.empty())
    std::memcpy(arena + call.receive.offset, received.data(), received.size());
}

}  // namespace gpu::emulator

// The memory-file convention of `retarget sim` (sim_memory_io.h).
#include "tools/retarget/sim_memory_io.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>

#include "hlo/diagnostic.h"

namespace cli {
namespace {

// The one table of memory names.
struct SpaceName {
  MemorySpace space;
  std::string_view name;
};
constexpr SpaceName kSpaces[] = {
    {MemorySpace::kDram, "dram"}, {MemorySpace::kUb, "ub"}, {MemorySpace::kAcc, "acc"}};

constexpr std::string_view kConventionHint =
    "expected an array name like dram@0x1000, ub@0x0 or acc@0x40 (memory@hex byte address)";

hlo::Error EntryError(const std::string& file, std::string_view entry, const std::string& what) {
  return hlo::Error(hlo::SourceLocation{std::make_shared<const std::string>(file), 0, 0},
                    "entry '" + std::string(entry) + "': " + what);
}

uint64_t Capacity(MemorySpace space, const simulator::Memories& memories) {
  switch (space) {
    case MemorySpace::kDram: return static_cast<uint64_t>(memories.dram.capacity());
    case MemorySpace::kUb: return static_cast<uint64_t>(memories.ub.capacity());
    case MemorySpace::kAcc: return static_cast<uint64_t>(memories.acc.capacity());
  }
  return 0;
}

std::string_view SpaceText(MemorySpace space) {
  for (const SpaceName& s : kSpaces) {
    if (s.space == space) return s.name;
  }
  return "?";
}

void WriteBytes(const MemoryPlace& place, std::span<const uint8_t> bytes,
                simulator::Memories& memories) {
  switch (place.space) {
    case MemorySpace::kDram:
      memories.dram.Write(place.address, bytes);
      return;
    case MemorySpace::kUb:
    case MemorySpace::kAcc: {
      simulator::LocalMemory& memory = place.space == MemorySpace::kUb ? memories.ub : memories.acc;
      std::span<uint8_t> target = memory.Write(place.address, bytes.size());
      std::copy(bytes.begin(), bytes.end(), target.begin());
      return;
    }
  }
}

void ReadBytes(const MemoryPlace& place, std::span<uint8_t> out,
               const simulator::Memories& memories) {
  switch (place.space) {
    case MemorySpace::kDram:
      memories.dram.Read(place.address, out);
      return;
    case MemorySpace::kUb:
    case MemorySpace::kAcc: {
      const simulator::LocalMemory& memory =
          place.space == MemorySpace::kUb ? memories.ub : memories.acc;
      std::span<const uint8_t> source = memory.Read(place.address, out.size());
      std::copy(source.begin(), source.end(), out.begin());
      return;
    }
  }
}

std::string Hex(uint64_t value) {
  char digits[16];
  auto [end, error] = std::to_chars(digits, digits + sizeof digits, value, 16);
  (void)error;  // 16 hex digits always fit
  return "0x" + std::string(digits, end);
}

using Range = std::pair<uint64_t, uint64_t>;  // [begin, end)

// `written` minus the union of `covered` (both sorted by begin), as maximal ranges.
std::vector<Range> Uncovered(const std::vector<Range>& written, std::vector<Range> covered) {
  std::sort(covered.begin(), covered.end());
  std::vector<Range> pieces;
  for (auto [begin, end] : written) {
    for (const auto& [cover_begin, cover_end] : covered) {
      if (cover_end <= begin || cover_begin >= end) continue;
      if (cover_begin > begin) pieces.emplace_back(begin, cover_begin);
      begin = std::max(begin, cover_end);
      if (begin >= end) break;
    }
    if (begin < end) pieces.emplace_back(begin, end);
  }
  return pieces;
}

}  // namespace

std::optional<MemoryPlace> ParseMemoryName(std::string_view name) {
  const size_t at = name.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view space_name = name.substr(0, at);
  std::string_view address = name.substr(at + 1);
  if (address.size() < 3 || (address.substr(0, 2) != "0x" && address.substr(0, 2) != "0X")) {
    return std::nullopt;
  }
  address.remove_prefix(2);
  uint64_t value = 0;
  auto [end, error] = std::from_chars(address.data(), address.data() + address.size(), value, 16);
  if (error != std::errc() || end != address.data() + address.size()) return std::nullopt;
  for (const SpaceName& s : kSpaces) {
    if (s.name == space_name) return MemoryPlace{s.space, value};
  }
  return std::nullopt;
}

std::string MemoryName(MemorySpace space, uint64_t address) {
  return std::string(SpaceText(space)) + "@" + Hex(address);
}

void LoadMemoryInputs(const std::vector<io::NpyArray>& arrays, const std::string& file,
                      simulator::Memories& memories) {
  for (const io::NpyArray& array : arrays) {
    std::optional<MemoryPlace> place = ParseMemoryName(array.name);
    if (!place) throw EntryError(file, array.name, std::string(kConventionHint));
    if (array.literal.IsTuple()) throw EntryError(file, array.name, "not an array");
    std::span<const uint8_t> bytes = array.literal.bytes();
    const uint64_t capacity = Capacity(place->space, memories);
    // Checked here, before any write, so a huge address cannot wrap around.
    if (place->address > capacity || bytes.size() > capacity - place->address) {
      throw EntryError(file, array.name,
                       std::to_string(bytes.size()) + " bytes at " + Hex(place->address) +
                           " do not fit in " + std::string(SpaceText(place->space)) + " (" +
                           std::to_string(capacity) + " bytes)");
    }
    try {
      WriteBytes(*place, bytes, memories);
    } catch (const hlo::Error& e) {
      throw EntryError(file, array.name, e.message());
    }
  }
}

std::vector<io::NpyArray> CollectMemoryOutputs(const std::vector<io::NpyArray>& inputs,
                                               const simulator::Memories& memories) {
  std::vector<io::NpyArray> outputs;
  std::vector<Range> dram_inputs;
  for (const io::NpyArray& input : inputs) {
    const MemoryPlace place = *ParseMemoryName(input.name);  // LoadMemoryInputs accepted it
    io::NpyArray output{input.name, hlo::Literal(input.literal.shape())};
    ReadBytes(place, output.literal.mutable_bytes(), memories);
    if (place.space == MemorySpace::kDram && !input.literal.bytes().empty()) {
      dram_inputs.emplace_back(place.address, place.address + input.literal.bytes().size());
    }
    outputs.push_back(std::move(output));
  }
  for (const auto& [begin, end] : Uncovered(memories.dram.WrittenRanges(), dram_inputs)) {
    const auto length = static_cast<int64_t>(end - begin);
    io::NpyArray output{MemoryName(MemorySpace::kDram, begin),
                        hlo::Literal(hlo::Shape::Array(hlo::PrimitiveType::kU8, {length}))};
    memories.dram.Read(begin, output.literal.mutable_bytes());
    outputs.push_back(std::move(output));
  }
  return outputs;
}

}  // namespace cli

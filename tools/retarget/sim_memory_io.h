// The `retarget sim` memory-file convention (docs/cli.md, docs/simulator-output.md): an .npz
// array named `dram@0xADDR`, `ub@0xADDR` or `acc@0xADDR` holds bytes placed at byte address ADDR
// of that memory (its elements in row-major order, little-endian; any dtype).
//
// Guarantees: a malformed name, an array that does not fit its memory (checked before any byte
// is written, with no address overflow) or a memory error is an hlo::Error naming the file and
// the entry. Outputs echo every input array with its post-run contents (same name, dtype and
// shape) and add one u8 array per contiguous DRAM range the program wrote outside the inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/memory.h"
#include "tools/io/npz.h"

namespace cli {

enum class MemorySpace : uint8_t { kDram, kUb, kAcc };

struct MemoryPlace {
  MemorySpace space;
  uint64_t address;
};

// "dram@0x1000" -> {kDram, 0x1000}; nullopt when `name` does not follow the convention.
std::optional<MemoryPlace> ParseMemoryName(std::string_view name);
std::string MemoryName(MemorySpace space, uint64_t address);  // "dram@0x1000"

// Places every array of `arrays` (read from `file`) into `memories`.
void LoadMemoryInputs(const std::vector<io::NpyArray>& arrays, const std::string& file,
                      simulator::Memories& memories);

// The --output arrays after a run: `inputs` re-read from the memories, then the DRAM ranges
// written by the program that no input covers, in address order.
std::vector<io::NpyArray> CollectMemoryOutputs(const std::vector<io::NpyArray>& inputs,
                                               const simulator::Memories& memories);

}  // namespace cli

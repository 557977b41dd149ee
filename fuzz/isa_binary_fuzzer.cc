// libFuzzer target: arbitrary bytes -> systolic::ReadBinary (the .bin program decoder).
//
// Beyond crashes, sanitizer reports, hangs, allocation out of proportion to the input and
// exceptions other than hlo::Error, it checks that whatever the decoder accepts is a program the
// rest of the tool chain agrees on: written again it reads back to the same bytes, and its
// disassembly assembles to the same binary. Seeds: the .sasm seeds assembled by
// reader_seed_writer (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "simulator/isa/assembler.h"
#include "simulator/isa/disassembler.h"
#include "simulator/isa/encoding.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::RunExpectingOnlyHloErrors("isa_binary_fuzzer", [&] {
    const systolic::Program program = systolic::ReadBinary(bytes, "fuzz.bin");
    const std::string binary = systolic::WriteBinary(program);
    fuzz::Require(systolic::WriteBinary(systolic::ReadBinary(binary, "rewritten.bin")) == binary,
                  "isa_binary_fuzzer", "a rewritten binary does not read back to itself");
    const std::string listing = systolic::Disassemble(program);
    fuzz::Require(systolic::WriteBinary(systolic::Assemble(listing, "disassembly.sasm")) == binary,
                  "isa_binary_fuzzer", "the disassembly does not reassemble to the same binary");
  });
  return 0;
}

// libFuzzer target: arbitrary text -> systolic::Assemble (the .sasm assembler).
//
// Beyond crashes, sanitizer reports, hangs and exceptions other than hlo::Error, it checks the
// assembler's promise that "an assembled program always encodes" and that the textual and binary
// forms agree: the program's binary reads back to the same disassembly, and the disassembly
// assembles to the same binary. Seeds: examples/systolic/*.sasm and the systolic backend's output
// for run-corpus models (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "simulator/isa/assembler.h"
#include "simulator/isa/disassembler.h"
#include "simulator/isa/encoding.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::RunExpectingOnlyHloErrors("sasm_fuzzer", [&] {
    const systolic::Program program = systolic::Assemble(text, "fuzz.sasm");
    const std::string binary = systolic::WriteBinary(program);
    const std::string listing = systolic::Disassemble(program);
    fuzz::Require(systolic::Disassemble(systolic::ReadBinary(binary, "fuzz.bin")) == listing,
                  "sasm_fuzzer", "the program's binary reads back to a different program");
    fuzz::Require(systolic::WriteBinary(systolic::Assemble(listing, "disassembly.sasm")) == binary,
                  "sasm_fuzzer", "the disassembly does not reassemble to the same binary");
  });
  return 0;
}

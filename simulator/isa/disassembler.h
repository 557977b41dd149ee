// Disassembler: systolic programs -> canonical .sasm text (the syntax is in docs/isa.md).
//
// Guarantees: one instruction per line, `mnemonic field=value, ...` with every field named in
// table order; the assembler reads this text back to the same instructions, so
// Disassemble(Assemble(Disassemble(p))) == Disassemble(p). Values print by field kind: DRAM
// addresses in hex, local addresses as ub:0x.. / acc:0x.., symbols by name, the rest in decimal.
// A value outside its field's symbols (possible only in hand-built instructions) prints as a
// number, which the assembler then rejects.
#pragma once

#include <string>

#include "simulator/isa/isa.h"

namespace systolic {

std::string FormatFieldValue(const FieldInfo& field, uint64_t value);
std::string FormatInstruction(const Instruction& inst);
std::string Disassemble(const Program& program);  // one line per instruction, '\n'-terminated

}  // namespace systolic

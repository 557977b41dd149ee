// Assembler: .sasm text -> systolic Program (syntax in docs/isa.md).
//
//   # comment            // comment too
//   dma.load dram=0x1000, local=ub:0x0, row_bytes=256, rows=16, planes=1
//   vadd ub:0x0, ub:0x400, ub:0x800, 256, f32     # positional: fields in table order
//   mxu.matmul src=ub:0, dst=acc:0, m=64, dtype=s8, buf=1, dataflow=ws   # omitted flags are 0
//
// Guarantees: every error is an hlo::Error at FILE:LINE:COL of the offending token (unknown
// mnemonic, unknown or repeated field, missing field, malformed number, value out of its field's
// range or symbol set); an assembled program always encodes (Encode cannot fail on it). Named
// operands may follow positional ones, not the reverse. Flags (1-bit fields) default to 0; every
// other field must be given. Program::locations holds each instruction's line.
#pragma once

#include <string>
#include <string_view>

#include "simulator/isa/isa.h"

namespace systolic {

Program Assemble(std::string_view text, const std::string& filename);

}  // namespace systolic

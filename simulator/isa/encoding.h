// Fixed-width binary encoding of the systolic ISA and the .bin program file format.
//
// Word layout (128 bits, stored as two little-endian uint64: bits 0..63 first):
//   bits [0, 8)    opcode (isa.def)
//   bits [8, ...)  the instruction's fields, packed upwards in table order
//   the rest       reserved, must be zero
//
// .bin file: a 16-byte header, then `count` words of 16 bytes.
//   bytes 0..3    magic "SYSA"
//   bytes 4..5    format version, little-endian (kBinaryVersion)
//   bytes 6..7    reserved, zero
//   bytes 8..11   instruction count, little-endian
//   bytes 12..15  reserved, zero
//
// Guarantees: Encode() rejects any field value that does not fit its field or names no symbol
// (e.g. dtype 12), with an hlo::Error naming the field and instruction; Decode() rejects unknown
// opcodes, set reserved bits and illegal field values with the instruction index; ReadBinary()
// rejects bad magic, unknown versions, truncated or oversized files before allocating anything
// proportional to the header's count. Decode(Encode(x)) == x for every valid instruction.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "simulator/isa/isa.h"

namespace systolic {

using Word = std::array<uint64_t, 2>;  // [0] = bits 0..63, [1] = bits 64..127

inline constexpr char kBinaryMagic[4] = {'S', 'Y', 'S', 'A'};
inline constexpr uint16_t kBinaryVersion = 1;
inline constexpr size_t kBinaryHeaderBytes = 16;
inline constexpr size_t kWordBytes = 16;

// Why `value` is not a legal value of field `field` of `info`, or nullopt when it is. The message
// names the field and the instruction ("field 'rows' of 'dma.load' is 70000, which does not fit
// in 16 bits (max 65535)").
std::optional<std::string> FieldValueError(const InstrInfo& info, size_t field, uint64_t value);

// `index` is the instruction's position in its program, used in messages (-1: unknown).
Word Encode(const Instruction& inst, int64_t index = -1);
Instruction Decode(const Word& word, int64_t index = -1);

std::string WriteBinary(const Program& program);
// `filename` names the input in error locations (column = byte offset + 1, as for protos).
Program ReadBinary(std::string_view bytes, const std::string& filename);

}  // namespace systolic

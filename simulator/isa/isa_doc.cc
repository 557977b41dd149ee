// Renders isa.def as Markdown tables for docs/isa.md.
#include "simulator/isa/isa_doc.h"

#include <cstdio>

#include "simulator/isa/isa.h"

namespace systolic {
namespace {

std::string SymbolList(std::span<const SymbolInfo> symbols) {
  std::string out;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(i) + " `" + std::string(symbols[i].name) + "`";
  }
  return out;
}

std::string Hex2(unsigned value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "0x%02X", value);
  return buffer;
}

}  // namespace

std::string IsaReferenceMarkdown() {
  std::string out = "### Units\n\n| value | unit | role |\n|---|---|---|\n";
  for (size_t i = 0; i < UnitSymbols().size(); ++i)
    out += "| " + std::to_string(i) + " | `" + std::string(UnitSymbols()[i].name) + "` | " +
           std::string(UnitSymbols()[i].doc) + " |\n";
  out += "\n### Symbolic field values\n\n";
  out += "- dtype (4 bits): " + SymbolList(DtypeSymbols()) + "\n";
  out += "- cmp (3 bits): " + SymbolList(CompareSymbols()) + "\n";
  out += "- dataflow (2 bits): " + SymbolList(DataflowSymbols()) + "\n";
  out += "- unit (3 bits): " + SymbolList(UnitSymbols()) + "\n";
  out += "\nOther values of these fields are illegal encodings.\n";
  out +=
      "\n### Configuration registers\n\n| index | name | owner unit | meaning "
      "|\n|---|---|---|---|\n";
  for (uint64_t index = 0; index < 32; ++index) {
    const SymbolInfo* reg = FindConfigRegister(index);
    if (reg == nullptr) continue;
    out += "| " + std::to_string(index) + " | `" + std::string(reg->name) + "` | `" +
           std::string(UnitName(ConfigRegisterOwner(static_cast<ConfigRegister>(index)))) + "` | " +
           std::string(reg->doc) + " |\n";
  }
  out +=
      "\n### Instruction fields\n\nBits [0, 8) hold the opcode; bits from `used` to 127 are "
      "reserved and must be zero.\n";
  for (const InstrInfo& info : AllInstructions()) {
    out += "\n#### `" + std::string(info.mnemonic) + "` — opcode " +
           Hex2(static_cast<unsigned>(info.opcode)) + ", unit `" +
           std::string(UnitName(info.unit)) + "`, used " + std::to_string(info.used_bits()) +
           " bits\n\n" + std::string(info.summary) + "\n";
    if (info.fields.empty()) continue;
    out += "\n| field | bits | width | kind | meaning |\n|---|---|---|---|---|\n";
    for (const FieldInfo& f : info.fields)
      out += "| `" + std::string(f.name) + "` | " + std::to_string(f.lsb) + ".." +
             std::to_string(f.lsb + f.bits - 1) + " | " + std::to_string(f.bits) + " | " +
             std::string(FieldKindName(f.kind)) + " | " + std::string(f.doc) + " |\n";
  }
  return out;
}

}  // namespace systolic

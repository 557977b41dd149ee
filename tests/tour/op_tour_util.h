// Helpers shared by the two files of tour_add_an_op_test (add_an_op_test.cc: the IR, compiler
// and docs steps; add_an_op_backends_test.cc: the backends): the opcode table as a list, and a
// loop over the parsed example of every opcode (op_examples.h).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/ir.h"
#include "hlo/parser.h"
#include "tests/tour/op_examples.h"

namespace tour {

inline std::vector<hlo::Opcode> AllOpcodes() {
  std::vector<hlo::Opcode> ops;
  for (int i = 0; i < hlo::OpcodeCount(); ++i) ops.push_back(static_cast<hlo::Opcode>(i));
  return ops;
}

inline std::string Name(hlo::Opcode op) { return std::string(hlo::OpcodeName(op)); }

// The parsed (unverified) example, or nullptr when the opcode has none. Throws hlo::Error.
inline std::unique_ptr<hlo::Module> ParseExample(hlo::Opcode op) {
  std::optional<std::string> text = OpExample(op);
  if (!text) return nullptr;
  hlo::ParseOptions quiet;
  quiet.warn = [](const std::string&) {};
  return hlo::ParseHloText(*text, Name(op) + ".hlo", quiet);
}

// The instruction of the example's opcode: the ROOT, named kExampleInstruction.
inline const hlo::Instruction& ExampleInstruction(const hlo::Module& module) {
  return *module.entry()->root();
}

// Runs `check(op, module)` for every opcode whose example parses. Opcodes without an example,
// or whose example does not parse, are skipped: Step11 and Steps4And5 report them once.
template <class Check>
void ForEachExample(Check check) {
  for (hlo::Opcode op : AllOpcodes()) {
    std::unique_ptr<hlo::Module> module;
    try {
      module = ParseExample(op);
    } catch (const hlo::Error&) {
      continue;
    }
    if (!module) continue;
    SCOPED_TRACE("opcode '" + Name(op) + "'");
    check(op, *module);
  }
}

// Same element types and dimensions, leaf by leaf, ignoring layouts.
inline bool SameShape(const hlo::Shape& a, const hlo::Shape& b) {
  return a.ToString(false) == b.ToString(false);
}

}  // namespace tour

// The "add an op" checklist (docs/add-an-op.md), exercised for EVERY opcode of hlo/opcodes.def.
//
// Each test walks the whole opcode table and checks one step of the checklist on the opcode's
// example module (tests/tour/op_examples.cc); a failure names the step, so a contributor who
// adds a row to opcodes.def and skips a step is told which one. What "handled" means per step:
//   1   the table row: name <-> enumerator, arity, the fuzz dictionary entry
//   4/5 text parser and printer: the example parses, verifies, and print -> parse -> print is a
//       fixed point
//   6   proto reader and writer: text -> proto -> module prints the same text
//   7/8 shape inference + verifier: a wrong result shape is rejected, located at the instruction
//   9   reference evaluator: the example evaluates to a value of the declared shape, or the
//       opcode is in NotEvaluated() with the error the evaluator gives
//   10a cost model: the counting rules of compiler/cost_model.h, recomputed here by formula
//   10b every target's op rules (targets/*/description.cc): the ownership analysis gives the
//       instruction exactly one owner, consistent with the rule (a library has a name)
//   10c-e the backends: add_an_op_backends_test.cc
//   12  docs/hlo.md: the attribute struct the op carries has a row naming the op
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>

#include "compiler/cost_model.h"
#include "compiler/ownership.h"
#include "compiler/target_description.h"
#include "hlo/diagnostic.h"
#include "hlo/evaluator.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/proto_io.h"
#include "hlo/verifier.h"
#include "tests/test_support.h"
#include "tests/tour/op_examples.h"
#include "tests/tour/op_tour_util.h"
#include "tools/io/inputs.h"
#include "targets/descriptions.h"

namespace {

using hlo::Opcode;
using tour::ExampleInstruction;
using tour::ForEachExample;
using tour::Name;
using tour::ParseExample;

// Opcodes the reference evaluator deliberately does not run, with the reason (this is the
// "explicit documented not-supported list" of step 9; docs/add-an-op.md points here).
const std::set<Opcode>& NotEvaluated() {
  static const std::set<Opcode> ops = {};
  return ops;
}

TEST(TourAddAnOp, Step1_TableRowAndFuzzDictionary) {
  const std::string dict = testing_support::ReadFile(std::string(RETARGET_SOURCE_DIR) +
                                                     "/fuzz/hlo.dict");
  for (Opcode op : tour::AllOpcodes()) {
    EXPECT_EQ(hlo::OpcodeFromName(hlo::OpcodeName(op)), op)
        << "add-an-op.md step 1 (opcodes.def): the name '" << Name(op) << "' is not unique";
    std::string entry = "\"";
    entry += Name(op);
    entry += "(\"";
    EXPECT_NE(dict.find(entry), std::string::npos)
        << "add-an-op.md step 1: add \"" << Name(op) << "(\" to fuzz/hlo.dict";
  }
}

TEST(TourAddAnOp, Step11_EveryOpcodeHasAnExample) {
  for (Opcode op : tour::AllOpcodes()) {
    EXPECT_TRUE(tour::OpExample(op).has_value())
        << "add-an-op.md step 11: opcode '" << Name(op)
        << "' has no example module; add one to HandWritten() in tests/tour/op_examples.cc "
           "(its ROOT named subject) so the tour checks every step for it";
  }
}

TEST(TourAddAnOp, Steps4And5_ParsesVerifiesAndPrintsToAFixedPoint) {
  for (Opcode op : tour::AllOpcodes()) {
    SCOPED_TRACE("opcode '" + Name(op) + "'");
    std::unique_ptr<hlo::Module> module;
    try {
      module = ParseExample(op);
      if (!module) continue;
      hlo::Verify(*module);
    } catch (const hlo::Error& e) {
      ADD_FAILURE() << "add-an-op.md steps 4 (parser) and 7/8 (shape inference, verifier): "
                    << e.what() << "\n" << *tour::OpExample(op);
      continue;
    }
    const hlo::Instruction& inst = ExampleInstruction(*module);
    EXPECT_EQ(inst.opcode(), op) << "op_examples.cc: the ROOT must be the opcode's instruction";
    if (hlo::OpcodeArity(op) != hlo::kVariadic) {
      EXPECT_EQ(inst.operand_count(), hlo::OpcodeArity(op)) << "add-an-op.md step 1: arity";
    }
    const std::string printed = hlo::PrintModule(*module);
    std::unique_ptr<hlo::Module> again;
    try {
      again = hlo::ParseHloText(printed, "printed.hlo");
    } catch (const hlo::Error& e) {
      ADD_FAILURE() << "add-an-op.md step 5 (printer): the printed module does not parse: "
                    << e.what() << "\n" << printed;
      continue;
    }
    EXPECT_EQ(hlo::PrintModule(*again), printed)
        << "add-an-op.md step 5 (printer): print -> parse -> print is not a fixed point";
  }
}

TEST(TourAddAnOp, Step6_ProtoRoundTrip) {
  ForEachExample([](Opcode, const hlo::Module& module) {
    try {
      std::unique_ptr<hlo::Module> back =
          hlo::ReadHloProto(hlo::WriteHloProto(module), "example.pb");
      EXPECT_EQ(hlo::PrintModule(*back), hlo::PrintModule(module))
          << "add-an-op.md step 6 (hlo/proto_attrs.cc): text -> proto -> text changed the module";
    } catch (const hlo::Error& e) {
      ADD_FAILURE() << "add-an-op.md step 6 (hlo/proto_attrs.cc): " << e.what();
    }
  });
}

// Opcodes whose result shape is part of what the instruction declares rather than a function of
// its operands and attributes (the verifier can check only the element type, or nothing).
bool ShapeIsDeclared(Opcode op) {
  switch (op) {
    case Opcode::kParameter:   // its shape is the declaration
    case Opcode::kIota:        // any array shape with the iota dimension in range
    case Opcode::kCustomCall:  // opaque
    case Opcode::kBroadcast:   // new dimensions may have any size
    case Opcode::kRng:         // any dimensions, the bounds' element type
      return true;
    default:
      return false;
  }
}

// A shape the instruction cannot have: one more dimension (arrays), or one more element
// (tuples); for declared shapes, another element type; tokens have no other shape.
std::optional<hlo::Shape> WrongShape(Opcode op, const hlo::Shape& shape) {
  if (ShapeIsDeclared(op)) {
    if (op != Opcode::kBroadcast && op != Opcode::kRng) return std::nullopt;
    return hlo::Shape::Array(hlo::PrimitiveType::kS32, shape.dims);
  }
  if (shape.IsTuple()) {
    std::vector<hlo::Shape> elements = shape.tuple_shapes;
    elements.push_back(hlo::Shape::Array(hlo::PrimitiveType::kF32, {7}));
    return hlo::Shape::Tuple(elements);
  }
  if (!shape.IsArray()) return std::nullopt;
  std::vector<int64_t> dims = shape.dims;
  dims.push_back(7);
  return hlo::Shape::Array(shape.type, dims);
}

TEST(TourAddAnOp, Steps7And8_VerifierRejectsAWrongResultShape) {
  ForEachExample([](Opcode op, hlo::Module& module) {
    hlo::Instruction& inst = *module.entry()->root();
    std::optional<hlo::Shape> wrong = WrongShape(op, inst.shape());
    if (!wrong) return;
    inst.mutable_shape() = *wrong;
    try {
      hlo::Verify(module);
      ADD_FAILURE() << "add-an-op.md steps 7/8 (shape inference, verifier): result shape "
                    << wrong->ToString(false) << " was accepted";
    } catch (const hlo::Error& e) {
      EXPECT_NE(std::string(e.what()).find(inst.name()), std::string::npos)
          << "add-an-op.md step 7: the error must name the instruction: " << e.what();
    }
  });
}

TEST(TourAddAnOp, Step9_ReferenceEvaluator) {
  ForEachExample([](Opcode op, const hlo::Module& module) {
    std::vector<hlo::Literal> inputs = io::MakeRandomInputs(module, 7);
    try {
      hlo::Literal result = hlo::Evaluate(module, inputs);
      EXPECT_FALSE(NotEvaluated().count(op))
          << "add-an-op.md step 9: the evaluator runs it; remove it from NotEvaluated()";
      EXPECT_TRUE(tour::SameShape(result.shape(), module.entry()->root()->shape()))
          << "add-an-op.md step 9: the evaluator returned " << result.shape().ToString(false);
    } catch (const hlo::Error& e) {
      EXPECT_TRUE(NotEvaluated().count(op))
          << "add-an-op.md step 9 (hlo/evaluator_<family>.cc): " << e.what();
    }
  });
}

int64_t Elements(const hlo::Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dims) n *= d;
  return n;
}

TEST(TourAddAnOp, Step10a_CostModelRules) {
  ForEachExample([](Opcode op, const hlo::Module& module) {
    const hlo::Instruction& inst = ExampleInstruction(module);
    compiler::InstructionCost cost;
    try {
      cost = compiler::CostOf(inst);
    } catch (const hlo::Error& e) {
      ADD_FAILURE() << "add-an-op.md step 10a (compiler/cost_model.cc): " << e.what();
      return;
    }
    const std::string step = "add-an-op.md step 10a (compiler/cost_model.cc): ";
    EXPECT_GE(cost.flops, 0) << step;
    if (compiler::GeneratesNoCode(op)) {
      EXPECT_EQ(cost.bytes_read + cost.bytes_written, 0) << step << "a no-code op moves no bytes";
      return;
    }
    // Every op that runs as a kernel writes its result, except the in-place updates, which
    // write their update: dynamic-update-slice f32[2], scatter f32[2,3].
    const double written = op == Opcode::kDynamicUpdateSlice ? 2 * 4
                           : op == Opcode::kScatter          ? 6 * 4
                                                              : compiler::ShapeBytes(inst.shape());
    EXPECT_EQ(cost.bytes_written, written) << step << "bytes written";
    if (hlo::IsElementwise(op) && op != Opcode::kCopy && op != Opcode::kBitcastConvert) {
      EXPECT_EQ(cost.flops, Elements(inst.shape())) << step << "one FLOP per element";
      EXPECT_EQ(cost.transcendentals, compiler::IsTranscendental(op) ? Elements(inst.shape()) : 0)
          << step << "transcendentals";
    }
  });
  // The contraction rules, by hand: dot [2,3]x[3,4] = 2*2*4*3; convolution 1x4x4x3 outputs,
  // 3x3 window, 2 input features = 2*48*9*2.
  EXPECT_EQ(compiler::CostOf(ExampleInstruction(*ParseExample(Opcode::kDot))).flops, 48);
  EXPECT_EQ(compiler::CostOf(ExampleInstruction(*ParseExample(Opcode::kConvolution))).flops, 1728);
}

TEST(TourAddAnOp, Step10b_EveryTargetOwnsTheInstructionOnce) {
  for (const std::string& target_name : targets::DescriptionNames()) {
    const compiler::TargetDescription& target = *targets::FindDescription(target_name);
    ForEachExample([&](Opcode op, const hlo::Module& module) {
      SCOPED_TRACE("target " + target_name);
      compiler::ModuleStats stats = compiler::AnalyzeOwnership(module, target);
      int owners = 0;
      for (const compiler::OwnershipEntry& entry : stats.entries) {
        if (entry.instruction->name() != tour::kExampleInstruction) continue;
        ++owners;
        if (entry.info.owner == compiler::Owner::kLibrary) {
          EXPECT_FALSE(entry.info.library.empty())
              << "add-an-op.md step 10b (targets/" << target_name
              << "/description.cc): a library owner must name the library";
        }
        std::string library;
        compiler::OpHandling handling =
            target.HandlingFor(op, ExampleInstruction(module).shape().IsArray()
                                       ? ExampleInstruction(module).shape().type
                                       : hlo::PrimitiveType::kF32,
                               &library);
        if (handling == compiler::OpHandling::kLibrary && !compiler::GeneratesNoCode(op)) {
          EXPECT_FALSE(library.empty()) << "add-an-op.md step 10b (targets/"
                                        << target_name
                                        << "/description.cc): OpRule::library is empty";
        }
      }
      EXPECT_EQ(owners, 1) << "add-an-op.md step 10b: the ownership analysis must give the "
                              "instruction exactly one owner";
    });
  }
}

// The attribute struct an instruction carries, e.g. "DotAttrs" (NoAttrs for none).
std::string AttrsStructName(const hlo::Instruction& inst) {
  return std::visit(
      [](const auto& attrs) {
        int status = 0;
        char* demangled =
            abi::__cxa_demangle(typeid(attrs).name(), nullptr, nullptr, &status);
        std::string name = status == 0 ? demangled : typeid(attrs).name();
        std::free(demangled);
        const size_t colon = name.rfind("::");
        return colon == std::string::npos ? name : name.substr(colon + 2);
      },
      inst.attrs());
}

TEST(TourAddAnOp, Step12_DocsListTheAttributeStruct) {
  const std::string doc =
      testing_support::ReadFile(std::string(RETARGET_SOURCE_DIR) + "/docs/hlo.md");
  ForEachExample([&](Opcode op, const hlo::Module& module) {
    const std::string attrs = AttrsStructName(ExampleInstruction(module));
    if (attrs == "NoAttrs") return;
    const size_t row = doc.find("| `" + attrs + "`");
    const size_t row_in_pair = doc.find("`" + attrs + "` |");
    const size_t at = row != std::string::npos ? row : row_in_pair;
    if (at == std::string::npos) {
      ADD_FAILURE() << "add-an-op.md step 12: docs/hlo.md's attribute table has no row for `"
                    << attrs << "`";
      return;
    }
    const size_t line_start = doc.rfind('\n', at) + 1;
    const std::string line = doc.substr(line_start, doc.find('\n', at) - line_start);
    // "batch-norm-inference / -training / -grad" names the family once.
    const std::string name = Name(op);
    const size_t dash = name.rfind('-');
    const std::string suffix = name.substr(dash == std::string::npos ? 0 : dash);
    EXPECT_TRUE(line.find(name) != std::string::npos ||
                line.find("/ " + suffix) != std::string::npos)
        << "add-an-op.md step 12: docs/hlo.md's row for `" << attrs << "` does not name '"
        << name << "': " << line;
  });
}

}  // namespace

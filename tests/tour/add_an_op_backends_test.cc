// The "add an op" checklist (docs/add-an-op.md), step 10c-10e: every opcode's example module
// (op_examples.h) on every backend this test constructs, compared with the interpreter.
//   10c cpu: the same numbers as the interpreter (what it does not compile, it runs on the
//       evaluator and lists in fallbacks.txt, and targets/cpu/description.cc must then call it a
//       host fallback); it may reject only what it cannot run at all
//   10d systolic: the same numbers; an op the lowering cannot run is a `# host:` step with its
//       reason, and targets/systolic/description.cc must then not call it native
//   10e gpu (the generated artifact, run by host emulation): the same numbers, or a Compile
//       error naming the instruction, and then targets/gpu/description.cc must not claim it
// The systolic and GPU descriptions are built from the tables their lowerings dispatch on
// (targets/systolic/lowering/native_ops.h, targets/gpu/codegen/op_lowering.h): no mismatch is
// tolerated.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "compiler/cost_model.h"
#include "compiler/ownership.h"
#include "compiler/target_description.h"
#include "hlo/diagnostic.h"
#include "hlo/evaluator.h"
#include "targets/gpu/emulator/gpu_backend.h"
#include "simulator/isa/arch_config.h"
#include "targets/systolic/systolic_backend.h"
#include "tests/test_support.h"
#include "tests/tour/op_tour_util.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"
#include "targets/descriptions.h"

namespace {

using hlo::Opcode;
using tour::ExampleInstruction;
using tour::ForEachExample;
using tour::Name;

// Opcodes whose value is random: compared by shape only across backends.
bool IsRandom(Opcode op) { return op == Opcode::kRng; }

std::vector<io::NpyArray> Flat(const hlo::Literal& literal) { return io::FlattenOutputs(literal); }

// The element type the target's rule is looked up for: the first operand's, else the result's.
hlo::PrimitiveType RuleType(const hlo::Instruction& inst) {
  if (inst.operand_count() > 0 && inst.operand(0)->shape().IsArray()) {
    return inst.operand(0)->shape().type;
  }
  return inst.shape().IsArray() ? inst.shape().type : hlo::PrimitiveType::kF32;
}

struct BackendRun {
  bool rejected = false;    // Compile or Run threw hlo::Error
  std::string error;
  std::map<std::string, std::string> artifacts;
};

// Compiles and runs the example on `backend` and compares with the interpreter.
BackendRun RunAgainstInterpreter(targets::Backend& backend, Opcode op, const hlo::Module& module,
                                 const std::string& step) {
  BackendRun run;
  std::vector<hlo::Literal> inputs = io::MakeRandomInputs(module, 11);
  hlo::Literal expected;
  try {
    expected = hlo::Evaluate(module, inputs);
  } catch (const hlo::Error&) {
    return run;  // step 9 covers it
  }
  try {
    std::unique_ptr<targets::Executable> exe = backend.Compile(module);
    hlo::Literal actual = exe->Run(inputs);
    if (IsRandom(op)) {  // random values: shapes only
      EXPECT_TRUE(tour::SameShape(actual.shape(), expected.shape())) << step;
    } else {
      io::CompareResult compared = io::CompareArrays(Flat(expected), Flat(actual), nullptr);
      EXPECT_TRUE(compared.matched) << step << ": " << compared.summary;
    }
    run.artifacts = exe->artifacts();
  } catch (const hlo::Error& e) {
    run.rejected = true;
    run.error = e.what();
    if (std::getenv("TOUR_VERBOSE")) std::cerr << Name(op) << ": rejected: " << e.what() << "\n";
  }
  return run;
}

// Rejecting an op is allowed (step 10: "reject it at Compile with an hlo::Error, not produce
// wrong numbers") when the error names the instruction and the target's description does not
// claim to run it (owner generated kernel or library): otherwise the report is wrong.
void ExpectHonestRejection(const compiler::TargetDescription& target, Opcode op,
                           const hlo::Module& module, const BackendRun& run,
                           const std::string& step) {
  if (!run.rejected) return;
  EXPECT_NE(run.error.find(tour::kExampleInstruction), std::string::npos)
      << step << ": a rejection must name the instruction: " << run.error;
  if (compiler::GeneratesNoCode(op) || hlo::OpcodeClass(op) == hlo::OpClass::kCollective) return;
  std::string library;
  compiler::OpHandling handling =
      target.HandlingFor(op, RuleType(ExampleInstruction(module)), &library);
  if (op == Opcode::kCustomCall) {  // custom-calls are claimed per target name
    const std::string& name = ExampleInstruction(module).attr<hlo::CustomCallAttrs>().target;
    auto rule = target.custom_calls.find(name);
    if (rule == target.custom_calls.end()) return;  // reported as unsupported: honest
    handling = rule->second.handling;
  }
  const bool claimed = handling == compiler::OpHandling::kGenerated ||
                       handling == compiler::OpHandling::kLibrary ||
                       handling == compiler::OpHandling::kNative;
  EXPECT_TRUE(!claimed)
      << step << ": targets/" << target.name << "/description.cc says '" << Name(op)
      << "' is a generated kernel or library call, but the backend rejects it (" << run.error
      << "): implement it, or make its OpRule a host fallback";
}

TEST(TourAddAnOp, Step10c_CpuBackendMatchesTheInterpreter) {
  targets::Backend* cpu = testing_support::Backends().Find("cpu");
  ASSERT_NE(cpu, nullptr);
  const std::string step = "add-an-op.md step 10c (targets/cpu, targets/llvm)";
  ForEachExample([&](Opcode op, const hlo::Module& module) {
    BackendRun run = RunAgainstInterpreter(*cpu, op, module, step);
    ExpectHonestRejection(targets::CpuDescription(), op, module, run, step);
    // An op the code generator leaves to the reference evaluator (fallbacks.txt: "subject
    // (op): reason") is not compiled code: targets/cpu/description.cc must call it a host
    // fallback, not a generated kernel.
    auto fallbacks = run.artifacts.find("fallbacks.txt");
    if (fallbacks == run.artifacts.end()) return;
    const std::string line = std::string(tour::kExampleInstruction) + " (" + Name(op) + ")";
    const std::string& text = fallbacks->second;
    const bool evaluated = text.rfind(line, 0) == 0 || text.find("\n" + line) != std::string::npos;
    std::string library;
    const hlo::Instruction& inst = ExampleInstruction(module);
    compiler::OpHandling handling =
        targets::CpuDescription().HandlingFor(op, RuleType(inst), &library);
    if (!evaluated) {
      if (handling == compiler::OpHandling::kHostFallback && !run.rejected) {
        std::cout << "note: the cpu backend now compiles '" << Name(op) << "'; targets/"
                  << "cpu/description.cc can stop calling it a host fallback\n";
      }
      return;
    }
    if (op == Opcode::kCustomCall) {
      auto rule = targets::CpuDescription().custom_calls.find(inst.attr<hlo::CustomCallAttrs>().target);
      if (rule == targets::CpuDescription().custom_calls.end()) return;  // unsupported: honest
      handling = rule->second.handling;
    }
    EXPECT_TRUE(handling == compiler::OpHandling::kHostFallback || compiler::GeneratesNoCode(op) ||
                hlo::OpcodeClass(op) == hlo::OpClass::kCollective)
        << step << ": targets/cpu/description.cc says '" << Name(op) << "' is compiled, but the "
        << "cpu backend runs it on the reference evaluator (" << text
        << "): compile it, or make its OpRule a host fallback";
  });
}

TEST(TourAddAnOp, Step10d_SystolicBackendMatchesTheInterpreterOrSaysWhyNot) {
  targets::Backend* interp = testing_support::Backends().Find("interp");
  ASSERT_NE(interp, nullptr);
  std::unique_ptr<targets::Backend> systolic = targets::MakeSystolicBackend(
      systolic::LoadArchConfig("tpu-v1", std::vector<std::string>{"array.dtypes=int8,bf16,f32"}),
      interp);
  ForEachExample([&](Opcode op, const hlo::Module& module) {
    const std::string step = "add-an-op.md step 10d (targets/systolic/lowering)";
    BackendRun run = RunAgainstInterpreter(*systolic, op, module, step);
    ExpectHonestRejection(targets::SystolicDescription(), op, module, run, step);
    const std::map<std::string, std::string>& artifacts = run.artifacts;
    auto program = artifacts.find("program.sasm");
    if (program == artifacts.end()) return;
    const std::string& sasm = program->second;
    const std::string host_line = std::string("# host: ") + tour::kExampleInstruction + " (";
    const size_t host = sasm.find(host_line);
    if (host == std::string::npos) return;
    // A fallback must say why (the report and `retarget compile` show the reason).
    const std::string reason = sasm.substr(host + host_line.size(),
                                           sasm.find('\n', host) - host - host_line.size());
    EXPECT_GT(reason.size(), 1u) << "add-an-op.md step 10d: a host step must give its reason";
    // The description is the lowering's own answer (lowering/native_ops.h), instruction by
    // instruction: what it calls native, the lowering runs.
    const hlo::Instruction& inst = ExampleInstruction(module);
    EXPECT_NE(compiler::InstructionOwner(inst, targets::SystolicDescription()).owner,
              compiler::Owner::kAcceleratorNative)
        << "add-an-op.md step 10d: targets/systolic/description.cc declares '" << Name(op)
        << "' native, but the lowering runs it on the host (" << reason
        << "): lower it, or say why not in targets/systolic/lowering/native_ops.cc";
  });
}

TEST(TourAddAnOp, Step10e_GpuBackendMatchesTheInterpreterOrRejectsTheOp) {
  // The generated artifact, run by host emulation (no GPU needed): same numbers as the
  // interpreter, or a Compile error "not supported by the GPU backend yet: instruction r (op)".
  std::unique_ptr<targets::Backend> gpu = gpu::emulator::MakeGpuBackend();
  const std::string step = "add-an-op.md step 10e (targets/gpu/codegen)";
  ForEachExample([&](Opcode op, const hlo::Module& module) {
    BackendRun run = RunAgainstInterpreter(*gpu, op, module, step);
    ExpectHonestRejection(targets::GpuDescription(), op, module, run, step);
  });
}

}  // namespace

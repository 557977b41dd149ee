// Random programs through the SystemC model: every run must end -- with results or with an
// hlo::Error that names an instruction, a deadlock or the cycle limit -- never with a crash, a
// hang, or a model that is unusable for the next run. Fixed seed, so failures reproduce.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "simulator/simulator.h"
#include "tests/simulator/sim_test_util.h"

namespace simulator {
namespace {

using ::testing::AnyOf;
using ::testing::StartsWith;

// A field value: mostly small or plausible (so that many programs get far), sometimes any value
// the field's width allows.
uint64_t RandomField(const systolic::FieldInfo& field, std::mt19937_64& rng) {
  const uint64_t max = field.max_value();
  if (rng() % 20 == 0) return rng() & max;  // anything the encoding allows
  switch (field.kind) {
    case systolic::FieldKind::kLocal:
      return ((rng() % 2) != 0 ? systolic::kAccumulatorBit : 0) | (rng() % 4096);
    case systolic::FieldKind::kAddress:
      return rng() % 65536;
    case systolic::FieldKind::kUnit:
      return rng() % 4;  // the queued units (control is rejected for sem.*)
    case systolic::FieldKind::kSemaphore:
      return rng() % 3;
    case systolic::FieldKind::kRegister:
      return rng() % 12;
    case systolic::FieldKind::kDtype:
      return rng() % 7;
    case systolic::FieldKind::kCompare:
      return rng() % 6;
    case systolic::FieldKind::kDataflow:
      return rng() % 3;
    case systolic::FieldKind::kFlag:
      return rng() % 2;
    case systolic::FieldKind::kImmediate:
      return std::min<uint64_t>(max, rng() % 40);
  }
  return 0;
}

TEST(SimulatorFuzzTest, RandomProgramsEndWithResultsOrAClearError) {
  const systolic::ArchConfig config = testing_util::TestConfig();
  const auto instructions = systolic::AllInstructions();
  std::mt19937_64 rng(20261130);
  int completed = 0, failed = 0;
  for (int program_index = 0; program_index < 400; ++program_index) {
    systolic::Program program;
    const int length = 1 + static_cast<int>(rng() % 24);
    for (int i = 0; i < length; ++i) {
      const systolic::InstrInfo& info = instructions[rng() % instructions.size()];
      systolic::Instruction inst = systolic::MakeInstruction(info.opcode);
      for (size_t f = 0; f < info.fields.size(); ++f) inst.fields[f] = RandomField(info.fields[f], rng);
      program.instructions.push_back(inst);
    }
    Memories memories(config);
    try {
      Simulate(program, config, memories, {.max_cycles = 200000});
      ++completed;
    } catch (const hlo::Error& e) {
      ++failed;
      EXPECT_THAT(e.message(), AnyOf(StartsWith("instruction #"), StartsWith("deadlock: "),
                                     StartsWith("cycle limit of 200000 cycles exceeded")))
          << "program " << program_index;
    }
  }
  std::printf("random programs: %d completed, %d failed with an error\n", completed, failed);
  EXPECT_GT(completed, 0);
  EXPECT_GT(failed, 0);
  // The model is still sound afterwards.
  Memories memories(config);
  EXPECT_EQ(testing_util::RunSasm(
                "dma.load dram=0x0, local=ub:0x0, row_bytes=1024, rows=1, planes=1\n", config,
                memories)
                .cycles,
            164);
}

}  // namespace
}  // namespace simulator

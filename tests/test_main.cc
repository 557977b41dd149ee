// The test main: registers the backends explicitly, then runs GoogleTest.
#include <gtest/gtest.h>

#include "targets/cpu/cpu_backend.h"
#include "targets/interp/interp_backend.h"
#include "tests/test_support.h"

int main(int argc, char** argv) {
  testing_support::Backends().Add(targets::MakeInterpBackend());
  testing_support::Backends().Add(cpu::MakeCpuBackend());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

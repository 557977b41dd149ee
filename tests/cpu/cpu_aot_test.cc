// `retarget compile --target cpu --emit llvm|obj`: IR before/after O3, per-kernel dumps, and an
// object file + header that a C program built with the system compiler links and runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "tests/test_support.h"

namespace {

namespace fs = std::filesystem;

class CpuEmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("retarget_cpu_emit_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // Runs a shell command in the temporary folder; returns its exit status, output in `log`.
  int Shell(const std::string& command, std::string* log = nullptr) {
    std::string full = "cd '" + dir_.string() + "' && " + command + " > log.txt 2>&1";
    int status = std::system(full.c_str());
    if (log) *log = testing_support::ReadFile((dir_ / "log.txt").string());
    return status;
  }
  std::string Retarget() {
    std::string quoted = "'";  // appended: GCC 12 warns falsely on "'" + string
    quoted += testing_support::BinDir() + "/retarget'";
    return quoted;
  }
  fs::path dir_;
};

const char* kAxpy = R"(HloModule axpy
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[] constant(2)
  cb = f32[4] broadcast(c), dimensions={}
  m = f32[4] multiply(a, cb)
  ROOT r = f32[4] add(m, b)
}
)";

TEST_F(CpuEmitTest, ObjectFileLinksIntoACProgram) {
  Write("axpy.hlo", kAxpy);
  std::string log;
  ASSERT_EQ(Shell(Retarget() + " compile axpy.hlo --target cpu --emit obj -o model.o", &log), 0)
      << log;
  std::string header = testing_support::ReadFile((dir_ / "model.h").string());
  EXPECT_NE(header.find("int retarget_model_run(void** params, void** results);"),
            std::string::npos) << header;
  EXPECT_NE(header.find("params[1]: f32[4]"), std::string::npos) << header;
  Write("main.c", R"(#include <stdio.h>
#include "model.h"
int main(void) {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, r[4] = {0};
  void* params[RETARGET_MODEL_PARAMS] = {a, b};
  void* results[RETARGET_MODEL_RESULTS] = {r};
  if (retarget_model_run(params, results) != 0) return 2;
  /* 2a + b, by hand */
  const float expected[4] = {12, 24, 36, 48};
  for (int i = 0; i < 4; ++i) if (r[i] != expected[i]) { printf("r[%d] = %g\n", i, r[i]); return 1; }
  printf("ok\n");
  return 0;
}
)");
  ASSERT_EQ(Shell("cc -O1 -o main main.c model.o -lm", &log), 0) << log;
  EXPECT_EQ(Shell("./main", &log), 0) << log;
  EXPECT_EQ(log, "ok\n");
}

TEST_F(CpuEmitTest, LlvmBeforeAndAfterO3AndKernelDumps) {
  Write("axpy.hlo", kAxpy);
  std::string log;
  ASSERT_EQ(Shell(Retarget() + " compile axpy.hlo --target cpu --emit llvm -o out.ll --dump-dir d",
                  &log), 0) << log;
  std::string before = testing_support::ReadFile((dir_ / "out.ll").string());
  std::string after = testing_support::ReadFile((dir_ / "out.opt.ll").string());
  EXPECT_NE(before.find("define void @k_"), std::string::npos) << before;
  EXPECT_NE(after.find("define void @k_"), std::string::npos) << after;
  EXPECT_NE(before, after);
  int dumped = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "d"))
    dumped += entry.path().string().ends_with(".opt.ll") ? 1 : 0;
  EXPECT_GE(dumped, 1);
}

TEST_F(CpuEmitTest, ObjectOfAModuleWithALibraryCallNamesTheInstruction) {
  Write("dot.hlo", R"(HloModule dot
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  ROOT the_dot = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  std::string log;
  EXPECT_EQ(Shell(Retarget() + " compile dot.hlo --target cpu --emit obj -o model.o", &log), 256)
      << log;
  EXPECT_NE(log.find("the_dot"), std::string::npos) << log;
  EXPECT_NE(log.find("gemm"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "model.o"));
}

}  // namespace

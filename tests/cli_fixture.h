// The fixture of every test that runs a built binary (`retarget`, ...) through the shell as a
// user would: a fresh temporary directory per test (removed afterwards), files written into it,
// and the command's exit status, stdout and stderr. Test-only code.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_support.h"

namespace testing_support {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

class CliFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("retarget_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()
                                          ->test_suite_name()) +
            "_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
  }
  // Runs `command` (a shell command line) in the test's directory.
  CommandResult Shell(const std::string& command) const {
    const std::string line =
        "cd '" + dir_.string() + "' && " + command + " >stdout.txt 2>stderr.txt";
    const int status = std::system(line.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadFile(Path("stdout.txt"));
    result.err = ReadFile(Path("stderr.txt"));
    return result;
  }
  // Runs `retarget ARGS` (ARGS is shell text) in the test's directory.
  CommandResult Retarget(const std::string& args) const {
    std::string command = "'";  // built by appends: GCC 12 warns falsely on "'" + std::string&&
    command += BinDir();
    command += "/retarget' ";
    return Shell(command + args);
  }
  std::filesystem::path dir_;
};

}  // namespace testing_support

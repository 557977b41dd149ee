// The fixture of the tests that run the built `retarget` binary through the shell: a fresh
// temporary directory per test (removed afterwards), files written into it, and the command's
// exit status, stdout and stderr. Test-only code.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_support.h"

namespace report_test {

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

class ReportCliFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("retarget_report_test_" + std::to_string(getpid()) + "_" +
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
    result.out = testing_support::ReadFile(Path("stdout.txt"));
    result.err = testing_support::ReadFile(Path("stderr.txt"));
    return result;
  }
  CommandResult Retarget(const std::string& args) const {
    std::string command = "'";  // built by appends: GCC 12 warns falsely on "'" + std::string&&
    command += testing_support::BinDir();
    command += "/retarget' ";
    return Shell(command + args);
  }
  std::filesystem::path dir_;
};

}  // namespace report_test

// The sweep's process pool: outputs, exit statuses, signals, timeouts and failed starts each
// end up in their own Outcome, in command order, with at most `jobs` children at once.
#include "tools/sweep/child_processes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>

namespace {

using Commands = std::vector<std::vector<std::string>>;

std::vector<std::string> Sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

TEST(ChildProcessesTest, EachCommandGetsItsOwnOutcomeInOrder) {
  std::vector<size_t> finished;
  const auto outcomes =
      sweep::RunChildren(Commands{Sh("echo out0; echo err0 >&2"), Sh("sleep 0.2; echo out1"),
                                  Sh("exit 3"), Sh("kill -SEGV $$")},
                         2, 30, [&](size_t i, const sweep::Outcome&) { finished.push_back(i); });
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes[0].out, "out0\n");
  EXPECT_EQ(outcomes[0].err, "err0\n");
  EXPECT_TRUE(outcomes[0].Succeeded());
  EXPECT_EQ(outcomes[1].out, "out1\n");
  EXPECT_EQ(outcomes[2].exit_code, 3);
  EXPECT_FALSE(outcomes[2].Succeeded());
  EXPECT_EQ(outcomes[2].Describe(30), "exit status 3");
  EXPECT_EQ(outcomes[3].signal, SIGSEGV);
  EXPECT_NE(outcomes[3].Describe(30).find("killed by signal 11"), std::string::npos);
  EXPECT_EQ(finished.size(), 4u);
}

TEST(ChildProcessesTest, HungChildrenAreKilledAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto outcomes = sweep::RunChildren(Commands{Sh("sleep 30"), Sh("echo quick")}, 2, 0.3, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10);
  EXPECT_TRUE(outcomes[0].timed_out);
  EXPECT_EQ(outcomes[0].Describe(0.3), "timed out after 0.3 s");
  EXPECT_TRUE(outcomes[1].Succeeded());
}

TEST(ChildProcessesTest, JobsRunConcurrentlyUpToTheLimit) {
  // Four 0.4 s sleeps: about 0.4 s with 4 jobs, about 1.6 s with 1.
  auto time = [](int jobs) {
    const auto start = std::chrono::steady_clock::now();
    sweep::RunChildren(Commands(4, Sh("sleep 0.4")), jobs, 30, {});
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  EXPECT_GE(time(1), 1.6);
  EXPECT_LT(time(4), 1.2);
}

TEST(ChildProcessesTest, AProgramThatCannotStartIsAnOutcomeNotAnException) {
  const auto outcomes = sweep::RunChildren(Commands{{"/nonexistent/retarget", "x"}}, 1, 30, {});
  EXPECT_FALSE(outcomes[0].Succeeded());
  EXPECT_TRUE(outcomes[0].spawn_failed);
  EXPECT_NE(outcomes[0].Describe(30).find("/nonexistent/retarget"), std::string::npos)
      << outcomes[0].Describe(30);
}

}  // namespace

// RunChildren (contract in child_processes.h): posix_spawn with stdout/stderr redirected to
// close-on-exec temporary files, polled with waitpid(WNOHANG) so timeouts need no extra thread.
#include "tools/sweep/child_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

extern char** environ;

namespace sweep {
namespace {

using Clock = std::chrono::steady_clock;

// A close-on-exec temporary file, unlinked at once: only the descriptor names it.
int TemporaryFile() {
  std::string path = (std::filesystem::temp_directory_path() / "retarget_sweep_XXXXXX").string();
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) unlink(path.c_str());
  return fd;
}

std::string ReadBack(int fd) {
  std::string text;
  if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0) return text;
  char buffer[65536];
  while (static_cast<int64_t>(text.size()) < kMaxChildOutputBytes) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  if (static_cast<int64_t>(text.size()) > kMaxChildOutputBytes) text.resize(kMaxChildOutputBytes);
  return text;
}

struct Running {
  size_t index = 0;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  Clock::time_point started;
};

// Starts `argv`; on failure returns pid -1 and closes nothing the caller must close.
Running Spawn(size_t index, const std::vector<std::string>& argv, std::string* error) {
  Running child;
  child.index = index;
  child.out_fd = TemporaryFile();
  child.err_fd = TemporaryFile();
  if (child.out_fd < 0 || child.err_fd < 0) {
    *error = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return child;
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child.out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child.err_fd, STDERR_FILENO);
  const int status = posix_spawn(&child.pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (status != 0) {
    child.pid = -1;
    *error = "cannot run " + argv[0] + ": " + std::strerror(status);
  }
  child.started = Clock::now();
  return child;
}

Outcome Finish(Running& child, int status, bool timed_out) {
  Outcome outcome;
  outcome.timed_out = timed_out;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.out = ReadBack(child.out_fd);
  outcome.err = ReadBack(child.err_fd);
  close(child.out_fd);
  close(child.err_fd);
  return outcome;
}

}  // namespace

std::string Outcome::Describe(double timeout_seconds) const {
  if (spawn_failed) return "could not start: " + err;
  if (timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %g s", timeout_seconds);
    return text;
  }
  if (signal != 0) {
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exit status " + std::to_string(exit_code);
}

std::vector<Outcome> RunChildren(const std::vector<std::vector<std::string>>& commands, int jobs,
                                 double timeout_seconds,
                                 const std::function<void(size_t, const Outcome&)>& on_finished) {
  std::vector<Outcome> outcomes(commands.size());
  std::vector<Running> running;
  size_t next = 0;
  const auto limit = std::chrono::duration<double>(timeout_seconds);
  auto finished = [&](size_t index, Outcome outcome) {
    outcomes[index] = std::move(outcome);
    if (on_finished) on_finished(index, outcomes[index]);
  };
  while (next < commands.size() || !running.empty()) {
    while (next < commands.size() && static_cast<int>(running.size()) < std::max(jobs, 1)) {
      std::string error;
      Running child = Spawn(next, commands[next], &error);
      if (child.pid < 0) {
        if (child.out_fd >= 0) close(child.out_fd);
        if (child.err_fd >= 0) close(child.err_fd);
        Outcome outcome;
        outcome.spawn_failed = true;
        outcome.err = error;
        finished(next, std::move(outcome));
      } else {
        running.push_back(child);
      }
      ++next;
    }
    bool any = false;
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      bool timed_out = false;
      pid_t done = waitpid(it->pid, &status, WNOHANG);
      const bool late = Clock::now() - it->started > limit;
      if (done == 0 && late) {
        kill(it->pid, SIGKILL);
        done = waitpid(it->pid, &status, 0);
      }
      // A child found finished only after its limit counts as timed out too: whether the
      // parent looked just before or just after it ended (a loaded machine) must not decide.
      timed_out = late;
      if (done == 0 || (done < 0 && errno == EINTR)) {
        ++it;
        continue;
      }
      if (done < 0) status = 255 << 8;  // lost track of the child (cannot happen): exit 255
      any = true;
      finished(it->index, Finish(*it, status, timed_out));
      it = running.erase(it);
    }
    if (!any && !running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return outcomes;
}

}  // namespace sweep

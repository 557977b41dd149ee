// EntryGraphDot and RenderSvg (contract in graph_dot.h).
#include "tools/report/graph_dot.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tools/report/report.h"

extern char** environ;

namespace report {
namespace {

constexpr size_t kMaxLabelChars = 40;

// A DOT double-quoted string: backslashes and quotes escaped, control characters and anything
// that is not printable ASCII replaced, long text cut. Line breaks are added by the caller.
std::string DotText(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMaxLabelChars; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
    }
  }
  if (text.size() > kMaxLabelChars) out += "...";
  return out;
}

std::string_view ColourOf(compiler::Owner owner) {
  const std::string_view key = OwnerKey(owner);
  for (size_t i = 0; i < kOwnerKeys.size(); ++i) {
    if (kOwnerKeys[i] == key) return kOwnerColours[i];
  }
  return kTrivialColour;  // kNoCode
}

std::string NodeLabel(const hlo::Instruction& inst, const compiler::OwnershipEntry* entry) {
  std::string what(hlo::OpcodeName(inst.opcode()));
  if (inst.opcode() == hlo::Opcode::kFusion && entry != nullptr) {
    what += " (" + std::to_string(entry->fused_instructions) + " ops)";
  }
  std::string label = DotText(inst.name()) + "\\n" + DotText(what);
  if (entry != nullptr && entry->info.owner != compiler::Owner::kNoCode) {
    std::string owner(OwnerKey(entry->info.owner));
    if (!entry->info.library.empty()) owner += ": " + entry->info.library;
    label += "\\n" + DotText(owner);
  }
  return label;
}

std::string TempPath(const std::string& suffix) {
  static std::atomic<int> counter = 0;
  return (std::filesystem::temp_directory_path() /
          ("retarget_graph_" + std::to_string(getpid()) + "_" + std::to_string(++counter) +
           suffix))
      .string();
}

}  // namespace

std::string EntryGraphDot(const hlo::Module& compiled, const compiler::ModuleStats& stats,
                          int64_t node_budget) {
  const hlo::Computation* entry = compiled.entry();
  std::unordered_map<const hlo::Instruction*, const compiler::OwnershipEntry*> entries;
  for (const compiler::OwnershipEntry& e : stats.entries) entries[e.instruction] = &e;
  auto owner_of = [&](const hlo::Instruction* inst) {
    auto it = entries.find(inst);
    return it == entries.end() ? compiler::Owner::kNoCode : it->second->info.owner;
  };

  std::vector<const hlo::Instruction*> all;
  if (entry != nullptr) {
    for (const auto& inst : entry->instructions()) all.push_back(inst.get());
  }
  const size_t budget = static_cast<size_t>(std::max<int64_t>(node_budget, 1));
  std::vector<const hlo::Instruction*> shown = all;
  if (shown.size() > budget) {  // trivial instructions go first, then the tail
    size_t non_trivial = 0;
    for (const hlo::Instruction* inst : all) {
      non_trivial += owner_of(inst) != compiler::Owner::kNoCode;
    }
    size_t trivial_room = budget > non_trivial ? budget - non_trivial : 0;
    shown.clear();
    for (const hlo::Instruction* inst : all) {
      if (shown.size() == budget) break;
      if (owner_of(inst) != compiler::Owner::kNoCode) {
        shown.push_back(inst);
      } else if (trivial_room > 0) {
        shown.push_back(inst);
        --trivial_room;
      }
    }
  }
  std::set<const hlo::Instruction*> kept(shown.begin(), shown.end());

  std::string dot = "digraph entry {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
                    "fontname=\"Helvetica\", fontsize=10];\n";
  if (shown.size() < all.size()) {
    dot += "  label=\"showing " + std::to_string(shown.size()) + " of " +
           std::to_string(all.size()) + " instructions of the entry computation (node budget " +
           std::to_string(budget) + "; trivial instructions dropped first)\";\n  labelloc=t;\n";
  }
  std::unordered_map<const hlo::Instruction*, size_t> id;
  for (const hlo::Instruction* inst : shown) {
    const size_t n = id.size();
    id[inst] = n;
    auto it = entries.find(inst);
    dot += "  n" + std::to_string(n) + " [label=\"" +
           NodeLabel(*inst, it == entries.end() ? nullptr : it->second) + "\", fillcolor=\"" +
           std::string(ColourOf(owner_of(inst))) + "\"];\n";
  }
  for (const hlo::Instruction* inst : shown) {
    // Each operand once, in operand order: the text (and graphviz's edge ids) must not depend on
    // where the instructions happen to live in memory.
    std::vector<const hlo::Instruction*> operands;
    for (const hlo::Instruction* operand : inst->operands()) {
      if (std::find(operands.begin(), operands.end(), operand) == operands.end())
        operands.push_back(operand);
    }
    for (const hlo::Instruction* operand : operands) {
      if (kept.count(operand) == 0) continue;
      dot += "  n" + std::to_string(id[operand]) + " -> n" + std::to_string(id[inst]) + ";\n";
    }
  }
  return dot + "}\n";
}

SvgResult RenderSvg(const std::string& dot_text, const std::string& dot_program,
                    int timeout_seconds) {
  SvgResult result;
  const std::string input = TempPath(".dot"), output = TempPath(".svg");
  struct Cleanup {
    std::string a, b;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove(a, ec);
      std::filesystem::remove(b, ec);
    }
  } cleanup{input, output};
  {
    std::ofstream out(input, std::ios::binary);
    out << dot_text;
    if (!out) return {"", "cannot write a temporary file for dot"};
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args = {dot_program, "-Tsvg", input, "-o", output};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, dot_program.c_str(), &actions, nullptr, argv.data(),
                                   environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return {"", "cannot run '" + dot_program + "' (install graphviz): " +
                    std::string(std::strerror(spawned))};
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return {"", "'" + dot_program + "' took longer than " + std::to_string(timeout_seconds) +
                      " s"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {"", "'" + dot_program + "' failed (exit status " +
                    std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")"};
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(output, ec);
  if (ec || size > static_cast<uintmax_t>(kMaxSvgBytes)) {
    return {"", ec ? "dot wrote no SVG" : "the SVG is larger than the page allows"};
  }
  std::ifstream in(output, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string svg = text.str();
  const size_t begin = svg.find("<svg");
  if (begin == std::string::npos) return {"", "dot wrote no <svg> element"};
  result.svg = svg.substr(begin);
  return result;
}

}  // namespace report

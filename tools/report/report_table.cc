// ReportToTable: the terminal form of the report, one block per model, at most 100 columns
// (error messages and very long names excepted; lists wrap at 100).
//
// Layout: a line naming the accelerator config when --config was given; then per model the
// name, the module's name and size and what its count covers; the owner table (the ORIGINAL
// module's instructions by owner on each target with the FLOP share in parentheses: each row
// adds up to the header's count, as the carried-across and by-hand figures do); the cost table
// (fusion coverage, kernels, latency and its source, estimated energy, price per hour, cost per
// million inferences) and the compiled modules' instruction counts; why an estimated latency
// was not measured; the carried-across shares of every ordered pair; what each target needs by
// hand; every custom-call with the targets that implement it (a kernel-locked one names its only
// target).
#include <cstdio>
#include <string>
#include <vector>

#include "tools/report/report.h"

namespace report {
namespace {

constexpr size_t kWidth = 100;

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string Percent(double share) { return Format("%.1f%%", share * 100); }
std::string Percent(const std::optional<double>& share) {
  return share ? Percent(*share) : std::string("n/a");
}

// Left-aligns `text` in `width` columns (at least one space after it).
std::string Pad(const std::string& text, size_t width) {
  return text.size() + 1 >= width ? text + " " : text + std::string(width - text.size(), ' ');
}
std::string PadLeft(const std::string& text, size_t width) {
  return text.size() + 1 >= width ? " " + text : std::string(width - text.size(), ' ') + text;
}

// "head item, item, ..." wrapped at kWidth, continuation lines indented under the first item.
std::string Wrapped(const std::string& head, const std::vector<std::string>& items) {
  std::string out = head, line_indent(head.size(), ' ');
  size_t column = head.size();
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (i > 0 && column + 1 + item.size() > kWidth) {
      out += "\n" + line_indent;
      column = line_indent.size();
    } else if (i > 0) {
      out += " ";
      ++column;
    }
    out += item;
    column += item.size();
  }
  return out + "\n";
}

// `head` then `text` wrapped at kWidth on spaces, continuation lines indented by two.
std::string WrappedWords(const std::string& head, const std::string& text) {
  std::string out = head;
  size_t column = head.size(), start = 0;
  bool first = true;  // the first word goes right after the head, whatever its length
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!first && column + 1 + word.size() > kWidth) {
      out += "\n  ";
      column = 2;
    } else if (!first) {
      out += " ";
      ++column;
    }
    first = false;
    out += word;
    column += word.size();
    start = end + 1;
  }
  return out + "\n";
}

void OwnerTable(std::string& out, const ModelReport& model) {
  out += "the module's instructions by owner on each target (share of FLOPs)\n";
  std::string header = Pad("target", 10);
  for (std::string_view key : kOwnerKeys) header += Pad(std::string(key), 14);
  while (!header.empty() && header.back() == ' ') header.pop_back();
  out += header + "\n";
  for (const TargetCell& cell : model.targets) {
    std::string line = Pad(cell.target, 10);
    if (cell.error) {
      out += line + "error: " + *cell.error + "\n";
      continue;
    }
    for (std::string_view key : kOwnerKeys) {
      const int64_t count = cell.owners_original.at(std::string(key));
      const double share = cell.flops_share_original.at(std::string(key));
      line += Pad(std::to_string(count) + (share > 0 ? " (" + Percent(share) + ")" : ""), 14);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
}

void CostTable(std::string& out, const ModelReport& model) {
  out += Pad("target", 10) + PadLeft("fusion", 8) + PadLeft("kernels", 9) +
         PadLeft("latency ms", 12) + "  " + Pad("source", 11) + PadLeft("host", 7) +
         PadLeft("energy mJ", 11) +
         PadLeft("$/hour", 9) + PadLeft("$ per 1M inferences", 21) + "\n";
  for (const TargetCell& cell : model.targets) {
    if (cell.error) {
      out += Pad(cell.target, 10) + "error: " + *cell.error + "\n";
      continue;
    }
    out += Pad(cell.target, 10) + PadLeft(Percent(cell.fusion_coverage), 8) +
           PadLeft(std::to_string(cell.kernels), 9) +
           PadLeft(Format("%.4g", cell.latency_ms), 12) + "  " + Pad(cell.latency_source, 11) +
           // A simulated figure's host-fallback share, beside it (docs/report.md).
           PadLeft(cell.latency_host_share ? Percent(*cell.latency_host_share) : "", 7) +
           PadLeft(cell.energy_mj ? Format("%.4g", *cell.energy_mj) : "n/a", 11) +
           PadLeft(cell.price.usd_per_hour ? Format("%.4g", *cell.price.usd_per_hour) : "n/a",
                   9) +
           PadLeft(cell.cost_per_1m_usd ? Format("%.4g", *cell.cost_per_1m_usd) : "n/a", 21) +
           "\n";
  }
  std::vector<std::string> compiled, notes;
  for (const TargetCell& cell : model.targets) {
    if (cell.error) continue;
    int64_t total = 0;
    for (const auto& [key, count] : cell.owners) total += count;
    compiled.push_back(cell.target + " " + std::to_string(total));
    if (!cell.latency_device.empty())
      notes.push_back(WrappedWords(cell.target + " latency measured on ", cell.latency_device));
    if (!cell.latency_note.empty()) {
      notes.push_back(WrappedWords(cell.target + " latency estimated: ", cell.latency_note));
    }
    if (cell.collectives > 0) {
      const std::string count = std::to_string(cell.collectives) + " collectives";
      notes.push_back(WrappedWords(
          cell.target + " communication: ",
          cell.communication_ms
              ? Format("%.4g", *cell.communication_ms) + " ms estimated over " +
                    cell.interconnect + " (" + Percent(cell.communication_share) +
                    " of the estimate, " + count + ")"
              : count + " not costed: " + cell.communication_note));
    }
  }
  if (!compiled.empty()) {
    out += Wrapped("compiled instructions (a producer fused into N kernels counts N times): ",
                   compiled);
  }
  for (const std::string& note : notes) out += note;
}

void CarriedTable(std::string& out, const ModelReport& model) {
  if (model.carried_across.empty()) return;
  out += "carried across (compiler-owned on both: generated or native)\n";
  out += Pad("pair", 22) + PadLeft("instructions", 13) + PadLeft("FLOPs", 9) + "\n";
  for (const CarriedAcross& pair : model.carried_across) {
    const std::string name = pair.from + "->" + pair.to;
    if (pair.error) {
      out += Pad(name, 22) + "error: " + *pair.error + "\n";
      continue;
    }
    out += Pad(name, 22) + PadLeft(Percent(pair.instructions), 13) +
           PadLeft(Percent(pair.flops), 9) + "\n";
  }
  // What carrying the collectives across means: each target's interconnect takes them.
  std::vector<std::string> links;
  int64_t collectives = 0;
  for (const TargetCell& cell : model.targets) {
    if (cell.error || cell.collectives == 0) continue;
    collectives = cell.collectives;
    links.push_back(cell.target + " " +
                    (cell.interconnect.empty() ? std::string("no links") : cell.interconnect));
  }
  if (!links.empty()) {
    out += Wrapped("collectives (" + std::to_string(collectives) + ") move over: ", links);
  }
}

void HandAndCustomCalls(std::string& out, const ModelReport& model) {
  for (const TargetCell& cell : model.targets) {
    if (cell.error || cell.by_hand.empty()) continue;
    std::vector<std::string> items;
    for (const HandSupplied& work : cell.by_hand) {
      items.push_back(work.owner + " " + work.what + " (" + std::to_string(work.instructions) +
                      ")");
    }
    out += Wrapped("by hand on " + cell.target + ": ", items);
  }
  std::map<std::string, std::vector<std::string>> support;  // custom-call -> "cpu no", ...
  for (const TargetCell& cell : model.targets) {
    if (cell.error) continue;
    for (const CustomCallUse& use : cell.custom_calls) {
      std::string item = cell.target + (use.supported ? " yes" : " no");
      if (use.supported) {
        item += " (" + (use.library.empty() ? use.owner : use.owner + " " + use.library) + ")";
      }
      support[use.target].push_back(item);
    }
  }
  for (const ModelCustomCall& call : model.custom_calls) {
    std::vector<std::string> items = support[call.target];
    if (call.kernel_locked) {
      items.push_back("kernel-locked: " + call.implemented_by.front() + " only");
    } else if (call.implemented_by.empty()) {
      items.push_back("implemented by none");
    }
    out += Wrapped("custom-call " + call.target + " x" + std::to_string(call.count) + ": ", items);
  }
}

}  // namespace

std::string ReportToTable(const Report& report) {
  std::string out;
  if (!report.systolic_config.empty()) {
    out += "systolic: estimated with accelerator config '" + report.systolic_config + "'\n";
  }
  for (size_t i = 0; i < report.models.size(); ++i) {
    const ModelReport& model = report.models[i];
    if (i > 0) out += "\n";
    out += "== " + model.name;
    if (model.error) {
      out += ": error: " + *model.error + "\n";
      continue;
    }
    out += "\nmodule " + model.module + ": " + std::to_string(model.instructions) +
           " instructions, " + Format("%.4g", model.flops) + " FLOPs\n";
    out += "(instructions: those that run code, in the entry and each computation it reaches "
           "once;\n fusion contents count, reducer bodies belong to their reduce)\n";
    OwnerTable(out, model);
    CostTable(out, model);
    CarriedTable(out, model);
    HandAndCustomCalls(out, model);
  }
  return out;
}

}  // namespace report

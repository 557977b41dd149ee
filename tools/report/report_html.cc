// ReportToHtml (contract in report_html.h): the page's structure, its tables and graphs. The
// figures are formatted like the terminal table's; the charts are drawn in the browser from the
// embedded JSON by PageScript().
#include "tools/report/report_html.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "hlo/diagnostic.h"
#include "tools/report/graph_dot.h"

namespace report {
namespace {

constexpr int64_t kMaxChartJsBytes = int64_t{8} << 20;

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Text inside <script>: "</script" and "<!--" must not appear, so every '<' becomes an escape
// (in JSON strings "\u003c"); in Chart.js only "</script" is rewritten, to "<\/script", which is
// the same string or regular expression in JavaScript.
std::string JsonForScript(const std::string& json) {
  std::string out;
  for (char c : json) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}
std::string JsForScript(std::string js) {
  for (size_t at = js.find("</"); at != std::string::npos; at = js.find("</", at + 1)) {
    std::string tag = js.substr(at + 2, 6);
    for (char& c : tag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (tag == "script") js.replace(at, 2, "<\\/");
  }
  return js;
}

std::string Fmt(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}
std::string Percent(double share) { return Fmt("%.1f%%", share * 100); }
std::string OrNa(const std::optional<double>& value, const char* format) {
  return value ? Fmt(format, *value) : "n/a";
}

std::string Row(const std::vector<std::string>& cells, const char* tag = "td") {
  std::string out = "<tr>";
  for (const std::string& cell : cells) {
    out += std::string("<") + tag + ">" + cell + "</" + tag + ">";
  }
  return out + "</tr>\n";
}
std::string ErrorRow(const std::string& target, const std::string& error, size_t span) {
  return "<tr><td>" + Escape(target) + "</td><td class=\"error\" colspan=\"" +
         std::to_string(span) + "\">error: " + Escape(error) + "</td></tr>\n";
}

void OwnerTable(std::string& out, const ModelReport& model) {
  out += "<h3>The module's instructions by owner on each target (share of FLOPs)</h3>\n"
         "<table>\n";
  std::vector<std::string> header = {"target"};
  for (size_t i = 0; i < kOwnerKeys.size(); ++i) {
    header.push_back("<span class=\"swatch\" style=\"background:" + std::string(kOwnerColours[i]) +
                     "\"></span>" + std::string(kOwnerKeys[i]));
  }
  header.push_back("compiled");
  out += Row(header, "th");
  for (const TargetCell& cell : model.targets) {
    if (cell.error) {
      out += ErrorRow(cell.target, *cell.error, kOwnerKeys.size() + 1);
      continue;
    }
    std::vector<std::string> row = {Escape(cell.target)};
    int64_t compiled = 0;
    for (std::string_view key : kOwnerKeys) {
      const double share = cell.flops_share_original.at(std::string(key));
      row.push_back(std::to_string(cell.owners_original.at(std::string(key))) +
                    (share > 0 ? " (" + Percent(share) + ")" : ""));
      compiled += cell.owners.at(std::string(key));
    }
    row.push_back(std::to_string(compiled));
    out += Row(row);
  }
  out += "</table>\n<p class=\"note\">Rows count the module's instructions (they add up to the "
         "count above); <em>compiled</em> counts the target's compiled module, where fusion may "
         "copy a producer into several kernels (docs/report-format.md, what is counted).</p>\n";
}

void CostTable(std::string& out, const ModelReport& model) {
  out += "<h3>Latency, energy and cost</h3>\n<table>\n";
  out += Row({"target", "fusion", "kernels", "latency ms", "source", "energy mJ", "source",
              "$/hour", "price source", "$ per 1M inferences"},
             "th");
  for (const TargetCell& cell : model.targets) {
    if (cell.error) {
      out += ErrorRow(cell.target, *cell.error, 9);
      continue;
    }
    out += Row({Escape(cell.target), Percent(cell.fusion_coverage), std::to_string(cell.kernels),
                Fmt("%.4g", cell.latency_ms), Escape(cell.latency_source),
                OrNa(cell.energy_mj, "%.4g"), cell.energy_mj ? Escape(cell.energy_source) : "",
                OrNa(cell.price.usd_per_hour, "%.4g"),
                cell.price.usd_per_hour ? Escape(cell.price.source) : "",
                OrNa(cell.cost_per_1m_usd, "%.4g")});
  }
  out += "</table>\n";
  std::string notes;
  for (const TargetCell& cell : model.targets) {
    if (cell.error || cell.latency_note.empty()) continue;
    notes += "<li>" + Escape(cell.target) + " latency estimated: " + Escape(cell.latency_note) +
             "</li>\n";
  }
  if (!notes.empty()) out += "<ul class=\"note\">\n" + notes + "</ul>\n";
}

void CarriedTable(std::string& out, const ModelReport& model) {
  if (model.carried_across.empty()) return;
  out += "<h3>Carried across (compiler-owned on both: generated or native)</h3>\n<table>\n";
  out += Row({"pair", "instructions", "FLOPs"}, "th");
  for (const CarriedAcross& pair : model.carried_across) {
    const std::string name = Escape(pair.from + "->" + pair.to);
    if (pair.error) {
      out += ErrorRow(pair.from + "->" + pair.to, *pair.error, 2);
      continue;
    }
    out += Row({name, pair.instructions ? Percent(*pair.instructions) : "n/a",
                pair.flops ? Percent(*pair.flops) : "n/a"});
  }
  out += "</table>\n";
}

void HandAndCustomCalls(std::string& out, const ModelReport& model) {
  std::string hand;
  for (const TargetCell& cell : model.targets) {
    if (cell.error || cell.by_hand.empty()) continue;
    hand += "<li>" + Escape(cell.target) + ":";
    for (const HandSupplied& work : cell.by_hand) {
      hand += ' ';  // appended piecewise: GCC 12 warns falsely on " " + std::string&&
      hand += Escape(work.owner + " " + work.what);
      hand += " (" + std::to_string(work.instructions) + ")";
    }
    hand += "</li>\n";
  }
  if (!hand.empty()) out += "<h3>Needed by hand</h3>\n<ul>\n" + hand + "</ul>\n";
  std::map<std::string, std::string> support;
  for (const TargetCell& cell : model.targets) {
    for (const CustomCallUse& use : cell.custom_calls) {
      std::string& line = support[use.target];
      line += ' ';
      line += Escape(cell.target);
      line += use.supported ? " yes" : " no";
      if (use.supported) {
        const std::string who = use.library.empty() ? use.owner : use.owner + " " + use.library;
        line += " (" + Escape(who) + ")";
      }
    }
  }
  if (model.custom_calls.empty()) return;
  out += "<h3>Custom calls</h3>\n<ul>\n";
  for (const ModelCustomCall& call : model.custom_calls) {
    out += "<li>" + Escape(call.target) + " &times;" + std::to_string(call.count) + ":" +
           support[call.target];
    if (call.kernel_locked) {
      out += " &mdash; <strong>kernel-locked: " + Escape(call.implemented_by.front()) +
             " only</strong>";
    }
    out += "</li>\n";
  }
  out += "</ul>\n";
}

void Graphs(std::string& out, const ModelReport& model, const HtmlOptions& options,
            std::vector<std::string>* warnings) {
  bool first = true;
  for (const TargetCell& cell : model.targets) {
    if (cell.error || cell.graph_dot.empty()) continue;
    if (first) out += "<h3>Compiled entry computation, coloured by owner</h3>\n";
    out += std::string("<details class=\"graph\"") + (first ? " open" : "") + "><summary>" +
           Escape(cell.target) + "</summary>\n";
    first = false;
    const SvgResult svg = RenderSvg(cell.graph_dot, options.dot_program, options.dot_timeout_seconds);
    if (svg.svg.empty()) {
      out += "<p class=\"note\">graph not rendered: " + Escape(svg.error) + "</p>\n";
      if (warnings) warnings->push_back(model.name + " on " + cell.target + ": " + svg.error);
    } else {
      out += svg.svg + "\n";
    }
    out += "</details>\n";
  }
}

void ModelSection(std::string& out, const ModelReport& model, size_t index,
                  const HtmlOptions& options, std::vector<std::string>* warnings) {
  const std::string m = std::to_string(index);
  out += "<section class=\"model\" id=\"model-" + m + "\">\n<h2>" + Escape(model.name) + "</h2>\n";
  if (model.error) {
    out += "<p class=\"error\">error: " + Escape(*model.error) + "</p>\n</section>\n";
    return;
  }
  out += "<p>" + Escape(model.file) + " &mdash; module " + Escape(model.module) + ": " +
         std::to_string(model.instructions) + " instructions, " + Fmt("%.4g", model.flops) +
         " FLOPs</p>\n";
  out += "<div class=\"charts\"><canvas id=\"owners-" + m +
         "\" width=\"520\" height=\"300\"></canvas><canvas id=\"cost-" + m +
         "\" width=\"520\" height=\"300\"></canvas></div>\n";
  out += "<p class=\"fastest\" id=\"fastest-" + m + "\"></p>\n";
  OwnerTable(out, model);
  CostTable(out, model);
  CarriedTable(out, model);
  HandAndCustomCalls(out, model);
  Graphs(out, model, options, warnings);
  out += "</section>\n";
}

constexpr char kStyle[] = R"CSS(
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
td:first-child, th:first-child { text-align: left; }
.error { color: #b00; text-align: left; }
.swatch { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em; }
.charts canvas { display: inline-block; margin-right: 1em; }
.note { color: #666; font-style: italic; }
details.graph svg { max-width: 100%; height: auto; }
#script-errors { color: #b00; white-space: pre; }
)CSS";

}  // namespace

std::string ReadChartJs(const std::string& path) {
  const hlo::SourceLocation at{std::make_shared<const std::string>(path), 0, 0};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > static_cast<uintmax_t>(kMaxChartJsBytes)) {
    throw hlo::Error(at, "--html needs Chart.js, which cannot be read here (install Debian's "
                         "libjs-chart.js)");
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ReportToHtml(const Report& report, const std::string& chart_js,
                         const HtmlOptions& options, std::vector<std::string>* warnings) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<title>Retarget portability report</title>\n<style>" +
                    std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<h1>Retarget portability report</h1>\n<div id=\"script-errors\"></div>\n";
  out += "<p class=\"note\">Latency is labelled by its source (estimated: the cost model; "
         "measured; simulated). Energy is the cost model's estimate. Cost per million inferences "
         "= latency &times; $/hour / 3600 &times; 10<sup>6</sup>.";
  if (!report.systolic_config.empty()) {
    out += " The systolic column is estimated with the accelerator config '" +
           Escape(report.systolic_config) + "'.";
  }
  out += "</p>\n";
  for (size_t i = 0; i < report.models.size(); ++i) {
    ModelSection(out, report.models[i], i, options, warnings);
  }
  out += "<script type=\"application/json\" id=\"report-data\">" +
         JsonForScript(ReportToJson(report)) + "</script>\n";
  out += "<script>\n" + JsForScript(chart_js) + "\n</script>\n";
  out += "<script>\n" + PageScript() + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace report

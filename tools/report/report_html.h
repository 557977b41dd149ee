// ReportToHtml: the portability report as ONE self-contained HTML page — per model, the
// ownership and latency/cost bar charts (Chart.js, inlined), the tables of the terminal report,
// and each target's compiled entry graph rendered by Graphviz (SVG inlined), nodes coloured by
// owner. docs/report.md shows the page; tests/report/report_html_test.cc loads it in headless
// Chromium.
//
// Guarantees: the page loads nothing from anywhere (no src=/href= to other files or hosts);
// every string from the input is HTML-escaped; the report's JSON is embedded with every '<'
// escaped, so no name can end a <script> element; the charts are drawn by a script that marks
// each canvas it filled (data-rendered="true") and writes the fastest target of each model from
// the JSON into the page, so a test can tell that the scripts ran. A graph that cannot be
// rendered (no `dot`, a timeout) is replaced by a note and a warning; a missing Chart.js is an
// hlo::Error (the page would be incomplete).
#pragma once

#include <string>
#include <vector>

#include "tools/report/report.h"

namespace report {

// Debian's libjs-chart.js (Chart.js 3.x, MIT).
inline constexpr char kDebianChartJs[] = "/usr/share/javascript/chart.js/chart.min.js";

struct HtmlOptions {
  std::string chart_js_path = kDebianChartJs;
  std::string dot_program = "dot";
  int dot_timeout_seconds = 30;
};

// The Chart.js source to inline; hlo::Error naming the package when it cannot be read.
std::string ReadChartJs(const std::string& path);

// `chart_js` is ReadChartJs's text; `warnings` receives one line per graph not rendered.
std::string ReportToHtml(const Report& report, const std::string& chart_js,
                         const HtmlOptions& options, std::vector<std::string>* warnings);

// The page's own script (report_html_script.cc): draws the charts from the embedded JSON.
std::string PageScript();

}  // namespace report

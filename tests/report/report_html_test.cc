// The HTML page: its structure and escaping (page built in-process with a stand-in Chart.js),
// the DOT graph and its node budget, RenderSvg's failure paths, and — the end-to-end check — the
// page `retarget report --html` writes, loaded in headless Chromium: the scripts run without
// console errors, draw every chart, and put a figure from the JSON into the DOM. Skipped with a
// message only where chromium is not installed.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <regex>

#include "compiler/ownership.h"
#include "compiler/target_pipelines.h"
#include "tests/cli_fixture.h"
#include "tests/report/json_value.h"
#include "tests/report/report_test_util.h"
#include "tools/report/graph_dot.h"
#include "tools/report/report_html.h"
#include "targets/descriptions.h"

namespace {

using report_test::JsonValue;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Graphviz writes colours in lower case.
std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string PageOf(const report::Report& report, const std::string& chart_js = "var Chart;") {
  std::vector<std::string> warnings;
  const std::string page = report::ReportToHtml(report, chart_js, report::HtmlOptions{}, &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  return page;
}

TEST(ReportHtmlTest, OnePageWithTablesGraphsAndEscapedNames) {
  report::ReportOptions options;
  options.graph_node_budget = 50;
  report::Report report;
  report.models.push_back(
      report_test::ReportOf(report_test::kDotBiasRelu, report_test::Targets({"cpu", "systolic"}),
                            options));
  report.models.back().name = "<b>\"x\"</b>";
  report.models.push_back(report::FailedModelReport("bad", "bad.hlo", "bad.hlo:1:2: error: <oops>",
                                                    report_test::Targets({"cpu", "systolic"})));
  // A Chart.js that contains an end tag must not end its <script> element.
  const std::string page = PageOf(report, "var s = '</script>';");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(page, "</script>"), 3u);  // the JSON, Chart.js and the page's own script
  EXPECT_NE(page.find("var s = '<\\/script>';"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("<b>\"x\""), std::string::npos);
  EXPECT_NE(page.find("<h2>&lt;b&gt;&quot;x&quot;&lt;/b&gt;</h2>"), std::string::npos);
  EXPECT_NE(page.find("\\u003cb>\\\"x\\\"\\u003c/b>"), std::string::npos);  // in the JSON
  EXPECT_NE(page.find("error: bad.hlo:1:2: error: &lt;oops&gt;"), std::string::npos);
  // One canvas pair for the model that loaded, one graph per target, coloured by owner.
  EXPECT_NE(page.find("<canvas id=\"owners-0\""), std::string::npos);
  EXPECT_NE(page.find("<canvas id=\"cost-0\""), std::string::npos);
  EXPECT_EQ(page.find("<canvas id=\"owners-1\""), std::string::npos);
  EXPECT_EQ(Count(page, "<svg"), 2u);
  EXPECT_NE(page.find("fill=\"" + Lower(report::kOwnerColours[1])), std::string::npos)
      << "library (retarget-sgemm) on the cpu";
  EXPECT_NE(page.find("fill=\"" + Lower(report::kOwnerColours[2])), std::string::npos)
      << "native on the systolic array";
  // The cost table carries the figures and the price's citation.
  const report::TargetCell& cpu = report.models[0].targets[0];
  char latency[32];
  std::snprintf(latency, sizeof latency, "<td>%.4g</td>", cpu.latency_ms);
  EXPECT_NE(page.find(latency), std::string::npos);
  EXPECT_NE(page.find("aws.amazon.com/ec2/pricing"), std::string::npos);
  EXPECT_NE(page.find("<li>cpu latency estimated: no backend run was asked for</li>"),
            std::string::npos);
}

TEST(ReportHtmlTest, CustomCallsNameTheTargetsThatImplementThem) {
  report::Report report;
  report.models.push_back(
      report_test::ReportOf(report_test::kTeAttention, report_test::Targets({"cpu", "gpu"})));
  const std::string page = PageOf(report, "");
  EXPECT_NE(page.find("<li>te_fused_attn_forward_ffi &times;1: cpu no gpu yes (library "
                      "TransformerEngine) &mdash; <strong>kernel-locked: gpu only</strong></li>"),
            std::string::npos);
  // The owner table counts the module's 2 instructions per target, then the compiled ones.
  EXPECT_NE(page.find("<tr><td>gpu</td><td>1 (100.0%)</td><td>1</td><td>0</td><td>0</td>"
                      "<td>0</td><td>0</td><td>2</td></tr>"),
            std::string::npos);
}

// Edges follow operand order (an operand used twice gives one edge), never the order of the
// instructions' addresses: the same module gives the same text, and graphviz the same ids.
TEST(ReportHtmlTest, TheGraphListsEdgesInOperandOrder) {
  auto module = testing_support::ParseAndVerify(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] subtract(b, a)
  ROOT t = f32[4] multiply(s, s)
})");
  const compiler::ModuleStats stats =
      compiler::AnalyzeOwnership(*module, targets::InterpDescription());
  const std::string dot = report::EntryGraphDot(*module, stats, 1000);
  const size_t from_b = dot.find("n1 -> n2;"), from_a = dot.find("n0 -> n2;");
  ASSERT_NE(from_b, std::string::npos) << dot;
  ASSERT_NE(from_a, std::string::npos) << dot;
  EXPECT_LT(from_b, from_a) << dot;
  EXPECT_EQ(Count(dot, "n2 -> n3;"), 1u) << dot;
  EXPECT_EQ(report::EntryGraphDot(*module, stats, 1000), dot);
}

TEST(ReportHtmlTest, TheGraphKeepsToItsNodeBudget) {
  auto module = testing_support::ParseAndVerify(report_test::kSoftmax);
  const compiler::TargetDescription& interp = targets::InterpDescription();  // no fusion: every op
  compiler::MakeTargetPipeline(interp).Run(*module);
  const compiler::ModuleStats stats = compiler::AnalyzeOwnership(*module, interp);
  const size_t all = module->entry()->instructions().size();
  ASSERT_GT(all, 4u);

  const std::string whole = report::EntryGraphDot(*module, stats, 1000);
  EXPECT_EQ(Count(whole, "[label="), all);
  EXPECT_EQ(whole.find("showing"), std::string::npos);

  const std::string capped = report::EntryGraphDot(*module, stats, 3);
  EXPECT_EQ(Count(capped, "[label="), 3u);
  EXPECT_NE(capped.find("label=\"showing 3 of " + std::to_string(all) +
                        " instructions of the entry computation (node budget 3"),
            std::string::npos)
      << capped;
  EXPECT_EQ(capped.find("parameter"), std::string::npos);  // trivial instructions dropped first
  // Every edge joins two shown nodes.
  std::smatch edge;
  std::string rest = capped;
  while (std::regex_search(rest, edge, std::regex("n(\\d+) -> n(\\d+)"))) {
    EXPECT_LT(std::stoi(edge[1]), 3);
    EXPECT_LT(std::stoi(edge[2]), 3);
    rest = edge.suffix();
  }
  // With room to spare after every non-trivial instruction, trivial ones fill it in order.
  const std::string nearly = report::EntryGraphDot(*module, stats, static_cast<int64_t>(all) - 1);
  EXPECT_EQ(Count(nearly, "[label="), all - 1);
  EXPECT_NE(nearly.find("showing " + std::to_string(all - 1) + " of "), std::string::npos);
  EXPECT_NE(nearly.find("\\nparameter"), std::string::npos);
  const report::SvgResult svg = report::RenderSvg(capped);
  EXPECT_EQ(svg.error, "");
  EXPECT_EQ(svg.svg.rfind("<svg", 0), 0u);
}

TEST(ReportHtmlTest, RenderingFailuresAreReportedNotThrown) {
  const report::SvgResult missing = report::RenderSvg("digraph g { a; }", "no-such-dot-program");
  EXPECT_EQ(missing.svg, "");
  EXPECT_NE(missing.error.find("cannot run 'no-such-dot-program' (install graphviz)"),
            std::string::npos)
      << missing.error;
  const report::SvgResult failing = report::RenderSvg("digraph g { a; }", "false");
  EXPECT_NE(failing.error.find("failed (exit status 1)"), std::string::npos) << failing.error;
  const report::SvgResult bad_dot = report::RenderSvg("this is not dot");
  EXPECT_EQ(bad_dot.svg, "");
  EXPECT_FALSE(bad_dot.error.empty());
  EXPECT_THROW(report::ReadChartJs("/nonexistent/chart.min.js"), hlo::Error);
}

using ReportHtmlChromiumTest = testing_support::CliFixture;

TEST_F(ReportHtmlChromiumTest, ThePageRendersInHeadlessChromium) {
  ASSERT_EQ(std::system("command -v chromium >/dev/null 2>&1"), 0)
      << "chromium is missing: run scripts/install-deps.sh";
  Write("bad.hlo", "HloModule bad\nENTRY main {\n  ROOT p = f32[4] frob()\n}\n");
  const std::string mlp = std::string(RETARGET_DOCS_DIR) + "/../examples/mlp.hlo";
  const std::string mha = testing_support::CorpusPath("mha_block_1x12x128x64_bf16.hlo");
  testing_support::CommandResult report = Retarget("report '" + mlp + "' bad.hlo '" + mha +
                                               "' --html page.html --json page.json");
  ASSERT_EQ(report.exit_code, 1) << report.err;  // bad.hlo fails; the page is still written
  ASSERT_TRUE(std::filesystem::exists(Path("page.html")));

  const testing_support::CommandResult chromium = Shell(
      "timeout 120 chromium --headless --disable-gpu --no-sandbox --user-data-dir=profile "
      "--enable-logging=stderr --v=0 --dump-dom file://" + Path("page.html"));
  ASSERT_EQ(chromium.exit_code, 0) << chromium.err;
  // Every console message (an uncaught exception included) is logged as ":CONSOLE"; the page
  // logs nothing when all goes well.
  EXPECT_EQ(chromium.err.find(":CONSOLE"), std::string::npos) << chromium.err;
  const std::string& dom = chromium.out;
  EXPECT_NE(dom.find("<div id=\"script-errors\"></div>"), std::string::npos);
  // Two charts per model that loaded, each marked after Chart.js drew it.
  EXPECT_EQ(Count(dom, "data-rendered=\"true\""), 4u);
  EXPECT_NE(dom.find("data-charts=\"4\""), std::string::npos);
  EXPECT_EQ(Count(dom, "<svg"), 6u);  // a graph per target of the two models
  EXPECT_NE(dom.find("error: bad.hlo:3:"), std::string::npos);

  // The fastest target the script found from the JSON, with the JSON's own figure.
  const JsonValue json = report_test::ParseJson(testing_support::ReadFile(Path("page.json")));
  for (size_t m : {0u, 2u}) {
    std::string fastest;
    double best = 0;
    for (const auto& [target, cell] : json["models"].array.at(m)["targets"].object) {
      if (fastest.empty() || cell["latency_ms"].number < best) {
        fastest = target;
        best = cell["latency_ms"].number;
      }
    }
    std::smatch found;
    const std::regex line("id=\"fastest-" + std::to_string(m) +
                          "\" data-target=\"([a-z]+)\" data-ms=\"([^\"]+)\">fastest: ([a-z]+), ");
    ASSERT_TRUE(std::regex_search(dom, found, line)) << m;
    EXPECT_EQ(found[1].str(), fastest);
    EXPECT_EQ(std::strtod(found[2].str().c_str(), nullptr), best);
    EXPECT_EQ(found[3].str(), fastest);
  }
}

}  // namespace

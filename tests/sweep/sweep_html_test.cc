// The sweep's HTML page built in-process (with a stand-in Chart.js): self-contained, every value
// escaped in the table and in the embedded JSON, one canvas per charted figure, and no script
// element that a value or Chart.js itself could end early. The browser check is in
// sweep_cli_test.cc.
#include "tools/sweep/sweep_html.h"

#include <gtest/gtest.h>

namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

sweep::SweepTable Table() {
  sweep::SweepTable table;
  table.columns = {"point", "array"};
  table.columns.insert(table.columns.end(), sweep::kResultColumns.begin(),
                       sweep::kResultColumns.end());
  std::vector<std::string> ok = {"0",   "16x16",     "array.rows=16 array.cols=16",
                                 "1.5", "simulated", "0.5",
                                 "0",   "2",         "simulated",
                                 "0.1", "",          ""};
  std::vector<std::string> bad = {"1",
                                  "<b>\"32\"</b>",
                                  "x",
                                  "",
                                  "",
                                  "",
                                  "",
                                  "",
                                  "",
                                  "",
                                  "boom </script><script>alert(1)</script>",
                                  ""};
  table.rows = {ok, bad};
  return table;
}

TEST(SweepHtmlTest, OneSelfContainedPageWithEveryValueEscaped) {
  ASSERT_EQ(Table().rows[0].size(), Table().columns.size());
  const std::string page =
      sweep::SweepToHtml(Table(), "m<1>.hlo", "var Chart; var s = '</script>';");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_NE(page.find("<h1>retarget sweep: m&lt;1&gt;.hlo</h1>"), std::string::npos);
  // Three script elements (data, Chart.js, the page's own), none ended early.
  EXPECT_EQ(Count(page, "</script>"), 3u);
  EXPECT_NE(page.find("var s = '<\\/script>';"), std::string::npos);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("<td>boom &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<td>&lt;b&gt;&quot;32&quot;&lt;/b&gt;</td>"), std::string::npos);
  // In the JSON every '<' is escaped.
  const size_t data = page.find("id=\"sweep-data\">");
  const std::string json = page.substr(data, page.find("</script>", data) - data);
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_NE(json.find("\\u003cb>\\\"32\\\"\\u003c/b>"), std::string::npos) << json;
  // One canvas per charted figure, in the table's order.
  for (size_t i = 0; i < std::size(sweep::kChartedColumns); ++i) {
    EXPECT_NE(page.find("<canvas id=\"chart-" + std::to_string(i) + "\""), std::string::npos);
  }
  EXPECT_EQ(page.find("<canvas id=\"chart-4\""), std::string::npos);
}

}  // namespace

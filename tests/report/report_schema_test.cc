// The JSON document against docs/report.schema.json, checked by a small validator of the
// schema subset it uses (json_schema.h): real reports (every target, a failing target, a model
// that failed to load, --config), the documented example, and documents broken on purpose to
// show the schema and the checker reject them.
#include <gtest/gtest.h>

#include "tests/report/json_schema.h"
#include "tests/report/report_test_util.h"

namespace {

using report_test::JsonValue;
using report_test::ParseJson;
using report_test::SchemaChecker;

JsonValue Schema() {
  return ParseJson(testing_support::ReadFile(std::string(RETARGET_DOCS_DIR) + "/report.schema.json"));
}

std::string Joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& e : errors) out += e + "\n";
  return out;
}

report::Report RealReport() {
  report::Report report;
  const auto all = report_test::Targets({"interp", "cpu", "gpu", "systolic"});
  for (const char* text : {report_test::kDotBiasRelu, report_test::kSoftmax,
                           report_test::kTeAttention, report_test::kAllReduce}) {
    report.models.push_back(report_test::ReportOf(text, all));
  }
  report::ReportOptions failing;
  failing.compile = [](hlo::Module&, const compiler::TargetDescription& target) {
    if (target.name == "gpu") throw hlo::Error("no gpu today");
  };
  report.models.push_back(report_test::ReportOf(report_test::kSoftmax, all, failing));
  report.models.push_back(report::FailedModelReport("bad", "bad.hlo", "bad.hlo:1:1: error: x", all));
  report.systolic_config = "gemmini --set clock.mhz=500";
  return report;
}

TEST(ReportSchemaTest, RealReportsConform) {
  const JsonValue schema = Schema();
  SchemaChecker checker(schema);
  const JsonValue json = ParseJson(report::ReportToJson(RealReport()));
  EXPECT_EQ(Joined(checker.Validate(json)), "");
  EXPECT_EQ(json["systolic_config"].string, "gemmini --set clock.mhz=500");
  EXPECT_EQ(Joined(checker.Validate(ParseJson(report::ReportToJson(report::Report{})))), "");
}

TEST(ReportSchemaTest, TheDocumentedExampleConforms) {
  const std::string doc =
      testing_support::ReadFile(std::string(RETARGET_DOCS_DIR) + "/report-format.md");
  const size_t begin = doc.find("```json\n") + 8;
  const JsonValue example = ParseJson(doc.substr(begin, doc.find("\n```", begin) - begin));
  const JsonValue schema = Schema();
  EXPECT_EQ(Joined(SchemaChecker(schema).Validate(example)), "");
}

// Replaces the first occurrence of `from` in the report's JSON text.
JsonValue Broken(const std::string& from, const std::string& to) {
  std::string text = report::ReportToJson(RealReport());
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("no " + from);
  return ParseJson(text.replace(at, from.size(), to));
}

TEST(ReportSchemaTest, BrokenDocumentsAreRejected) {
  const JsonValue schema = Schema();
  SchemaChecker checker(schema);
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {"\"kernels\": ", "\"kernel_count\": ", "unexpected key kernel_count"},
      {"\"latency_source\": \"estimated\"", "\"latency_source\": \"guessed\"",
       "latency_source: is not one of the enum values"},
      {"\"fusion_coverage\": 1", "\"fusion_coverage\": 1.5", "fusion_coverage: above maximum"},
      {"\"generated\": 0", "\"generated\": -1", "generated: below minimum"},
      {"\"supported\": false", "\"supported\": \"no\"", "supported: is string"},
      {"\"cpu->gpu\"", "\"cpu=>gpu\"", "does not match"},
      {"\"kernels\": 1", "\"kernels\": 1.5", "kernels: is number, not of the schema's type"},
      {"\"systolic_config\":", "\"config\":", "missing required key systolic_config"},
  };
  for (const Case& c : cases) {
    const std::string errors = Joined(checker.Validate(Broken(c.from, c.to)));
    EXPECT_NE(errors.find(c.expected), std::string::npos) << c.from << " -> " << c.to << "\n"
                                                          << errors;
  }
}

}  // namespace

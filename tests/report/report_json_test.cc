// The JSON document against the schema documented in docs/report-format.md: the test reads the
// example in the doc and checks the output has exactly its keys, in its order, at every level
// (plus the keys the issue requires), that failed cells keep every key, and that any string
// yields valid JSON.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/report/json_value.h"
#include "tests/report/report_test_util.h"

namespace {

using report_test::JsonValue;
using report_test::ParseJson;

std::vector<std::string> KeysWithout(const JsonValue& object, const std::string& optional) {
  std::vector<std::string> keys = object.Keys();
  keys.erase(std::remove(keys.begin(), keys.end(), optional), keys.end());
  return keys;
}

// The first ```json block of docs/report-format.md.
JsonValue DocumentedExample() {
  const std::string doc =
      testing_support::ReadFile(std::string(RETARGET_DOCS_DIR) + "/report-format.md");
  const size_t begin = doc.find("```json\n");
  if (begin == std::string::npos) throw std::runtime_error("no ```json block in the doc");
  const size_t end = doc.find("\n```", begin + 8);
  return ParseJson(doc.substr(begin + 8, end - begin - 8));
}

// Checks `actual` has the documented keys at every level; the documented example has one model
// whose first target and first pair stand for all.
void ExpectDocumentedShape(const JsonValue& actual, const JsonValue& doc) {
  ASSERT_EQ(actual.Keys(), doc.Keys());
  const JsonValue& doc_model = doc["models"].array.at(0);
  const JsonValue& doc_cell = doc_model["targets"].object.at(0).second;
  const JsonValue& doc_pair = doc_model["carried_across"].object.at(0).second;
  for (const JsonValue& model : actual["models"].array) {
    EXPECT_EQ(KeysWithout(model, "error"), doc_model.Keys());
    for (const auto& [target, cell] : model["targets"].object) {
      SCOPED_TRACE(target);
      EXPECT_EQ(KeysWithout(cell, "error"), doc_cell.Keys());
      for (const char* map : {"owners", "owners_original", "flops_share", "flops_share_original",
                              "bytes_share"}) {
        if (cell[map].kind == JsonValue::Kind::kNull) continue;
        EXPECT_EQ(cell[map].Keys(), doc_cell[map].Keys()) << map;
      }
      if (cell["custom_calls"].kind == JsonValue::Kind::kArray) {
        for (const JsonValue& call : cell["custom_calls"].array) {
          EXPECT_EQ(call.Keys(), doc_cell["custom_calls"].array.at(0).Keys());
        }
      }
    }
    for (const auto& [pair, value] : model["carried_across"].object) {
      EXPECT_EQ(KeysWithout(value, "error"), doc_pair.Keys()) << pair;
    }
    for (const JsonValue& call : model["custom_calls"].array) {
      EXPECT_EQ(call.Keys(), doc_model["custom_calls"].array.at(0).Keys());
    }
  }
}

TEST(ReportJsonTest, TheDocumentedExampleHasTheIssuesKeys) {
  const JsonValue doc = DocumentedExample();
  const JsonValue& cell = doc["models"].array.at(0)["targets"]["gpu"];
  for (const char* key : {"owners", "flops_share", "fusion_coverage", "kernels", "custom_calls",
                          "latency_ms", "latency_source", "energy_mj", "cost_per_1m_usd"}) {
    EXPECT_TRUE(cell.Has(key)) << key;
  }
  EXPECT_EQ(cell["owners"].Keys(), (std::vector<std::string>{"generated", "library", "native",
                                                             "host_fallback", "unsupported",
                                                             "collective"}));
  EXPECT_EQ(cell["custom_calls"].array.at(0).Keys(),
            (std::vector<std::string>{"target", "count", "supported", "owner"}));
  EXPECT_TRUE(doc["models"].array.at(0)["carried_across"].Has("gpu->cpu"));
  EXPECT_EQ(doc["models"].array.at(0)["carried_across"]["gpu->cpu"].Keys(),
            (std::vector<std::string>{"instructions", "flops"}));
}

TEST(ReportJsonTest, OutputMatchesTheDocumentedSchemaAndFigures) {
  report::Report report;
  report.models.push_back(
      report_test::ReportOf(report_test::kTeAttention, report_test::Targets({"gpu", "cpu"})));
  report.models.push_back(report::FailedModelReport(
      "bad", "bad.hlo", "bad.hlo:3:7: error: unknown opcode 'frob'",
      report_test::Targets({"gpu", "cpu"})));
  const JsonValue json = ParseJson(report::ReportToJson(report));
  ExpectDocumentedShape(json, DocumentedExample());

  const JsonValue& te = json["models"].array.at(0);
  EXPECT_EQ(te["name"].string, "te");
  EXPECT_FALSE(te.Has("error"));
  EXPECT_EQ(te["targets"].Keys(), (std::vector<std::string>{"gpu", "cpu"}));
  // TransformerEngine is a library on the gpu and unknown to the cpu (gpu.cc's registry).
  const JsonValue& gpu = te["targets"]["gpu"];
  EXPECT_EQ(gpu["owners"]["library"].number, 1);
  EXPECT_EQ(gpu["owners"]["unsupported"].number, 0);
  EXPECT_EQ(gpu["owners"]["generated"].number, 1);
  EXPECT_EQ(gpu["owners_original"]["library"].number, 1);
  EXPECT_EQ(gpu["flops_share"]["generated"].number, 1);
  EXPECT_EQ(gpu["flops_share_original"]["generated"].number, 1);
  EXPECT_EQ(gpu["custom_calls"].array.at(0)["target"].string, "te_fused_attn_forward_ffi");
  EXPECT_EQ(gpu["custom_calls"].array.at(0)["supported"].kind, JsonValue::Kind::kBool);
  EXPECT_TRUE(gpu["custom_calls"].array.at(0)["supported"].boolean);
  EXPECT_FALSE(te["targets"]["cpu"]["custom_calls"].array.at(0)["supported"].boolean);
  EXPECT_EQ(gpu["latency_source"].string, "estimated");
  EXPECT_EQ(gpu["latency_note"].string, "no backend run was asked for");
  const JsonValue& call = te["custom_calls"].array.at(0);
  EXPECT_EQ(call["target"].string, "te_fused_attn_forward_ffi");
  EXPECT_EQ(call["count"].number, 1);
  ASSERT_EQ(call["implemented_by"].array.size(), 1u);
  EXPECT_EQ(call["implemented_by"].array[0].string, "gpu");
  EXPECT_TRUE(call["kernel_locked"].boolean);
  EXPECT_EQ(gpu["energy_mj"].kind, JsonValue::Kind::kNumber);
  EXPECT_EQ(te["carried_across"].Keys(), (std::vector<std::string>{"gpu->cpu", "cpu->gpu"}));
  EXPECT_EQ(te["carried_across"]["gpu->cpu"]["instructions"].number, 0.5);
  EXPECT_EQ(te["carried_across"]["gpu->cpu"]["flops"].number, 1);

  // A model that failed to load: every cell keeps every key, null, with the error.
  const JsonValue& bad = json["models"].array.at(1);
  EXPECT_EQ(bad["error"].string, "bad.hlo:3:7: error: unknown opcode 'frob'");
  for (const auto& [target, cell] : bad["targets"].object) {
    EXPECT_EQ(cell["error"].string, "bad.hlo:3:7: error: unknown opcode 'frob'");
    for (const auto& [key, value] : cell.object) {
      if (key == "error") continue;
      EXPECT_EQ(value.kind, JsonValue::Kind::kNull) << target << " " << key;
    }
  }
  EXPECT_EQ(bad["carried_across"]["cpu->gpu"]["instructions"].kind, JsonValue::Kind::kNull);
}

TEST(ReportJsonTest, AnyNameOrMessageGivesValidJson) {
  report::Report report;
  report.models.push_back(report::FailedModelReport(
      "quote\" back\\slash\nnewline\x01\xff", "f", "tab\there \"x\"",
      report_test::Targets({"cpu"})));
  const JsonValue json = ParseJson(report::ReportToJson(report));
  EXPECT_EQ(json["models"].array.at(0)["targets"]["cpu"]["error"].string, "tab\there \"x\"");
  // The byte that is not UTF-8 comes back as U+FFFD; everything else exactly.
  EXPECT_EQ(json["models"].array.at(0)["name"].string,
            "quote\" back\\slash\nnewline\x01\xEF\xBF\xBD");
  EXPECT_EQ(ParseJson(report::ReportToJson(report::Report{}))["models"].array.size(), 0u);
}

}  // namespace

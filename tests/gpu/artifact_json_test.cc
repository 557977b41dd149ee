// The manifest's minimal JSON reader and writer.
#include <gtest/gtest.h>

#include "targets/gpu/artifact_json.h"

namespace gpu {
namespace {

std::string ErrorOf(const std::string& text) {
  try {
    ParseJson(text);
  } catch (const ArtifactError& e) {
    return e.what();
  }
  return "";
}

TEST(GpuArtifactJson, ReadsScalarsExactly) {
  const JsonValue v = ParseJson(R"( {"a": 9007199254740993, "b": -2.5e1, "c": "x\"\\\n\u00e9", "d": [true, null, false], "e": {}} )");
  EXPECT_EQ(v.Get("a", "v").AsInt("a"), 9007199254740993);
  EXPECT_EQ(v.Get("b", "v").AsDouble("b"), -25.0);
  EXPECT_FALSE(v.Get("b", "v").is_integer());
  EXPECT_EQ(v.Get("c", "v").AsString("c"), "x\"\\\n\xc3\xa9");  // U+00E9 in UTF-8
  EXPECT_EQ(v.Get("d", "v").AsArray("d").size(), 3u);
  EXPECT_EQ(v.Get("d", "v").AsArray("d")[1].kind(), JsonValue::Kind::kNull);
  EXPECT_EQ(v.Get("e", "v").kind(), JsonValue::Kind::kObject);
}

TEST(GpuArtifactJson, WriterOutputReadsBackToTheSameText) {
  JsonValue o = JsonValue::Object();
  o.Set("name", JsonValue::String("tab\there \"q\" \x01"));
  o.Set("shape", JsonValue::Array({JsonValue::Int(2), JsonValue::Int(3)}));
  o.Set("alpha", JsonValue::Double(0.1));
  JsonValue nested = JsonValue::Array();
  nested.Push(JsonValue::Object()).Set("k", JsonValue::Bool(true));
  o.Set("list", nested);
  const std::string text = o.ToText();
  EXPECT_NE(text.find("\"shape\": [2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << text;
  const JsonValue back = ParseJson(text);
  EXPECT_EQ(back.ToText(), text);
  EXPECT_EQ(back.Get("alpha", "o").AsDouble("alpha"), 0.1);  // %.17g round-trips doubles
}

TEST(GpuArtifactJson, MalformedTextNamesTheByte) {
  EXPECT_EQ(ErrorOf("{\"a\": 1,}"), "manifest JSON at byte 8: expected a member name");
  EXPECT_EQ(ErrorOf("{\"a\": 1} x"), "manifest JSON at byte 9: unexpected text after the JSON document");
  EXPECT_EQ(ErrorOf("{\"a\": 1, \"a\": 2}"), "manifest JSON at byte 9: duplicate member 'a'");
  EXPECT_EQ(ErrorOf("\"abc"), "manifest JSON at byte 4: unterminated string");
  EXPECT_EQ(ErrorOf("99999999999999999999"), "manifest JSON at byte 20: integer 99999999999999999999 does not fit in 64 bits");
  EXPECT_EQ(ErrorOf(""), "manifest JSON at byte 0: unexpected end of text");
  EXPECT_EQ(ErrorOf(std::string(100000, '[')), "manifest JSON at byte 65: nesting deeper than 64");
}

TEST(GpuArtifactJson, AccessorsNameTheFieldAndTheKind) {
  const JsonValue v = ParseJson("{\"m\": 1.5}");
  try {
    v.Get("m", "steps[0]").AsInt("steps[0].m");
    FAIL();
  } catch (const ArtifactError& e) {
    EXPECT_STREQ(e.what(), "manifest: 'steps[0].m' must be an integer, not a number");
  }
  try {
    v.Get("n", "steps[0]");
    FAIL();
  } catch (const ArtifactError& e) {
    EXPECT_STREQ(e.what(), "manifest: 'steps[0]' lacks member 'n'");
  }
}

}  // namespace
}  // namespace gpu

// The manifest's JSON rules over nlohmann-json: exact integers, the refusals nlohmann-json
// alone would not make, byte offsets in parse errors, and field-naming accessors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "targets/gpu/artifact_json.h"

namespace gpu {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ErrorOf(const std::string& text) {
  try {
    ParseJson(text);
  } catch (const ArtifactError& e) {
    return e.what();
  }
  return "";
}

TEST(GpuArtifactJson, ReadsScalarsExactly) {
  const Json v = ParseJson(
      R"( {"a": 9007199254740993, "b": -2.5e1, "c": "x\"\\\n\u00e9", "d": [true, null, false]} )");
  EXPECT_EQ(AsInt(Get(v, "a", "v"), "a"), 9007199254740993);  // 2^53 + 1: not via a double
  EXPECT_EQ(AsDouble(Get(v, "b", "v"), "b"), -25.0);
  EXPECT_EQ(AsString(Get(v, "c", "v"), "c"), "x\"\\\n\xc3\xa9");  // U+00E9 in UTF-8
  EXPECT_EQ(AsArray(Get(v, "d", "v"), "d").size(), 3u);
  EXPECT_EQ(Find(v, "e"), nullptr);
}

TEST(GpuArtifactJson, WriterOutputReadsBackToTheSameText) {
  const Json o = {{"name", "tab\there \"q\" \x01"}, {"shape", {2, 3}}, {"alpha", 0.1},
                  {"list", Json::array({{{"k", true}}})}};
  const std::string text = JsonText(o);
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << text;
  EXPECT_EQ(text.find('\t'), std::string::npos) << text;  // escaped, never raw
  const Json back = ParseJson(text);
  EXPECT_EQ(JsonText(back), text);
  EXPECT_EQ(AsDouble(Get(back, "alpha", "o"), "alpha"), 0.1);  // doubles round-trip exactly
  EXPECT_EQ(text.rfind("{\n  \"name\": ", 0), 0u) << text;  // members in insertion order
}

TEST(GpuArtifactJson, MalformedTextNamesTheByte) {
  EXPECT_THAT(ErrorOf("{\"a\": 1,}"), StartsWith("manifest JSON at byte 9: "));
  EXPECT_THAT(ErrorOf("{\"a\": 1} x"), StartsWith("manifest JSON at byte 10: "));
  EXPECT_THAT(ErrorOf("\"abc"), StartsWith("manifest JSON at byte 5: "));
  EXPECT_THAT(ErrorOf(""), StartsWith("manifest JSON at byte 1: "));
  EXPECT_THAT(ErrorOf("{\"a\": 1} x"), HasSubstr("expected end of input"));
  // The whole reason, not only the text it quotes.
  EXPECT_THAT(ErrorOf("[tru]"), HasSubstr("invalid literal"));
  EXPECT_THAT(ErrorOf("[tru]"), HasSubstr("last read: '[tru]'"));
}

TEST(GpuArtifactJson, RefusesWhatTheLibraryAloneWouldTake) {
  EXPECT_EQ(ErrorOf("{\"a\": 1, \"b\": {\"a\": 2}}"), "");  // equal names in different objects
  EXPECT_EQ(ErrorOf("{\"a\": 1, \"a\": 2}"), "manifest JSON: duplicate member 'a'");
  EXPECT_EQ(ErrorOf(std::string(100000, '[')), "manifest JSON: nesting deeper than 64");
  EXPECT_EQ(ErrorOf(std::string(64, '[') + std::string(64, ']')), "");
  try {
    AsInt(ParseJson("18446744073709551615"), "arena_bytes");
    FAIL();
  } catch (const ArtifactError& e) {
    EXPECT_STREQ(e.what(), "manifest: 'arena_bytes' does not fit in 64 bits");
  }
}

TEST(GpuArtifactJson, AccessorsNameTheFieldAndTheKind) {
  const Json v = ParseJson("{\"m\": 1.5, \"s\": 2}");
  try {
    AsInt(Get(v, "m", "steps[0]"), "steps[0].m");
    FAIL();
  } catch (const ArtifactError& e) {
    EXPECT_STREQ(e.what(), "manifest: 'steps[0].m' must be an integer, not a number");
  }
  try {
    AsString(Get(v, "s", "steps[0]"), "steps[0].s");
    FAIL();
  } catch (const ArtifactError& e) {
    EXPECT_STREQ(e.what(), "manifest: 'steps[0].s' must be a string, not an integer");
  }
  try {
    Get(v, "n", "steps[0]");
    FAIL();
  } catch (const ArtifactError& e) {
    EXPECT_STREQ(e.what(), "manifest: 'steps[0]' lacks member 'n'");
  }
  try {
    Get(ParseJson("[1]"), "n", "steps");
    FAIL();
  } catch (const ArtifactError& e) {
    EXPECT_STREQ(e.what(), "manifest: 'steps' must be an object, not an array");
  }
}

}  // namespace
}  // namespace gpu

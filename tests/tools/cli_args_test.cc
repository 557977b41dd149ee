// The command line's argument parser (cli::ParseArgs, tools/retarget/cli.h), rule by rule: the
// behaviour every command relies on and the exact messages a user sees for each mistake.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/retarget/cli.h"

namespace {

cli::CommandSpec Spec() {
  cli::CommandSpec spec;
  spec.name = "run";
  spec.arguments = "FILE";
  spec.min_positional = 1;
  spec.max_positional = 1;
  spec.flags = {
      {"--target", "T", "the target", "", /*required=*/true},
      {"--output", "OUT", "where", "-o"},
      {"--set", "K=V", "one key", "", false, /*repeatable=*/true},
      {"--force", "", "replace OUT", ""},
  };
  return spec;
}

cli::ParsedArgs Parse(const std::vector<std::string>& args) {
  return cli::ParseArgs(Spec(), args);
}

std::string ErrorOf(const std::vector<std::string>& args) {
  try {
    Parse(args);
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CliArgs, ValuesSeparateOrAfterAnEqualsSignAndAliases) {
  const cli::ParsedArgs a = Parse({"m.hlo", "--target", "cpu", "-o", "x.npz"});
  EXPECT_EQ(a.positional, std::vector<std::string>{"m.hlo"});
  EXPECT_EQ(a.Get("--target"), "cpu");
  EXPECT_EQ(a.Get("--output"), "x.npz");  // stored under the long name
  const cli::ParsedArgs b = Parse({"--target=gpu", "m.hlo", "--output=a=b.npz"});
  EXPECT_EQ(b.Get("--target"), "gpu");
  EXPECT_EQ(b.Get("--output"), "a=b.npz");  // split at the first '=' only
  EXPECT_FALSE(b.Has("--force"));
}

TEST(CliArgs, TheNextArgumentIsTheValueEvenWhenItStartsWithADash) {
  const cli::ParsedArgs a = Parse({"m.hlo", "--set", "-1", "--target", "-"});
  EXPECT_EQ(a.Get("--set"), "-1");
  EXPECT_EQ(a.Get("--target"), "-");
  EXPECT_EQ(Parse({"m.hlo", "--set", "--force=1"}).Get("--set"), "--force=1");
}

TEST(CliArgs, ArgumentsAreKeptWordForWord) {
  EXPECT_EQ(Parse({"[a,b]"}).positional, std::vector<std::string>{"[a,b]"});
  EXPECT_EQ(Parse({"[]"}).positional, std::vector<std::string>{"[]"});
  EXPECT_EQ(Parse({"--", "--"}).positional, std::vector<std::string>{"--"});
  EXPECT_EQ(Parse({"m.hlo", "-o", "[x]"}).Get("--output"), "[x]");
}

TEST(CliArgs, BooleanFlagsTakeNoValue) {
  EXPECT_EQ(Parse({"m.hlo", "--force"}).Get("--force"), "");
  EXPECT_EQ(ErrorOf({"m.hlo", "--force=1"}), "option --force takes no value");
  EXPECT_EQ(ErrorOf({"m.hlo", "--force=yes"}), "option --force takes no value");
  EXPECT_EQ(ErrorOf({"m.hlo", "--force=true"}), "option --force takes no value");
  EXPECT_EQ(ErrorOf({"m.hlo", "--force="}), "option --force takes no value");
  EXPECT_EQ(ErrorOf({"m.hlo", "--help=1"}), "option --help takes no value");
}

TEST(CliArgs, RepeatableFlagsKeepEveryValueInOrderOthersOnce) {
  const cli::ParsedArgs a = Parse({"m.hlo", "--set", "a=1", "--set=b=2", "--set", "a=3"});
  EXPECT_EQ(a.all.at("--set"), (std::vector<std::string>{"a=1", "b=2", "a=3"}));
  EXPECT_EQ(a.Get("--set"), "a=3");  // the last one
  EXPECT_EQ(ErrorOf({"m.hlo", "--target", "cpu", "--target", "gpu"}),
            "option --target given twice");
  EXPECT_EQ(ErrorOf({"m.hlo", "-o", "a", "--output", "b"}), "option --output given twice");
}

TEST(CliArgs, MistakesAreNamed) {
  EXPECT_EQ(ErrorOf({"m.hlo", "--nope"}), "unknown option '--nope'");
  EXPECT_EQ(ErrorOf({"m.hlo", "--nope=3"}), "unknown option '--nope'");
  EXPECT_EQ(ErrorOf({"m.hlo", "-x"}), "unknown option '-x'");
  EXPECT_EQ(ErrorOf({"m.hlo", "--target"}), "option --target needs a value (T)");
  EXPECT_EQ(ErrorOf({"m.hlo", "-o"}), "option --output needs a value (OUT)");
  // An empty value after '=' is no value: the next word is not taken in its place.
  EXPECT_EQ(ErrorOf({"m.hlo", "--output=", "--force"}), "option --output needs a value (OUT)");
  EXPECT_EQ(ErrorOf({"m.hlo", "-o=x.npz"}), "unknown option '-o=x.npz'");
  EXPECT_EQ(ErrorOf({}), "missing argument FILE");
  EXPECT_EQ(ErrorOf({"a.hlo", "b.hlo"}), "unexpected argument 'b.hlo'");
  EXPECT_EQ(ErrorOf({"a.hlo", "-5"}), "unexpected argument '-5'");  // a number, not an option
}

TEST(CliArgs, DoubleDashEndsTheFlagsAndALoneDashIsAnArgument) {
  EXPECT_EQ(Parse({"--", "-weird.hlo"}).positional, std::vector<std::string>{"-weird.hlo"});
  EXPECT_EQ(Parse({"-"}).positional, std::vector<std::string>{"-"});
  EXPECT_EQ(ErrorOf({"--", "a.hlo", "--force"}), "unexpected argument '--force'");
}

TEST(CliArgs, HelpWinsOverMissingArguments) {
  EXPECT_TRUE(Parse({"--help"}).help);
  EXPECT_TRUE(Parse({"-h", "a.hlo", "b.hlo"}).help);
  // But an unknown option before it is still a mistake.
  EXPECT_EQ(ErrorOf({"--nope", "--help"}), "unknown option '--nope'");
}

TEST(CliArgs, NumbersAreCheckedWithTheFlagInTheMessage) {
  EXPECT_EQ(cli::ParseNonNegativeDouble("--timeout", "2.5"), 2.5);
  EXPECT_EQ(cli::ParsePositiveInt("-j", "8", 64), 8);
  for (const char* bad : {"", "-1", "1e999", "nan", "3x"}) {
    try {
      cli::ParseNonNegativeDouble("--timeout", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const cli::UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--timeout needs a non-negative number, got '") + bad + "'");
    }
  }
  for (const char* bad : {"0", "65", "-2", "1.5", ""}) {
    try {
      cli::ParsePositiveInt("-j", bad, 64);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const cli::UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("-j needs an integer from 1 to 64, got '") + bad + "'");
    }
  }
}

}  // namespace

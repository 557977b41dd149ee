// The real-model corpus through the proto path: text -> module -> proto -> module -> text must
// print exactly like text -> module -> text, with bit-identical constants; plus LoadModule and
// format detection.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "hlo.pb.h"

#include "hlo/module_io.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/proto_io.h"
#include "tests/hlo/proto_test_util.h"
#include "tests/test_support.h"

namespace {

std::unique_ptr<hlo::Module> ParseQuietly(const std::string& text, const std::string& name) {
  hlo::ParseOptions options;
  options.warn = [](const std::string&) {};  // elided-constant warnings are expected here
  return hlo::ParseHloText(text, name, options);
}

class ProtoCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(ProtoCorpus, TextProtoTextIsIdentical) {
  std::string text = testing_support::ReadFile(testing_support::CorpusPath(GetParam()));
  auto from_text = ParseQuietly(text, GetParam());
  for (bool wrap : {true, false}) {
    auto from_proto = hlo::ReadHloProto(hlo::WriteHloProto(*from_text, wrap), GetParam() + ".pb");
    ASSERT_EQ(hlo::PrintModule(*from_text), hlo::PrintModule(*from_proto));
    proto_test::ExpectSameModule(*from_text, *from_proto);  // incl. constant bits (ConstantAttrs ==)
  }
}

// XLA sees what it has fields for: in real dumps every metadata, sharding, frontend_attributes
// and backend_config text parses into XLA's field and regenerates exactly, so the Retarget
// extension needs no verbatim copy of them.
TEST_P(ProtoCorpus, KnownOpaqueAttributesMapToXlaFieldsExactly) {
  std::string text = testing_support::ReadFile(testing_support::CorpusPath(GetParam()));
  xla::HloModuleProto proto;
  ASSERT_TRUE(proto.ParseFromString(hlo::WriteHloProto(*ParseQuietly(text, GetParam()), false)));
  std::map<std::string, int> mapped, verbatim;
  for (const auto& c : proto.computations()) {
    for (const auto& i : c.instructions()) {
      for (const auto& a : i.retarget_opaque_attributes()) ++(a.has_value() ? verbatim : mapped)[a.name()];
    }
  }
  for (const char* name : {"metadata", "sharding", "frontend_attributes", "backend_config"}) {
    EXPECT_EQ(verbatim[name], 0) << name << " kept verbatim " << verbatim[name] << " times (mapped "
                                 << mapped[name] << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ProtoCorpus, ::testing::ValuesIn(testing_support::CorpusFiles()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// ----- a proto serialized by XLA itself -----------------------------------------------------------

// tests/data/proto/xla_sample.pb was written by jaxlib 0.10.2 (scripts/check_proto_with_jax.py
// --write-xla-sample); the expectations below are XLA's own text of that module.
TEST(XlaWrittenProto, ReadsAndVerifies) {
  hlo::LoadedModule loaded = hlo::LoadModule(testing_support::TestDataPath("proto/xla_sample.pb"));
  const hlo::Module& m = *loaded.module;
  EXPECT_EQ(m.name(), "jit_f");
  ASSERT_EQ(m.computations().size(), 5u);
  const hlo::Computation* main = m.entry();
  EXPECT_EQ(main->name(), "main.5");
  EXPECT_EQ(main->parameter_count(), 3);
  EXPECT_EQ(main->root()->name(), "tuple.5");
  // XLA text: while(tuple.4), condition=region_1.2, body=region_0.1
  const hlo::Instruction* loop = main->FindInstruction("while.1");
  EXPECT_EQ(proto_test::Names(loop->called_computations()),
            (std::vector<std::string>{"region_1.2", "region_0.1"}));
  // dot(Arg_0.5, Arg_1.5), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  const auto& dot = main->FindInstruction("dot.1")->attr<hlo::DotAttrs>().dnums;
  EXPECT_EQ(dot.lhs_contracting, std::vector<int64_t>{1});
  EXPECT_EQ(dot.rhs_contracting, std::vector<int64_t>{0});
  EXPECT_EQ(main->FindInstruction("reduce.3")->attr<hlo::DimensionsAttrs>().dimensions,
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(main->FindInstruction("compare.3")->attr<hlo::CompareAttrs>().direction,
            hlo::ComparisonDirection::kGt);
  EXPECT_EQ(main->FindInstruction("get-tuple-element.15")->attr<hlo::TupleIndexAttrs>().index, 1);
  // constant({1.5, -0, inf}) in bf16: 0x3fc0, 0x8000, 0x7f80.
  const auto& bf16 = main->FindInstruction("constant.13")->attr<hlo::ConstantAttrs>().literal;
  ASSERT_EQ(bf16.data<uint16_t>().size(), 3u);
  EXPECT_EQ(bf16.data<uint16_t>()[0], 0x3fc0);
  EXPECT_EQ(bf16.data<uint16_t>()[1], 0x8000);
  EXPECT_EQ(bf16.data<uint16_t>()[2], 0x7f80);
  EXPECT_EQ(main->FindInstruction("constant.11")->attr<hlo::ConstantAttrs>().literal.GetAsDouble(0),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(main->FindInstruction("Arg_1.5")->shape().ToString(), "f32[3,4]{1,0}");
  // Apart from metadata (which XLA's as_hlo_text() leaves out), the module prints exactly as XLA
  // printed it: XLA's spelled-out defaults (type=FLOAT, operand_precision={default,default},
  // scalar layouts) are dropped on reading.
  hlo::PrintOptions without_metadata;
  without_metadata.print_opaque_attributes = false;
  auto trim = [](std::string text) {  // XLA ends its text with a blank line, we do not
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  };
  EXPECT_EQ(trim(hlo::PrintModule(m, without_metadata)),
            trim(testing_support::ReadFile(testing_support::TestDataPath("proto/xla_sample.hlo"))));
  // What we read prints, parses and writes back to the same module.
  auto reparsed = ParseQuietly(hlo::PrintModule(m), "xla_sample.hlo");
  proto_test::ExpectSameModule(m, *reparsed);
  proto_test::ExpectSameModule(m, *hlo::ReadHloProto(hlo::WriteHloProto(m), "again.pb"));
}

// ----- LoadModule ---------------------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("retarget_proto_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& contents) const {
    std::string file = (path_ / name).string();
    std::ofstream(file, std::ios::binary) << contents;
    return file;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

constexpr const char* kSmallModule = R"(HloModule small

ENTRY main {
  a = f32[2]{0} parameter(0)
  c = f32[2]{0} constant({1.5, -0})
  ROOT s = f32[2]{0} add(a, c)
}
)";

TEST(LoadModule, ReadsTextAndKeepsSource) {
  TempDir dir;
  hlo::LoadedModule loaded = hlo::LoadModule(dir.Write("small.hlo", kSmallModule));
  EXPECT_EQ(loaded.module->name(), "small");
  EXPECT_EQ(loaded.source, kSmallModule);
}

TEST(LoadModule, ReadsProtoWhateverTheExtension) {
  TempDir dir;
  auto module = ParseQuietly(kSmallModule, "small.hlo");
  std::string file = dir.Write("small.hlo", hlo::WriteHloProto(*module, true));
  hlo::LoadedModule loaded = hlo::LoadModule(file);
  EXPECT_TRUE(loaded.source.empty());
  EXPECT_EQ(hlo::PrintModule(*loaded.module), hlo::PrintModule(*module));
}

TEST(LoadModule, MissingFileNamesThePath) {
  TempDir dir;
  std::string missing = dir.path() + "/nope.hlo";
  try {
    hlo::LoadModule(missing);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("cannot open '" + missing + "'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("No such file"), std::string::npos) << e.message();
    EXPECT_EQ(*e.location().file, missing);
  }
}

TEST(LoadModule, DirectoryIsAnError) {
  TempDir dir;
  try {
    hlo::LoadModule(dir.path());
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("is a directory"), std::string::npos) << e.message();
  }
}

TEST(LoadModule, GarbageFileIsAProtoErrorWithTheFileName) {
  TempDir dir;
  std::string file = dir.Write("junk.bin", "\x01\x02\x03 not hlo at all");
  try {
    hlo::LoadModule(file);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_EQ(*e.location().file, file);
    EXPECT_EQ(e.location().line, 0u);
  }
}

TEST(LooksLikeProto, TextAfterWhitespaceAndComments) {
  EXPECT_FALSE(hlo::LooksLikeProto("HloModule m"));
  EXPECT_FALSE(hlo::LooksLikeProto("\n\t  HloModule m"));
  EXPECT_FALSE(hlo::LooksLikeProto("// dumped by XLA\n/* a\n comment */ HloModule m"));
  EXPECT_TRUE(hlo::LooksLikeProto("\x0a\x04mainHloModule"));
  EXPECT_TRUE(hlo::LooksLikeProto(""));
  EXPECT_TRUE(hlo::LooksLikeProto("/* unterminated HloModule"));
  EXPECT_TRUE(hlo::LooksLikeProto("HloModul"));
}

}  // namespace

// The CPU backend's on-disk kernel cache (targets/cpu/kernel_cache.h): entries written whole and
// found again, a directory that cannot take them costs nothing, the second compile of a module
// loads its object (counter kernel_cache.hit) and computes what the first did, and a corrupt
// entry is rejected by the linker and compiled again from the IR.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iterator>
#include <string>
#include <vector>

#include "targets/cpu/cpu_backend.h"
#include "targets/cpu/kernel_cache.h"
#include "tests/test_support.h"
#include "tools/io/inputs.h"

namespace {

namespace fs = std::filesystem;

fs::path FreshDirectory(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("retarget_kernel_cache_test_" + name + "_" +
                                              std::to_string(::testing::UnitTest::GetInstance()
                                                                 ->random_seed()));
  fs::remove_all(dir);
  return dir;
}

using Objects = std::vector<std::string>;

TEST(KernelCache, StoresWholeEntriesAndFindsThem) {
  const fs::path dir = FreshDirectory("store");
  cpu::KernelCache cache(dir / "nested");
  EXPECT_FALSE(cache.Find("k1").has_value());
  const Objects two = {std::string("object\0bytes", 12), std::string("\n12\nsecond")};
  ASSERT_TRUE(cache.Store("k1", two));
  EXPECT_EQ(cache.Find("k1"), two);
  ASSERT_TRUE(cache.Store("k1", Objects{"replaced"}));
  EXPECT_EQ(cache.Find("k1"), Objects{"replaced"});
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir / "nested")) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "k1.objects");  // no temporary file left behind
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(KernelCache, AnEntryWhoseFramingDoesNotParseIsNotFound) {
  const fs::path dir = FreshDirectory("framing");
  cpu::KernelCache cache(dir);
  ASSERT_TRUE(cache.Store("k", Objects{"abc", "defg"}));
  std::ifstream in(dir / "k.objects", std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::vector<std::string> broken = {
      "",
      "not an entry",
      whole.substr(0, whole.size() - 1),  // the last object cut short
      whole + "x",                        // bytes after the last object
      std::string(whole).replace(whole.find("\n2\n"), 3, "\n9\n"),  // more objects than held
      std::string(whole).replace(whole.find("\n3\n"), 3, "\n-\n"),  // a size that is no number
  };
  for (const std::string& bytes : broken) {
    std::ofstream(dir / "k.objects", std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_FALSE(cache.Find("k").has_value()) << bytes;
  }
  fs::remove_all(dir);
}

TEST(KernelCache, ADirectoryThatCannotBeCreatedStoresNothing) {
  const fs::path dir = FreshDirectory("blocked");
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "a file where the cache directory would go";
  cpu::KernelCache cache(dir / "file" / "cache");
  EXPECT_FALSE(cache.Store("k", Objects{"object"}));
  EXPECT_FALSE(cache.Find("k").has_value());
  fs::remove_all(dir);
}

TEST(KernelCache, DefaultDirectoryFollowsTheEnvironment) {
  // Saved and restored: the suite may run under a RETARGET_CACHE_DIR of its own.
  auto save = [](const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  auto restore = [](const char* name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  };
  const std::optional<std::string> cache_dir = save("RETARGET_CACHE_DIR");
  const std::optional<std::string> xdg = save("XDG_CACHE_HOME");
  setenv("RETARGET_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(cpu::DefaultKernelCacheDirectory(), fs::path("/some/where"));
  setenv("RETARGET_CACHE_DIR", "off", 1);
  EXPECT_TRUE(cpu::DefaultKernelCacheDirectory().empty());
  setenv("RETARGET_CACHE_DIR", "", 1);
  EXPECT_TRUE(cpu::DefaultKernelCacheDirectory().empty());
  unsetenv("RETARGET_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(cpu::DefaultKernelCacheDirectory(), fs::path("/xdg/retarget/cpu-kernels"));
  restore("RETARGET_CACHE_DIR", cache_dir);
  restore("XDG_CACHE_HOME", xdg);
}

const char kModule[] = R"(
HloModule cached
ENTRY e {
  x = f32[64,33] parameter(0)
  y = f32[64,33] parameter(1)
  t = f32[64,33] tanh(x)
  ROOT r = f32[64,33] multiply(t, y)
})";

struct Compiled {
  hlo::Literal result;
  std::map<std::string, double> counters;
};

Compiled CompileAndRun(const fs::path& dir, const hlo::Module& module) {
  cpu::CpuBackendOptions options;
  options.cache_dir = dir.string();
  auto executable = cpu::MakeCpuBackend(options)->Compile(module);
  Compiled compiled;
  compiled.result = executable->Run(io::MakeRandomInputs(module, 3));
  compiled.counters = executable->profile().counters;
  return compiled;
}

TEST(KernelCache, SecondCompileLoadsTheObjectAndComputesTheSame) {
  const fs::path dir = FreshDirectory("backend");
  auto module = testing_support::ParseAndVerify(kModule);
  const Compiled first = CompileAndRun(dir, *module);
  EXPECT_EQ(first.counters.at("kernel_cache.hit"), 0);
  EXPECT_EQ(first.counters.at("kernel_cache.stored"), 1);
  const Compiled second = CompileAndRun(dir, *module);
  EXPECT_EQ(second.counters.at("kernel_cache.hit"), 1);
  EXPECT_TRUE(second.result.BitwiseEqual(first.result));

  // A different module is a different key.
  auto other = testing_support::ParseAndVerify(std::string(kModule).replace(
      std::string(kModule).find("multiply"), 8, "add"));
  EXPECT_EQ(CompileAndRun(dir, *other).counters.at("kernel_cache.hit"), 0);

  // Corrupt every entry's object (keeping the framing): the linker rejects it and the compile
  // goes through LLVM again.
  for (const auto& entry : fs::directory_iterator(dir))
    cpu::KernelCache(dir).Store(entry.path().stem().string(), Objects{"not an object file"});
  const Compiled recovered = CompileAndRun(dir, *module);
  EXPECT_EQ(recovered.counters.at("kernel_cache.unusable"), 1);
  EXPECT_EQ(recovered.counters.at("kernel_cache.hit"), 0);
  EXPECT_TRUE(recovered.result.BitwiseEqual(first.result));
  fs::remove_all(dir);
}

}  // namespace

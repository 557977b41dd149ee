// Tests of simulator/memory.h: sparse DRAM (zero fill, page-crossing copies, written ranges),
// the bounds checks of every memory, and the accumulators' read-before-write detection.
#include "simulator/memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <numeric>
#include <vector>

#include "hlo/diagnostic.h"
#include "hlo/literal.h"

namespace simulator {
namespace {

using ::testing::HasSubstr;
using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(DramTest, UnwrittenBytesReadAsZero) {
  Dram dram(int64_t{1} << 40);  // 1 TiB configured, nothing allocated until written
  std::vector<uint8_t> out(16, 0xAB);
  dram.Read((uint64_t{1} << 40) - 16, out);
  EXPECT_EQ(out, std::vector<uint8_t>(16, 0));
  EXPECT_TRUE(dram.WrittenRanges().empty());
}

TEST(DramTest, PageLookupCacheSeesPagesCreatedLater) {
  // Read a page before it exists (cached as never written), then write into it and into the
  // middle of a fresh page: reads see the new bytes, and the rest of each page stays zero.
  Dram dram(1 << 20);
  std::vector<uint8_t> out(4, 0xAB);
  dram.Read(70000, out);
  EXPECT_EQ(out, std::vector<uint8_t>(4, 0));
  const std::vector<uint8_t> data = {1, 2, 3, 4};
  dram.Write(70001, data);
  dram.Read(70000, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 1, 2, 3}));
  dram.Write(200000, data);  // another page; then back to the first one
  std::vector<uint8_t> around(8, 0xAB);
  dram.Read(199998, around);
  EXPECT_EQ(around, (std::vector<uint8_t>{0, 0, 1, 2, 3, 4, 0, 0}));
  dram.Read(70004, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{4, 0, 0, 0}));
  // The pages move with the DRAM; the lookup cache starts over.
  Dram moved = std::move(dram);
  moved.Read(70000, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 1, 2, 3}));
}

// A host array of `count` bytes 1, 2, 3, ... (mod 251) as a u8 literal.
hlo::Literal Bytes(int64_t count) {
  hlo::Literal array(hlo::Shape::Array(hlo::PrimitiveType::kU8, {count}));
  for (int64_t i = 0; i < count; ++i) array.SetFromInt64(i, 1 + i % 251);
  return array;
}

TEST(DramTest, MappedArrayIsReadWithoutACopyUntilWritten) {
  Dram dram(1 << 24);
  const hlo::Literal host = Bytes(200000);  // spans four 64 KiB pages
  const uint64_t at = 100000;               // not page-aligned
  dram.Map(at, host);
  std::vector<uint8_t> out(6, 0xAB);
  dram.Read(at - 3, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(dram.WrittenRanges(), (Ranges{{at, at + 200000}}));
  // Reading it back as an array shares the host's bytes.
  std::optional<hlo::Literal> view = dram.MappedArray(at, host.shape());
  ASSERT_TRUE(view.has_value());
  EXPECT_TRUE(view->SharesBytesWith(host));
  EXPECT_FALSE(dram.MappedArray(at + 1, host.shape()).has_value());  // not where it starts
  // A write next to the array (its page is copied) leaves it mapped and its bytes intact.
  const std::vector<uint8_t> two = {7, 7};
  dram.Write(at - 2, two);
  dram.Read(at - 3, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 7, 7, 1, 2, 3}));
  EXPECT_TRUE(dram.MappedArray(at, host.shape()).has_value());
  // A write into it copies the page it lands in; the host's literal is unchanged, and the
  // array no longer reads back as the host's.
  dram.Write(at + 70000, two);
  dram.Read(at + 69999, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{host.data<uint8_t>()[69999], 7, 7,
                                       host.data<uint8_t>()[70002], host.data<uint8_t>()[70003],
                                       host.data<uint8_t>()[70004]}));
  EXPECT_EQ(host.data<uint8_t>()[70000], 1 + 70000 % 251);
  EXPECT_FALSE(dram.MappedArray(at, host.shape()).has_value());
  std::vector<uint8_t> tail(4);
  dram.Read(at + 199998, tail);
  EXPECT_EQ(tail, (std::vector<uint8_t>{host.data<uint8_t>()[199998],
                                        host.data<uint8_t>()[199999], 0, 0}));
}

TEST(DramTest, MappingOverAnotherKeepsWhatLiesOutside) {
  Dram dram(1 << 24);
  const hlo::Literal first = Bytes(300000);
  dram.Map(0, first);
  const std::vector<uint8_t> written = {9, 9, 9, 9};
  dram.Write(150000, written);  // a page of `first` copied and changed
  hlo::Literal second(hlo::Shape::Array(hlo::PrimitiveType::kU8, {100000}));
  for (int64_t i = 0; i < 100000; ++i) second.SetFromInt64(i, 200);
  dram.Map(100000, second);  // covers the written bytes; `first` survives around it
  std::vector<uint8_t> out(4);
  dram.Read(99998, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{first.data<uint8_t>()[99998],
                                       first.data<uint8_t>()[99999], 200, 200}));
  dram.Read(150000, out);
  EXPECT_EQ(out, std::vector<uint8_t>(4, 200));
  dram.Read(199998, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{200, 200, first.data<uint8_t>()[200000],
                                       first.data<uint8_t>()[200001]}));
  dram.Read(299999, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{first.data<uint8_t>()[299999], 0, 0, 0}));
  EXPECT_TRUE(dram.MappedArray(100000, second.shape()).has_value());
  EXPECT_FALSE(dram.MappedArray(0, first.shape()).has_value());
}

TEST(DramTest, MappingOverAWrittenArrayKeepsItsWrittenBytes) {
  // A host array's buffer reused by the program (written), then part of it remapped to a host
  // step's result: the written bytes outside the new array stay as written, not as mapped.
  Dram dram(1 << 20);
  const hlo::Literal table = Bytes(640);
  dram.Map(0, table);
  const std::vector<uint8_t> computed(192, 42);
  dram.Write(0, computed);
  hlo::Literal result(hlo::Shape::Array(hlo::PrimitiveType::kU8, {64}));
  dram.Map(256, result);  // zeros
  std::vector<uint8_t> out(640);
  dram.Read(0, out);
  for (size_t i = 0; i < 640; ++i) {
    const int expected = i < 192 ? 42 : (i >= 256 && i < 320) ? 0 : table.data<uint8_t>()[i];
    ASSERT_EQ(out[i], expected) << i;
  }
}

TEST(DramTest, WriteCrossingAPageBoundaryReadsBack) {
  Dram dram(1 << 20);
  std::vector<uint8_t> data(100);
  std::iota(data.begin(), data.end(), 1);
  const uint64_t at = 64 * 1024 - 37;  // straddles the first 64 KiB page boundary
  dram.Write(at, data);
  std::vector<uint8_t> out(102);
  dram.Read(at - 1, out);
  EXPECT_EQ(out.front(), 0);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[37], 37);   // last byte of the first page
  EXPECT_EQ(out[38], 38);   // first byte of the second page
  EXPECT_EQ(out[100], 100);
  EXPECT_EQ(out.back(), 0);
  EXPECT_EQ(dram.WrittenRanges(), (Ranges{{at, at + 100}}));
}

TEST(DramTest, WrittenRangesAreSortedAndMerged) {
  Dram dram(4096);
  std::array<uint8_t, 10> ten{};
  dram.Write(100, ten);  // [100,110)
  dram.Write(10, ten);   // [10,20)
  dram.Write(105, ten);  // overlaps: [100,115)
  dram.Write(20, ten);   // adjacent: [10,30)
  dram.Write(500, {});   // empty writes record nothing
  EXPECT_EQ(dram.WrittenRanges(), (Ranges{{10, 30}, {100, 115}}));
}

TEST(DramTest, ManyScatteredWritesStayCorrect) {
  Dram dram(1 << 20);
  std::array<uint8_t, 1> one{7};
  for (uint64_t i = 0; i < 10000; ++i) dram.Write(i * 4, one);  // 10000 disjoint ranges
  for (uint64_t i = 0; i < 10000; ++i) dram.Write(i * 4 + 1, one);  // extend each to 2 bytes
  const Ranges ranges = dram.WrittenRanges();
  ASSERT_EQ(ranges.size(), 10000u);
  EXPECT_EQ(ranges[9999], (std::pair<uint64_t, uint64_t>{39996, 39998}));
}

TEST(DramTest, OutOfRangeAccessesThrow) {
  Dram dram(1000);
  std::vector<uint8_t> buf(10);
  try {
    dram.Read(995, buf);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("DRAM access of 10 bytes at offset 995"));
    EXPECT_THAT(e.message(), HasSubstr("1000 bytes"));
  }
  EXPECT_THROW(dram.Write(~uint64_t{0} - 2, buf), hlo::Error);  // would wrap around
  EXPECT_NO_THROW(dram.Write(990, buf));                         // exactly fits
}

TEST(LocalMemoryTest, BoundsAndReadBack) {
  LocalMemory ub("unified buffer", 64, /*track_writes=*/false);
  EXPECT_EQ(ub.capacity(), 64);
  auto w = ub.Write(60, 4);
  w[3] = 42;
  EXPECT_EQ(ub.Read(63, 1)[0], 42);
  EXPECT_EQ(ub.Read(0, 1)[0], 0);  // the UB does not track writes: zero, no error
  try {
    ub.Read(60, 5);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("unified buffer access of 5 bytes at offset 60"));
  }
  EXPECT_THROW(ub.Write(65, 0), hlo::Error);
  EXPECT_NO_THROW(ub.Write(64, 0));
}

TEST(LocalMemoryTest, TrackedReadBeforeWriteNamesTheFirstUnwrittenByte) {
  LocalMemory acc("accumulators", 32, /*track_writes=*/true);
  acc.Write(0, 8);
  EXPECT_NO_THROW(acc.Read(0, 8));
  try {
    acc.Read(4, 8);
    FAIL() << "expected an error";
  } catch (const hlo::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("accumulators byte 8 is read before it was written"));
  }
}

TEST(MemoriesTest, LocalAddressSelectsTheMemory) {
  systolic::ArchConfig config = systolic::Preset("gemmini");
  Memories memories(config);
  EXPECT_EQ(memories.ub.capacity(), 256 * 1024);
  EXPECT_EQ(memories.acc.capacity(), 64 * 1024);
  EXPECT_EQ(&memories.Local(0x100), &memories.ub);
  EXPECT_EQ(&memories.Local(systolic::kAccumulatorBit | 0x100), &memories.acc);
  EXPECT_EQ(Memories::LocalOffset(systolic::kAccumulatorBit | 0x100), 0x100u);
  EXPECT_EQ(memories.dram.capacity(), int64_t{2} << 30);
}

}  // namespace
}  // namespace simulator

// Tests of compiler/memory: the memory-minimizing schedule, best-fit heap packing and buffer
// assignment (liveness, aliasing, in-place reuse, peak memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/memory/buffer_assignment.h"
#include "compiler/memory/heap_packing.h"
#include "compiler/memory/schedule.h"
#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "hlo/module_io.h"
#include "tests/test_support.h"
#include "targets/descriptions.h"

namespace {

using compiler::AssignBuffers;
using compiler::BufferAssignment;
using compiler::LogicalBuffer;

std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  return testing_support::ParseAndVerify(text);
}

std::unique_ptr<hlo::Module> LoadCorpus(const std::string& file) {
  return hlo::LoadModule(testing_support::CorpusPath(file)).module;
}

// Every instruction exactly once, each operand before its users.
void ExpectValidSchedule(const hlo::Computation& computation,
                         const std::vector<const hlo::Instruction*>& order) {
  ASSERT_EQ(order.size(), computation.instructions().size()) << computation.name();
  std::unordered_map<const hlo::Instruction*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_TRUE(position.emplace(order[i], i).second) << "scheduled twice: " << order[i]->name();
  }
  for (const auto& inst : computation.instructions()) {
    ASSERT_TRUE(position.count(inst.get())) << "missing " << inst->name();
    for (const hlo::Instruction* operand : inst->operands()) {
      EXPECT_LT(position.at(operand), position.at(inst.get()))
          << operand->name() << " must precede " << inst->name();
    }
  }
}

// Peak of simultaneously live result bytes for an order, computed the simple way: a result
// (other than a parameter) lives from its position to its last user's position; the root
// lives to the end. No aliasing or reuse: meant for the tuple-free crafted examples.
int64_t NaivePeak(const hlo::Computation& computation,
                  const std::vector<const hlo::Instruction*>& order) {
  std::unordered_map<const hlo::Instruction*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  std::vector<int64_t> delta(order.size() + 2, 0);
  for (const hlo::Instruction* inst : order) {
    if (inst->opcode() == hlo::Opcode::kParameter || inst->shape().IsTuple()) continue;
    size_t last = position[inst];
    for (const hlo::Instruction* user : inst->users()) last = std::max(last, position[user]);
    if (inst == computation.root()) last = order.size();
    const int64_t bytes = inst->shape().ElementCount() * hlo::ByteSize(inst->shape().type);
    delta[position[inst]] += bytes;
    delta[last + 1] -= bytes;
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  return peak;
}

std::vector<const hlo::Instruction*> DefinitionOrder(const hlo::Computation& computation) {
  std::vector<const hlo::Instruction*> order;
  for (const auto& inst : computation.instructions()) order.push_back(inst.get());
  return order;
}

// Three 4 KiB temporaries defined before any of them is reduced: in definition order all three
// are live at once; a good schedule reduces each one right after computing it.
constexpr const char* kThreeBranches = R"(
HloModule three
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1024] parameter(0)
  zero = f32[] constant(0)
  x = f32[1024] exponential(p)
  y = f32[1024] negate(p)
  z = f32[1024] sine(p)
  rx = f32[] reduce(x, zero), dimensions={0}, to_apply=add
  ry = f32[] reduce(y, zero), dimensions={0}, to_apply=add
  rz = f32[] reduce(z, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[], f32[]) tuple(rx, ry, rz)
})";

TEST(Schedule, BeatsDefinitionOrderOnACraftedExample) {
  auto m = Parse(kThreeBranches);
  const hlo::Computation& entry = *m->entry();
  std::vector<const hlo::Instruction*> order = compiler::ScheduleComputation(entry);
  ExpectValidSchedule(entry, order);
  // Definition order: x, y, z (3 x 4096 bytes) are all live when rx is computed, next to the
  // constant and rx (4 bytes each).
  EXPECT_EQ(NaivePeak(entry, DefinitionOrder(entry)), 3 * 4096 + 4 + 4);
  // Scheduled: one 4096-byte temporary at a time, next to the constant and finished scalars.
  EXPECT_LE(NaivePeak(entry, order), 4096 + 4 * 4);
  // Each reduce directly follows its operand.
  std::unordered_map<std::string, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]->name()] = i;
  EXPECT_EQ(pos["rx"], pos["x"] + 1);
  EXPECT_EQ(pos["ry"], pos["y"] + 1);
  EXPECT_EQ(pos["rz"], pos["z"] + 1);
  // Deterministic.
  EXPECT_EQ(order, compiler::ScheduleComputation(entry));
}

TEST(Schedule, KeepsSideEffectingInstructionsInOrder) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  big = f32[4096] broadcast(one), dimensions={}
  a = f32[4] custom-call(p), custom_call_target="first", custom_call_has_side_effect=true
  b = f32[4] custom-call(p), custom_call_target="second", custom_call_has_side_effect=true
  ROOT t = (f32[4], f32[4], f32[4096]) tuple(b, a, big)
})");
  std::vector<const hlo::Instruction*> order = compiler::ScheduleComputation(*m->entry());
  ExpectValidSchedule(*m->entry(), order);
  auto at = [&](const std::string& name) {
    return std::find_if(order.begin(), order.end(),
                        [&](const hlo::Instruction* i) { return i->name() == name; }) -
           order.begin();
  };
  EXPECT_LT(at("a"), at("b"));
}

TEST(Schedule, ValidOnEveryCorpusModule) {
  for (const std::string& file : testing_support::CorpusFiles()) {
    SCOPED_TRACE(file);
    auto m = LoadCorpus(file);
    for (const auto& computation : m->computations()) {
      ExpectValidSchedule(*computation, compiler::ScheduleComputation(*computation));
    }
  }
}

TEST(HeapPacking, BestFitReusesAHoleAndAligns) {
  // A [0,1] 100 B, B [0,3] 50 B, C [2,3] 100 B, aligned to 64: A -> 128 B at 0 (largest
  // first), B -> 64 B at 128; A dies after 1, so C (128 B) fits A's hole at 0. High water 192.
  std::vector<compiler::memory::HeapBlock> blocks = {{100, 0, 1}, {50, 0, 3}, {100, 2, 3}};
  compiler::memory::HeapPacking packing = compiler::memory::PackBestFit(blocks, 4, 64);
  EXPECT_EQ(packing.offsets, (std::vector<int64_t>{0, 128, 0}));
  EXPECT_EQ(packing.size, 192);
  EXPECT_EQ(packing.max_live_bytes, 192);
}

TEST(HeapPacking, PicksTheSmallestHoleThatFits) {
  // t=0: 300 B @0, then 10 B @300 (largest first); t=1: 100 B @310, 10 B @410. After t=1 the
  // 300-byte hole [0,300) and the 100-byte hole [310,410) are free (separated by live 10-byte
  // blocks); a 90-byte block goes into the 100-byte hole (best fit), not the first one.
  std::vector<compiler::memory::HeapBlock> blocks = {
      {300, 0, 1}, {10, 0, 5}, {100, 1, 1}, {10, 1, 5}, {90, 2, 5}};
  compiler::memory::HeapPacking packing = compiler::memory::PackBestFit(blocks, 6, 1);
  EXPECT_EQ(packing.offsets, (std::vector<int64_t>{0, 300, 310, 410, 310}));
  EXPECT_EQ(packing.size, 420);
}

TEST(HeapPacking, RejectsARangeOutsideTheSchedule) {
  std::vector<compiler::memory::HeapBlock> blocks = {{8, 3, 2}};
  try {
    compiler::memory::PackBestFit(blocks, 4, 1);
    FAIL() << "expected hlo::Error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("live range [3, 2]"), std::string::npos) << e.message();
  }
}

// The buffer whose storage `b` ends up in (following in-place reuse).
int64_t StorageOf(const BufferAssignment& a, int64_t b) {
  while (a.buffers()[static_cast<size_t>(b)].shares_with >= 0) {
    b = a.buffers()[static_cast<size_t>(b)].shares_with;
  }
  return b;
}

// No two buffers in different storage that are live at the same time share a byte.
void ExpectNoOverlap(const BufferAssignment& a) {
  const auto& buffers = a.buffers();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const LogicalBuffer& x = buffers[i];
    ASSERT_GE(x.allocation, 0) << x.instruction->name();
    const auto& alloc = a.allocations()[static_cast<size_t>(x.allocation)];
    EXPECT_LE(x.offset + x.size, alloc.size) << x.instruction->name();
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const LogicalBuffer& y = buffers[j];
      if (x.allocation != y.allocation || x.size == 0 || y.size == 0) continue;
      if (StorageOf(a, static_cast<int64_t>(i)) == StorageOf(a, static_cast<int64_t>(j))) continue;
      const bool live_together = x.live_start <= y.live_end && y.live_start <= x.live_end;
      const bool bytes_overlap = x.offset < y.offset + y.size && y.offset < x.offset + x.size;
      EXPECT_FALSE(live_together && bytes_overlap)
          << x.instruction->name() << " and " << y.instruction->name() << " overlap";
    }
  }
}

// Largest sum of live temporary bytes at any position, from the buffer list (shared storage
// counted once).
int64_t LargestLiveSet(const BufferAssignment& a) {
  int64_t n = static_cast<int64_t>(a.schedule().size());
  std::vector<int64_t> live(static_cast<size_t>(n + 1), 0);
  std::map<int64_t, std::pair<int64_t, int64_t>> storage_range;  // storage -> [start, end]
  std::map<int64_t, int64_t> storage_size;
  for (size_t b = 0; b < a.buffers().size(); ++b) {
    const LogicalBuffer& x = a.buffers()[b];
    const compiler::Allocation& allocation = a.allocations()[static_cast<size_t>(x.allocation)];
    if (allocation.kind != compiler::AllocationKind::kTemp) continue;
    const int64_t s = StorageOf(a, static_cast<int64_t>(b));
    auto [it, fresh] = storage_range.emplace(s, std::make_pair(x.live_start, x.live_end));
    it->second.first = std::min(it->second.first, x.live_start);
    it->second.second = std::max(it->second.second, x.live_end);
    storage_size[s] = std::max(storage_size[s], x.size);
  }
  for (const auto& [s, range] : storage_range) {
    for (int64_t t = range.first; t <= range.second; ++t) {
      live[static_cast<size_t>(t)] += storage_size[s];
    }
  }
  return *std::max_element(live.begin(), live.end());
}

TEST(BufferAssignment, ElementwiseChainReusesOneBuffer) {
  auto m = Parse(R"(
HloModule chain
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] exponential(p)
  b = f32[1024] negate(a)
  c = f32[1024] sine(b)
  d = f32[1024] multiply(c, c)
  e = f32[1024] tanh(d)
  ROOT f = f32[1024] abs(e)
})");
  BufferAssignment a = AssignBuffers(*m, targets::CpuDescription());
  ExpectNoOverlap(a);
  // Parameter (caller-owned) + one temporary written in place six times: 2 buffers, not 7.
  EXPECT_EQ(a.peak_bytes(), 2 * 4096) << a.ToString();
  EXPECT_EQ(a.temp_bytes(), 4096);
  EXPECT_EQ(a.parameter_bytes(), 4096);
  for (const LogicalBuffer& buffer : a.buffers()) {
    if (buffer.instruction->name() == "b") {
      ASSERT_GE(buffer.shares_with, 0);
      EXPECT_EQ(a.buffers()[static_cast<size_t>(buffer.shares_with)].instruction->name(), "a");
    }
    if (buffer.instruction->name() == "a") {
      EXPECT_EQ(buffer.shares_with, -1);  // never into the caller-owned parameter
    }
  }
  EXPECT_NE(a.ToString().find("in-place over a"), std::string::npos) << a.ToString();
}

TEST(BufferAssignment, NoInPlaceWhenTheOperandIsStillNeededOrSizesDiffer) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] exponential(p)
  b = f32[1024] negate(a)
  h = bf16[1024] convert(b)
  ROOT t = (f32[1024], bf16[1024]) tuple(a, h)
})");
  BufferAssignment a = AssignBuffers(*m, targets::CpuDescription());
  ExpectNoOverlap(a);
  for (const LogicalBuffer& buffer : a.buffers()) EXPECT_EQ(buffer.shares_with, -1);
  // a (live-out) and b are live together when b is made; h (2 KiB, live-out) needs its own
  // space next to b: 4096 + 4096 + 2048 temporaries, plus the 4 KiB parameter.
  EXPECT_EQ(a.temp_bytes(), 4096 + 4096 + 2048) << a.ToString();
  EXPECT_EQ(a.peak_bytes(), 4096 + a.temp_bytes());
}

// A Sharding annotation of one device computes nothing: its value is its operand's buffer, like a
// bitcast's (compiler::memory::IsAliasing). One whose shape differs from its operand's (a
// memory-space move) is a copy and has a buffer of its own.
TEST(BufferAssignment, AnnotationsAliasTheirOperand) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  a = f32[16] exponential(p)
  s = f32[16] custom-call(a), custom_call_target="Sharding", sharding={replicated}
  h = f32[16]{0:S(5)} custom-call(s), custom_call_target="MoveToHost"
  ROOT n = f32[16] negate(h)
})");
  BufferAssignment a = AssignBuffers(*m, targets::CpuDescription());
  std::set<std::string> owners;
  for (const LogicalBuffer& buffer : a.buffers()) owners.insert(buffer.instruction->name());
  EXPECT_EQ(owners, (std::set<std::string>{"p", "a", "h", "n"}));
}

TEST(BufferAssignment, TuplesAndBitcastsAliasTheirOperands) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  a = f32[16] exponential(p)
  b = f32[4,4] bitcast(a)
  t = (f32[16], f32[4,4]) tuple(a, b)
  g = f32[4,4] get-tuple-element(t), index=1
  ROOT n = f32[4,4] negate(g)
})");
  BufferAssignment a = AssignBuffers(*m, targets::CpuDescription());
  std::set<std::string> owners;
  for (const LogicalBuffer& buffer : a.buffers()) owners.insert(buffer.instruction->name());
  EXPECT_EQ(owners, (std::set<std::string>{"p", "a", "n"}));
  // n reads a (through bitcast, tuple and get-tuple-element) for the last time: in place.
  EXPECT_EQ(a.temp_bytes(), 64);
}

TEST(BufferAssignment, WhileBodyPeakIsAddedAtTheCallPoint) {
  auto m = Parse(R"(
HloModule m
body {
  s = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[256] get-tuple-element(s), index=1
  fi = f32[] convert(i)
  big = f32[4096] broadcast(fi), dimensions={}
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  sl = f32[256] slice(big), slice={[0:256]}
  x2 = f32[256] add(x, sl)
  ROOT r = (s32[], f32[256]) tuple(i2, x2)
}
cond {
  s = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  p = f32[256] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[256]) tuple(z, p)
  w = (s32[], f32[256]) while(init), condition=cond, body=body
  ROOT out = f32[256] get-tuple-element(w), index=1
})");
  BufferAssignment a = AssignBuffers(*m, targets::CpuDescription());
  // The body's own peak includes its 16 KiB broadcast; the caller adds it on top.
  EXPECT_GE(a.nested_peak_bytes(), 16384);
  EXPECT_GE(a.peak_bytes(), a.parameter_bytes() + a.constant_bytes() + a.nested_peak_bytes());
  EXPECT_GT(a.peak_bytes(), a.parameter_bytes() + a.constant_bytes() + a.temp_bytes());
}

TEST(BufferAssignment, ModuleWithoutEntryIsAnError) {
  hlo::Module empty("empty");
  try {
    AssignBuffers(empty, targets::CpuDescription());
    FAIL() << "expected hlo::Error";
  } catch (const hlo::Error& e) {
    EXPECT_NE(e.message().find("has no entry computation"), std::string::npos) << e.message();
  }
}

TEST(BufferAssignment, NoOverlapOnSmallCorpusModules) {
  for (const char* file : {"layer_norm_1x4096x768_bf16.hlo", "mha_block_1x12x128x64_bf16.hlo",
                           "dlrm_keras_jax_f32_test_step.hlo", "topk_logits_k10_1x50000_bf16.hlo",
                           "dynamic_slice_loop_1x2048x768_bf16.hlo"}) {
    SCOPED_TRACE(file);
    auto m = LoadCorpus(file);
    BufferAssignment a = AssignBuffers(*m, targets::GpuDescription());
    ExpectNoOverlap(a);
    // Offsets honour the target's 256-byte alignment.
    for (const LogicalBuffer& buffer : a.buffers()) {
      if (a.allocations()[static_cast<size_t>(buffer.allocation)].kind ==
          compiler::AllocationKind::kTemp) {
        EXPECT_EQ(buffer.offset % 256, 0) << buffer.instruction->name();
      }
    }
  }
}

TEST(BufferAssignment, PlausiblePeaksForModels) {
  for (const char* file : {"mha_block_1x12x128x64_bf16.hlo", "layer_norm_1x4096x768_bf16.hlo",
                           "resnet50_keras_jax_f32.hlo"}) {
    auto m = LoadCorpus(file);
    BufferAssignment a = AssignBuffers(*m, targets::CpuDescription());
    const int64_t live = LargestLiveSet(a);
    std::printf("%-36s peak %12lld B (params %lld, constants %lld, temp %lld, max live %lld)\n",
                file, static_cast<long long>(a.peak_bytes()),
                static_cast<long long>(a.parameter_bytes()),
                static_cast<long long>(a.constant_bytes()), static_cast<long long>(a.temp_bytes()),
                static_cast<long long>(live));
    EXPECT_GE(a.temp_bytes(), live) << file;
    EXPECT_GE(a.peak_bytes(), a.parameter_bytes() + a.constant_bytes() + live) << file;
    // The packing wastes little: within 2x of the largest live set (plus alignment slack).
    EXPECT_LE(a.temp_bytes(), 2 * live + 64 * static_cast<int64_t>(a.buffers().size())) << file;
  }
}

// After each target's pipeline (fusions, copies from layout assignment) the assignment is still
// consistent, and fusion does not raise the peak: fused intermediates never reach memory.
TEST(BufferAssignment, ConsistentAfterTargetPipelines) {
  for (const char* file : {"mha_block_1x12x128x64_bf16.hlo", "layer_norm_1x4096x768_bf16.hlo"}) {
    auto module = LoadCorpus(file);
    const int64_t unfused = AssignBuffers(*module, targets::CpuDescription()).peak_bytes();
    for (const char* target_name : {"cpu", "gpu", "systolic"}) {
      SCOPED_TRACE(std::string(file) + " on " + target_name);
      const compiler::TargetDescription& target = *targets::FindDescription(target_name);
      auto optimized = module->Clone();
      compiler::MakeTargetPipeline(target).Run(*optimized);
      BufferAssignment a = AssignBuffers(*optimized, target);
      ExpectNoOverlap(a);
      std::printf("%-36s %-8s peak %10lld B (unoptimized %lld B)\n", file, target_name,
                  static_cast<long long>(a.peak_bytes()), static_cast<long long>(unfused));
      EXPECT_LE(a.peak_bytes(), unfused + 4096);  // + alignment slack of the 256-byte targets
    }
  }
}

// The optimizer's largest corpus module: buffers never overlap while live and the peak is what
// the live set needs. (How long assignment takes is measured in bench/compiler_bench.cc.)
TEST(BufferAssignment, Gemma3BuffersDoNotOverlap) {
  auto m = LoadCorpus("gemma3_1b_flax_call.hlo");
  BufferAssignment a = AssignBuffers(*m, targets::CpuDescription());
  ExpectNoOverlap(a);
  EXPECT_GE(a.temp_bytes(), LargestLiveSet(a));
  EXPECT_GT(a.temp_bytes(), 0);
}

}  // namespace

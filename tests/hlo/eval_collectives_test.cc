// Collectives on several devices (hlo/multi_device.h): every collective and its group modes
// against values computed by hand, the -start/-done forms, collectives inside loops, and the
// errors a run must report instead of hanging (groups outside the grid, deadlocks).
// XLA:CPU itself checks the same semantics on JAX programs: tests/xla/xla_collectives.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlo/multi_device.h"
#include "hlo/printer.h"
#include "hlo/proto_io.h"
#include "tests/hlo/eval_test_util.h"

namespace {

using namespace eval_test;  // NOLINT: the evaluator tests' helpers
constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType S32 = PrimitiveType::kS32;

const char* const kSums = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sub {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT d = s32[] subtract(a, b)
}
)";

// Runs `text` on `devices` devices (the grid the module's header declares when it matches),
// device d's single argument from make(d).
template <typename Make>
std::vector<Literal> RunOnDevices(const std::string& text, int64_t devices, Make make) {
  auto module = testing_support::ParseAndVerify(text);
  const hlo::DeviceGrid grid = hlo::GridForDevices(*module, devices);
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < devices; ++d) {
    arguments.emplace_back();
    arguments.back().push_back(make(d));
  }
  return hlo::EvaluateOnDevices(*module, grid, arguments);
}

std::string ErrorOf(const std::string& text, int64_t devices) {
  try {
    RunOnDevices(text, devices, [](int64_t d) { return Make(F32, {2}, {1.0 * d, 2.0 * d}); });
  } catch (const hlo::Error& e) {
    return e.message();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(EvalCollectives, ModuleHeaderGivesTheGrid) {
  auto module = testing_support::ParseAndVerify(
      "HloModule m, replica_count=2, num_partitions=3\nENTRY e {\n  ROOT p = f32[] constant(0)\n}\n");
  hlo::DeviceGrid grid = hlo::ModuleDeviceGrid(*module);
  EXPECT_EQ(grid.replicas, 2);
  EXPECT_EQ(grid.partitions, 3);
  EXPECT_EQ(hlo::GridForDevices(*module, 12).replicas, 4);
  EXPECT_EQ(hlo::GridForDevices(*module, 1).size(), 1);
  EXPECT_THROW(hlo::GridForDevices(*module, 4), hlo::Error);  // not a multiple of 3 partitions
}

TEST(EvalCollectives, EveryCollectiveOverFourPartitions) {
  std::string text = std::string("HloModule m, num_partitions=4\n") + kSums + R"(
ENTRY e {
  p = f32[4,2] parameter(0)
  sum = f32[4,2] all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
  pairs = f32[4,2] all-reduce(p), channel_id=2, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  gathered = f32[4,8] all-gather(p), channel_id=3, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
  scattered = f32[1,2] reduce-scatter(p), channel_id=4, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true, to_apply=add
  swapped = f32[4,2] all-to-all(p), channel_id=5, replica_groups={{0,1,2,3}}, dimensions={0}
  shifted = f32[4,2] collective-permute(p), channel_id=6, source_target_pairs={{0,1},{1,2},{2,3}}
  id = u32[] partition-id()
  ROOT t = (f32[4,2], f32[4,2], f32[4,8], f32[1,2], f32[4,2], f32[4,2], u32[]) tuple(sum, pairs, gathered, scattered, swapped, shifted, id)
})";
  // Device d holds 100d + i for element i of its f32[4,2].
  auto input = [](int64_t d) {
    std::vector<double> values;
    for (int i = 0; i < 8; ++i) values.push_back(100.0 * d + i);
    return Make(F32, {4, 2}, values);
  };
  std::vector<Literal> results = RunOnDevices(text, 4, input);
  ASSERT_EQ(results.size(), 4u);
  for (int64_t d = 0; d < 4; ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto& out = results[static_cast<size_t>(d)].elements();
    std::vector<double> sum, pairs, gathered(32), scattered, swapped, shifted;
    for (int i = 0; i < 8; ++i) {
      sum.push_back(600 + 4.0 * i);                           // 0+100+200+300 + 4i
      pairs.push_back(d % 2 == 0 ? 200 + 2.0 * i : 400 + 2.0 * i);  // {0,2} or {1,3}
      shifted.push_back(d == 0 ? 0 : 100.0 * (d - 1) + i);    // nobody sends to device 0
    }
    // gathered[r][2k + c] = device k's [r][c].
    for (int r = 0; r < 4; ++r) {
      for (int k = 0; k < 4; ++k) {
        for (int c = 0; c < 2; ++c) gathered[r * 8 + k * 2 + c] = 100.0 * k + r * 2 + c;
      }
    }
    // Row d of the sum; row k of the all-to-all result is row d of device k.
    for (int c = 0; c < 2; ++c) scattered.push_back(600 + 4.0 * (2 * d + c));
    for (int k = 0; k < 4; ++k) {
      for (int c = 0; c < 2; ++c) swapped.push_back(100.0 * k + 2 * d + c);
    }
    EXPECT_FLOATS(out[0], sum);
    EXPECT_FLOATS(out[1], pairs);
    EXPECT_FLOATS(out[2], gathered);
    EXPECT_FLOATS(out[3], scattered);
    EXPECT_FLOATS(out[4], swapped);
    EXPECT_FLOATS(out[5], shifted);
    EXPECT_EQ(out[6].GetAsInt64(0), d);
  }
}

// Without a channel the groups list replicas, each partition meeting its own; with a channel
// and no use_global_device_ids each listed replica stands for all its partitions.
TEST(EvalCollectives, GroupModesOnTwoReplicasOfTwoPartitions) {
  std::string text = std::string("HloModule m, replica_count=2, num_partitions=2\n") + kSums + R"(
ENTRY e {
  p = f32[1] parameter(0)
  replicas = f32[1] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  everyone = f32[1] all-reduce(p), channel_id=1, replica_groups={{0,1}}, to_apply=add
  order = f32[4] all-gather(p), channel_id=2, replica_groups={{1,0}}, dimensions={0}
  partitions = (f32[1], f32[1]) all-to-all(p, p), channel_id=3, replica_groups={{0,1}}
  rid = u32[] replica-id()
  pid = u32[] partition-id()
  ROOT t = (f32[1], f32[1], f32[4], (f32[1], f32[1]), u32[], u32[]) tuple(replicas, everyone, order, partitions, rid, pid)
})";
  // Device d = 2 * replica + partition holds 10^d.
  std::vector<Literal> results =
      RunOnDevices(text, 4, [](int64_t d) { return Make(F32, {1}, {std::pow(10.0, d)}); });
  const double value[] = {1, 10, 100, 1000};
  for (int64_t d = 0; d < 4; ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    const auto& out = results[static_cast<size_t>(d)].elements();
    const int64_t partition = d % 2, replica = d / 2;
    EXPECT_FLOATS(out[0], {value[partition] + value[2 + partition]});
    EXPECT_FLOATS(out[1], {1111});
    // Group {1,0}: replica 1's partitions first, then replica 0's.
    EXPECT_FLOATS(out[2], {100, 1000, 1, 10});
    // Tuple form over the partitions of this replica: element k from partition k.
    const auto& swapped = out[3].elements();
    EXPECT_FLOATS(swapped[0], {value[2 * replica]});
    EXPECT_FLOATS(swapped[1], {value[2 * replica + 1]});
    EXPECT_EQ(out[4].GetAsInt64(0), replica);
    EXPECT_EQ(out[5].GetAsInt64(0), partition);
  }
}

// A body the evaluator does not recognize is called per element, folding in group order.
TEST(EvalCollectives, AllReduceFoldsInGroupOrder) {
  std::string text = std::string("HloModule m, num_partitions=3\n") + kSums + R"(
ENTRY e {
  p = s32[2] parameter(0)
  ROOT d = s32[2] all-reduce(p), channel_id=1, replica_groups={{2,0,1}}, use_global_device_ids=true, to_apply=sub
})";
  std::vector<Literal> results =
      RunOnDevices(text, 3, [](int64_t d) { return MakeInt(S32, {2}, {d + 1, 10 * (d + 1)}); });
  for (const Literal& result : results) {
    EXPECT_EQ(Ints(result), (std::vector<int64_t>{3 - 1 - 2, 30 - 10 - 20}));
  }
}

TEST(EvalCollectives, StartAndDoneForms) {
  std::string text = std::string("HloModule m, num_partitions=2\n") + kSums + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ars = f32[2] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[2] all-reduce-done(ars)
  ags = (f32[2], f32[4]) all-gather-start(p), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  agd = f32[4] all-gather-done(ags)
  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(p), channel_id=3, source_target_pairs={{0,1},{1,0}}
  cpd = f32[2] collective-permute-done(cps)
  ROOT t = (f32[2], f32[4], f32[2]) tuple(ard, agd, cpd)
})";
  std::vector<Literal> results = RunOnDevices(
      text, 2, [](int64_t d) { return Make(F32, {2}, {1.0 + d, 10.0 + d}); });
  for (int64_t d = 0; d < 2; ++d) {
    const auto& out = results[static_cast<size_t>(d)].elements();
    EXPECT_FLOATS(out[0], {3, 21});
    EXPECT_FLOATS(out[1], {1, 10, 2, 11});
    EXPECT_FLOATS(out[2], d == 0 ? std::vector<double>{2, 11} : std::vector<double>{1, 10});
  }
  // The text prints back as written.
  auto module = testing_support::ParseAndVerify(text);
  const std::string printed = hlo::PrintModule(*module);
  EXPECT_NE(printed.find("all-gather-start(p), replica_groups={{0,1}}"), std::string::npos);
  EXPECT_NE(printed.find("collective-permute-done(cps)"), std::string::npos);
}

// XLA's generic asynchronous wrapping (async-start calls= a computation holding the collective,
// async-update, async-done): the wrapped reduce-scatter and all-to-all meet like unwrapped ones,
// the start's value is ((operands), result, context), and the text and proto round-trip.
TEST(EvalCollectives, GenericAsyncWrappingRunsItsComputation) {
  const std::string text = R"(HloModule m, replica_count=2
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
scatter {
  p0 = s32[4] parameter(0)
  ROOT rs = s32[2] reduce-scatter(p0), replica_groups={{0,1}}, dimensions={0}, to_apply=add
}
ENTRY e {
  p = s32[4] parameter(0)
  start = ((s32[4]), s32[2], s32[]) async-start(p), async_group_id=0, calls=scatter
  update = ((s32[4]), s32[2], s32[]) async-update(start), calls=scatter
  done = s32[2] async-done(update), calls=scatter
  operand = (s32[4]) get-tuple-element(update), index=0
  context = s32[] get-tuple-element(update), index=2
  ROOT t = (s32[2], (s32[4]), s32[]) tuple(done, operand, context)
})";
  std::vector<Literal> results = RunOnDevices(text, 2, [](int64_t d) {
    return MakeInt(S32, {4}, {1 + d, 10 + d, 100 + d, 1000 + d});
  });
  // Replica r receives block r of the sum: (1+2, 10+11) and (100+101, 1000+1001).
  EXPECT_EQ(Ints(results[0].elements()[0]), (std::vector<int64_t>{3, 21}));
  EXPECT_EQ(Ints(results[1].elements()[0]), (std::vector<int64_t>{201, 2001}));
  EXPECT_EQ(Ints(results[1].elements()[1].elements()[0]),
            (std::vector<int64_t>{2, 11, 101, 1001}));
  EXPECT_EQ(results[0].elements()[2].GetAsInt64(0), 0);
  auto module = testing_support::ParseAndVerify(text);
  const std::string printed = hlo::PrintModule(*module);
  EXPECT_NE(printed.find("async-start(p), calls=scatter"), std::string::npos) << printed;
  EXPECT_NE(printed.find("async-done(update), calls=scatter"), std::string::npos) << printed;
  EXPECT_NE(printed.find("async_group_id=0"), std::string::npos) << printed;
  EXPECT_EQ(hlo::PrintModule(*hlo::ReadHloProto(hlo::WriteHloProto(*module), "m.pb")), printed);
  // A start whose shape does not hold (operands, result) is refused at the instruction.
  std::string bad = text;
  const std::string start_shape = "((s32[4]), s32[2], s32[]) async-start";
  bad.replace(bad.find(start_shape), start_shape.size(), "(s32[4], s32[2], s32[]) async-start");
  try {
    testing_support::ParseAndVerify(bad);
    ADD_FAILURE() << "a malformed async-start verified";
  } catch (const hlo::Error& error) {
    EXPECT_NE(error.message().find("((operands), s32[2], context...) was expected"),
              std::string::npos)
        << error.message();
  }
}

// Each trip's all-reduce meets the same trip on the other devices.
TEST(EvalCollectives, CollectivesInALoopMeetTripByTrip) {
  std::string text = std::string("HloModule m, num_partitions=2\n") + kSums + R"(
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  sum = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ROOT t = (s32[], f32[2]) tuple(next, sum)
}
ENTRY e {
  p = f32[2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2]) tuple(zero, p)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT x = f32[2] get-tuple-element(w), index=1
})";
  std::vector<Literal> results = RunOnDevices(
      text, 2, [](int64_t d) { return Make(F32, {2}, {1.0 + d, -1.0 * d}); });
  // (1, 0) and (2, -1): sum (3, -1), then doubled twice.
  for (const Literal& result : results) EXPECT_FLOATS(result, {12, -4});
}

TEST(EvalCollectives, GroupOutsideTheGridIsAnError) {
  std::string text = std::string("HloModule m, num_partitions=2\n") + kSums + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT s = f32[2] all-reduce(p), channel_id=1, replica_groups={{0,1,2}}, use_global_device_ids=true, to_apply=add
})";
  const std::string message = ErrorOf(text, 2);
  EXPECT_NE(message.find("names device 2, outside the run of 1 replica(s) x 2 partition(s)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'s'"), std::string::npos) << message;
}

TEST(EvalCollectives, ADeviceThatNeverArrivesIsADeadlockNotAHang) {
  // Only partition 0 takes the branch with the all-reduce; partition 1 finishes without it.
  std::string text = std::string("HloModule m, num_partitions=2\n") + kSums + R"(
reduce_branch {
  x = f32[2] parameter(0)
  ROOT lonely = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
keep_branch {
  ROOT x = f32[2] parameter(0)
}
ENTRY e {
  p = f32[2] parameter(0)
  pid = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(pid, zero), direction=EQ
  ROOT c = f32[2] conditional(first, p, p), true_computation=reduce_branch, false_computation=keep_branch
})";
  const std::string message = ErrorOf(text, 2);
  EXPECT_NE(message.find("collective deadlock: device 0 waits in 'lonely' for device(s) 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("device(s) 1 finished"), std::string::npos) << message;
}

TEST(EvalCollectives, AFailingDeviceStopsTheOthers) {
  // Only partition 1 takes the branch that fails; partition 0 waits at the all-reduce and
  // must stop with partition 1's error rather than wait for it.
  std::string text = std::string("HloModule m, num_partitions=2\n") + kSums + R"(
fine {
  ROOT x = f32[2] parameter(0)
}
fails {
  x = f32[2] parameter(0)
  ROOT y = f32[2] custom-call(x), custom_call_target="no_such_target"
}
ENTRY e {
  p = f32[2] parameter(0)
  pid = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(pid, zero), direction=EQ
  c = f32[2] conditional(first, p, p), true_computation=fine, false_computation=fails
  ROOT s = f32[2] all-reduce(c), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
})";
  const std::string message = ErrorOf(text, 2);
  EXPECT_EQ(message.rfind("device 1:", 0), 0u) << message;
  EXPECT_NE(message.find("no_such_target"), std::string::npos) << message;
}

}  // namespace

// Tests of io::MakeRandomInputs (determinism, distributions, index-range inference), LoadInputs /
// ResolveInputs (names, tuples, errors) and FlattenOutputs. Modules are built with the IR API so
// these tests do not depend on the text parser.
#include "tools/io/inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/test_support.h"
#include "tools/io/index_ranges.h"

namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

class Builder {
 public:
  Builder() : module_(std::make_unique<hlo::Module>("m")) {
    entry_ = module_->AddComputation(std::make_unique<hlo::Computation>("main"));
    module_->set_entry(entry_);
  }
  Instruction* Parameter(int64_t number, Shape shape) {
    std::string name = "p";
    name += std::to_string(number);
    return Add(name, Opcode::kParameter, std::move(shape), {}, hlo::ParameterAttrs{number});
  }
  Instruction* Add(std::string name, Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                   hlo::Attrs attrs = hlo::NoAttrs{}) {
    auto instruction = std::make_unique<Instruction>(std::move(name), opcode, std::move(shape));
    instruction->set_attrs(std::move(attrs));
    for (Instruction* operand : operands) instruction->AppendOperand(operand);
    Instruction* raw = entry_->AddInstruction(std::move(instruction));
    entry_->set_root(raw);
    return raw;
  }
  hlo::Module& module() { return *module_; }

 private:
  std::unique_ptr<hlo::Module> module_;
  hlo::Computation* entry_;
};

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, std::move(dims)); }
Shape S32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kS32, std::move(dims)); }

std::pair<int64_t, int64_t> MinMax(const hlo::Literal& literal) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    lo = std::min(lo, literal.GetAsInt64(i));
    hi = std::max(hi, literal.GetAsInt64(i));
  }
  return {lo, hi};
}

TEST(RandomInputs, DeterministicInSeedAndNormalForFloats) {
  Builder b;
  b.Parameter(0, F32({100, 100}));
  b.Parameter(1, Shape::Array(PrimitiveType::kBF16, {8}));
  auto first = io::MakeRandomInputs(b.module(), 42);
  auto again = io::MakeRandomInputs(b.module(), 42);
  auto other = io::MakeRandomInputs(b.module(), 43);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(first[0].BitwiseEqual(again[0]));
  EXPECT_TRUE(first[1].BitwiseEqual(again[1]));
  EXPECT_FALSE(first[0].BitwiseEqual(other[0]));
  EXPECT_EQ(first[1].shape().type, PrimitiveType::kBF16);
  // Sample moments of 10000 standard normal draws: mean within 4 sigma/sqrt(n), variance near 1.
  double sum = 0, sum_squares = 0;
  for (float v : first[0].data<float>()) {
    sum += v;
    sum_squares += double{v} * v;
  }
  double mean = sum / 10000, variance = sum_squares / 10000 - mean * mean;
  EXPECT_LT(std::fabs(mean), 0.04);
  EXPECT_NEAR(variance, 1.0, 0.06);
}

TEST(RandomInputs, IntegersDefaultToZeroToSixteenAndPredIsACoin) {
  Builder b;
  b.Parameter(0, S32({1000}));
  b.Parameter(1, Shape::Array(PrimitiveType::kPred, {1000}));
  b.Parameter(2, Shape::Array(PrimitiveType::kU8, {1000}));
  auto inputs = io::MakeRandomInputs(b.module(), 7);
  EXPECT_EQ(MinMax(inputs[0]), std::make_pair(int64_t{0}, int64_t{15}));
  EXPECT_EQ(MinMax(inputs[2]), std::make_pair(int64_t{0}, int64_t{15}));
  int64_t ones = 0;
  for (int64_t i = 0; i < 1000; ++i) ones += inputs[1].GetAsInt64(i);
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
}

TEST(RandomInputs, DynamicSliceIndexThroughConvertAndReshapeStaysInRange) {
  // p1: s64[1] -> convert s32[1] -> reshape s32[] -> dynamic-slice(f32[10,6], i, 0) size [3,6]:
  // valid starts for dim 0 are 0..7.
  Builder b;
  Instruction* data = b.Parameter(0, F32({10, 6}));
  Instruction* index = b.Parameter(1, Shape::Array(PrimitiveType::kS64, {2000}));
  Instruction* slice = b.Add("s", Opcode::kSlice, Shape::Array(PrimitiveType::kS64, {1}), {index},
                             hlo::SliceAttrs{{{0, 1, 1}}});
  Instruction* converted = b.Add("c", Opcode::kConvert, S32({1}), {slice});
  Instruction* scalar = b.Add("r", Opcode::kReshape, S32({}), {converted});
  Instruction* zero =
      b.Add("z", Opcode::kConstant, S32({}), {}, hlo::ConstantAttrs{hlo::Literal(S32({})), false});
  b.Add("ds", Opcode::kDynamicSlice, F32({3, 6}), {data, scalar, zero},
        hlo::DynamicSliceAttrs{{3, 6}});
  auto bounds = io::InferParameterValueBounds(b.module());
  ASSERT_EQ(bounds.size(), 2u);
  EXPECT_FALSE(bounds[0].has_value());
  EXPECT_EQ(bounds[1], 8);
  auto inputs = io::MakeRandomInputs(b.module(), 1);
  EXPECT_EQ(MinMax(inputs[1]), std::make_pair(int64_t{0}, int64_t{7}));
}

TEST(RandomInputs, GatherIndicesAreBoundedByTheGatheredDimension) {
  // Embedding lookup: gather(f32[50000,4], s32[300,1]) with start_index_map={0}, slice [1,4]:
  // indices must fall in [0, 50000) — far above the default 16.
  Builder b;
  Instruction* table = b.Parameter(0, F32({50000, 4}));
  Instruction* ids = b.Parameter(1, S32({300, 1}));
  hlo::GatherAttrs gather;
  gather.dnums.offset_dims = {1};
  gather.dnums.collapsed_slice_dims = {0};
  gather.dnums.start_index_map = {0};
  gather.dnums.index_vector_dim = 1;
  gather.slice_sizes = {1, 4};
  b.Add("g", Opcode::kGather, F32({300, 4}), {table, ids}, gather);
  auto inputs = io::MakeRandomInputs(b.module(), 3);
  auto [lo, hi] = MinMax(inputs[1]);
  EXPECT_GE(lo, 0);
  EXPECT_LT(hi, 50000);
  EXPECT_GT(hi, 1000);  // really spread over the table (300 draws from 50000)
}

TEST(RandomInputs, ScatterAndDynamicUpdateSliceAndPredicates) {
  Builder b;
  Instruction* operand = b.Parameter(0, F32({5, 8}));
  Instruction* update = b.Parameter(1, F32({2, 8}));
  Instruction* row = b.Parameter(2, S32({}));
  Instruction* flag = b.Parameter(3, S32({64}));
  Instruction* scatter_ids = b.Parameter(4, S32({4, 1}));
  Instruction* zero =
      b.Add("z", Opcode::kConstant, S32({}), {}, hlo::ConstantAttrs{hlo::Literal(S32({})), false});
  b.Add("dus", Opcode::kDynamicUpdateSlice, F32({5, 8}), {operand, update, row, zero});
  b.Add("pred", Opcode::kConvert, Shape::Array(PrimitiveType::kPred, {64}), {flag});
  // scatter(f32[5,8], s32[4,1], f32[4,3]): update_window_dims={1}, inserted_window_dims={0},
  // scatter_dims_to_operand_dims={0}: row index in [0, 5).
  Instruction* updates = b.Add("u", Opcode::kBroadcast, F32({4, 3}),
                               {b.Add("one", Opcode::kConstant, F32({}), {},
                                      hlo::ConstantAttrs{hlo::Literal(F32({})), false})},
                               hlo::DimensionsAttrs{{}});
  hlo::ScatterAttrs scatter;
  scatter.dnums.update_window_dims = {1};
  scatter.dnums.inserted_window_dims = {0};
  scatter.dnums.scatter_dims_to_operand_dims = {0};
  scatter.dnums.index_vector_dim = 1;
  b.Add("sc", Opcode::kScatter, F32({5, 8}), {operand, scatter_ids, updates}, scatter);
  auto bounds = io::InferParameterValueBounds(b.module());
  ASSERT_EQ(bounds.size(), 5u);
  EXPECT_EQ(bounds[2], 4);  // 5 rows, update of 2 rows: starts 0..3
  EXPECT_EQ(bounds[3], 2);  // used as a predicate
  EXPECT_EQ(bounds[4], 5);
}

TEST(RandomInputs, TupleParameterLeavesAreBoundIndividually) {
  Builder b;
  Instruction* data = b.Parameter(0, F32({6}));
  Instruction* tuple = b.Parameter(1, Shape::Tuple({F32({2}), S32({})}));
  Instruction* index =
      b.Add("gte", Opcode::kGetTupleElement, S32({}), {tuple}, hlo::TupleIndexAttrs{1});
  b.Add("ds", Opcode::kDynamicSlice, F32({4}), {data, index}, hlo::DynamicSliceAttrs{{4}});
  auto bounds = io::InferParameterValueBounds(b.module());
  ASSERT_EQ(bounds.size(), 3u);
  EXPECT_FALSE(bounds[1].has_value());
  EXPECT_EQ(bounds[2], 3);
  auto inputs = io::MakeRandomInputs(b.module(), 9);
  ASSERT_TRUE(inputs[1].IsTuple());
  EXPECT_EQ(inputs[1].elements().size(), 2u);
  EXPECT_LT(inputs[1].elements()[1].GetAsInt64(0), 3);
}

TEST(RandomInputs, IndexFollowedThroughJaxTakeCallsAndSelect) {
  // The shape of jnp.take: call(_where)(i < 0, i + n, i) -> reshape -> gather. The walk enters
  // the callee at its parameter 2, passes the select, leaves through the call's result and
  // reaches the gather over 100 rows.
  Builder b;
  auto where = std::make_unique<hlo::Computation>("where");
  Shape pred4 = Shape::Array(PrimitiveType::kPred, {4});
  auto add = [&](hlo::Computation* c, std::string name, Opcode op, Shape shape,
                 std::vector<Instruction*> operands, hlo::Attrs attrs) {
    auto instruction = std::make_unique<Instruction>(std::move(name), op, std::move(shape));
    instruction->set_attrs(std::move(attrs));
    for (Instruction* operand : operands) instruction->AppendOperand(operand);
    return c->AddInstruction(std::move(instruction));
  };
  Instruction* condition =
      add(where.get(), "w0", Opcode::kParameter, pred4, {}, hlo::ParameterAttrs{0});
  Instruction* on_true =
      add(where.get(), "w1", Opcode::kParameter, S32({4}), {}, hlo::ParameterAttrs{1});
  Instruction* on_false =
      add(where.get(), "w2", Opcode::kParameter, S32({4}), {}, hlo::ParameterAttrs{2});
  where->set_root(add(where.get(), "sel", Opcode::kSelect, S32({4}), {condition, on_true, on_false},
                      hlo::NoAttrs{}));
  hlo::Computation* callee = b.module().AddComputation(std::move(where));

  Instruction* table = b.Parameter(0, F32({100, 2}));
  Instruction* index = b.Parameter(1, S32({4}));
  Instruction* zero = b.Add("zero", Opcode::kBroadcast, S32({4}),
                            {b.Add("z", Opcode::kConstant, S32({}), {},
                                   hlo::ConstantAttrs{hlo::Literal(S32({})), false})},
                            hlo::DimensionsAttrs{{}});
  Instruction* negative =
      b.Add("lt", Opcode::kCompare, pred4, {index, zero},
            hlo::CompareAttrs{hlo::ComparisonDirection::kLt, hlo::ComparisonType::kDefault});
  Instruction* wrapped = b.Add("plus_n", Opcode::kAdd, S32({4}), {index, zero});
  Instruction* call = b.Add("call", Opcode::kCall, S32({4}), {negative, wrapped, index});
  call->mutable_called_computations().push_back(callee);
  Instruction* column = b.Add("col", Opcode::kReshape, S32({4, 1}), {call});
  hlo::GatherAttrs gather;
  gather.dnums.offset_dims = {1};
  gather.dnums.collapsed_slice_dims = {0};
  gather.dnums.start_index_map = {0};
  gather.dnums.index_vector_dim = 1;
  gather.slice_sizes = {1, 2};
  b.Add("g", Opcode::kGather, F32({4, 2}), {table, column}, gather);
  auto bounds = io::InferParameterValueBounds(b.module());
  ASSERT_EQ(bounds.size(), 2u);
  EXPECT_EQ(bounds[1], 100);
}

TEST(RandomInputs, EmbeddingIndicesOfARealModelAreInRange) {
  // DLRM from the corpus: five jnp.take embedding lookups, each a call(_take) whose gather reads
  // a table of 3, 796, 22, 1683 or 944 rows (the tables are parameters 0-4).
  auto module = testing_support::ParseAndVerify(
      testing_support::ReadFile(testing_support::CorpusPath("dlrm_keras_jax_f32_test_step.hlo")));
  auto bounds = io::InferParameterValueBounds(*module);
  ASSERT_EQ(bounds.size(), 32u);
  EXPECT_EQ(bounds[27], 3);     // user_gender
  EXPECT_EQ(bounds[30], 796);   // user_zip_code
  EXPECT_EQ(bounds[29], 22);    // user_occupation_text
  EXPECT_EQ(bounds[25], 1683);  // movie_id
  EXPECT_EQ(bounds[28], 944);   // user_id
  EXPECT_FALSE(bounds[0].has_value());
  auto inputs = io::MakeRandomInputs(*module, 0);
  EXPECT_LT(MinMax(inputs[27]).second, 3);
  EXPECT_GT(MinMax(inputs[25]).second, 16);  // spread over the table, not just [0, 16)
}

std::filesystem::path TempDir() {
  return std::filesystem::temp_directory_path() /
         ("retarget_inputs_test_" + std::to_string(getpid()));
}

std::string TempPath(const std::string& name) {
  std::filesystem::create_directories(TempDir());
  return (TempDir() / name).string();
}

// Removes the temporary files once all tests have run.
class RemoveTempDir : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(TempDir(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveTempDir =
    ::testing::AddGlobalTestEnvironment(new RemoveTempDir);

template <typename Fn>
std::string ErrorOf(Fn fn) {
  try {
    fn();
  } catch (const hlo::Error& e) {
    return e.message();
  }
  return "(no error)";
}

TEST(LoadInputs, NamesTuplesBf16AndErrors) {
  Builder b;
  b.Parameter(0, Shape::Array(PrimitiveType::kBF16, {2}));
  b.Parameter(1, Shape::Tuple({S32({1}), Shape::Tuple({F32({})})}));
  hlo::Literal f32(F32({2}));
  f32.mutable_data<float>()[0] = 1.5f;
  f32.mutable_data<float>()[1] = -3.0f;
  hlo::Literal s32(S32({1}));
  s32.mutable_data<int32_t>()[0] = 11;
  hlo::Literal scalar(F32({}));
  scalar.mutable_data<float>()[0] = 0.25f;
  std::string path = TempPath("in.npz");
  io::WriteNpz(path, {{"arg0", f32}, {"arg1.0", s32}, {"arg1.1", scalar}});
  auto inputs = io::ResolveInputs(b.module(), path);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].shape().type, PrimitiveType::kBF16);
  EXPECT_EQ(inputs[0].GetAsDouble(1), -3.0);
  ASSERT_TRUE(inputs[1].IsTuple());
  EXPECT_EQ(inputs[1].elements()[0].GetAsInt64(0), 11);
  EXPECT_EQ(inputs[1].elements()[1].elements()[0].GetAsDouble(0), 0.25);

  io::WriteNpz(path, {{"arg0", f32}, {"arg1.0", s32}});
  EXPECT_EQ(ErrorOf([&] { io::LoadInputs(b.module(), path); }),
            path + ": missing entry 'arg1.1' for a parameter of shape f32[]");
  io::WriteNpz(path, {{"arr_0", f32}});
  EXPECT_EQ(ErrorOf([&] { io::LoadInputs(b.module(), path); }),
            path + ": missing entry 'arg0' for a parameter of shape bf16[2]" +
                " (save with np.savez(path, arg0=..., arg1=...))");
  io::WriteNpz(path, {{"arg0", f32}, {"arg1.0", s32}, {"arg1.1", scalar}, {"arg2", scalar}});
  EXPECT_EQ(ErrorOf([&] { io::LoadInputs(b.module(), path); }),
            path + ": unexpected entry 'arg2' (the module takes 3 input arrays)");
  io::WriteNpz(path, {{"arg0", s32}, {"arg1.0", s32}, {"arg1.1", scalar}});
  EXPECT_EQ(ErrorOf([&] { io::LoadInputs(b.module(), path); }),
            path + ": entry 'arg0': has shape s32[1] but bf16[2] is needed");
  std::string npy = TempPath("one.npy");
  std::ofstream(npy, std::ios::binary) << io::EncodeNpy(f32);
  EXPECT_NE(ErrorOf([&] { io::LoadInputs(b.module(), npy); }).find("needs 3 arrays"),
            std::string::npos);
  EXPECT_EQ(ErrorOf([&] { io::ResolveInputs(b.module(), "random:x1"); }),
            "--inputs random:x1: the seed must be a non-negative integer (random:SEED)");
  EXPECT_EQ(ErrorOf([&] { io::ResolveInputs(b.module(), "random:"); }).substr(0, 16),
            "--inputs random:");
}

TEST(LoadInputs, SingleNpyFeedsASingleParameter) {
  Builder b;
  b.Parameter(0, F32({2}));
  hlo::Literal f32(F32({2}));
  f32.mutable_data<float>()[1] = 2.5f;
  std::string npy = TempPath("single.npy");
  std::ofstream(npy, std::ios::binary) << io::EncodeNpy(f32);
  auto inputs = io::ResolveInputs(b.module(), npy);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_TRUE(inputs[0].BitwiseEqual(f32));
}

TEST(FlattenOutputs, NestedTuplesAreNumberedDepthFirst) {
  hlo::Literal a(F32({1})), b(S32({2})), c(F32({}));
  hlo::Literal nested = hlo::Literal::Tuple({a, hlo::Literal::Tuple({b, c})});
  auto flat = io::FlattenOutputs(nested);
  ASSERT_EQ(flat.size(), 3u);
  EXPECT_EQ(flat[0].name, "out0");
  EXPECT_EQ(flat[1].name, "out1");
  EXPECT_EQ(flat[1].literal.shape().ToString(false), "s32[2]");
  EXPECT_EQ(flat[2].name, "out2");
  auto single = io::FlattenOutputs(a, "ref");
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].name, "ref0");
  EXPECT_TRUE(io::FlattenOutputs(hlo::Literal::Tuple({})).empty());
}

}  // namespace

// The "add a backend" checklist (docs/add-a-backend.md), exercised by writing one: the "tour"
// backend below is the smallest honest backend — a TargetDescription (step 1) and a
// targets::Backend whose Compile runs the target's pipeline from the shared passes and whose
// Executable evaluates a few ops with its own code (step 2) — registered explicitly (step 3),
// run on a model with the compare-to-interpreter path, and checked against the ownership table
// its description produces (step 4). A second test checks step 1 for every existing target.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "compiler/ownership.h"
#include "compiler/pipeline.h"
#include "compiler/target_description.h"
#include "compiler/target_pipelines.h"
#include "hlo/diagnostic.h"
#include "hlo/printer.h"
#include "targets/backend.h"
#include "tests/test_support.h"
#include "tools/io/compare.h"
#include "tools/io/inputs.h"
#include "targets/descriptions.h"

namespace {

using hlo::Opcode;

// ---- Step 1: describe the target (in a real backend: targets/tour/description.cc) ----
// A made-up device: 1 TFLOP/s of f32 matrix work through a library called "TourBLAS", 100
// Gop/s of generated elementwise code, 100 GB/s of memory. Everything else: host fallback.
compiler::TargetDescription MakeTourTarget() {
  compiler::TargetDescription t;
  t.name = "tour";
  t.description = "the contributor tour's example backend (add, multiply, maximum, dot)";
  t.default_handling = compiler::OpHandling::kHostFallback;
  for (Opcode op : {Opcode::kAdd, Opcode::kMultiply, Opcode::kMaximum, Opcode::kBroadcast}) {
    t.op_rules[op] = compiler::OpRule{compiler::OpHandling::kGenerated, "", {}, {}};
  }
  t.op_rules[Opcode::kDot] = compiler::OpRule{compiler::OpHandling::kLibrary, "TourBLAS",
                                              {hlo::PrimitiveType::kF32},
                                              compiler::OpHandling::kHostFallback};
  t.fusion_kinds = {};  // its code generator emits one kernel per op
  t.peak.matrix_ops_per_second = {{hlo::PrimitiveType::kF32, 1e12}};
  t.peak.vector_ops_per_second = 1e11;
  t.peak.memory_bytes_per_second = 1e11;
  t.price_per_hour_usd = 0.5;
  return t;
}

const compiler::TargetDescription& TourTarget() {
  static const compiler::TargetDescription target = MakeTourTarget();
  return target;
}

// ---- Step 2: the backend (in a real backend: targets/tour/) ----
// Its own arithmetic for the ops its description claims; anything else is rejected at Compile
// with an hlo::Error naming the instruction and opcode.
class TourExecutable final : public targets::Executable {
 public:
  explicit TourExecutable(std::unique_ptr<hlo::Module> module) : module_(std::move(module)) {}

  hlo::Literal Run(std::span<const hlo::Literal> inputs) override {
    const auto start = std::chrono::steady_clock::now();
    std::map<const hlo::Instruction*, hlo::Literal> values;
    for (const auto& inst : module_->entry()->instructions()) {
      values[inst.get()] = Compute(*inst, inputs, values);
      ++profile_.counters["ops"];
    }
    profile_.wall_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start).count();
    return std::move(values[module_->entry()->root()]);
  }
  targets::Profile profile() const override { return profile_; }
  std::map<std::string, std::string> artifacts() const override {
    return {{"optimized.hlo", hlo::PrintModule(*module_)}};
  }

 private:
  static hlo::Literal Compute(const hlo::Instruction& inst,
                              std::span<const hlo::Literal> inputs,
                              std::map<const hlo::Instruction*, hlo::Literal>& values) {
    auto in = [&](int64_t i) -> const hlo::Literal& { return values.at(inst.operand(i)); };
    hlo::Literal out(inst.shape());
    const std::vector<int64_t>& dims = inst.shape().dims;
    switch (inst.opcode()) {
      case Opcode::kParameter:
        return CopyOf(inputs[static_cast<size_t>(inst.attr<hlo::ParameterAttrs>().number)]);
      case Opcode::kConstant: return CopyOf(inst.attr<hlo::ConstantAttrs>().literal);
      case Opcode::kAdd:
      case Opcode::kMultiply:
      case Opcode::kMaximum:
        for (int64_t i = 0; i < out.element_count(); ++i) {
          const double a = in(0).GetAsDouble(i), b = in(1).GetAsDouble(i);
          out.SetFromDouble(i, inst.opcode() == Opcode::kAdd        ? a + b
                               : inst.opcode() == Opcode::kMultiply ? a * b
                                                                    : std::max(a, b));
        }
        return out;
      case Opcode::kBroadcast: {  // rank <= 2 results: operand dims map to `dimensions`
        const std::vector<int64_t>& map = inst.attr<hlo::DimensionsAttrs>().dimensions;
        const int64_t cols = dims.size() == 2 ? dims[1] : 1;
        for (int64_t i = 0; i < out.element_count(); ++i) {
          const int64_t index[2] = {i / cols, i % cols};
          const int64_t source = map.empty() ? 0 : index[dims.size() == 2 ? map[0] : 1];
          out.SetFromDouble(i, in(0).GetAsDouble(source));
        }
        return out;
      }
      case Opcode::kDot: {  // [m,k] x [k,n], canonical (dot-canonicalizer guarantees it)
        const int64_t m = dims[0], n = dims[1], k = in(0).shape().dims[1];
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t c = 0; c < n; ++c) {
            double sum = 0;
            for (int64_t j = 0; j < k; ++j) {
              sum += in(0).GetAsDouble(r * k + j) * in(1).GetAsDouble(j * n + c);
            }
            out.SetFromDouble(r * n + c, sum);
          }
        }
        return out;
      }
      default:
        throw hlo::Error(inst.location(), "tour backend: instruction " + inst.name() + " (" +
                                              std::string(hlo::OpcodeName(inst.opcode())) +
                                              ") is not supported");
    }
  }
  static hlo::Literal CopyOf(const hlo::Literal& literal) {
    hlo::Literal copy(literal.shape());
    std::copy(literal.bytes().begin(), literal.bytes().end(), copy.mutable_bytes().begin());
    return copy;
  }

  std::unique_ptr<hlo::Module> module_;
  targets::Profile profile_;
};

class TourBackend final : public targets::Backend {
 public:
  std::string name() const override { return "tour"; }
  std::string description() const override { return TourTarget().description; }
  std::unique_ptr<targets::Executable> Compile(const hlo::Module& module) override {
    std::unique_ptr<hlo::Module> copy = module.Clone();
    compiler::PipelineOptions options;
    options.verify_each = true;
    compiler::MakeTargetPipeline(TourTarget()).Run(*copy, options);
    for (const auto& inst : copy->entry()->instructions()) {
      switch (inst->opcode()) {
        case Opcode::kParameter: case Opcode::kConstant: case Opcode::kAdd:
        case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kBroadcast:
          break;
        case Opcode::kDot:
          if (inst->shape().dims.size() == 2) break;
          [[fallthrough]];
        default:
          throw hlo::Error(inst->location(),
                           "tour backend cannot compile instruction " + inst->name() + " (" +
                               std::string(hlo::OpcodeName(inst->opcode())) + ")");
      }
    }
    return std::make_unique<TourExecutable>(std::move(copy));
  }
};

// hidden = relu(x @ w1 + b1); ROOT logits = hidden @ w2 + b2 (examples/mlp.hlo without softmax).
constexpr const char* kMlp = R"(
HloModule mlp
ENTRY main {
  x = f32[2,3] parameter(0)
  w1 = f32[3,4] parameter(1)
  d1 = f32[2,4] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b1 = f32[4] parameter(2)
  bb1 = f32[2,4] broadcast(b1), dimensions={1}
  a1 = f32[2,4] add(d1, bb1)
  zero = f32[] constant(0)
  z = f32[2,4] broadcast(zero), dimensions={}
  h = f32[2,4] maximum(a1, z)
  w2 = f32[4,2] parameter(3)
  d2 = f32[2,2] dot(h, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b2 = f32[2] parameter(4)
  bb2 = f32[2,2] broadcast(b2), dimensions={1}
  ROOT logits = f32[2,2] add(d2, bb2)
}
)";

hlo::Literal F32(std::vector<int64_t> dims, std::vector<float> values) {
  hlo::Literal literal(hlo::Shape::Array(hlo::PrimitiveType::kF32, std::move(dims)));
  std::copy(values.begin(), values.end(), literal.mutable_data<float>().begin());
  return literal;
}

TEST(TourAddABackend, Steps2And3_RegisteredRunsAModelAndMatchesTheInterpreter) {
  // Step 3: explicit registration, as tools/retarget/main.cc and tests/test_main.cc do.
  targets::BackendRegistry registry;
  registry.Add(std::make_unique<TourBackend>());
  targets::Backend* tour = registry.Find("tour");
  ASSERT_NE(tour, nullptr);
  targets::Backend* interp = testing_support::Backends().Find("interp");
  ASSERT_NE(interp, nullptr);

  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kMlp);
  // Values by hand: x = [[1,2,3],[-1,0,1]], w1 picks features (x0, x1, x2, -x0), b1 = 0.5;
  // h = relu(...): row 0 [1.5, 2.5, 3.5, 0], row 1 [0, 0.5, 1.5, 1.5];
  // w2 = [[1,0],[1,0],[0,1],[0,1]], b2 = [0, 10]: logits = [[4, 13.5], [0.5, 13]].
  std::vector<hlo::Literal> inputs;
  inputs.push_back(F32({2, 3}, {1, 2, 3, -1, 0, 1}));
  inputs.push_back(F32({3, 4}, {1, 0, 0, -1, 0, 1, 0, 0, 0, 0, 1, 0}));
  inputs.push_back(F32({4}, {0.5, 0.5, 0.5, 0.5}));
  inputs.push_back(F32({4, 2}, {1, 0, 1, 0, 0, 1, 0, 1}));
  inputs.push_back(F32({2}, {0, 10}));

  std::unique_ptr<targets::Executable> exe = tour->Compile(*module);
  hlo::Literal result = exe->Run(inputs);
  std::span<const float> got = result.data<float>();
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), (std::vector<float>{4, 13.5, 0.5, 13}));
  EXPECT_EQ(exe->profile().counters.at("ops"), 14) << "one step per entry instruction";
  EXPECT_NE(exe->artifacts().at("optimized.hlo").find("dot("), std::string::npos);

  // The compare-to-interpreter path (`retarget run --compare interp`), on random inputs too.
  for (uint64_t seed : {0, 1, 2}) {
    std::vector<hlo::Literal> random = io::MakeRandomInputs(*module, seed);
    std::unique_ptr<targets::Executable> reference = interp->Compile(*module);
    io::CompareResult compared = io::CompareArrays(io::FlattenOutputs(reference->Run(random)),
                                                   io::FlattenOutputs(exe->Run(random)), nullptr);
    EXPECT_TRUE(compared.matched) << "add-a-backend.md step 4: " << compared.summary;
  }
  // The module the caller passed is not modified (Compile works on a copy).
  EXPECT_EQ(hlo::PrintModule(*module), hlo::PrintModule(*testing_support::ParseAndVerify(kMlp)));
}

TEST(TourAddABackend, Step4_UnsupportedOpsAreRejectedNamingTheInstruction) {
  TourBackend tour;
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT e1 = f32[4] exponential(x)
}
)");
  try {
    tour.Compile(*module);
    ADD_FAILURE() << "exponential was accepted";
  } catch (const hlo::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tour backend cannot compile instruction e1 "
                                          "(exponential)"), std::string::npos) << e.what();
  }
}

TEST(TourAddABackend, Step1_TheOwnershipTableFollowsTheDescription) {
  std::unique_ptr<hlo::Module> module = testing_support::ParseAndVerify(kMlp);
  compiler::MakeTargetPipeline(TourTarget()).Run(*module);
  compiler::ModuleStats stats = compiler::AnalyzeOwnership(*module, TourTarget());
  std::map<std::string, std::string> owner;  // instruction -> owner (library name for libraries)
  for (const compiler::OwnershipEntry& entry : stats.entries) {
    owner[entry.instruction->name()] = entry.info.owner == compiler::Owner::kLibrary
                                           ? entry.info.library
                                           : std::string(compiler::OwnerName(entry.info.owner));
  }
  EXPECT_EQ(owner["d1"], "TourBLAS");
  EXPECT_EQ(owner["d2"], "TourBLAS");
  EXPECT_EQ(owner["a1"], "generated-kernel");
  EXPECT_EQ(owner["h"], "generated-kernel");
  EXPECT_EQ(owner["logits"], "generated-kernel");
  EXPECT_EQ(owner["x"], "no-code");
  EXPECT_EQ(stats.target, "tour");
  // FLOPs by hand: dots 2*2*4*3 + 2*2*2*4 = 80 (library); adds and max 8 + 8 + 4 = 20.
  EXPECT_EQ(stats.flops_by_owner.at("library"), 80);
  EXPECT_EQ(stats.flops_by_owner.at("generated-kernel"), 20);
}

// Step 1 for every target the build knows: the facts the checklist asks a description for.
TEST(TourAddABackend, Step1_EveryTargetDescribesItself) {
  const std::string prices = testing_support::ReadFile(std::string(RETARGET_SOURCE_DIR) +
                                                       "/examples/prices.cfg");
  for (const std::string& name : targets::DescriptionNames()) {
    SCOPED_TRACE("target " + name);
    const compiler::TargetDescription* target = targets::FindDescription(name);
    ASSERT_NE(target, nullptr) << "add-a-backend.md step 1: FindDescription";
    EXPECT_EQ(target->name, name);
    EXPECT_FALSE(target->description.empty()) << "add-a-backend.md step 1: description";
    EXPECT_TRUE(std::filesystem::exists(std::string(RETARGET_SOURCE_DIR) + "/targets/" + name +
                                        "/description.cc"))
        << "add-a-backend.md step 1: targets/" << name << "/description.cc";
    EXPECT_GT(target->price_per_hour_usd, 0) << "add-a-backend.md step 1: $/hour";
    EXPECT_GT(target->peak.vector_ops_per_second, 0) << "add-a-backend.md step 1: peak rates";
    EXPECT_GT(target->peak.memory_bytes_per_second, 0) << "add-a-backend.md step 1: bandwidth";
    for (const auto& [op, rule] : target->op_rules) {
      if (rule.handling == compiler::OpHandling::kLibrary) {
        EXPECT_FALSE(rule.library.empty()) << "add-a-backend.md step 1: OpRule for "
                                           << hlo::OpcodeName(op) << " names no library";
      }
    }
    EXPECT_NE(prices.find("\n" + name + ".usd_per_hour = "), std::string::npos)
        << "add-a-backend.md step 3: examples/prices.cfg";
    EXPECT_NE(prices.find("\n" + name + ".source = "), std::string::npos)
        << "add-a-backend.md step 3: examples/prices.cfg needs the price's source";
  }
}

}  // namespace

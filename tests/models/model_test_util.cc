// Implementation of model_test_util.h: shared helpers of the whole-model tests.
#include "tests/models/model_test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>

#include "tests/test_support.h"

namespace model_tests {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string IndexString(const std::string& name, int64_t linear) {
  return name + "[" + std::to_string(linear) + "]";
}

}  // namespace

TimedRun CompileAndRun(targets::Backend& backend, const hlo::Module& module,
                       std::span<const hlo::Literal> inputs) {
  TimedRun run;
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<targets::Executable> executable = backend.Compile(module);
  run.compile_ms = MillisecondsSince(start);
  start = std::chrono::steady_clock::now();
  run.result = executable->Run(inputs);
  run.run_ms = MillisecondsSince(start);
  return run;
}

targets::Backend* InterpBackend() {
  targets::Backend* interp = testing_support::Backends().Find("interp");
  EXPECT_NE(interp, nullptr) << "the test main did not register the interp backend";
  return interp;
}

std::vector<double> ToDoubles(const hlo::Literal& literal) {
  std::vector<double> values(static_cast<size_t>(literal.element_count()));
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    values[static_cast<size_t>(i)] = literal.GetAsDouble(i);
  }
  return values;
}

void ExpectShapesAsDeclared(const hlo::Module& module, const std::vector<io::NpyArray>& outputs) {
  std::vector<const hlo::Shape*> declared;
  hlo::FlattenShape(module.entry()->root()->shape(), declared);
  ASSERT_EQ(outputs.size(), declared.size()) << "number of result arrays";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const hlo::Shape& actual = outputs[i].literal.shape();
    EXPECT_EQ(outputs[i].name, "out" + std::to_string(i));
    EXPECT_TRUE(actual.Compatible(*declared[i]))
        << outputs[i].name << " is " << actual.ToString(false) << ", declared "
        << declared[i]->ToString(false);
  }
}

void ExpectAllFinite(const std::vector<io::NpyArray>& outputs) {
  for (const io::NpyArray& array : outputs) {
    if (!hlo::IsFloating(array.literal.shape().type)) continue;
    int64_t bad = 0, first_bad = -1;
    for (int64_t i = 0; i < array.literal.element_count(); ++i) {
      if (!std::isfinite(array.literal.GetAsDouble(i))) {
        if (first_bad < 0) first_bad = i;
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0) << array.name << " has " << bad << " non-finite elements, first at "
                      << IndexString(array.name, first_bad) << " = "
                      << array.literal.GetAsDouble(first_bad);
  }
}

void ExpectNotDegenerate(const std::vector<io::NpyArray>& outputs) {
  for (const io::NpyArray& array : outputs) {
    const hlo::Literal& values = array.literal;
    if (values.IsTuple() || values.element_count() == 0) continue;
    bool all_zero = true, all_equal = true;
    const double first = values.GetAsDouble(0);
    for (int64_t i = 0; i < values.element_count(); ++i) {
      const double value = values.GetAsDouble(i);
      all_zero = all_zero && value == 0;
      all_equal = all_equal && value == first;
    }
    EXPECT_FALSE(all_zero) << array.name << " is all zero";
    EXPECT_FALSE(values.element_count() > 1 && all_equal)
        << array.name << " holds one value, " << first << ", in all "
        << values.element_count() << " elements";
  }
}

std::vector<io::NpyArray> AsStoredInNpz(std::vector<io::NpyArray> arrays) {
  for (io::NpyArray& array : arrays) {
    hlo::PrimitiveType type = array.literal.shape().type;
    if (type != hlo::PrimitiveType::kBF16 && type != hlo::PrimitiveType::kF16) continue;
    hlo::Literal widened(hlo::Shape::Array(hlo::PrimitiveType::kF32, array.literal.shape().dims));
    for (int64_t i = 0; i < array.literal.element_count(); ++i) {
      widened.SetFromDouble(i, array.literal.GetAsDouble(i));
    }
    array.literal = std::move(widened);
  }
  return arrays;
}

WorstError FindWorstError(const std::vector<io::NpyArray>& expected,
                          const std::vector<io::NpyArray>& actual) {
  std::map<std::string, const hlo::Literal*> actual_by_name;
  for (const io::NpyArray& array : actual) actual_by_name[array.name] = &array.literal;
  WorstError worst;
  for (const io::NpyArray& want : expected) {
    auto found = actual_by_name.find(want.name);
    if (found == actual_by_name.end() ||
        found->second->element_count() != want.literal.element_count()) {
      continue;  // CompareArrays reports the structural mismatch.
    }
    for (int64_t i = 0; i < want.literal.element_count(); ++i) {
      double e = want.literal.GetAsDouble(i), a = found->second->GetAsDouble(i);
      if (e == a || (std::isnan(e) && std::isnan(a))) continue;
      double error = std::isnan(e) || std::isnan(a) ? INFINITY : std::fabs(a - e);
      if (error > worst.abs_error) worst = {error, IndexString(want.name, i)};
    }
  }
  return worst;
}

int64_t SourceEntryParameter(const hlo::Instruction* instruction) {
  // A chain of value-preserving rearrangements, as JAX emits around weights.
  while (instruction->operand_count() == 1 &&
         (instruction->opcode() == hlo::Opcode::kReshape ||
          instruction->opcode() == hlo::Opcode::kBitcast ||
          instruction->opcode() == hlo::Opcode::kCopy ||
          instruction->opcode() == hlo::Opcode::kTranspose ||
          instruction->opcode() == hlo::Opcode::kBroadcast)) {
    instruction = instruction->operand(0);
  }
  if (instruction->opcode() != hlo::Opcode::kParameter || !instruction->parent()->is_entry()) {
    return -1;
  }
  return instruction->attr<hlo::ParameterAttrs>().number;
}

}  // namespace model_tests

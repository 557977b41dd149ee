// Module inputs and outputs as named arrays (inputs.h).
//
// Random inputs are deterministic in the seed: one std::mt19937_64 seeded with it draws every
// entry parameter in order (tuple leaves depth-first), each array's elements in row-major order:
//   floating point  std::normal_distribution<double>(0, 1), or uniform in [0.5, 1.5) where
//                   value_domains.h infers the value must be positive (variances, divisors),
//                   times 1/sqrt(fan_in) for dot/convolution kernels; rounded to the type;
//   integers        std::uniform_int_distribution over [0, bound), bound = 16 or the range
//                   inferred by index_ranges.h (2 for values converted to pred), capped at the
//                   type's largest value + 1;
//   complex         real then imaginary part, each as floating point (standard normal);
//   pred            std::bernoulli_distribution(0.5).
// Input files name entries arg0, arg1, … (tuple leaves arg0.0, arg0.1, … numbered depth-first);
// a missing, extra or ill-shaped entry is an error naming the file and the entry.
#include "tools/io/inputs.h"

#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include "tools/io/index_ranges.h"
#include "tools/io/value_domains.h"

namespace io {
namespace {

constexpr int64_t kDefaultIntegerBound = 16;

int64_t CapToType(int64_t bound, hlo::PrimitiveType type) {
  int bits = hlo::BitWidth(type) - (hlo::IsSignedInteger(type) ? 1 : 0);
  if (bits >= 63) return bound;
  return std::min<int64_t>(bound, int64_t{1} << bits);
}

hlo::Literal RandomArray(const hlo::Shape& shape, std::optional<int64_t> bound,
                         const FloatDomain& domain, std::mt19937_64& generator) {
  hlo::Literal literal(shape);
  int64_t count = literal.element_count();
  if (hlo::IsFloating(shape.type) && domain.positive) {
    std::uniform_real_distribution<double> uniform(0.5, 1.5);
    for (int64_t i = 0; i < count; ++i)
      literal.SetFromDouble(i, domain.scale * uniform(generator));
  } else if (hlo::IsFloating(shape.type)) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int64_t i = 0; i < count; ++i) literal.SetFromDouble(i, domain.scale * normal(generator));
  } else if (hlo::IsComplex(shape.type)) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int64_t i = 0; i < count; ++i) {
      const double real = normal(generator);
      literal.SetComplex(i, {domain.scale * real, domain.scale * normal(generator)});
    }
  } else if (shape.type == hlo::PrimitiveType::kPred) {
    std::bernoulli_distribution coin(0.5);
    for (int64_t i = 0; i < count; ++i) literal.SetFromInt64(i, coin(generator) ? 1 : 0);
  } else if (hlo::IsInteger(shape.type)) {
    int64_t limit =
        CapToType(std::max<int64_t>(1, bound.value_or(kDefaultIntegerBound)), shape.type);
    std::uniform_int_distribution<int64_t> uniform(0, limit - 1);
    for (int64_t i = 0; i < count; ++i) literal.SetFromInt64(i, uniform(generator));
  }
  return literal;
}

// Builds a value of `shape` from consecutive leaves, advancing `next`.
hlo::Literal Assemble(const hlo::Shape& shape, std::vector<hlo::Literal>& leaves, size_t& next) {
  if (!shape.IsTuple()) return std::move(leaves[next++]);
  std::vector<hlo::Literal> elements;
  for (const hlo::Shape& element : shape.tuple_shapes)
    elements.push_back(Assemble(element, leaves, next));
  return hlo::Literal::Tuple(std::move(elements));
}

struct ParameterLeaf {
  std::string name;  // arg0, arg1.2, ...
  const hlo::Shape* shape;
};

// The leaves of every entry parameter with their file names (tuples flattened depth-first).
std::vector<ParameterLeaf> ParameterLeaves(const hlo::Module& module) {
  if (module.entry() == nullptr)
    throw hlo::Error("module " + module.name() + " has no entry computation");
  std::vector<ParameterLeaf> leaves;
  const auto& parameters = module.entry()->parameters();
  for (size_t p = 0; p < parameters.size(); ++p) {
    if (parameters[p] == nullptr)
      throw hlo::Error("entry parameter " + std::to_string(p) + " is missing");
    std::vector<const hlo::Shape*> flat;
    hlo::FlattenShape(parameters[p]->shape(), flat);
    std::string base = "arg" + std::to_string(p);
    for (size_t j = 0; j < flat.size(); ++j) {
      leaves.push_back(
          {parameters[p]->shape().IsTuple() ? base + "." + std::to_string(j) : base, flat[j]});
    }
  }
  return leaves;
}

std::vector<hlo::Literal> AssembleParameters(const hlo::Module& module,
                                             std::vector<hlo::Literal> leaves) {
  std::vector<hlo::Literal> arguments;
  size_t next = 0;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    arguments.push_back(Assemble(parameter->shape(), leaves, next));
  }
  return arguments;
}

bool LooksLikeNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[6] = {};
  in.read(magic, sizeof(magic));
  return in && std::string_view(magic, 6) == "\x93NUMPY";
}

void FlattenInto(const hlo::Literal& value, const std::string& prefix, int64_t& counter,
                 std::vector<NpyArray>& out) {
  if (value.IsTuple()) {
    for (const hlo::Literal& element : value.elements()) FlattenInto(element, prefix, counter, out);
    return;
  }
  out.push_back({prefix + std::to_string(counter++), value});
}

}  // namespace

std::vector<hlo::Literal> MakeRandomInputs(const hlo::Module& module, uint64_t seed) {
  std::vector<ParameterLeaf> leaves = ParameterLeaves(module);
  std::vector<std::optional<int64_t>> bounds = InferParameterValueBounds(module);
  std::vector<FloatDomain> domains = InferFloatParameterDomains(module);
  std::mt19937_64 generator(seed);
  std::vector<hlo::Literal> values;
  for (size_t i = 0; i < leaves.size(); ++i) {
    values.push_back(RandomArray(*leaves[i].shape, i < bounds.size() ? bounds[i] : std::nullopt,
                                 i < domains.size() ? domains[i] : FloatDomain{}, generator));
  }
  return AssembleParameters(module, std::move(values));
}

std::vector<hlo::Literal> LoadInputs(const hlo::Module& module, const std::string& path) {
  std::vector<ParameterLeaf> leaves = ParameterLeaves(module);
  std::vector<hlo::Literal> values;
  if (LooksLikeNpy(path)) {
    if (leaves.size() != 1) {
      throw hlo::Error(path +
                       ": a single .npy array can feed only a module with one array "
                       "parameter; this one needs " +
                       std::to_string(leaves.size()) +
                       " arrays (use an .npz with entries arg0, arg1, ...)");
    }
    values.push_back(ConformToShape(ReadNpy(path), *leaves[0].shape, path));
    return AssembleParameters(module, std::move(values));
  }
  return ArgumentsFromArrays(module, ReadNpz(path), path);
}

std::vector<hlo::Literal> ArgumentsFromArrays(const hlo::Module& module,
                                              std::vector<NpyArray> arrays,
                                              const std::string& path) {
  std::vector<ParameterLeaf> leaves = ParameterLeaves(module);
  std::vector<hlo::Literal> values;
  std::map<std::string, NpyArray> by_name;
  for (NpyArray& array : arrays) by_name.emplace(array.name, std::move(array));
  for (const ParameterLeaf& leaf : leaves) {
    auto it = by_name.find(leaf.name);
    if (it == by_name.end()) {
      // np.savez(path, x, y) names entries arr_0, arr_1: say how to name them instead.
      std::string hint =
          by_name.count("arr_0") ? " (save with np.savez(path, arg0=..., arg1=...))" : "";
      throw hlo::Error(path + ": missing entry '" + leaf.name + "' for a parameter of shape " +
                       leaf.shape->ToString(false) + hint);
    }
    values.push_back(
        ConformToShape(it->second.literal, *leaf.shape, path + ": entry '" + leaf.name + "'"));
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    throw hlo::Error(path + ": unexpected entry '" + by_name.begin()->first +
                     "' (the module takes " + std::to_string(leaves.size()) + " input arrays)");
  }
  return AssembleParameters(module, std::move(values));
}

std::optional<uint64_t> RandomSeed(const std::string& spec) {
  constexpr std::string_view kRandom = "random:";
  if (spec.rfind(kRandom, 0) != 0) return std::nullopt;
  std::string_view digits = std::string_view(spec).substr(kRandom.size());
  uint64_t seed = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    throw hlo::Error("--inputs " + spec + ": the seed must be a non-negative integer (random:SEED)");
  }
  return seed;
}

std::vector<hlo::Literal> ResolveInputs(const hlo::Module& module, const std::string& spec) {
  if (std::optional<uint64_t> seed = RandomSeed(spec)) return MakeRandomInputs(module, *seed);
  return LoadInputs(module, spec);
}

std::vector<NpyArray> FlattenInputs(const hlo::Module& module,
                                    const std::vector<hlo::Literal>& arguments) {
  std::vector<ParameterLeaf> leaves = ParameterLeaves(module);
  std::vector<NpyArray> out;
  int64_t counter = 0;
  for (const hlo::Literal& argument : arguments) FlattenInto(argument, "", counter, out);
  if (out.size() != leaves.size())
    throw hlo::Error("the arguments do not match the entry parameters of " + module.name());
  for (size_t i = 0; i < out.size(); ++i) out[i].name = leaves[i].name;
  return out;
}

std::vector<NpyArray> FlattenOutputs(const hlo::Literal& result, const std::string& prefix) {
  std::vector<NpyArray> out;
  int64_t counter = 0;
  FlattenInto(result, prefix, counter, out);
  return out;
}

}  // namespace io

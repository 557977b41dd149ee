// sort as a runtime merge sort with a generated comparator (see sort_thunk.h).
#include "targets/cpu/sort_thunk.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include <llvm/IR/IRBuilder.h>

#include "hlo/literal.h"
#include "targets/cpu/kernel_emitter.h"
#include "targets/llvm/elemental_emitter.h"

namespace cpu {
namespace {

// void cmp(void** slots): slots[2i] / slots[2i+1] point at the lhs / rhs element of operand i,
// slots[2n] at one byte that receives the comparator's pred.
using ComparatorFunction = void (*)(void** slots);

void EmitComparator(llvm::Module& module, const std::string& symbol,
                    const hlo::Computation& comparator, const std::vector<hlo::Shape>& operands) {
  std::vector<hlo::Shape> parameters;
  for (const hlo::Shape& operand : operands) {
    parameters.push_back(hlo::Shape::Scalar(operand.type));  // lhs
    parameters.push_back(hlo::Shape::Scalar(operand.type));  // rhs
  }
  llvm::IRBuilder<> b(module.getContext());
  KernelPrologue function =
      BeginKernelFunction(b, module, symbol, parameters,
                          {hlo::Shape::Scalar(hlo::PrimitiveType::kPred)}, /*index_arguments=*/0);
  std::vector<llvm::Value*> arguments;
  for (const llvm_codegen::IrArray& parameter : function.operands)
    arguments.push_back(parameter.EmitLoad(b, {}));
  llvm_codegen::ElementalEmitter emitter(b, module);
  std::vector<llvm::Value*> results = emitter.EmitScalarComputation(comparator, arguments);
  if (results.size() != 1 || !results[0]->getType()->isIntegerTy(1))
    throw hlo::Error("cpu backend: sort comparator " + comparator.name() +
                     " must return one pred");
  function.outputs[0].EmitStore(b, {}, results[0]);
  b.CreateRetVoid();
}

// Bottom-up merge sort of `order` (scratch: `buffer`, same size) by `less`. Equal elements
// keep their order because the right run's element is taken only when strictly less; any
// `less` is safe (indices stay within the runs).
template <typename T, typename Less>
void MergeSort(std::vector<T>& order, std::vector<T>& buffer, const Less& less) {
  const size_t n = order.size();
  for (size_t run = 1; run < n; run *= 2) {
    for (size_t left = 0; left < n; left += 2 * run) {
      const size_t middle = std::min(left + run, n), right_end = std::min(left + 2 * run, n);
      size_t i = left, j = middle, out = left;
      while (i < middle && j < right_end) buffer[out++] = less(order[j], order[i]) ? order[j++] : order[i++];
      while (i < middle) buffer[out++] = order[i++];
      while (j < right_end) buffer[out++] = order[j++];
    }
    order.swap(buffer);
  }
}

// The common comparator compare(p0, p1) LT / GT (or swapped) on operand 0 runs without the
// generated call: operand 0's slice is loaded once into a key array and compared natively, with
// the interpreter's semantics for each comparison type (IEEE for floats, where NaN compares
// false; total order; signed / unsigned integers).
enum class KeyKind { kFloat, kTotalOrder, kSigned, kUnsigned };
struct FastComparator {
  KeyKind kind;
  bool greater;  // GT: the order is reversed
};

std::optional<FastComparator> RecognizeComparator(const hlo::Computation& comparator,
                                                  hlo::PrimitiveType type) {
  using hlo::ComparisonDirection;
  using hlo::ComparisonType;
  const hlo::Instruction* root = comparator.root();
  if (comparator.parameter_count() < 2 || root == nullptr ||
      root->opcode() != hlo::Opcode::kCompare || !root->has_attr<hlo::CompareAttrs>())
    return std::nullopt;
  const hlo::Instruction* p0 = comparator.parameter(0);
  const hlo::Instruction* p1 = comparator.parameter(1);
  hlo::CompareAttrs attrs = root->attr<hlo::CompareAttrs>();
  if (attrs.direction != ComparisonDirection::kLt && attrs.direction != ComparisonDirection::kGt)
    return std::nullopt;
  bool greater = attrs.direction == ComparisonDirection::kGt;
  if (root->operand(0) == p1 && root->operand(1) == p0) {
    greater = !greater;
  } else if (root->operand(0) != p0 || root->operand(1) != p1) {
    return std::nullopt;
  }
  const bool floating = type == hlo::PrimitiveType::kF32 || type == hlo::PrimitiveType::kBF16 ||
                        type == hlo::PrimitiveType::kF16;
  if (floating) {
    if (attrs.type == ComparisonType::kDefault || attrs.type == ComparisonType::kFloat)
      return FastComparator{KeyKind::kFloat, greater};
    if (attrs.type == ComparisonType::kTotalOrder) return FastComparator{KeyKind::kTotalOrder, greater};
    return std::nullopt;
  }
  const bool is_signed = hlo::IsSignedInteger(type), is_unsigned = hlo::IsUnsignedInteger(type);
  if (is_signed && (attrs.type == ComparisonType::kDefault || attrs.type == ComparisonType::kSigned))
    return FastComparator{KeyKind::kSigned, greater};
  if (is_unsigned &&
      (attrs.type == ComparisonType::kDefault || attrs.type == ComparisonType::kUnsigned))
    return FastComparator{KeyKind::kUnsigned, greater};
  return std::nullopt;
}

// Element `element` of an array of `type` as a float (float types) or as an int64 whose
// signed order is the element's order under `kind` (integers, total order).
float LoadFloat(const uint8_t* element, hlo::PrimitiveType type) {
  uint16_t half = 0;
  switch (type) {
    case hlo::PrimitiveType::kF32: {
      float value;
      std::memcpy(&value, element, sizeof(value));
      return value;
    }
    case hlo::PrimitiveType::kBF16:
      std::memcpy(&half, element, sizeof(half));
      return std::bit_cast<float>(static_cast<uint32_t>(half) << 16);
    default:  // kF16 (RecognizeComparator admits no other float type)
      std::memcpy(&half, element, sizeof(half));
      return hlo::F16ToFloat(half);
  }
}
int64_t LoadOrderKey(const uint8_t* element, hlo::PrimitiveType type, KeyKind kind, int64_t bytes) {
  if (kind == KeyKind::kTotalOrder) {
    // f32 bits with negative magnitudes flipped: signed order = IEEE total order.
    const auto bits = std::bit_cast<int32_t>(LoadFloat(element, type));
    return bits < 0 ? static_cast<int64_t>(bits ^ 0x7fffffff) : bits;
  }
  uint64_t raw = 0;
  std::memcpy(&raw, element, static_cast<size_t>(bytes));  // little-endian: the low bytes
  const int shift = 64 - 8 * static_cast<int>(bytes);
  if (kind == KeyKind::kSigned)
    return static_cast<int64_t>(raw << shift) >> shift;  // sign-extend
  // Unsigned: flip the top bit so that signed comparison orders the values unsigned.
  return static_cast<int64_t>(raw ^ (uint64_t{1} << (8 * bytes - 1))) << shift >> shift;
}

class SortThunk final : public Thunk {
 public:
  SortThunk(std::string name, const hlo::Shape& shape, int64_t dimension,
            std::vector<int64_t> element_bytes, std::vector<int64_t> operands,
            std::vector<int64_t> outputs, std::shared_ptr<JitFunction> comparator,
            std::optional<FastComparator> fast)
      : Thunk(std::move(name)), element_bytes_(std::move(element_bytes)),
        operands_(std::move(operands)), outputs_(std::move(outputs)),
        comparator_(std::move(comparator)), fast_(fast), key_type_(shape.type) {
    // Physical stride of the sort dimension: the product of the dims minor to it.
    length_ = shape.dims[static_cast<size_t>(dimension)];
    for (int64_t d : shape.EffectiveMinorToMajor()) {
      if (d == dimension) break;
      stride_ *= shape.dims[static_cast<size_t>(d)];
    }
    const int64_t count = shape.ElementCount();
    slices_ = length_ == 0 ? 0 : count / length_;
  }
  const char* kind() const override { return "sort"; }

  void Run(ThunkSequence& sequence, RunContext& context) override {
    auto compare = reinterpret_cast<ComparatorFunction>(comparator_->address);
    if (compare == nullptr && !fast_)
      throw hlo::Error("cpu backend: sort comparator " + comparator_->symbol + " was not compiled");
    std::vector<const uint8_t*> in;
    std::vector<uint8_t*> out;
    for (int64_t id : operands_) in.push_back(sequence.buffer(id));
    for (int64_t id : outputs_) out.push_back(sequence.buffer(id));
    auto sort_slices = [&](int64_t begin, int64_t end) {
      const size_t n = in.size();
      std::vector<int64_t> order(static_cast<size_t>(length_)), buffer(order.size());
      std::vector<void*> slots(2 * n + 1);
      uint8_t less_result = 0;
      slots[2 * n] = &less_result;
      std::vector<std::pair<float, int64_t>> float_items;
      std::vector<std::pair<int64_t, int64_t>> int_items;
      for (int64_t slice = begin; slice < end; ++slice) {
        // Element j of the slice is at base + j * stride (physical order).
        const int64_t base = slice / stride_ * stride_ * length_ + slice % stride_;
        for (int64_t j = 0; j < length_; ++j) order[static_cast<size_t>(j)] = j;
        if (fast_) {
          SortByKeys(in[0] + base * element_bytes_[0], order, float_items, int_items);
        } else {
          auto less = [&](int64_t a, int64_t b) {
            for (size_t i = 0; i < n; ++i) {
              slots[2 * i] = const_cast<uint8_t*>(in[i] + (base + a * stride_) * element_bytes_[i]);
              slots[2 * i + 1] =
                  const_cast<uint8_t*>(in[i] + (base + b * stride_) * element_bytes_[i]);
            }
            compare(slots.data());
            return less_result != 0;
          };
          MergeSort(order, buffer, less);
        }
        for (size_t i = 0; i < n; ++i) {
          const int64_t bytes = element_bytes_[i];
          for (int64_t j = 0; j < length_; ++j)
            std::memcpy(out[i] + (base + j * stride_) * bytes,
                        in[i] + (base + order[static_cast<size_t>(j)] * stride_) * bytes,
                        static_cast<size_t>(bytes));
        }
      }
    };
    // A slice of a few thousand elements is ~1e5 comparisons: worth a thread on its own.
    const int64_t min_chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(length_, 1));
    if (context.pool != nullptr && slices_ > 1) {
      context.pool->ParallelFor(slices_, min_chunk, sort_slices);
    } else {
      sort_slices(0, slices_);
    }
  }

 private:
  // The fast comparator: operand 0's slice (first element at `first`) as (key, index) pairs
  // sorted by the same merge sort (equal keys keep their order, so the permutation is the
  // interpreter's), reading the pairs sequentially instead of keys through indices.
  template <typename Key>
  static void SortPairs(std::vector<std::pair<Key, int64_t>>& items,
                        std::vector<std::pair<Key, int64_t>>& scratch, bool greater,
                        std::vector<int64_t>& order) {
    using Item = std::pair<Key, int64_t>;
    bool strict_weak = true;  // integer keys, or floats without NaN
    if constexpr (std::is_floating_point_v<Key>)
      for (const Item& item : items) strict_weak = strict_weak && item.first == item.first;
    if (strict_weak) {
      // Then every stable sort gives the same permutation: std::sort by (key, index) is one.
      if (greater) {
        std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
          return b.first < a.first || (!(a.first < b.first) && a.second < b.second);
        });
      } else {
        std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
          return a.first < b.first || (!(b.first < a.first) && a.second < b.second);
        });
      }
    } else {
      // NaNs make IEEE `<` inconsistent: the interpreter's exact merge order.
      scratch.resize(items.size());
      if (greater) {
        MergeSort(items, scratch, [](const Item& a, const Item& b) { return b.first < a.first; });
      } else {
        MergeSort(items, scratch, [](const Item& a, const Item& b) { return a.first < b.first; });
      }
    }
    for (size_t j = 0; j < items.size(); ++j) order[j] = items[j].second;
  }
  void SortByKeys(const uint8_t* first, std::vector<int64_t>& order,
                  std::vector<std::pair<float, int64_t>>& float_items,
                  std::vector<std::pair<int64_t, int64_t>>& int_items) const {
    const int64_t bytes = element_bytes_[0];
    const auto length = static_cast<size_t>(length_);
    if (fast_->kind == KeyKind::kFloat) {
      float_items.resize(length);
      for (size_t j = 0; j < length; ++j)
        float_items[j] = {LoadFloat(first + static_cast<int64_t>(j) * stride_ * bytes, key_type_),
                          static_cast<int64_t>(j)};
      std::vector<std::pair<float, int64_t>> scratch;
      SortPairs(float_items, scratch, fast_->greater, order);
      return;
    }
    int_items.resize(length);
    for (size_t j = 0; j < length; ++j)
      int_items[j] = {LoadOrderKey(first + static_cast<int64_t>(j) * stride_ * bytes, key_type_,
                                   fast_->kind, bytes),
                      static_cast<int64_t>(j)};
    std::vector<std::pair<int64_t, int64_t>> scratch;
    SortPairs(int_items, scratch, fast_->greater, order);
  }

  std::vector<int64_t> element_bytes_;
  std::vector<int64_t> operands_, outputs_;
  std::shared_ptr<JitFunction> comparator_;
  std::optional<FastComparator> fast_;
  hlo::PrimitiveType key_type_;
  int64_t length_ = 0, stride_ = 1, slices_ = 0;
};

}  // namespace

std::optional<SortLowering> MakeSortThunk(const hlo::Instruction& sort, llvm::Module& module,
                                          const std::string& symbol,
                                          std::vector<int64_t> operands,
                                          std::vector<int64_t> outputs) {
  if (!sort.has_attr<hlo::SortAttrs>() || sort.called_computations().size() != 1 ||
      sort.operand_count() == 0 || operands.size() != outputs.size())
    return std::nullopt;
  const hlo::Shape& shape = sort.operand(0)->shape();
  const int64_t dimension = sort.attr<hlo::SortAttrs>().dimension;
  if (!shape.IsArray() || dimension < 0 || dimension >= shape.rank()) return std::nullopt;
  std::vector<hlo::Shape> operand_shapes;
  std::vector<const hlo::Shape*> results;
  hlo::FlattenShape(sort.shape(), results);
  if (results.size() != operands.size()) return std::nullopt;
  std::vector<int64_t> element_bytes;
  for (int64_t i = 0; i < sort.operand_count(); ++i) {
    const hlo::Shape& operand = sort.operand(i)->shape();
    const hlo::Shape& result = *results[static_cast<size_t>(i)];
    // One physical order for all: the slices are at the same offsets in every buffer.
    if (!operand.IsArray() || operand.dims != shape.dims || result.type != operand.type ||
        operand.EffectiveMinorToMajor() != shape.EffectiveMinorToMajor() ||
        result.EffectiveMinorToMajor() != shape.EffectiveMinorToMajor())
      return std::nullopt;
    operand_shapes.push_back(operand);
    element_bytes.push_back(ArrayByteSize(hlo::Shape::Scalar(operand.type)));
  }
  try {
    EmitComparator(module, symbol, *sort.called_computations()[0], operand_shapes);
  } catch (const hlo::Error&) {
    if (llvm::Function* f = module.getFunction(symbol)) f->eraseFromParent();
    return std::nullopt;
  }
  auto comparator = std::make_shared<JitFunction>(JitFunction{symbol, nullptr});
  SortLowering lowering;
  lowering.thunk = std::make_unique<SortThunk>(
      sort.name(), shape, dimension, std::move(element_bytes), std::move(operands),
      std::move(outputs), comparator,
      RecognizeComparator(*sort.called_computations()[0], shape.type));
  lowering.comparator = std::move(comparator);
  return lowering;
}

}  // namespace cpu

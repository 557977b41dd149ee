// AttributeReader: the raw `name=value` attributes of one instruction and the parsers that turn
// values into the typed structs of attributes.h. Internal to the HLO text parser.
//
// Every value parser reads its value with a sub-lexer over the raw text, so errors carry the
// file:line:col inside the value; every value must be consumed entirely.
#pragma once

#include <array>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "hlo/parser_internal.h"

namespace hlo::parser_internal {

// Attributes kept verbatim (OpaqueAttribute) on any instruction.
inline constexpr std::string_view kOpaqueAttributes[] = {
    "metadata", "backend_config", "sharding", "frontend_attributes", "statistics",
    "control-predecessors", "origin", "result_accuracy", "schedule",
    "output_to_operand_aliasing", "operand_layout_constraints", "algorithm",
    "parameter_replication", "custom_call_schedule", "is_stable", "sparsity", "rng_algorithm",
    "constrain_layout", "is_host_transfer", "raw_backend_config", "async_execution_thread",
    "infeed_config", "outfeed_config", "outfeed_shape", "padding_type", "literal",
    "cross_program_prefetch_index", "split_dimension", "async_group_id"};

// Attributes that are typed for some opcode: on another opcode they are misplaced, not unknown.
inline constexpr std::string_view kTypedAttributes[] = {
    "dimensions", "slice", "dynamic_slice_sizes", "padding", "lhs_batch_dims",
    "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims", "operand_precision",
    "window", "dim_labels", "feature_group_count", "batch_group_count", "direction", "type",
    "offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
    "start_indices_batching_dims", "index_vector_dim", "slice_sizes", "indices_are_sorted",
    "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
    "input_batching_dims", "scatter_indices_batching_dims", "unique_indices", "index", "kind",
    "calls", "custom_call_target", "api_version", "custom_call_has_side_effect", "k", "largest",
    "epsilon", "feature_index", "exponent_bits", "mantissa_bits", "replica_groups", "channel_id",
    "use_global_device_ids", "source_target_pairs", "distribution", "iota_dimension", "to_apply",
    "condition", "body", "branch_computations", "true_computation", "false_computation", "select",
    "scatter", "called_computations"};

template <size_t N>
inline bool Contains(const std::string_view (&table)[N], std::string_view name) {
  for (std::string_view entry : table) {
    if (entry == name) return true;
  }
  return false;
}

class AttributeReader {
 public:
  AttributeReader(Lexer& outer, Opcode opcode, const LexPosition& opcode_pos,
                  const std::vector<RawAttribute>& raw)
      : outer_(outer), opcode_(opcode), opcode_pos_(opcode_pos), raw_(raw), used_(raw.size(), false) {
    for (size_t i = 0; i < raw_.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (raw_[i].name == raw_[j].name) {
          outer_.FailAt(raw_[i].name_pos, "duplicate attribute '" + std::string(raw_[i].name) + "'");
        }
      }
    }
  }

  const RawAttribute* Take(std::string_view name) {
    for (size_t i = 0; i < raw_.size(); ++i) {
      if (!used_[i] && raw_[i].name == name) {
        used_[i] = true;
        return &raw_[i];
      }
    }
    return nullptr;
  }
  const RawAttribute& Require(std::string_view name) {
    const RawAttribute* a = Take(name);
    if (!a) {
      outer_.FailAt(opcode_pos_, std::string(OpcodeName(opcode_)) + " requires attribute '" +
                                     std::string(name) + "'");
    }
    return *a;
  }
  Lexer Sub(const RawAttribute& a) const { return Lexer(outer_.input(), outer_.file(), a.value); }
  void ExpectEnd(Lexer& sub, const RawAttribute& a) const {
    if (!sub.AtEnd()) {
      sub.Fail("unexpected text in the value of attribute '" + std::string(a.name) + "'");
    }
  }

  // Leftovers: known uninterpreted attributes become opaque (in input order); others are errors.
  void Finish(ParsedAttributes& out) {
    for (size_t i = 0; i < raw_.size(); ++i) {
      if (used_[i]) continue;
      const RawAttribute& a = raw_[i];
      if (Contains(kOpaqueAttributes, a.name)) {
        out.opaque.push_back({std::string(a.name), std::string(a.value.text)});
      } else if (Contains(kTypedAttributes, a.name)) {
        outer_.FailAt(a.name_pos, "attribute '" + std::string(a.name) + "' is not valid for " +
                                      std::string(OpcodeName(opcode_)));
      } else {
        outer_.FailAt(a.name_pos, "unknown attribute '" + std::string(a.name) + "'");
      }
    }
  }

  // ----- value parsers ---------------------------------------------------------------------

  std::vector<int64_t> IntList(const RawAttribute& a) {
    Lexer sub = Sub(a);
    std::vector<int64_t> values = IntListFrom(sub);
    ExpectEnd(sub, a);
    return values;
  }
  static std::vector<int64_t> IntListFrom(Lexer& sub) {
    std::vector<int64_t> values;
    sub.Expect('{', "to start a list of integers");
    if (!sub.TryConsume('}')) {
      do {
        values.push_back(sub.Integer("an integer"));
      } while (sub.TryConsume(','));
      sub.Expect('}', "to close the list of integers");
    }
    return values;
  }
  int64_t Int(const RawAttribute& a) {
    Lexer sub = Sub(a);
    int64_t v = sub.Integer("an integer");
    ExpectEnd(sub, a);
    return v;
  }
  int64_t NonNegativeInt(const RawAttribute& a) {
    int64_t v = Int(a);
    if (v < 0) outer_.FailAt(a.value.start, "'" + std::string(a.name) + "' must not be negative");
    return v;
  }
  bool Bool(const RawAttribute& a) {
    if (a.value.text == "true") return true;
    if (a.value.text == "false") return false;
    outer_.FailAt(a.value.start, "expected true or false for '" + std::string(a.name) + "'");
  }
  std::string_view Word(const RawAttribute& a) {
    Lexer sub = Sub(a);
    std::string_view w = sub.Name("a name");
    ExpectEnd(sub, a);
    return w;
  }
  std::string String(const RawAttribute& a) {
    Lexer sub = Sub(a);
    std::string s = sub.QuotedString("a quoted string");
    ExpectEnd(sub, a);
    return s;
  }
  float Float(const RawAttribute& a) {
    std::string_view text = a.value.text;
    float v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
      outer_.FailAt(a.value.start, "invalid number for '" + std::string(a.name) + "'");
    }
    return v;
  }
  [[noreturn]] void BadValue(const RawAttribute& a, std::string_view expected) {
    outer_.FailAt(a.value.start, "invalid value '" + std::string(a.value.text) + "' for '" +
                                     std::string(a.name) + "' (expected " + std::string(expected) +
                                     ")");
  }

  ComputationRef Computation(const RawAttribute& a) {
    Lexer sub = Sub(a);
    ComputationRef ref{{}, (sub.SkipTrivia(), sub.position())};
    ref.name = sub.Name("a computation name");
    ExpectEnd(sub, a);
    return ref;
  }
  std::vector<ComputationRef> ComputationList(const RawAttribute& a) {
    Lexer sub = Sub(a);
    std::vector<ComputationRef> refs;
    sub.Expect('{', "to start a list of computations");
    if (!sub.TryConsume('}')) {
      do {
        ComputationRef ref{{}, (sub.SkipTrivia(), sub.position())};
        ref.name = sub.Name("a computation name");
        refs.push_back(ref);
      } while (sub.TryConsume(','));
      sub.Expect('}', "to close the list of computations");
    }
    ExpectEnd(sub, a);
    return refs;
  }

  PrecisionConfig Precision(const RawAttribute* a) {
    PrecisionConfig config;
    if (!a) return config;
    Lexer sub = Sub(*a);
    sub.Expect('{', "to start operand_precision");
    if (!sub.TryConsume('}')) {
      do {
        LexPosition pos = (sub.SkipTrivia(), sub.position());
        std::string_view w = sub.Name("a precision");
        if (w == "default" || w == "DEFAULT") {
          config.operand_precision.push_back(Precision::kDefault);
        } else if (w == "high" || w == "HIGH") {
          config.operand_precision.push_back(Precision::kHigh);
        } else if (w == "highest" || w == "HIGHEST") {
          config.operand_precision.push_back(Precision::kHighest);
        } else {
          sub.FailAt(pos, "unknown precision '" + std::string(w) + "'");
        }
      } while (sub.TryConsume(','));
      sub.Expect('}', "to close operand_precision");
    }
    ExpectEnd(sub, *a);
    return config;
  }

  Window ParseWindow(const RawAttribute& a);
  ConvDimensionNumbers DimLabels(const RawAttribute& a);
  std::vector<PadDim> Padding(const RawAttribute& a);
  std::vector<SliceDim> Slices(const RawAttribute& a);
  std::vector<std::vector<int64_t>> ReplicaGroups(const RawAttribute& a);
  std::vector<std::pair<int64_t, int64_t>> Pairs(const RawAttribute& a);

  Lexer& outer() { return outer_; }

 private:
  Lexer& outer_;
  Opcode opcode_;
  LexPosition opcode_pos_;
  const std::vector<RawAttribute>& raw_;
  std::vector<bool> used_;
};

}  // namespace hlo::parser_internal

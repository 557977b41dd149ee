// AnalyzeWithConsumer (consumer_fusion.h).
#include "targets/systolic/lowering/consumer_fusion.h"

#include <algorithm>

namespace systolic::lowering {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool HoldsContraction(const Instruction& producer) {
  if (producer.opcode() == Opcode::kDot || producer.opcode() == Opcode::kConvolution) return true;
  if (producer.opcode() != Opcode::kFusion) return false;
  const auto& body = producer.called_computations().at(0)->instructions();
  return std::any_of(body.begin(), body.end(), [](const auto& x) {
    return x->opcode() == Opcode::kDot || x->opcode() == Opcode::kConvolution;
  });
}

bool IsElementwise(const Instruction& inst) {
  hlo::OpClass cls = hlo::OpcodeClass(inst.opcode());
  return cls == hlo::OpClass::kElementwiseUnary || cls == hlo::OpClass::kElementwiseBinary ||
         cls == hlo::OpClass::kElementwiseTernary;
}

}  // namespace

std::optional<int64_t> ContractionWithConsumer::External(const Instruction* leaf) const {
  auto it = external_index.find(leaf);
  if (it == external_index.end()) return std::nullopt;
  return it->second;
}

std::optional<ContractionWithConsumer> AnalyzeWithConsumer(
    const Instruction& producer, const Instruction& entry_root,
    const std::function<bool(const Instruction*)>& computed) {
  if (!HoldsContraction(producer) || producer.users().size() != 1 || &producer == &entry_root ||
      !producer.shape().IsArray()) {
    return std::nullopt;
  }
  const Instruction& consumer = *producer.users()[0];
  const bool consumer_fusion = consumer.opcode() == Opcode::kFusion;
  if (!consumer.shape().IsArray() || (!consumer_fusion && !IsElementwise(consumer))) {
    return std::nullopt;
  }
  ContractionWithConsumer pair;
  pair.consumer = &consumer;
  bool available = true;
  auto add = [&](const Instruction* leaf, const Instruction* value) {
    if (!value->shape().IsArray() || !computed(value)) available = false;
    auto it = std::find(pair.operands.begin(), pair.operands.end(), value);
    pair.external_index[leaf] = it - pair.operands.begin();
    if (it == pair.operands.end()) pair.operands.push_back(value);
  };
  const Instruction* producer_root = &producer;
  if (producer.opcode() == Opcode::kFusion) {
    const hlo::Computation& body = *producer.called_computations().at(0);
    producer_root = body.root();
    for (const Instruction* param : body.parameters()) {
      add(param, producer.operand(param->attr<hlo::ParameterAttrs>().number));
    }
  } else {
    for (const Instruction* operand : producer.operands()) add(operand, operand);
  }
  const Instruction* root = &consumer;
  if (consumer_fusion) {
    const hlo::Computation& body = *consumer.called_computations().at(0);
    root = body.root();
    for (const Instruction* param : body.parameters()) {
      const Instruction* value = consumer.operand(param->attr<hlo::ParameterAttrs>().number);
      if (value == &producer) {
        pair.substitute[param] = producer_root;
      } else {
        add(param, value);
      }
    }
  } else {
    for (const Instruction* operand : consumer.operands()) {
      if (operand != &producer) {
        add(operand, operand);
      } else if (producer_root != &producer) {
        pair.substitute[operand] = producer_root;
      }
    }
  }
  if (!available) return std::nullopt;
  const ContractionWithConsumer& view = pair;
  ExternalIndex external = [&view](const Instruction* x) { return view.External(x); };
  Substitution substitution = [&view](const Instruction* x) -> const Instruction* {
    auto it = view.substitute.find(x);
    return it == view.substitute.end() ? nullptr : it->second;
  };
  std::optional<RowProgram> program = AnalyzeRows(*root, external, true, nullptr, substitution);
  if (!program || !program->contraction) return std::nullopt;
  pair.program = std::move(*program);
  return pair;
}

}  // namespace systolic::lowering

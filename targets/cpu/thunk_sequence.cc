// ThunkSequence: buffer table, parameter binding and the run loop with per-thunk timing.
#include "targets/cpu/thunk.h"

#include <chrono>
#include <cstring>

namespace cpu {

int64_t ThunkSequence::AddOwnedBuffer(int64_t bytes) {
  owned_.push_back(std::make_unique<AlignedBytes>(bytes));
  pointers_.push_back(owned_.back()->data());
  return buffer_count() - 1;
}

int64_t ThunkSequence::AddBoundBuffer() {
  owned_.push_back(nullptr);
  pointers_.push_back(nullptr);
  return buffer_count() - 1;
}

std::vector<const hlo::Shape*> ThunkSequence::ParameterLeafShapes() const {
  std::vector<const ValueLayout*> leaves;
  for (const ValueLayout& p : parameters_) CollectLeaves(p, leaves);
  std::vector<const hlo::Shape*> shapes;
  for (const ValueLayout* leaf : leaves) shapes.push_back(&leaf->shape);
  return shapes;
}

void ThunkSequence::ComputeLeafIds() const {
  std::vector<const ValueLayout*> leaves;
  for (const ValueLayout& p : parameters_) CollectLeaves(p, leaves);
  parameter_leaf_ids_.clear();
  for (const ValueLayout* leaf : leaves) parameter_leaf_ids_.push_back(leaf->buffer);
  leaves.clear();
  CollectLeaves(root_, leaves);
  root_leaf_ids_.clear();
  for (const ValueLayout* leaf : leaves) root_leaf_ids_.push_back(leaf->buffer);
  leaf_ids_ready_ = true;
}

void ThunkSequence::BindParameters(const std::vector<uint8_t*>& leaf_pointers) {
  if (!leaf_ids_ready_) ComputeLeafIds();
  if (parameter_leaf_ids_.size() != leaf_pointers.size())
    throw hlo::Error("cpu backend: " + name_ + " expects " +
                     std::to_string(parameter_leaf_ids_.size()) + " parameter arrays, got " +
                     std::to_string(leaf_pointers.size()));
  for (size_t i = 0; i < parameter_leaf_ids_.size(); ++i)
    pointers_[static_cast<size_t>(parameter_leaf_ids_[i])] = leaf_pointers[i];
}

std::vector<uint8_t*> ThunkSequence::RootLeaves() const {
  std::vector<uint8_t*> result;
  RootLeavesInto(result);
  return result;
}

void ThunkSequence::RootLeavesInto(std::vector<uint8_t*>& leaves) const {
  if (!leaf_ids_ready_) ComputeLeafIds();
  leaves.resize(root_leaf_ids_.size());
  for (size_t i = 0; i < root_leaf_ids_.size(); ++i) leaves[i] = buffer(root_leaf_ids_[i]);
}

void ThunkSequence::Run(RunContext& context) {
  for (const auto& thunk : thunks_) {
    if (!context.profile || context.kernel_ms == nullptr) {
      thunk->Run(*this, context);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    thunk->Run(*this, context);
    (*context.kernel_ms)[thunk->name()] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
  }
}

void CopyLeaves(const std::vector<uint8_t*>& sources, const std::vector<uint8_t*>& destinations,
                const std::vector<int64_t>& bytes) {
  // A source that is another leaf's destination would be overwritten before it is read: it is
  // staged first. Nothing is allocated unless one is (a while loop copies its carry every trip).
  std::vector<std::unique_ptr<AlignedBytes>> staged;
  std::vector<uint8_t*> from;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i] == destinations[i]) continue;
    for (size_t j = 0; j < destinations.size(); ++j) {
      if (j != i && destinations[j] == sources[i]) {
        if (from.empty()) {
          from = sources;
          staged.resize(sources.size());
        }
        staged[i] = std::make_unique<AlignedBytes>(bytes[i]);
        std::memcpy(staged[i]->data(), sources[i], static_cast<size_t>(bytes[i]));
        from[i] = staged[i]->data();
        break;
      }
    }
  }
  const std::vector<uint8_t*>& source = from.empty() ? sources : from;
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] != destinations[i] && bytes[i] > 0)
      std::memcpy(destinations[i], source[i], static_cast<size_t>(bytes[i]));
  }
}

}  // namespace cpu

// The annotation custom-call targets (custom_call_targets.h).
#include "hlo/custom_call_targets.h"

#include <algorithm>
#include <array>

namespace hlo {
namespace {

constexpr std::array<std::string_view, 4> kAnnotations = {
    "Sharding", "annotate_device_placement", "MoveToHost", "MoveToDevice"};

}  // namespace

std::span<const std::string_view> AnnotationCustomCallTargets() { return kAnnotations; }

bool IsAnnotationCustomCall(std::string_view target) {
  return std::find(kAnnotations.begin(), kAnnotations.end(), target) != kAnnotations.end();
}

}  // namespace hlo

// Custom-call targets that only annotate a value for a later XLA pass — SPMD partitioning
// (Sharding) and host offloading (annotate_device_placement, MoveToHost, MoveToDevice) — and
// compute nothing on one device. One table for every reader: the interpreter returns the operand
// unchanged (RegisterBuiltinCustomCalls), the ownership analysis owns them as no code, and the
// cost model charges nothing for them.
#pragma once

#include <span>
#include <string_view>

namespace hlo {

std::span<const std::string_view> AnnotationCustomCallTargets();
bool IsAnnotationCustomCall(std::string_view target);

}  // namespace hlo

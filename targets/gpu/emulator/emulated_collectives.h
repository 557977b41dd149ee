// The host emulator's NCCL: a collective step of a GPU artifact (gpu::CollectiveCall) computed
// on the host, the devices of a multi-device run exchanging their send buffers through the
// interpreter's rendezvous (hlo::CollectiveRuntime), so a run on N emulated GPUs meets, waits
// and reports deadlocks exactly as the interpreter's devices do.
//
// Guarantees:
//  - The semantics are the artifact's (artifact.h, CollectiveCall), with the group's blocks
//    reduced in rank order, each step rounded to the element type as XLA's to_apply would be:
//    bit for bit the interpreter's all-reduce, whose fold is in group order. (NCCL's own order
//    on a device may differ for floating-point sums; the emulation fixes one.) Each step is
//    hlo::Combine, the interpreter's own arithmetic (maximum and minimum propagate NaN).
//  - Without a device view (one device), every group must have one member: the exchange is a
//    copy, a send_receive receives zeros unless the device is its own source.
//  - Errors (std::runtime_error or the rendezvous' hlo::Error) name the step.
#pragma once

#include <cstdint>
#include <string>

#include "hlo/collective_runtime.h"
#include "targets/gpu/artifact.h"

namespace gpu::emulator {

// Runs `call` on this device's `arena` (`arena_bytes` long, slices validated against it).
void EmulateCollective(const std::string& step_name, const gpu::CollectiveCall& call,
                       uint8_t* arena, const hlo::DeviceView* device);

}  // namespace gpu::emulator

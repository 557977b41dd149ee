// GpuCodegenStatsJson (see gpu_compiler.h): the code generator's kernels and owners as JSON.
#include <sstream>

#include "targets/gpu/codegen/gpu_compiler.h"

namespace gpu::codegen {

std::string GpuCodegenStatsJson(const GpuCompileResult& result) {
  std::ostringstream os;
  const gpu::Manifest& manifest = result.artifact.manifest;
  os << "{\n  \"arch\": \"" << manifest.target_arch
     << "\",\n  \"arena_bytes\": " << manifest.arena_bytes
     << ",\n  \"steps\": " << manifest.steps.size() << ",\n  \"kernels\": [";
  for (size_t i = 0; i < result.kernels.size(); ++i) {
    const KernelRecord& k = result.kernels[i];
    os << (i ? ",\n" : "\n") << "    {\"instruction\": \"" << k.instruction << "\", \"entry\": \""
       << k.entry << "\", \"kind\": \"" << k.kind << "\", \"grid\": " << k.grid
       << ", \"block\": " << k.block << ", \"elements_per_thread\": " << k.elements_per_thread
       << ", \"assembled\": " << (k.assembled ? "true" : "false")
       << ", \"registers\": " << k.registers << ", \"shared_bytes\": " << k.shared_bytes
       << ", \"stack_bytes\": " << k.stack_bytes
       << ", \"spill_store_bytes\": " << k.spill_store_bytes
       << ", \"spill_load_bytes\": " << k.spill_load_bytes << "}";
  }
  os << "\n  ],\n  \"owners\": [";
  for (size_t i = 0; i < result.owners.size(); ++i) {
    const OwnerRecord& o = result.owners[i];
    os << (i ? ",\n" : "\n") << "    {\"instruction\": \"" << o.instruction << "\", \"opcode\": \""
       << o.opcode << "\", \"owner\": \"" << o.owner << "\"}";
  }
  os << "\n  ]\n}\n";
  return os.str();
}

}  // namespace gpu::codegen

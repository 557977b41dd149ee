// GpuCodegenStatsJson (see gpu_compiler.h): the code generator's kernels and owners as JSON.
#include "hlo/json_text.h"
#include "targets/gpu/codegen/gpu_compiler.h"

namespace gpu::codegen {

std::string GpuCodegenStatsJson(const GpuCompileResult& result) {
  using Json = nlohmann::ordered_json;
  const gpu::Manifest& manifest = result.artifact.manifest;
  Json kernels = Json::array();
  for (const KernelRecord& k : result.kernels) {
    kernels.push_back({{"instruction", k.instruction},
                       {"entry", k.entry},
                       {"kind", k.kind},
                       {"grid", k.grid},
                       {"block", k.block},
                       {"elements_per_thread", k.elements_per_thread},
                       {"assembled", k.assembled},
                       {"registers", k.registers},
                       {"shared_bytes", k.shared_bytes},
                       {"stack_bytes", k.stack_bytes},
                       {"spill_store_bytes", k.spill_store_bytes},
                       {"spill_load_bytes", k.spill_load_bytes}});
  }
  Json owners = Json::array();
  for (const OwnerRecord& o : result.owners) {
    owners.push_back({{"instruction", o.instruction}, {"opcode", o.opcode}, {"owner", o.owner}});
  }
  const Json stats = {{"arch", manifest.target_arch},
                      {"arena_bytes", manifest.arena_bytes},
                      {"steps", manifest.steps.size()},
                      {"kernels", std::move(kernels)},
                      {"owners", std::move(owners)}};
  return hlo::JsonText(stats) + "\n";
}

}  // namespace gpu::codegen

// The named architecture presets. Every number is either from the cited publication
// (docs/accelerator.md has the full references) or marked "assumed" where the source is silent.
#include <array>

#include "simulator/isa/arch_config.h"

namespace systolic {
namespace {

// Energy defaults: Horowitz, "Computing's energy problem", ISSCC 2014, 45 nm / 0.9 V table.
// MAC = multiply + 32-bit accumulate add (written as the rounded sum so that printed configs
// read 0.3, not 0.30000000000000004); SRAM per byte = 64-bit access energy / 8.
void SetHorowitzEnergy(ArchConfig& c, double sram_64bit_access_pj) {
  c.energy_mac_int8_pj = 0.3;   // 8-bit int mult 0.2 pJ + 32-bit int add 0.1 pJ
  c.energy_mac_bf16_pj = 2.0;   // 16-bit FP mult 1.1 pJ + 32-bit FP add 0.9 pJ
  c.energy_mac_f32_pj = 4.6;    // 32-bit FP mult 3.7 pJ + 32-bit FP add 0.9 pJ
  c.energy_vector_op_pj = 0.9;  // one 32-bit FP add
  c.energy_ub_pj_per_byte = sram_64bit_access_pj / 8;
  c.energy_acc_pj_per_byte = sram_64bit_access_pj / 8;
  c.energy_dram_pj_per_byte = 1300.0 / 8;  // DRAM: 1.3-2.6 nJ per 64-bit access; low end
}

// Pipeline and queue depths, assumed alike for every preset (no cited source states them): a
// 4-stage vector pipeline (operand read, execute, round/pack, write back) with 8 more stages for
// the iterative transcendentals, 16-deep unit queues like VTA's command queues, and 16
// outstanding requests per DMA engine, a modest number for engines of this class. The lowering
// reads the same values for its cost decisions.
void SetAssumedPipelines(ArchConfig& c) {
  c.vector_pipeline_depth = 4;
  c.vector_transcendental_depth = 8;
  c.queue_depth = 16;
  c.dma_max_in_flight = 16;
}

// Jouppi et al., "In-Datacenter Performance Analysis of a Tensor Processing Unit", ISCA 2017.
ArchConfig TpuV1() {
  ArchConfig c;
  c.name = "tpu-v1";
  c.array_rows = 256, c.array_cols = 256;
  c.dataflow = Dataflow::kWs;
  c.mxu_dtypes = kMxuInt8;
  c.clock_mhz = 700;
  c.ub_bytes = int64_t{24} << 20;
  c.ub_banks = 1, c.ub_ports = 2;  // assumed: one read + one write per cycle
  c.ub_bank_width_bytes = 256;     // one 256-byte row (256 int8 lanes) per cycle
  c.acc_bytes = int64_t{4} << 20;  // 4096 x 256 x 32-bit
  // "The 4 MiB represents 4096, 256-element, 32-bit accumulators. The matrix unit produces
  // one 256-element partial sum per clock cycle" (Sec. 2): accumulating a partial sum reads
  // and writes one row per cycle. The 4096 are 2048 "duplicated ... so that the compiler could
  // use double buffering while running at peak performance": the activation pipeline reads one
  // row per cycle of the other half meanwhile. 3 rows per cycle in all: 3 banks of one row.
  c.acc_banks = 3;
  c.dram_bytes = int64_t{8} << 30;  // 8 GiB DDR3
  c.dram_bandwidth_gbps = 34;       // two DDR3-2133 channels
  c.dram_latency_ns = 100;          // assumed
  c.dram_burst_bytes = 64;          // DDR3 burst of 8 x 64-bit
  c.vector_lanes = 256;             // the activation pipeline takes one 256-wide row per cycle
  SetAssumedPipelines(c);
  SetHorowitzEnergy(c, 100);        // 1 MB SRAM: 100 pJ per 64-bit access
  return c;
}

// Genc et al., "Gemmini: Enabling Systematic Deep-Learning Architecture Evaluation via
// Full-Stack Integration", DAC 2021, and its default GemminiConfigs (Configs.scala).
ArchConfig Gemmini() {
  ArchConfig c;
  c.name = "gemmini";
  c.array_rows = 16, c.array_cols = 16;  // DIM = 16
  c.dataflow = Dataflow::kWs;            // default build supports both WS and OS
  c.mxu_dtypes = kMxuInt8;               // int8 inputs, int32 accumulators
  c.clock_mhz = 1000;                    // assumed: 1 GHz
  c.ub_bytes = int64_t{256} << 10;       // sp_capacity = 256 KiB
  c.ub_banks = 4, c.ub_ports = 1;        // sp_banks = 4, single-ported
  c.ub_bank_width_bytes = 16;            // one 16-element int8 row
  c.acc_bytes = int64_t{64} << 10;       // acc_capacity = 64 KiB
  c.acc_banks = 2;                       // acc_banks = 2
  c.dram_bytes = int64_t{2} << 30;       // assumed
  c.dram_bandwidth_gbps = 16;            // dma_buswidth 128 bits at 1 GHz
  c.dram_latency_ns = 100;               // assumed
  c.dram_burst_bytes = 64;               // assumed: one cache line
  c.vector_lanes = 16;                   // assumed: one row per cycle
  SetAssumedPipelines(c);
  SetHorowitzEnergy(c, 20);              // 32 KB SRAM: 20 pJ per 64-bit access (64 KiB banks)
  return c;
}

// One MXU of a TPU v4 TensorCore. Jouppi et al., "TPU v4: An Optically Reconfigurable
// Supercomputer for Machine Learning with Hardware Support for Embeddings", ISCA 2023:
// 128x128 bf16 MXUs, 4 per TensorCore, 2 TensorCores per chip, 1050 MHz, 275 TFLOPS bf16 per
// chip, 32 GiB HBM2 at 1200 GB/s.
ArchConfig TpuV4Mxu() {
  ArchConfig c;
  c.name = "tpu-v4-mxu";
  c.array_rows = 128, c.array_cols = 128;
  c.dataflow = Dataflow::kWs;
  c.mxu_dtypes = kMxuBf16 | kMxuInt8;
  c.clock_mhz = 1050;
  c.ub_bytes = int64_t{16} << 20;      // assumed: the core's vector memory (VMEM)
  c.ub_banks = 8, c.ub_ports = 1;      // assumed
  c.ub_bank_width_bytes = 256;         // one 128-element bf16 row
  c.acc_bytes = int64_t{4} << 20;      // assumed
  c.acc_banks = 4;                     // assumed
  c.dram_bytes = int64_t{32} << 30;    // 32 GiB HBM2 per chip
  c.dram_bandwidth_gbps = 1200.0 / 8;  // the chip's 1200 GB/s shared by its 8 MXUs
  c.dram_latency_ns = 150;             // assumed
  c.dram_burst_bytes = 64;             // assumed
  c.vector_lanes = 128;                // assumed: one 128-wide row per cycle
  SetAssumedPipelines(c);
  SetHorowitzEnergy(c, 100);
  c.energy_dram_pj_per_byte = 3.9 * 8;  // HBM2 ~3.9 pJ/bit (O'Connor et al., MICRO 2017)
  return c;
}

constexpr std::array<std::string_view, 3> kPresetNames = {"tpu-v1", "gemmini", "tpu-v4-mxu"};

}  // namespace

std::span<const std::string_view> PresetNames() { return kPresetNames; }

ArchConfig Preset(std::string_view name) {
  if (name == "tpu-v1") return TpuV1();
  if (name == "gemmini") return Gemmini();
  if (name == "tpu-v4-mxu") return TpuV4Mxu();
  std::string valid;
  for (std::string_view n : kPresetNames) {
    if (!valid.empty()) valid += ", ";
    valid += n;
  }
  throw hlo::Error("unknown preset '" + std::string(name) + "' (presets: " + valid + ")");
}

}  // namespace systolic

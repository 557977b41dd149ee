// TargetDescription: everything the shared optimizer and the analyses may know about a target.
//
// Shared passes read these fields; they never test which target they run for. Each backend
// describes itself beside its lowering (targets/<name>/description.{h,cc}; targets/descriptions.h
// lists the four), and the portability report compares targets through the same fields.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/opcodes.h"
#include "hlo/shape.h"

namespace hlo {
class Instruction;
}  // namespace hlo

namespace compiler {

// Who executes an instruction after a target's pipeline. Exactly one per instruction.
enum class Owner : uint8_t {
  kNoCode,                 // parameter, constant, tuple, get-tuple-element, bitcast: no kernel
  kGeneratedKernel,        // code the compiler generates (fused or single-op kernels)
  kLibrary,                // a vendor/third-party library call (named in OwnerInfo::library)
  kAcceleratorNative,      // an instruction of the accelerator's own ISA
  kHostFallback,           // runs on the host because the target cannot execute it
  kUnsupportedCustomCall,  // opaque custom kernel the target does not know
  kCollective,             // exchanges values between devices (a class of its own)
};
std::string_view OwnerName(Owner owner);  // "generated-kernel", "library", ...

// How a target handles one opcode natively (before fusion decides anything).
enum class OpHandling : uint8_t {
  kGenerated,    // the target's code generator emits it
  kLibrary,      // mapped to a library call (OpRule::library names it)
  kNative,       // accelerator ISA instruction(s)
  kHostFallback, // not executable on the target; runs on the host
};

struct OpRule {
  OpHandling handling = OpHandling::kGenerated;
  std::string library;                  // "cuBLASLt", "cuDNN", "Eigen", ... for kLibrary
  // Element types the rule applies to; empty = all. Other types fall back to `otherwise`.
  std::set<hlo::PrimitiveType> types;
  OpHandling otherwise = OpHandling::kHostFallback;
};

// Epilogues a library/native contraction can absorb (kOutput fusion).
enum class Epilogue : uint8_t { kBiasAdd, kScale, kRelu, kGelu, kConvert, kResidualAdd };

struct PeakRates {
  // Operations per second by element type of the computation (FLOP/s for floats, OP/s for ints).
  std::map<hlo::PrimitiveType, double> matrix_ops_per_second;  // dot / convolution
  double vector_ops_per_second = 0;    // elementwise / reductions
  double memory_bytes_per_second = 0;  // device memory bandwidth
  double host_link_bytes_per_second = 0;  // host<->device (fallbacks pay it twice)
  double kernel_launch_seconds = 0;    // fixed cost per kernel / library call
  // How a host fallback's time is estimated. false: the host's (cpu target's) roofline plus the
  // instruction's bytes over the host link there and back. true: only its operands and result
  // over the link once plus kernel_launch_seconds per step, the host's compute overlapping the
  // device — how the systolic simulation charges a host step, so estimate and simulation agree.
  bool host_fallback_link_only = false;
};

// The links between devices of a multi-device run (compiler/communication.h costs collectives
// over them). No name: the target has none, and collectives are not costed.
// How the devices are joined (communication.h says what each costs): a ring; a 2-D or 3-D torus
// (each dimension a ring, the devices arranged as near-square / near-cube as the group's size
// allows); or a switch every device has one link each way to.
enum class Topology : uint8_t { kRing, kTorus2d, kTorus3d, kSwitch };

struct Interconnect {
  std::string name;                   // e.g. "NVLink 4"
  double bytes_per_second = 0;        // per device, per direction
  double step_latency_seconds = 0;    // one step of a ring collective
  std::string source;                 // where the figures come from
  Topology topology = Topology::kRing;
  double hop_seconds = 0;             // the switch's own latency, per step through it
};

struct EnergyModel {
  double joules_per_flop = 0;          // per matrix FLOP at the preferred type
  double joules_per_vector_op = 0;
  double joules_per_dram_byte = 0;
  double idle_watts = 0;
};

struct TargetDescription {
  std::string name;                    // "interp", "cpu", "gpu", "systolic"
  std::string description;

  // Opcode handling. Missing opcodes default to `default_handling`.
  std::map<hlo::Opcode, OpRule> op_rules;
  OpHandling default_handling = OpHandling::kGenerated;
  // Why an opcode runs on the host, e.g. "no vector-unit instruction for tan": the ownership
  // analysis appends it to the host-fallback detail of an op whose rule is kHostFallback.
  std::map<hlo::Opcode, std::string> host_fallback_details;
  // What an OpRule cannot hold (it keys on the opcode and one element type): the backend's own
  // answer for one instruction, e.g. that a float -> int convert truncates where the target's
  // instruction rounds. Returns why `inst` runs on the host although its rule says otherwise,
  // or nullopt when the rule's answer stands. Empty: the rules are the whole answer.
  std::function<std::optional<std::string>(const hlo::Instruction&)> instruction_host_reason;
  // The converse: whether `inst` is one step of an idiom the target runs as one native
  // instruction although no rule covers the step alone (the s64 multiply and shift of a
  // fixed-point requantization the accelerator's vrequant computes). Empty: none.
  std::function<bool(const hlo::Instruction&)> instruction_in_native_idiom;
  // Element types the target's code generator has no form for (complex, the 8- and 4-bit
  // floats, s4/u4 where so): an instruction whose result or an operand holds one runs on the
  // host whatever its opcode's rule says, `host_element_types_detail` saying how.
  std::set<hlo::PrimitiveType> host_element_types;
  std::string host_element_types_detail;
  // Custom-call targets the target knows, and who runs them. Unknown ones are
  // Owner::kUnsupportedCustomCall.
  std::map<std::string, OpRule> custom_calls;
  bool supports_collectives = false;   // a multi-device runtime exists
  Interconnect interconnect;           // what collectives cost between its devices

  // Fusion.
  std::set<hlo::FusionKind> fusion_kinds;       // accepted kinds (empty: no fusion)
  std::set<Epilogue> contraction_epilogues;     // for kOutput fusion into dot/convolution
  int64_t max_fusion_instructions = 64;         // bounds fusion size
  double max_duplication_factor = 1.5;          // bounds recomputed work in fused producers
  bool multi_output_fusion = false;
  // Opcodes the target runs natively only as instructions of their own (the accelerator's
  // slice, concatenate and pad are DMA programs, not steps a vector-unit fusion can take):
  // the fusion passes never fuse them with other code.
  std::set<hlo::Opcode> unfused_opcodes;
  // The target's GEMM reads an operand stored with its last two dimensions swapped as a
  // transposed matrix (the CPU's Sgemm): a transpose that swaps them (SwapsLastTwoDims) and is
  // read only by dots moves no bytes there, so the fusion passes leave it unfused.
  bool gemm_reads_transposed_operands = false;

  // Layouts. Convolutions are canonicalized to this dim_labels form, e.g. "b01f_01io->b01f";
  // empty = leave as is.
  std::string preferred_conv_dim_labels;
  bool prefers_row_major = true;                // default descending layouts everywhere

  // Memory.
  int64_t device_memory_bytes = 0;
  int64_t on_chip_memory_bytes = 0;             // SRAM / shared memory / L2, for tiling
  int64_t alignment_bytes = 64;

  PeakRates peak;
  EnergyModel energy;
  double price_per_hour_usd = 0;                // on-demand cloud price of one device

  // The rule for one instruction's opcode + element type.
  OpHandling HandlingFor(hlo::Opcode op, hlo::PrimitiveType type, std::string* library) const;
};

// c64, c128, the 8- and 4-bit floats, s4 and u4: the types no code generator here has a form
// for yet (each description says what happens to them instead).
std::set<hlo::PrimitiveType> ComplexAndNarrowTypes();

// The first type of `target.host_element_types` among the array leaves of `inst`'s result and
// operands (a fusion: of its members too); nullopt when there is none. Control flow (while,
// conditional, call) carries values without computing on them and is never reported.
std::optional<hlo::PrimitiveType> HostElementType(const hlo::Instruction& inst,
                                                  const TargetDescription& target);


}  // namespace compiler

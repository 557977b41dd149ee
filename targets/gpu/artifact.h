// The GPU artifact (.rtgpu): the contract between the GPU code generator (which writes it on the
// build machine) and the thin runtime `retarget-gpu-run` (which runs it on a GPU machine).
//
// Guarantees:
//  - Plain C++17 and the standard library only, so the runtime builds from targets/gpu alone.
//  - Self-describing and versioned: a reader rejects any other format version with
//    "artifact format version 7; this runtime reads version 1" before looking further.
//  - Every malformed, truncated or corrupt artifact raises gpu::ArtifactError (never a crash,
//    never an allocation larger than the file); ValidateArtifact checks every arena slice,
//    section reference, launch dimension and tensor size before anything runs.
//
// Container (all integers little-endian; docs/gpu-runtime.md has the full description):
//
//   offset 0   8 bytes   magic "RTGPU\0\r\n"
//          8   u32       format version (kArtifactFormatVersion)
//         12   u32       section count
//         16   u64       total file size (detects truncation)
//         24   section table, one entry per section:
//                u16 name length, name bytes, u64 offset, u64 size, u32 CRC-32 of the bytes
//              section data, each section starting at a multiple of 64 bytes
//
// The first section is "manifest": UTF-8 JSON describing the program (Manifest below). The other
// sections hold PTX text, cubins and constant data, referred to by name from the manifest.
//
// Execution model: the program owns one device arena of `arena_bytes` (offsets come from the
// compiler's buffer assignment). Constants are copied into the arena, parameters are uploaded
// to their slices, `steps` run in order on one stream, results are read from their slices. A
// while or conditional step runs programs (lists of steps) of its own over the same arena.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "targets/gpu/artifact_json.h"

namespace gpu {

// Version 2 added while and conditional steps and the programs they run; version 3 the device
// grid and the collective, device_id, strided_copy and fill steps of multi-device programs.
inline constexpr uint32_t kArtifactFormatVersion = 3;
inline constexpr char kArtifactMagic[8] = {'R', 'T', 'G', 'P', 'U', '\0', '\r', '\n'};
inline constexpr const char* kManifestSection = "manifest";

// Element types: manifest name, bytes per element, numpy descriptor used in .npz files.
// bf16 has no numpy type: it travels as float32 (DESIGN.md), hence "<f4".
#define RTGPU_DTYPES(X)            \
  X(kPred, "pred", 1, "|b1")       \
  X(kS8, "s8", 1, "|i1")           \
  X(kU8, "u8", 1, "|u1")           \
  X(kS16, "s16", 2, "<i2")         \
  X(kU16, "u16", 2, "<u2")         \
  X(kS32, "s32", 4, "<i4")         \
  X(kU32, "u32", 4, "<u4")         \
  X(kS64, "s64", 8, "<i8")         \
  X(kU64, "u64", 8, "<u8")         \
  X(kF16, "f16", 2, "<f2")         \
  X(kBF16, "bf16", 2, "<f4")       \
  X(kF32, "f32", 4, "<f4")         \
  X(kF64, "f64", 8, "<f8")

enum class DType {
#define RTGPU_DTYPE_ENUM(id, name, bytes, npy) id,
  RTGPU_DTYPES(RTGPU_DTYPE_ENUM)
#undef RTGPU_DTYPE_ENUM
};
const char* DTypeName(DType dtype);
int DTypeBytes(DType dtype);
const char* DTypeNpyDescr(DType dtype);
std::optional<DType> ParseDType(std::string_view name);

// A byte range of the device arena.
struct Slice {
  uint64_t offset = 0;
  uint64_t bytes = 0;
  bool operator==(const Slice& o) const { return offset == o.offset && bytes == o.bytes; }
};

// An entry parameter or a result: where it lives in the arena and what it holds. `name` is the
// .npz entry name (arg0, arg0.1, out0, ...). slice.bytes == product(shape) * DTypeBytes(dtype).
struct TensorSlot {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  Slice slice;
};

// Data copied from a section into the arena before the first step (slice.bytes == section size).
struct Constant {
  std::string section;
  Slice slice;
};

// One PTX module (several kernels may share it). When `cubin_section` is set and `cubin_arch`
// (e.g. "sm_90") matches the device, the runtime loads the cubin; otherwise it JITs the PTX.
struct PtxModule {
  std::string name;
  std::string ptx_section;
  std::string cubin_section;  // may be empty
  std::string cubin_arch;     // empty when there is no cubin
};

// One kernel parameter, in the order of the PTX entry's .param list.
struct KernelArg {
  enum class Kind { kBuffer, kS32, kS64, kF32 };  // buffer = device pointer to arena + offset
  Kind kind = Kind::kBuffer;
  Slice slice;           // kBuffer
  int64_t integer = 0;   // kS32 / kS64
  double real = 0.0;     // kF32
};

struct KernelLaunch {
  std::string module;  // PtxModule::name
  std::string entry;   // the .entry symbol
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t shared_bytes = 0;  // dynamic shared memory
  std::vector<KernelArg> args;
};

// cuBLASLt epilogues the code generator may fuse into a matmul.
#define RTGPU_EPILOGUES(X)      \
  X(kNone, "none", false)       \
  X(kRelu, "relu", false)       \
  X(kBias, "bias", true)        \
  X(kReluBias, "relu_bias", true) \
  X(kGelu, "gelu", false)       \
  X(kGeluBias, "gelu_bias", true)

enum class Epilogue {
#define RTGPU_EPILOGUE_ENUM(id, name, has_bias) id,
  RTGPU_EPILOGUES(RTGPU_EPILOGUE_ENUM)
#undef RTGPU_EPILOGUE_ENUM
};
const char* EpilogueName(Epilogue epilogue);
bool EpilogueHasBias(Epilogue epilogue);
std::optional<Epilogue> ParseEpilogue(std::string_view name);

// D[b] = epilogue(alpha * op(A[b]) . op(B[b]) + beta * D[b] (+ bias)), all matrices ROW-MAJOR:
// op(A) is m x k (A is stored k x m when transpose_a), op(B) is k x n, D is m x n; lda/ldb/ldd are
// row strides in elements; stride_* are batch strides in elements (0 = broadcast the matrix).
// The bias has n elements (one per output column) of `dtype`. Accumulation is in f32 (tf32 tensor
// cores only when allow_tf32). dtype is f32, f16 or bf16 for A, B, D and bias.
struct MatmulCall {
  DType dtype = DType::kF32;
  bool allow_tf32 = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool transpose_a = false, transpose_b = false;
  int64_t lda = 0, ldb = 0, ldd = 0;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;
  double alpha = 1.0, beta = 0.0;
  Epilogue epilogue = Epilogue::kNone;
  Slice a, b, d, bias;  // bias only when EpilogueHasBias(epilogue)
};

// A cuDNN forward convolution, NCHW input, KCRS filter, NKPQ output (2-D: spatial rank 2).
// Recorded by the format now; the runtime rejects it until its cuDNN path is written.
struct ConvCall {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_dims, filter_dims, output_dims;  // rank 2 + spatial rank
  std::vector<int64_t> strides, padding_low, padding_high, dilations;  // spatial rank each
  int64_t groups = 1;
  Slice input, filter, output;
};

// A device-to-device copy inside the arena (e.g. a result that aliases a parameter).
struct DeviceCopy {
  Slice source, destination;
};

// A 2-D copy inside the arena: `rows` rows of `row_bytes` each, consecutive rows `source_pitch`
// and `destination_pitch` bytes apart (cuMemcpy2D's shape). Collectives use it to gather blocks
// of a dimension that is not the outermost into the contiguous blocks NCCL exchanges, and back.
struct StridedCopy {
  uint64_t source = 0, destination = 0;  // arena offsets of the first row
  uint64_t rows = 0, row_bytes = 0, source_pitch = 0, destination_pitch = 0;
};

// `destination` set to bytes of one value (cuMemsetD8): context words a program reads as zero.
struct Fill {
  Slice destination;
  uint8_t value = 0;
};

// This device's replica or partition number (XLA's replica-id / partition-id), written as one
// u32 at `destination`: device d of a replicas x partitions grid is replica d / partitions,
// partition d % partitions.
struct DeviceIdWrite {
  bool partition = false;  // false: the replica number
  Slice destination;       // four bytes
};

// NCCL collectives, over the devices of Manifest::grid. A group lists global device ids; a
// device's rank is its position in its group.
#define RTGPU_COLLECTIVES(X)              \
  X(kAllReduce, "all_reduce")             \
  X(kAllGather, "all_gather")             \
  X(kReduceScatter, "reduce_scatter")     \
  X(kAllToAll, "all_to_all")              \
  X(kSendReceive, "send_receive")
enum class Collective {
#define RTGPU_COLLECTIVE_ENUM(id, name) id,
  RTGPU_COLLECTIVES(RTGPU_COLLECTIVE_ENUM)
#undef RTGPU_COLLECTIVE_ENUM
};
const char* CollectiveName(Collective collective);
std::optional<Collective> ParseCollective(std::string_view name);

// ncclRedOp_t's reductions (pred's and / or are min / max of 0/1 bytes).
#define RTGPU_REDUCTIONS(X) X(kSum, "sum") X(kProd, "prod") X(kMax, "max") X(kMin, "min")
enum class Reduction {
#define RTGPU_REDUCTION_ENUM(id, name) id,
  RTGPU_REDUCTIONS(RTGPU_REDUCTION_ENUM)
#undef RTGPU_REDUCTION_ENUM
};
const char* ReductionName(Reduction reduction);
std::optional<Reduction> ParseReduction(std::string_view name);

// One collective on row-major blocks of `count` elements of `dtype`, G the group size:
//   all_reduce      receive = the group's sends reduced element by element   (count each)
//   all_gather      receive block r = rank r's send                          (send count,
//                                                                             receive G x)
//   reduce_scatter  receive = block `rank` of the group's sends, reduced      (send G x count)
//   all_to_all      receive block r = block `rank` of rank r's send           (G x count each)
//   send_receive    receive = the send of the device `pairs` names as this one's source, zero
//                   bytes when none does; sends go to every target that names this device
// A group's reduction order is NCCL's (not fixed): sums of floats may differ from one order by
// rounding. Movement (all_gather, all_to_all, send_receive) works on any dtype as bytes;
// reductions need a type NCCL reduces (not s16 / u16).
struct CollectiveCall {
  Collective op = Collective::kAllReduce;
  DType dtype = DType::kF32;
  Reduction reduction = Reduction::kSum;  // all_reduce and reduce_scatter
  uint64_t count = 0;
  Slice send, receive;
  std::vector<std::vector<int64_t>> groups;           // every device in exactly one group
  std::vector<std::pair<int64_t, int64_t>> pairs;     // send_receive: (source, target)
};
// The devices `collective` exchanges with on `device`, itself included, in rank order: its group
// (send_receive: every device of the grid). Empty when no group holds the device (validated
// never to happen).
std::vector<int64_t> CollectiveGroupOf(const CollectiveCall& collective, int64_t device,
                                       int64_t devices);

// A while loop, decided on the device's data: the `condition` program runs and writes one pred
// byte at `predicate`; while that byte is nonzero the `body` program runs (it leaves the next
// loop state in the state's slices) and the condition again. Programs are indices into
// Manifest::programs.
struct WhileLoop {
  uint32_t condition = 0;
  uint32_t body = 0;
  Slice predicate;  // one byte
};

// A conditional: the selector picks one program. pred (one byte): nonzero runs branches[0],
// zero branches[1]; s32: that index, and out of range (negative included) the last branch, as
// XLA defines it. Each branch leaves the conditional's result in its slices.
struct Conditional {
  DType selector_dtype = DType::kPred;  // kPred or kS32
  Slice selector;
  std::vector<uint32_t> branches;
};

struct Step {
  std::string name;  // for timings ("fusion.3", "dot.1")
  std::variant<KernelLaunch, MatmulCall, ConvCall, DeviceCopy, WhileLoop, Conditional,
               StridedCopy, Fill, DeviceIdWrite, CollectiveCall>
      call;
};
// "kernel", "cublaslt_matmul", "cudnn_conv", "copy", "while", "conditional", "strided_copy",
// "fill", "device_id", "collective".
const char* StepKindName(const Step& step);

// The program a conditional runs, from the selector's bytes as they lie in the arena (one byte
// for pred, four for s32): pred nonzero -> branches[0], zero -> branches[1]; an s32 index out of
// range (negative included) -> the last branch, as XLA defines it. `branches` is non-empty
// (validated).
uint32_t SelectedBranch(const Conditional& conditional, const void* selector);

// The steps of a loop condition, loop body or branch. A step of program p refers only to
// programs with smaller indices (the entry's steps to any), so programs never recurse.
struct Program {
  std::string name;  // "<while>.condition", "<while>.body", "<conditional>.branch<i>"
  std::vector<Step> steps;
};

// The devices one program runs on at once (XLA's replica_count x num_partitions): the same
// artifact runs on each, device d with its own arena and inputs.
struct DeviceGrid {
  int64_t replicas = 1;
  int64_t partitions = 1;
  int64_t size() const { return replicas * partitions; }
  bool operator==(const DeviceGrid& o) const {
    return replicas == o.replicas && partitions == o.partitions;
  }
};

// What a device_id step writes on device `device` of `grid` (XLA's default assignment: replica
// device / partitions, partition device % partitions).
inline uint32_t DeviceIdValue(const DeviceIdWrite& id, const DeviceGrid& grid, int64_t device) {
  return static_cast<uint32_t>(id.partition ? device % grid.partitions : device / grid.partitions);
}
inline constexpr int64_t kMaxArtifactDevices = 1024;

struct Manifest {
  std::string producer;            // e.g. "retarget 0.1"
  std::string module_name;         // the HLO module
  std::string target_arch = "sm_90";
  DeviceGrid grid;
  uint64_t arena_bytes = 0;
  uint64_t workspace_bytes = 0;    // cuBLASLt workspace the runtime allocates beside the arena
  std::vector<TensorSlot> parameters;
  std::vector<TensorSlot> results;
  std::vector<Constant> constants;
  std::vector<PtxModule> modules;
  std::vector<Step> steps;
  std::vector<Program> programs;   // what while and conditional steps run
};

// Calls visit(step) for every step: the entry's, then each program's.
template <typename Visit>
void ForEachStep(const Manifest& manifest, Visit visit) {
  for (const Step& step : manifest.steps) visit(step);
  for (const Program& program : manifest.programs) {
    for (const Step& step : program.steps) visit(step);
  }
}

struct Artifact {
  Manifest manifest;
  std::map<std::string, std::string> sections;  // name -> bytes; never holds "manifest"
};

// Checks every invariant listed in the header comment. Throws ArtifactError naming the step,
// slot or section at fault.
void ValidateArtifact(const Artifact& artifact);

Json ManifestToJson(const Manifest& manifest);
Manifest ManifestFromJson(const Json& json);

// Validates, then encodes the container.
std::string SerializeArtifact(const Artifact& artifact);
// The container alone: sections in the given order (the manifest's text first), offsets, sizes
// and CRC-32s filled in, nothing validated. SerializeArtifact is the way to write an artifact;
// this is for tools and the fuzzer, which wrap arbitrary manifest text in a well-formed file.
std::string EncodeContainer(const std::vector<std::pair<std::string, std::string_view>>& sections);
// Decodes and validates. `source_name` prefixes error messages.
Artifact ParseArtifact(std::string_view bytes, const std::string& source_name = "artifact");

void WriteArtifactFile(const Artifact& artifact, const std::string& path);
Artifact ReadArtifactFile(const std::string& path);

// CRC-32 (IEEE 802.3, as zip and PNG use), exposed for the .npz writer and tests.
uint32_t Crc32(std::string_view bytes);

}  // namespace gpu

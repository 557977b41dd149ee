// ValidateArtifact: every invariant the runtime relies on, checked before anything touches a
// device, so that a bad artifact is a message rather than an illegal address on the GPU.
// Limits on launches are CUDA's for compute capability 9.0 (block <= 1024 threads, grid.y/z <=
// 65535, dynamic shared memory <= 227 KiB).
#include <set>

#include "targets/gpu/artifact.h"

namespace gpu {
namespace {

constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;  // 1 TiB: beyond any GPU, so surely corrupt
constexpr uint64_t kMaxThreadsPerBlock = 1024;
constexpr uint64_t kMaxGridX = (uint64_t{1} << 31) - 1;
constexpr uint64_t kMaxGridYZ = 65535;
constexpr uint64_t kMaxBlockZ = 64;
constexpr uint32_t kMaxSharedBytes = 227 * 1024;
constexpr size_t kMaxRank = 64;

[[noreturn]] void Fail(const std::string& where, const std::string& message) {
  throw ArtifactError(where + ": " + message);
}

uint64_t Mul(uint64_t a, uint64_t b, const std::string& where) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) Fail(where, "size overflows 64 bits");
  return r;
}
uint64_t Add(uint64_t a, uint64_t b, const std::string& where) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) Fail(where, "size overflows 64 bits");
  return r;
}

class Validator {
 public:
  explicit Validator(const Artifact& a) : a_(a), m_(a.manifest) {}

  void Run() {
    if (m_.arena_bytes > kMaxArenaBytes) Fail("arena_bytes", std::to_string(m_.arena_bytes) + " exceeds 1 TiB");
    if (m_.workspace_bytes > kMaxArenaBytes) Fail("workspace_bytes", "exceeds 1 TiB");
    if (a_.sections.count(kManifestSection) != 0) Fail("sections", "'manifest' is reserved");
    if (m_.grid.replicas < 1 || m_.grid.partitions < 1 ||
        m_.grid.replicas > kMaxArtifactDevices || m_.grid.partitions > kMaxArtifactDevices ||
        m_.grid.size() > kMaxArtifactDevices) {
      Fail("devices", std::to_string(m_.grid.replicas) + " replicas x " +
                          std::to_string(m_.grid.partitions) +
                          " partitions: each must be positive and the product at most " +
                          std::to_string(kMaxArtifactDevices));
    }
    std::set<std::string> names;
    for (size_t i = 0; i < m_.parameters.size(); ++i) Slot(m_.parameters[i], "parameters[" + std::to_string(i) + "]", names);
    for (size_t i = 0; i < m_.results.size(); ++i) Slot(m_.results[i], "results[" + std::to_string(i) + "]", names);
    for (size_t i = 0; i < m_.constants.size(); ++i) {
      const Constant& c = m_.constants[i];
      const std::string where = "constants[" + std::to_string(i) + "]";
      const std::string& data = Section(c.section, where);
      if (data.size() != c.slice.bytes) {
        Fail(where, "section '" + c.section + "' has " + std::to_string(data.size()) + " bytes, slice has " +
                        std::to_string(c.slice.bytes));
      }
      InArena(c.slice, where);
    }
    std::set<std::string> modules;
    for (size_t i = 0; i < m_.modules.size(); ++i) {
      const PtxModule& mod = m_.modules[i];
      const std::string where = "modules[" + std::to_string(i) + "] '" + mod.name + "'";
      if (mod.name.empty() || !modules.insert(mod.name).second) Fail(where, "empty or duplicate module name");
      if (Section(mod.ptx_section, where).empty()) Fail(where, "PTX section '" + mod.ptx_section + "' is empty");
      if (mod.cubin_section.empty() != mod.cubin_arch.empty()) Fail(where, "cubin_section and cubin_arch go together");
      if (!mod.cubin_section.empty()) Section(mod.cubin_section, where);
    }
    // The entry may run any program; program p only those before it, so nothing recurses.
    Steps(m_.steps, "steps", m_.programs.size(), modules);
    for (size_t p = 0; p < m_.programs.size(); ++p) {
      Steps(m_.programs[p].steps, "programs[" + std::to_string(p) + "] '" + m_.programs[p].name + "' steps", p,
            modules);
    }
  }

 private:
  void Steps(const std::vector<Step>& steps, const std::string& list, size_t programs_below,
             const std::set<std::string>& modules) {
    programs_below_ = programs_below;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      const std::string where = list + "[" + std::to_string(i) + "] (" + StepKindName(s) + " '" + s.name + "')";
      std::visit([&](const auto& call) { Check(call, where, modules); }, s.call);
    }
  }
  void Runs(uint32_t program, const std::string& where) {
    if (program >= programs_below_) {
      Fail(where, "runs program " + std::to_string(program) + ", but only programs below " +
                      std::to_string(programs_below_) + " may run here (" + std::to_string(m_.programs.size()) +
                      " in all; a program runs only earlier ones)");
    }
  }

  const std::string& Section(const std::string& name, const std::string& where) {
    auto it = a_.sections.find(name);
    if (it == a_.sections.end()) Fail(where, "refers to missing section '" + name + "'");
    return it->second;
  }
  void InArena(const Slice& s, const std::string& where) {
    if (Add(s.offset, s.bytes, where) > m_.arena_bytes) {
      Fail(where, "slice [" + std::to_string(s.offset) + ", +" + std::to_string(s.bytes) + ") lies outside the " +
                      std::to_string(m_.arena_bytes) + "-byte arena");
    }
  }
  uint64_t Elements(const std::vector<int64_t>& dims, const std::string& where) {
    if (dims.size() > kMaxRank) Fail(where, "rank above 64");
    uint64_t n = 1;
    for (int64_t d : dims) {
      if (d < 0) Fail(where, "negative dimension " + std::to_string(d));
      n = Mul(n, static_cast<uint64_t>(d), where);
    }
    return n;
  }
  void SizedSlice(const Slice& s, uint64_t want_bytes, const std::string& where) {
    if (s.bytes != want_bytes) {
      Fail(where, "slice has " + std::to_string(s.bytes) + " bytes, the tensor needs " + std::to_string(want_bytes));
    }
    InArena(s, where);
  }
  void Slot(const TensorSlot& t, const std::string& where, std::set<std::string>& names) {
    if (t.name.empty() || !names.insert(t.name).second) Fail(where, "empty or duplicate name '" + t.name + "'");
    SizedSlice(t.slice, Mul(Elements(t.shape, where), DTypeBytes(t.dtype), where), where + " '" + t.name + "'");
  }

  void Check(const KernelLaunch& k, const std::string& where, const std::set<std::string>& modules) {
    if (modules.count(k.module) == 0) Fail(where, "unknown module '" + k.module + "'");
    if (k.entry.empty()) Fail(where, "empty entry name");
    const uint64_t threads = uint64_t{k.block[0]} * k.block[1] * k.block[2];
    if (threads > kMaxThreadsPerBlock || k.block[2] > kMaxBlockZ) {
      Fail(where, "block of " + std::to_string(threads) + " threads exceeds 1024 (or z > 64)");
    }
    if (k.grid[0] > kMaxGridX || k.grid[1] > kMaxGridYZ || k.grid[2] > kMaxGridYZ) Fail(where, "grid too large");
    if (k.shared_bytes > kMaxSharedBytes) Fail(where, "shared memory above 227 KiB");
    for (size_t i = 0; i < k.args.size(); ++i) {
      const KernelArg& a = k.args[i];
      const std::string arg = where + " args[" + std::to_string(i) + "]";
      switch (a.kind) {
        case KernelArg::Kind::kBuffer: InArena(a.slice, arg); break;
        case KernelArg::Kind::kS32:
          if (a.integer < INT32_MIN || a.integer > INT32_MAX) Fail(arg, "does not fit in s32");
          break;
        case KernelArg::Kind::kS64: break;
        case KernelArg::Kind::kF32: break;
      }
    }
  }

  // Bytes spanned by `batch` row-major rows x cols matrices with row stride ld, batch stride bs.
  uint64_t Span(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t bs, const std::string& where) {
    if (ld < cols) Fail(where, "leading dimension " + std::to_string(ld) + " < " + std::to_string(cols) + " columns");
    if (bs < 0) Fail(where, "negative batch stride");
    const uint64_t one = Add(Mul(static_cast<uint64_t>(rows - 1), static_cast<uint64_t>(ld), where),
                             static_cast<uint64_t>(cols), where);
    return Add(one, Mul(static_cast<uint64_t>(batch - 1), static_cast<uint64_t>(bs), where), where);
  }
  void Check(const MatmulCall& mm, const std::string& where, const std::set<std::string>&) {
    if (mm.dtype != DType::kF32 && mm.dtype != DType::kF16 && mm.dtype != DType::kBF16 && mm.dtype != DType::kF64) {
      Fail(where, std::string("dtype ") + DTypeName(mm.dtype) + " is not f32, f16, bf16 or f64");
    }
    if (mm.dtype == DType::kF64 && mm.epilogue != Epilogue::kNone) Fail(where, "an f64 matmul takes no epilogue");
    if (mm.allow_tf32 && mm.dtype != DType::kF32) Fail(where, "allow_tf32 needs dtype f32");
    if (mm.m < 1 || mm.n < 1 || mm.k < 1 || mm.batch < 1) Fail(where, "m, n, k and batch must be positive");
    const uint64_t esize = DTypeBytes(mm.dtype);
    const int64_t a_rows = mm.transpose_a ? mm.k : mm.m, a_cols = mm.transpose_a ? mm.m : mm.k;
    const int64_t b_rows = mm.transpose_b ? mm.n : mm.k, b_cols = mm.transpose_b ? mm.k : mm.n;
    auto covers = [&](const Slice& s, uint64_t elements, const char* name) {
      const uint64_t need = Mul(elements, esize, where);
      if (s.bytes < need) {
        Fail(where, std::string("matrix ") + name + " slice has " + std::to_string(s.bytes) + " bytes, needs " +
                        std::to_string(need));
      }
      InArena(s, where + " " + name);
    };
    covers(mm.a, Span(a_rows, a_cols, mm.lda, mm.batch, mm.stride_a, where + " a"), "a");
    covers(mm.b, Span(b_rows, b_cols, mm.ldb, mm.batch, mm.stride_b, where + " b"), "b");
    covers(mm.d, Span(mm.m, mm.n, mm.ldd, mm.batch, mm.stride_d, where + " d"), "d");
    if (EpilogueHasBias(mm.epilogue)) SizedSlice(mm.bias, Mul(static_cast<uint64_t>(mm.n), esize, where), where + " bias");
  }

  void Check(const ConvCall& c, const std::string& where, const std::set<std::string>&) {
    const size_t rank = c.input_dims.size();
    if (rank < 3 || c.filter_dims.size() != rank || c.output_dims.size() != rank) {
      Fail(where, "input, filter and output need the same rank >= 3");
    }
    const size_t spatial = rank - 2;
    if (c.strides.size() != spatial || c.padding_low.size() != spatial || c.padding_high.size() != spatial ||
        c.dilations.size() != spatial) {
      Fail(where, "strides, padding and dilations need one entry per spatial dimension");
    }
    if (c.groups < 1) Fail(where, "groups must be positive");
    const uint64_t esize = DTypeBytes(c.dtype);
    SizedSlice(c.input, Mul(Elements(c.input_dims, where), esize, where), where + " input");
    SizedSlice(c.filter, Mul(Elements(c.filter_dims, where), esize, where), where + " filter");
    SizedSlice(c.output, Mul(Elements(c.output_dims, where), esize, where), where + " output");
  }

  void Check(const DeviceCopy& c, const std::string& where, const std::set<std::string>&) {
    if (c.source.bytes != c.destination.bytes) Fail(where, "source and destination sizes differ");
    InArena(c.source, where + " source");
    InArena(c.destination, where + " destination");
  }

  void Check(const WhileLoop& w, const std::string& where, const std::set<std::string>&) {
    Runs(w.condition, where + " condition");
    Runs(w.body, where + " body");
    SizedSlice(w.predicate, 1, where + " predicate");
  }

  void Check(const Conditional& c, const std::string& where, const std::set<std::string>&) {
    if (c.selector_dtype != DType::kPred && c.selector_dtype != DType::kS32) {
      Fail(where, std::string("selector dtype ") + DTypeName(c.selector_dtype) + " is not pred or s32");
    }
    SizedSlice(c.selector, DTypeBytes(c.selector_dtype), where + " selector");
    if (c.branches.empty()) Fail(where, "no branches");
    if (c.selector_dtype == DType::kPred && c.branches.size() != 2) Fail(where, "a pred selector needs two branches");
    for (size_t b = 0; b < c.branches.size(); ++b) Runs(c.branches[b], where + " branches[" + std::to_string(b) + "]");
  }

  void Check(const StridedCopy& c, const std::string& where, const std::set<std::string>&) {
    if (c.rows == 0 || c.row_bytes == 0) return;
    if (c.source_pitch < c.row_bytes || c.destination_pitch < c.row_bytes)
      Fail(where, "a pitch is smaller than a row");
    auto span = [&](uint64_t offset, uint64_t pitch, const char* name) {
      const uint64_t last = Add(Mul(c.rows - 1, pitch, where), c.row_bytes, where);
      InArena(Slice{offset, last}, where + " " + name);
    };
    span(c.source, c.source_pitch, "source");
    span(c.destination, c.destination_pitch, "destination");
  }

  void Check(const Fill& f, const std::string& where, const std::set<std::string>&) {
    InArena(f.destination, where);
  }

  void Check(const DeviceIdWrite& d, const std::string& where, const std::set<std::string>&) {
    SizedSlice(d.destination, 4, where + " destination");
  }

  void Check(const CollectiveCall& c, const std::string& where, const std::set<std::string>&) {
    const int64_t devices = m_.grid.size();
    auto device = [&](int64_t id) {
      if (id < 0 || id >= devices) {
        Fail(where, "device " + std::to_string(id) + " is outside the grid of " +
                        std::to_string(devices));
      }
      return static_cast<size_t>(id);
    };
    uint64_t group_size = 1;
    if (c.op == Collective::kSendReceive) {
      std::vector<uint8_t> sends(static_cast<size_t>(devices)), receives(sends.size());
      for (const auto& [source, target] : c.pairs) {
        if (sends[device(source)]++ || receives[device(target)]++)
          Fail(where, "a device sends or receives twice");
      }
    } else {
      std::vector<uint8_t> seen(static_cast<size_t>(devices));
      if (c.groups.empty()) Fail(where, "no groups");
      group_size = c.groups.front().size();
      for (const std::vector<int64_t>& group : c.groups) {
        if (group.size() != group_size) Fail(where, "groups of different sizes");
        for (int64_t id : group) {
          if (seen[device(id)]++) Fail(where, "device " + std::to_string(id) + " in two groups");
        }
      }
      for (size_t id = 0; id < seen.size(); ++id) {
        if (!seen[id]) Fail(where, "device " + std::to_string(id) + " is in no group");
      }
    }
    const bool reduces = c.op == Collective::kAllReduce || c.op == Collective::kReduceScatter;
    if (reduces && (c.dtype == DType::kS16 || c.dtype == DType::kU16))
      Fail(where, std::string("NCCL does not reduce ") + DTypeName(c.dtype));
    if (reduces && c.dtype == DType::kPred && c.reduction != Reduction::kMax &&
        c.reduction != Reduction::kMin)
      Fail(where, "pred reduces by max (or) or min (and) only");
    const uint64_t block = Mul(c.count, DTypeBytes(c.dtype), where);
    const uint64_t whole = Mul(block, group_size, where);
    uint64_t send = block, receive = block;
    switch (c.op) {
      case Collective::kAllReduce:
      case Collective::kSendReceive: break;
      case Collective::kAllGather: receive = whole; break;
      case Collective::kReduceScatter: send = whole; break;
      case Collective::kAllToAll: send = receive = whole; break;
    }
    SizedSlice(c.send, send, where + " send");
    SizedSlice(c.receive, receive, where + " receive");
  }

  const Artifact& a_;
  const Manifest& m_;
  size_t programs_below_ = 0;
};

}  // namespace

void ValidateArtifact(const Artifact& artifact) { Validator(artifact).Run(); }

}  // namespace gpu

// The .rtgpu container: vocabularies, CRC-32, section table encoding and decoding, files.
// Manifest <-> JSON lives in artifact_manifest.cc, invariants in artifact_validate.cc.
#include "targets/gpu/artifact.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace gpu {
namespace {

constexpr size_t kHeaderBytes = 24;
constexpr size_t kSectionAlignment = 64;
// Bounds that keep a hostile header from making the reader loop or allocate much.
constexpr uint32_t kMaxSections = 1u << 16;
constexpr size_t kMaxSectionNameBytes = 256;
constexpr uint64_t kMaxArtifactBytes = uint64_t{64} << 30;  // 64 GiB

struct DTypeInfo {
  DType dtype;
  const char* name;
  int bytes;
  const char* npy;
};
constexpr DTypeInfo kDTypes[] = {
#define RTGPU_DTYPE_ROW(id, name, bytes, npy) {DType::id, name, bytes, npy},
    RTGPU_DTYPES(RTGPU_DTYPE_ROW)
#undef RTGPU_DTYPE_ROW
};
struct EpilogueInfo {
  Epilogue epilogue;
  const char* name;
  bool has_bias;
};
constexpr EpilogueInfo kEpilogues[] = {
#define RTGPU_EPILOGUE_ROW(id, name, has_bias) {Epilogue::id, name, has_bias},
    RTGPU_EPILOGUES(RTGPU_EPILOGUE_ROW)
#undef RTGPU_EPILOGUE_ROW
};

constexpr const char* kCollectiveNames[] = {
#define RTGPU_COLLECTIVE_NAME(id, name) name,
    RTGPU_COLLECTIVES(RTGPU_COLLECTIVE_NAME)
#undef RTGPU_COLLECTIVE_NAME
};
constexpr const char* kReductionNames[] = {
#define RTGPU_REDUCTION_NAME(id, name) name,
    RTGPU_REDUCTIONS(RTGPU_REDUCTION_NAME)
#undef RTGPU_REDUCTION_NAME
};

// The enumerator whose name (in a table indexed by the enum) is `name`.
template <typename Enum, size_t N>
std::optional<Enum> ByName(const char* const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

void PutU16(std::string& out, uint16_t v) {
  for (int i = 0; i < 2; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// Reads little-endian integers with bounds checks; errors name the artifact and the offset.
class ByteReader {
 public:
  ByteReader(std::string_view bytes, const std::string& source) : bytes_(bytes), source_(source) {}
  uint64_t Get(size_t width, const char* what) {
    Need(width, what);
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<unsigned char>(bytes_[pos_ + i])} << (8 * i);
    pos_ += width;
    return v;
  }
  std::string_view Take(size_t n, const char* what) {
    Need(n, what);
    std::string_view s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }

 private:
  void Need(size_t n, const char* what) {
    if (n > bytes_.size() - pos_) {
      throw ArtifactError(source_ + ": truncated artifact: " + what + " at byte " + std::to_string(pos_) +
                          " runs past the end (" + std::to_string(bytes_.size()) + " bytes)");
    }
  }
  std::string_view bytes_;
  const std::string& source_;
  size_t pos_ = 0;
};

uint64_t AlignUp(uint64_t v) { return (v + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment; }

}  // namespace

const char* DTypeName(DType dtype) { return kDTypes[static_cast<int>(dtype)].name; }
int DTypeBytes(DType dtype) { return kDTypes[static_cast<int>(dtype)].bytes; }
const char* DTypeNpyDescr(DType dtype) { return kDTypes[static_cast<int>(dtype)].npy; }
std::optional<DType> ParseDType(std::string_view name) {
  for (const auto& info : kDTypes) {
    if (name == info.name) return info.dtype;
  }
  return std::nullopt;
}

const char* EpilogueName(Epilogue epilogue) { return kEpilogues[static_cast<int>(epilogue)].name; }
bool EpilogueHasBias(Epilogue epilogue) { return kEpilogues[static_cast<int>(epilogue)].has_bias; }
std::optional<Epilogue> ParseEpilogue(std::string_view name) {
  for (const auto& info : kEpilogues) {
    if (name == info.name) return info.epilogue;
  }
  return std::nullopt;
}

const char* CollectiveName(Collective collective) {
  return kCollectiveNames[static_cast<int>(collective)];
}
std::optional<Collective> ParseCollective(std::string_view name) {
  return ByName<Collective>(kCollectiveNames, name);
}
const char* ReductionName(Reduction reduction) {
  return kReductionNames[static_cast<int>(reduction)];
}
std::optional<Reduction> ParseReduction(std::string_view name) {
  return ByName<Reduction>(kReductionNames, name);
}

std::vector<int64_t> CollectiveGroupOf(const CollectiveCall& collective, int64_t device,
                                       int64_t devices) {
  if (collective.op == Collective::kSendReceive) {
    std::vector<int64_t> all(static_cast<size_t>(devices));
    for (int64_t d = 0; d < devices; ++d) all[static_cast<size_t>(d)] = d;
    return all;
  }
  for (const std::vector<int64_t>& group : collective.groups) {
    if (std::find(group.begin(), group.end(), device) != group.end()) return group;
  }
  return {};
}

const char* StepKindName(const Step& step) {
  struct Namer {
    const char* operator()(const KernelLaunch&) const { return "kernel"; }
    const char* operator()(const MatmulCall&) const { return "cublaslt_matmul"; }
    const char* operator()(const ConvCall&) const { return "cudnn_conv"; }
    const char* operator()(const DeviceCopy&) const { return "copy"; }
    const char* operator()(const WhileLoop&) const { return "while"; }
    const char* operator()(const Conditional&) const { return "conditional"; }
    const char* operator()(const StridedCopy&) const { return "strided_copy"; }
    const char* operator()(const Fill&) const { return "fill"; }
    const char* operator()(const DeviceIdWrite&) const { return "device_id"; }
    const char* operator()(const CollectiveCall&) const { return "collective"; }
  };
  return std::visit(Namer{}, step.call);
}

uint32_t SelectedBranch(const Conditional& conditional, const void* selector) {
  const size_t count = conditional.branches.size();
  if (conditional.selector_dtype == DType::kPred) {
    uint8_t flag = 0;
    std::memcpy(&flag, selector, 1);
    return conditional.branches.at(flag != 0 ? 0 : 1);
  }
  int32_t index = 0;
  std::memcpy(&index, selector, sizeof index);
  if (index < 0 || static_cast<size_t>(index) >= count) index = static_cast<int32_t>(count - 1);
  return conditional.branches.at(static_cast<size_t>(index));
}

uint32_t Crc32(std::string_view bytes) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (const char ch : bytes) crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string SerializeArtifact(const Artifact& artifact) {
  ValidateArtifact(artifact);
  std::vector<std::pair<std::string, std::string_view>> sections;
  const std::string manifest = JsonText(ManifestToJson(artifact.manifest)) + "\n";
  sections.emplace_back(kManifestSection, manifest);
  for (const auto& [name, bytes] : artifact.sections) sections.emplace_back(name, bytes);
  return EncodeContainer(sections);
}

std::string EncodeContainer(const std::vector<std::pair<std::string, std::string_view>>& sections) {
  uint64_t table_bytes = 0;
  for (const auto& [name, bytes] : sections) table_bytes += 2 + name.size() + 8 + 8 + 4;
  std::vector<uint64_t> offsets;
  uint64_t cursor = AlignUp(kHeaderBytes + table_bytes);
  for (const auto& [name, bytes] : sections) {
    offsets.push_back(cursor);
    cursor = AlignUp(cursor + bytes.size());
  }
  const uint64_t total = cursor;

  std::string out(kArtifactMagic, sizeof kArtifactMagic);
  PutU32(out, kArtifactFormatVersion);
  PutU32(out, static_cast<uint32_t>(sections.size()));
  PutU64(out, total);
  for (size_t i = 0; i < sections.size(); ++i) {
    PutU16(out, static_cast<uint16_t>(sections[i].first.size()));
    out += sections[i].first;
    PutU64(out, offsets[i]);
    PutU64(out, sections[i].second.size());
    PutU32(out, Crc32(sections[i].second));
  }
  for (size_t i = 0; i < sections.size(); ++i) {
    out.resize(offsets[i], '\0');
    out.append(sections[i].second);
  }
  out.resize(total, '\0');
  return out;
}

Artifact ParseArtifact(std::string_view bytes, const std::string& source_name) {
  ByteReader reader(bytes, source_name);
  if (bytes.size() < sizeof kArtifactMagic ||
      std::memcmp(bytes.data(), kArtifactMagic, sizeof kArtifactMagic) != 0) {
    throw ArtifactError(source_name + ": not a Retarget GPU artifact (missing \"RTGPU\" magic)");
  }
  reader.Take(sizeof kArtifactMagic, "magic");
  // The version decides how the rest is laid out, so it is checked before anything else.
  const uint64_t version = reader.Get(4, "format version");
  if (version != kArtifactFormatVersion) {
    throw ArtifactError(source_name + ": artifact format version " + std::to_string(version) +
                        "; this runtime reads version " + std::to_string(kArtifactFormatVersion) +
                        " (recompile the model with a matching retarget)");
  }
  const uint64_t count = reader.Get(4, "section count");
  const uint64_t total = reader.Get(8, "file size");
  if (total != bytes.size()) {
    throw ArtifactError(source_name + ": truncated or padded artifact: header says " + std::to_string(total) +
                        " bytes, file has " + std::to_string(bytes.size()));
  }
  if (count == 0 || count > kMaxSections) {
    throw ArtifactError(source_name + ": bad section count " + std::to_string(count));
  }
  Artifact artifact;
  std::string manifest_text;
  std::set<std::string> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t name_bytes = reader.Get(2, "section name length");
    if (name_bytes == 0 || name_bytes > kMaxSectionNameBytes) {
      throw ArtifactError(source_name + ": bad section name length " + std::to_string(name_bytes));
    }
    std::string name(reader.Take(name_bytes, "section name"));
    const uint64_t offset = reader.Get(8, "section offset");
    const uint64_t size = reader.Get(8, "section size");
    const uint32_t crc = static_cast<uint32_t>(reader.Get(4, "section checksum"));
    if (offset > bytes.size() || size > bytes.size() - offset) {
      throw ArtifactError(source_name + ": section '" + name + "' (offset " + std::to_string(offset) + ", " +
                          std::to_string(size) + " bytes) lies outside the " + std::to_string(bytes.size()) +
                          "-byte file");
    }
    const std::string_view data = bytes.substr(offset, size);
    if (Crc32(data) != crc) {
      throw ArtifactError(source_name + ": section '" + name + "' is corrupt (CRC-32 mismatch)");
    }
    if (!seen.insert(name).second) throw ArtifactError(source_name + ": duplicate section '" + name + "'");
    if (i == 0 && name != kManifestSection) {
      throw ArtifactError(source_name + ": the first section must be 'manifest', not '" + name + "'");
    }
    if (i == 0) manifest_text.assign(data);
    else artifact.sections.emplace(std::move(name), std::string(data));
  }
  try {
    artifact.manifest = ManifestFromJson(ParseJson(manifest_text));
    ValidateArtifact(artifact);
  } catch (const ArtifactError& e) {
    throw ArtifactError(source_name + ": " + e.what());
  }
  return artifact;
}

void WriteArtifactFile(const Artifact& artifact, const std::string& path) {
  const std::string bytes = SerializeArtifact(artifact);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw ArtifactError(path + ": cannot write the artifact");
}

Artifact ReadArtifactFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ArtifactError(path + ": cannot open the artifact");
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxArtifactBytes) {
    throw ArtifactError(path + ": not a regular file or larger than 64 GiB");
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (!in) throw ArtifactError(path + ": read error");
  return ParseArtifact(bytes, path);
}

}  // namespace gpu

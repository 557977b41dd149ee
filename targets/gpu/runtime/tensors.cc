// .npz <-> device bytes for parameters and results (see tensors.h).
#include "targets/gpu/runtime/tensors.h"

#include <cstring>

#include "targets/gpu/runtime/run_error.h"

namespace gpu::runtime {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

uint16_t FloatToBf16(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0) return 0x7FC0;  // quiet NaN
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float Bf16ToFloat(uint16_t bits) {
  const uint32_t wide = uint32_t{bits} << 16;
  float f = 0;
  std::memcpy(&f, &wide, 4);
  return f;
}

std::vector<std::string> BindInputs(const Manifest& manifest, const std::vector<NpyArray>& arrays,
                                    const std::string& source) {
  std::vector<std::string> out;
  for (const TensorSlot& p : manifest.parameters) {
    const NpyArray* found = nullptr;
    for (const NpyArray& a : arrays) {
      if (a.name == p.name) found = &a;
    }
    const std::string where = source + ": input '" + p.name + "'";
    if (found == nullptr) throw RunError(source + ": no entry '" + p.name + "' for parameter " + p.name);
    if (found->shape != p.shape) {
      throw RunError(where + " has shape " + ShapeText(found->shape) + ", the model expects " + ShapeText(p.shape));
    }
    if (p.dtype == DType::kBF16 && found->descr == "<f4") {
      std::string bytes(found->data.size() / 2, '\0');
      for (size_t i = 0; i < found->data.size() / 4; ++i) {
        float f;
        std::memcpy(&f, found->data.data() + 4 * i, 4);
        const uint16_t b = FloatToBf16(f);
        std::memcpy(bytes.data() + 2 * i, &b, 2);
      }
      out.push_back(std::move(bytes));
      continue;
    }
    const bool bf16_bits = p.dtype == DType::kBF16 && found->descr == "<u2";
    if (!bf16_bits && found->descr != DTypeNpyDescr(p.dtype)) {
      throw RunError(where + " has numpy dtype '" + found->descr + "', the model expects " + DTypeName(p.dtype) +
                     " ('" + DTypeNpyDescr(p.dtype) + "')");
    }
    out.push_back(found->data);
  }
  return out;
}

std::vector<std::string> RandomInputs(const Manifest& manifest, uint64_t seed) {
  // Unlike .npz inputs, whose size the file bounds, random inputs are sized by the artifact alone.
  constexpr uint64_t kMaxRandomInputBytes = uint64_t{16} << 30;
  uint64_t total = 0;
  for (const TensorSlot& p : manifest.parameters) {
    total += p.slice.bytes;  // each slice lies inside an arena of at most 1 TiB: no overflow
    if (total > kMaxRandomInputBytes) {
      throw RunError("random inputs would need more than 16 GiB of host memory; pass --inputs FILE.npz");
    }
  }
  std::vector<std::string> out;
  uint64_t state = seed;
  for (const TensorSlot& p : manifest.parameters) {
    const int esize = DTypeBytes(p.dtype);
    const uint64_t count = p.slice.bytes / esize;
    std::string bytes(p.slice.bytes, '\0');
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t r = SplitMix64(state);
      const double unit = static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
      char* dst = bytes.data() + i * esize;
      switch (p.dtype) {
        case DType::kF32: { const float f = static_cast<float>(2 * unit - 1); std::memcpy(dst, &f, 4); break; }
        case DType::kF64: { const double d = 2 * unit - 1; std::memcpy(dst, &d, 8); break; }
        case DType::kBF16: { const uint16_t b = FloatToBf16(static_cast<float>(2 * unit - 1)); std::memcpy(dst, &b, 2); break; }
        case DType::kF16: {
          // Multiples of 1/1024 in [-1, 1) are exact in f16: sign, exponent and mantissa built by hand.
          const int q = static_cast<int>(unit * 2048) - 1024;
          const float f = q / 1024.0f;
          uint16_t h = 0;
          if (q != 0) {
            const float a = f < 0 ? -f : f;
            int e = 0;
            float m = a;
            while (m < 1.0f) { m *= 2; --e; }
            h = static_cast<uint16_t>((f < 0 ? 0x8000 : 0) | ((e + 15) << 10) | static_cast<int>((m - 1.0f) * 1024));
          }
          std::memcpy(dst, &h, 2);
          break;
        }
        case DType::kPred: dst[0] = static_cast<char>(r & 1); break;
        case DType::kS8: case DType::kU8: case DType::kS16: case DType::kU16: case DType::kS32:
        case DType::kU32: case DType::kS64: case DType::kU64: {
          const uint64_t v = r % 8;
          std::memcpy(dst, &v, esize);  // little-endian: the low bytes carry the value
          break;
        }
      }
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

std::vector<NpyArray> ResultsToNpz(const Manifest& manifest, const std::vector<std::string>& device_bytes) {
  std::vector<NpyArray> out;
  for (size_t i = 0; i < manifest.results.size(); ++i) {
    const TensorSlot& r = manifest.results[i];
    NpyArray a{r.name, DTypeNpyDescr(r.dtype), r.shape, device_bytes[i]};
    if (r.dtype == DType::kBF16) {
      a.data.assign(device_bytes[i].size() * 2, '\0');
      for (size_t e = 0; e < device_bytes[i].size() / 2; ++e) {
        uint16_t b;
        std::memcpy(&b, device_bytes[i].data() + 2 * e, 2);
        const float f = Bf16ToFloat(b);
        std::memcpy(a.data.data() + 4 * e, &f, 4);
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gpu::runtime

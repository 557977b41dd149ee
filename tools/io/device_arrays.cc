// Per-device arrays stacked along a leading dimension (device_arrays.h). Array bytes are in
// logical row-major order (hlo/literal.h), so device d's array is the d-th contiguous block of
// the stacked one.
#include "tools/io/device_arrays.h"

#include <cstring>

#include "tools/io/inputs.h"

namespace io {

uint64_t DeviceSeed(uint64_t seed, int64_t device) {
  if (device == 0) return seed;
  // splitmix64 of (seed, device): neighbouring seeds and devices give unrelated streams.
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(device + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<std::vector<hlo::Literal>> ResolveDeviceInputs(const hlo::Module& module,
                                                           const std::string& spec,
                                                           int64_t devices) {
  std::vector<std::vector<hlo::Literal>> inputs;
  if (std::optional<uint64_t> seed = RandomSeed(spec)) {
    for (int64_t d = 0; d < devices; ++d) {
      inputs.push_back(MakeRandomInputs(module, DeviceSeed(*seed, d)));
    }
    return inputs;
  }
  std::vector<std::vector<NpyArray>> split = SplitDevices(ReadNpz(spec), devices, spec);
  for (int64_t d = 0; d < devices; ++d) {
    inputs.push_back(ArgumentsFromArrays(module, std::move(split[static_cast<size_t>(d)]),
                                         spec + " (device " + std::to_string(d) + ")"));
  }
  return inputs;
}

std::vector<NpyArray> StackDevices(const std::vector<std::vector<NpyArray>>& per_device) {
  std::vector<NpyArray> stacked;
  if (per_device.empty()) return stacked;
  const auto devices = static_cast<int64_t>(per_device.size());
  for (size_t i = 0; i < per_device[0].size(); ++i) {
    const NpyArray& first = per_device[0][i];
    hlo::Shape shape = first.literal.shape();
    if (!shape.IsArray()) throw hlo::Error("output '" + first.name + "' is not an array");
    std::vector<int64_t> dims = {devices};
    dims.insert(dims.end(), shape.dims.begin(), shape.dims.end());
    hlo::Literal all(hlo::Shape::Array(shape.type, dims));
    const size_t block = first.literal.bytes().size();
    uint8_t* out = all.mutable_bytes().data();
    for (int64_t d = 0; d < devices; ++d) {
      const std::vector<NpyArray>& mine = per_device[static_cast<size_t>(d)];
      if (mine.size() != per_device[0].size() || mine[i].name != first.name ||
          !mine[i].literal.shape().Compatible(shape)) {
        throw hlo::Error("device " + std::to_string(d) + "'s arrays differ from device 0's at '" +
                         first.name + "'");
      }
      if (block > 0) std::memcpy(out + d * block, mine[i].literal.bytes().data(), block);
    }
    stacked.push_back({first.name, std::move(all)});
  }
  return stacked;
}

std::vector<std::vector<NpyArray>> SplitDevices(const std::vector<NpyArray>& stacked,
                                                int64_t devices, const std::string& path) {
  std::vector<std::vector<NpyArray>> split(static_cast<size_t>(devices));
  for (const NpyArray& array : stacked) {
    const hlo::Shape& shape = array.literal.shape();
    if (!shape.IsArray() || shape.rank() == 0 || shape.dims[0] != devices) {
      throw hlo::Error(path + ": entry '" + array.name + "' has shape " + shape.ToString(false) +
                       "; a run on " + std::to_string(devices) +
                       " devices needs a leading dimension of " + std::to_string(devices) +
                       " (device d's array at index d)");
    }
    const std::vector<int64_t> dims(shape.dims.begin() + 1, shape.dims.end());
    const hlo::Shape one = hlo::Shape::Array(shape.type, dims);
    const size_t block = array.literal.bytes().size() / static_cast<size_t>(devices);
    const uint8_t* in = array.literal.bytes().data();
    for (int64_t d = 0; d < devices; ++d) {
      hlo::Literal part(one);
      if (block > 0) std::memcpy(part.mutable_bytes().data(), in + d * block, block);
      split[static_cast<size_t>(d)].push_back({array.name, std::move(part)});
    }
  }
  return split;
}

}  // namespace io

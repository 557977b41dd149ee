// TruncSfBf2Address (host_runtime.h).
#include "targets/llvm/host_runtime.h"

#include <cstdint>
#include <cstring>

#include "hlo/literal.h"

namespace {

extern "C" _Float16 RetargetTruncSfBf2(float value) {
  const uint16_t bits = hlo::FloatToBF16(value);
  _Float16 out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace

namespace llvm_codegen {

void* TruncSfBf2Address() { return reinterpret_cast<void*>(&RetargetTruncSfBf2); }

}  // namespace llvm_codegen

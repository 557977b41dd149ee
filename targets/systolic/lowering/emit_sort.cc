// EmitSort (emit_sort.h).
#include "targets/systolic/lowering/emit_sort.h"

#include "targets/systolic/lowering/emit_vector.h"
#include "targets/systolic/lowering/row_program.h"

namespace systolic::lowering {
namespace {

// The key that sorts after every other in the order (the total order's far end): all
// magnitude bits set, positive for an ascending order, negative for a descending one.
uint32_t SentinelBits(Dtype dtype, bool descending) {
  switch (dtype) {
    case Dtype::kF32: return descending ? 0xffffffffu : 0x7fffffffu;
    case Dtype::kBf16:
    case Dtype::kF16: return descending ? 0xffffu : 0x7fffu;
    case Dtype::kS32: return descending ? 0x80000000u : 0x7fffffffu;
    case Dtype::kS8: return descending ? 0x80u : 0x7fu;
    default: return descending ? 0u : 0xffu;  // u8
  }
}

}  // namespace

bool EmitSort(ProgramBuilder& builder, const SortPlan& plan, const ArchConfig& config,
              const std::vector<uint64_t>& operands, const std::vector<uint64_t>& results,
              std::string* why) {
  const std::optional<Dtype> dtype = IsaDtype(plan.key_type);
  if (!dtype) {
    *why = "sort keys the vector unit does not hold";
    return false;
  }
  const int64_t b = DtypeBytes(*dtype);
  const bool payload = plan.payload || plan.top_k;
  const int64_t half = AlignedHalf(config.ub_bytes);
  const int64_t key_bytes = AlignedLocal(plan.padded * b);
  if (key_bytes + (payload ? AlignedLocal(plan.padded * 4) : 0) > half) {
    *why = "a sort row of " + std::to_string(plan.padded) + " keys exceeds half the UB";
    return false;
  }
  int stages_log = 0;
  while ((int64_t{1} << stages_log) < plan.padded) ++stages_log;
  for (int64_t r = 0; r < plan.rows; ++r) {
    const auto keys = static_cast<uint64_t>((r % 2) * half);
    const uint64_t values = keys + static_cast<uint64_t>(key_bytes);
    if (r >= 2) builder.Wait(Unit::kStore, Unit::kLoad);  // row r-2 stored its half
    builder.Load(operands[0] + static_cast<uint64_t>(r * plan.length * b), plan.length * b,
                 keys, plan.length * b, plan.length * b, 1);
    if (plan.payload) {
      builder.Load(operands[1] + static_cast<uint64_t>(r * plan.length * 4), plan.length * 4,
                   values, plan.length * 4, plan.length * 4, 1);
    }
    builder.Signal(Unit::kLoad, Unit::kVector);
    builder.Wait(Unit::kLoad, Unit::kVector);
    const int64_t pad = plan.padded - plan.length;
    if (pad > 0) {
      EmitFill(builder, keys + static_cast<uint64_t>(plan.length * b), pad, *dtype,
               SentinelBits(*dtype, plan.descending));
      if (plan.payload) {  // after every real payload of an equal key
        EmitFill(builder, values + static_cast<uint64_t>(plan.length * 4), pad, Dtype::kS32,
                 0x7fffffffu);
      }
    }
    if (plan.top_k) {
      EmitViota(builder, values, plan.padded, Dtype::kS32, 0, 1, plan.padded);
    }
    for (int k = 1; k <= stages_log; ++k) {
      for (int j = k - 1; j >= 0; --j) {
        systolic::Instruction stage = MakeInstruction(systolic::Opcode::kVBitonic);
        stage.set(VBitonicField::keys, keys);
        stage.set(VBitonicField::payload, payload ? values : keys);
        stage.set(VBitonicField::count, static_cast<uint64_t>(plan.padded));
        stage.set(VBitonicField::k, static_cast<uint64_t>(k));
        stage.set(VBitonicField::j, static_cast<uint64_t>(j));
        stage.set(VBitonicField::dtype, static_cast<uint64_t>(*dtype));
        stage.set(VBitonicField::descending, plan.descending ? 1 : 0);
        stage.set(VBitonicField::has_payload, payload ? 1 : 0);
        builder.Append(stage);
      }
    }
    builder.Signal(Unit::kVector, Unit::kStore);
    builder.Wait(Unit::kVector, Unit::kStore);
    builder.Store(keys, plan.kept * b, results[0] + static_cast<uint64_t>(r * plan.kept * b),
                  plan.kept * b, plan.kept * b, 1);
    if (payload) {
      builder.Store(values, plan.kept * 4, results[1] + static_cast<uint64_t>(r * plan.kept * 4),
                    plan.kept * 4, plan.kept * 4, 1);
    }
    if (r + 2 < plan.rows) builder.Signal(Unit::kStore, Unit::kLoad);
  }
  return true;
}

}  // namespace systolic::lowering

// The contraction family of the evaluator: dispatch for dot, convolution and batch-norm-*, and
// dot itself.
//
// Guarantees for dot:
//  - General dimension numbers; result dimensions are XLA's: batch dims (in lhs_batch order),
//    then the lhs free dims, then the rhs free dims, each in operand order.
//  - bf16/f16/f32 accumulate in f32, f64 in f64, integers in wrapping 64-bit arithmetic
//    (equal, modulo 2^bits, to wrapping in the result type); the result is rounded to its type
//    once. Each output sums its products in increasing contracting-index order (row-major over
//    the contracting dims), whatever the blocking, so results are deterministic.
//  - Operands already laid out as [batch][M][K] / [batch][K][M] and [batch][K][N] /
//    [batch][N][K] are used in place (f32/f64) or converted without reordering; other orders
//    are transposed while converting. evaluator_gemm.h picks a kernel from the strides.
#include <algorithm>
#include <complex>

#include "hlo/evaluator_family_util.h"
#include "hlo/evaluator_gemm.h"

namespace hlo::eval::rc {

Literal EvaluateConvolution(const Instruction& inst, Operands operands);
Literal EvaluateBatchNorm(const Instruction& inst, Operands operands);

namespace {

struct DotGeometry {
  // Operand dimensions in packing order: lhs [batch, free, contracting],
  // rhs [batch, contracting, free].
  std::vector<int64_t> lhs_perm, rhs_perm;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> result_dims;
};

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void CheckDimList(const std::vector<int64_t>& dims, int64_t rank, const Instruction& inst,
                  const char* what) {
  for (size_t i = 0; i < dims.size(); ++i) {
    Require(dims[i] >= 0 && dims[i] < rank, inst, std::string(what) + " dimension out of range");
    for (size_t j = 0; j < i; ++j) {
      Require(dims[i] != dims[j], inst, std::string(what) + " dimension repeated");
    }
  }
}

DotGeometry CheckDot(const Instruction& inst, const Shape& lhs, const Shape& rhs) {
  Require(inst.has_attr<DotAttrs>(), inst, "missing dot dimension numbers");
  const DotDimensionNumbers& dn = inst.attr<DotAttrs>().dnums;
  Require(lhs.IsArray() && rhs.IsArray() && inst.shape().IsArray(), inst,
          "operands and result must be arrays");
  CheckDimList(dn.lhs_batch, lhs.rank(), inst, "lhs batch");
  CheckDimList(dn.rhs_batch, rhs.rank(), inst, "rhs batch");
  CheckDimList(dn.lhs_contracting, lhs.rank(), inst, "lhs contracting");
  CheckDimList(dn.rhs_contracting, rhs.rank(), inst, "rhs contracting");
  Require(dn.lhs_batch.size() == dn.rhs_batch.size(), inst, "batch dimension counts differ");
  Require(dn.lhs_contracting.size() == dn.rhs_contracting.size(), inst,
          "contracting dimension counts differ");
  DotGeometry g;
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    const int64_t size = lhs.dims[dn.lhs_batch[i]];
    Require(size == rhs.dims[dn.rhs_batch[i]], inst, "batch dimension sizes differ");
    Require(!Contains(dn.lhs_contracting, dn.lhs_batch[i]) &&
                !Contains(dn.rhs_contracting, dn.rhs_batch[i]),
            inst, "a dimension cannot be both batch and contracting");
    g.batch *= size;
    g.result_dims.push_back(size);
    g.lhs_perm.push_back(dn.lhs_batch[i]);
    g.rhs_perm.push_back(dn.rhs_batch[i]);
  }
  for (size_t i = 0; i < dn.lhs_contracting.size(); ++i) {
    Require(lhs.dims[dn.lhs_contracting[i]] == rhs.dims[dn.rhs_contracting[i]], inst,
            "contracting dimension sizes differ");
    g.k *= lhs.dims[dn.lhs_contracting[i]];
  }
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (Contains(dn.lhs_batch, d) || Contains(dn.lhs_contracting, d)) continue;
    g.lhs_perm.push_back(d);
    g.result_dims.push_back(lhs.dims[d]);
    g.m *= lhs.dims[d];
  }
  g.lhs_perm.insert(g.lhs_perm.end(), dn.lhs_contracting.begin(), dn.lhs_contracting.end());
  g.rhs_perm.insert(g.rhs_perm.end(), dn.rhs_contracting.begin(), dn.rhs_contracting.end());
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (Contains(dn.rhs_batch, d) || Contains(dn.rhs_contracting, d)) continue;
    g.rhs_perm.push_back(d);
    g.result_dims.push_back(rhs.dims[d]);
    g.n *= rhs.dims[d];
  }
  Require(inst.shape().dims == g.result_dims, inst,
          "result " + inst.shape().ToString(false) + " does not match the dot's dimensions");
  return g;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// An operand in the accumulator type: borrowed when the literal already stores Acc in the
// wanted order, else converted (and reordered by `perm`) into `storage`.
template <typename Acc>
struct AccOperand {
  std::vector<Acc> storage;
  const Acc* data = nullptr;
};
template <typename Acc>
AccOperand<Acc> ToAcc(const Literal& literal, const std::vector<int64_t>& perm,
                      const Instruction& inst) {
  AccOperand<Acc> out;
  const PrimitiveType type = literal.shape().type;
  const bool same_type = (std::is_same_v<Acc, float> && type == PrimitiveType::kF32) ||
                         (std::is_same_v<Acc, double> && type == PrimitiveType::kF64);
  if (same_type && IsIdentity(perm)) {
    out.data = literal.data<Acc>().data();
  } else {
    out.storage = PackPermuted<Acc>(literal, perm, inst);
    out.data = out.storage.data();
  }
  return out;
}

// Concatenation of dimension lists (batch, then a, then b), as a permutation of an operand.
std::vector<int64_t> Concat(std::span<const int64_t> batch, std::span<const int64_t> a,
                            std::span<const int64_t> b) {
  std::vector<int64_t> out(batch.begin(), batch.end());
  out.insert(out.end(), a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

template <typename Acc>
void RunDot(const Instruction& inst, const Literal& lhs, const Literal& rhs, const DotGeometry& g,
            Literal& result) {
  const DotDimensionNumbers& dn = inst.attr<DotAttrs>().dnums;
  const size_t nb = dn.lhs_batch.size();
  // g.lhs_perm is [batch, free, contracting]; g.rhs_perm is [batch, contracting, free].
  const std::span<const int64_t> lhs_free(g.lhs_perm.data() + nb,
                                          g.lhs_perm.size() - nb - dn.lhs_contracting.size());
  const std::span<const int64_t> rhs_free(g.rhs_perm.data() + nb + dn.rhs_contracting.size(),
                                          g.rhs_perm.size() - nb - dn.rhs_contracting.size());
  // Keep an operand in its own memory order when it is already [batch][M][K] or [batch][K][M]
  // (resp. [batch][K][N] or [batch][N][K]); only other orders are transposed while converting.
  const std::vector<int64_t> lhs_km = Concat(dn.lhs_batch, dn.lhs_contracting, lhs_free);
  const std::vector<int64_t> rhs_nk = Concat(dn.rhs_batch, rhs_free, dn.rhs_contracting);
  const bool lhs_is_km = !IsIdentity(g.lhs_perm) && IsIdentity(lhs_km);
  const bool rhs_is_nk = !IsIdentity(g.rhs_perm) && IsIdentity(rhs_nk);
  const AccOperand<Acc> a = ToAcc<Acc>(lhs, lhs_is_km ? lhs_km : g.lhs_perm, inst);
  const AccOperand<Acc> b = ToAcc<Acc>(rhs, rhs_is_nk ? rhs_nk : g.rhs_perm, inst);
  const MatrixView<Acc> a_view =
      lhs_is_km ? MatrixView<Acc>{a.data, 1, g.m} : MatrixView<Acc>{a.data, g.k, 1};
  const MatrixView<Acc> b_view =
      rhs_is_nk ? MatrixView<Acc>{b.data, 1, g.k} : MatrixView<Acc>{b.data, g.n, 1};
  // The result is [batch][M][N] row-major: write it in place when it stores Acc itself.
  const bool in_place =
      (std::is_same_v<Acc, float> && result.shape().type == PrimitiveType::kF32) ||
      (std::is_same_v<Acc, double> && result.shape().type == PrimitiveType::kF64);
  std::vector<Acc> buffer;
  Acc* c = nullptr;
  if (in_place) {
    c = result.mutable_data<Acc>().data();
  } else {
    buffer.resize(static_cast<size_t>(g.batch * g.m * g.n));
    c = buffer.data();
  }
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    MatrixView<Acc> ab = a_view, bb = b_view;
    ab.data += bi * g.m * g.k;
    bb.data += bi * g.k * g.n;
    Gemm<Acc>(ab, bb, c + bi * g.m * g.n, g.n, 1, g.m, g.n, g.k);
  }
  if (!in_place) {
    std::vector<int64_t> identity(result.shape().dims.size());
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int64_t>(i);
    UnpackPermuted<Acc>(buffer, identity, result, inst);
  }
}

// Complex dot: both operands packed into complex<T> ([batch][M][K] and [batch][K][N]) and
// summed in order over K (c64 in complex<float>, c128 in complex<double>).
template <typename T>
void RunComplexDot(const Literal& lhs, const Literal& rhs, const DotGeometry& g, Literal& result) {
  auto pack = [](const Literal& src, const std::vector<int64_t>& perm) {
    const std::vector<int64_t> src_strides = RowMajorStrides(src.shape().dims);
    std::vector<int64_t> dims, strides;
    for (int64_t p : perm) {
      dims.push_back(src.shape().dims[p]);
      strides.push_back(src_strides[p]);
    }
    std::vector<std::complex<T>> out(static_cast<size_t>(src.element_count()));
    ForEachStrided(dims, strides, [&](int64_t i, int64_t offset) {
      out[static_cast<size_t>(i)] = std::complex<T>(src.GetComplex(offset));
    });
    return out;
  };
  const std::vector<std::complex<T>> a = pack(lhs, g.lhs_perm), b = pack(rhs, g.rhs_perm);
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        std::complex<T> sum = 0;
        for (int64_t kk = 0; kk < g.k; ++kk) {
          sum += a[static_cast<size_t>((bi * g.m + i) * g.k + kk)] *
                 b[static_cast<size_t>((bi * g.k + kk) * g.n + j)];
        }
        result.SetComplex((bi * g.m + i) * g.n + j, sum);
      }
    }
  }
}

Literal EvaluateDot(const Instruction& inst, Operands operands) {
  Require(operands.size() == 2, inst, "expects two operands");
  const DotGeometry g = CheckDot(inst, operands[0]->shape(), operands[1]->shape());
  Literal result = NewResult(inst);
  if (IsComplex(inst.shape().type)) {
    if (inst.shape().type == PrimitiveType::kC128) {
      RunComplexDot<double>(*operands[0], *operands[1], g, result);
    } else {
      RunComplexDot<float>(*operands[0], *operands[1], g, result);
    }
    return result;
  }
  switch (
      ChooseAccumulator(inst.shape().type, operands[0]->shape().type, operands[1]->shape().type)) {
    case AccumulatorKind::kF32:
      RunDot<float>(inst, *operands[0], *operands[1], g, result);
      break;
    case AccumulatorKind::kF64:
      RunDot<double>(inst, *operands[0], *operands[1], g, result);
      break;
    case AccumulatorKind::kInt:
      RunDot<uint64_t>(inst, *operands[0], *operands[1], g, result);
      break;
  }
  return result;
}

}  // namespace
}  // namespace hlo::eval::rc

namespace hlo::eval {

Literal EvaluateContraction(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kDot:
      return rc::EvaluateDot(inst, operands);
    case Opcode::kConvolution:
      return rc::EvaluateConvolution(inst, operands);
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormGrad:
      return rc::EvaluateBatchNorm(inst, operands);
    default:
      break;
  }
  rc::Fail(inst, "is not an op of the contraction family");
}

}  // namespace hlo::eval

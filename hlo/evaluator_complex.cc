// Complex arithmetic (c64, c128): the elementwise ops XLA defines on complex values, real / imag /
// complex, and fft.
//
// Guarantees:
//  - c64 computes in std::complex<float>, c128 in std::complex<double> (XLA:CPU's types), with
//    the C++ library's definitions of exp, log, sqrt, sin, cos, tan, tanh and pow; abs is the
//    modulus (hypot, no overflow for large parts); sign is z / |z| (0 for 0); rsqrt is 1/sqrt,
//    logistic 1 / (1 + exp(-z)), expm1 exp(z) - 1, log1p log(1 + z), cbrt exp(log(z) / 3).
//  - real(x) / imag(x) of a real x are x and 0 (XLA's definition); complex(re, im) pairs f32
//    into c64 and f64 into c128.
//  - fft over the last fft_length.size() dimensions (1 to 3), in complex<double> then rounded
//    once to the result type: FFT X[k] = sum x[n] e^(-2 pi i k n / N); IFFT the inverse,
//    normalized by 1/N (XLA's convention); RFFT keeps the N/2 + 1 non-negative frequencies of
//    the last dimension; IRFFT extends that half by Hermitian symmetry and returns the real
//    part, so the imaginary parts of the DC and Nyquist terms are ignored (FFTW's C2R
//    convention, which XLA:CPU uses). Power-of-two lengths use an iterative radix-2 FFT,
//    others a direct DFT (N^2 per line), refused past 4e9 multiply-adds with an error.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "hlo/evaluator_elementwise_internal.h"
#include "hlo/evaluator_internal.h"

namespace hlo::eval {
namespace {

template <typename T>
std::complex<T> Sign(std::complex<T> z) {
  const T magnitude = std::abs(z);
  return magnitude == T(0) ? std::complex<T>(0) : z / magnitude;
}

template <typename T>
std::complex<T> ApplyUnary(Opcode op, std::complex<T> z) {
  using C = std::complex<T>;
  switch (op) {
    case Opcode::kNegate: return -z;
    case Opcode::kExp: return std::exp(z);
    case Opcode::kExpm1: return std::exp(z) - C(1);
    case Opcode::kLog: return std::log(z);
    case Opcode::kLog1p: return std::log(C(1) + z);
    case Opcode::kSqrt: return std::sqrt(z);
    case Opcode::kRsqrt: return C(1) / std::sqrt(z);
    case Opcode::kCbrt: return std::exp(std::log(z) / T(3));
    case Opcode::kCos: return std::cos(z);
    case Opcode::kSin: return std::sin(z);
    case Opcode::kTan: return std::tan(z);
    case Opcode::kTanh: return std::tanh(z);
    case Opcode::kLogistic: return C(1) / (C(1) + std::exp(-z));
    case Opcode::kSign: return Sign(z);
    default: ThrowUnsupported(op, sizeof(T) == 4 ? PrimitiveType::kC64 : PrimitiveType::kC128);
  }
}

template <typename T>
std::complex<T> ApplyBinary(Opcode op, std::complex<T> a, std::complex<T> b) {
  switch (op) {
    case Opcode::kAdd: return a + b;
    case Opcode::kSubtract: return a - b;
    case Opcode::kMultiply: return a * b;
    case Opcode::kDivide: return a / b;
    case Opcode::kPower: return std::pow(a, b);
    default: ThrowUnsupported(op, sizeof(T) == 4 ? PrimitiveType::kC64 : PrimitiveType::kC128);
  }
}

template <typename T>
void ComplexTyped(Opcode op, Operands operands, Literal& out) {
  using C = std::complex<T>;
  const int64_t n = out.element_count();
  const Literal& a = *operands[0];
  auto at = [](const Literal& l, int64_t i) { return C(l.GetComplex(i)); };
  switch (op) {
    case Opcode::kAbs:
      for (int64_t i = 0; i < n; ++i) out.SetFromDouble(i, std::abs(at(a, i)));
      return;
    case Opcode::kReal:
      for (int64_t i = 0; i < n; ++i) out.SetFromDouble(i, at(a, i).real());
      return;
    case Opcode::kImag:
      for (int64_t i = 0; i < n; ++i) out.SetFromDouble(i, at(a, i).imag());
      return;
    case Opcode::kComplex:
      for (int64_t i = 0; i < n; ++i)
        out.SetComplex(i, {operands[0]->GetAsDouble(i), operands[1]->GetAsDouble(i)});
      return;
    default:
      break;
  }
  if (operands.size() == 1) {
    for (int64_t i = 0; i < n; ++i) out.SetComplex(i, ApplyUnary(op, at(a, i)));
  } else {
    const Literal& b = *operands[1];
    for (int64_t i = 0; i < n; ++i) out.SetComplex(i, ApplyBinary(op, at(a, i), at(b, i)));
  }
}

using Complex = std::complex<double>;

// In-place DFT of `line` (sign -1: forward, +1: inverse, unnormalized).
void Transform(std::vector<Complex>& line, int sign) {
  const size_t n = line.size();
  if (n <= 1) return;
  if ((n & (n - 1)) != 0) {  // not a power of two: direct DFT
    std::vector<Complex> out(n);
    for (size_t k = 0; k < n; ++k) {
      Complex sum = 0;
      for (size_t j = 0; j < n; ++j) {
        const double angle = sign * 2 * std::numbers::pi * static_cast<double>((k * j) % n) /
                             static_cast<double>(n);
        sum += line[j] * Complex(std::cos(angle), std::sin(angle));
      }
      out[k] = sum;
    }
    line = std::move(out);
    return;
  }
  for (size_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(line[i], line[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    for (size_t k = 0; k < len / 2; ++k) {  // one twiddle factor per (stage, k)
      const double angle =
          sign * 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(len);
      const Complex w(std::cos(angle), std::sin(angle));
      for (size_t start = 0; start < n; start += len) {
        const Complex u = line[start + k], v = line[start + k + len / 2] * w;
        line[start + k] = u + v;
        line[start + k + len / 2] = u - v;
      }
    }
  }
}

// Transforms every line of `data` (row-major over `dims`) along dimension `axis`.
void TransformAxis(std::vector<Complex>& data, const std::vector<int64_t>& dims, size_t axis,
                   int sign) {
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const int64_t len = dims[axis], stride = strides[axis];
  const int64_t total = static_cast<int64_t>(data.size());
  if (len == 0 || total == 0) return;
  std::vector<Complex> line(static_cast<size_t>(len));
  for (int64_t base = 0; base < total; ++base) {
    if ((base / stride) % len != 0) continue;  // visit each line once, from its first element
    for (int64_t i = 0; i < len; ++i) line[i] = data[base + i * stride];
    Transform(line, sign);
    for (int64_t i = 0; i < len; ++i) data[base + i * stride] = line[i];
  }
}

// Direct DFTs (lengths that are not powers of two) cost N^2 per line: past this many complex
// multiply-adds in one fft the interpreter refuses rather than run for hours.
constexpr double kMaxDirectDftWork = 4e9;

void CheckDirectDftWork(const FftAttrs& attrs, int64_t elements) {
  double work = 0;
  for (int64_t len : attrs.length) {
    if (len <= 1 || (len & (len - 1)) == 0) continue;
    work += static_cast<double>(elements) * static_cast<double>(len);
    if (work > kMaxDirectDftWork) {
      throw Error("fft length " + std::to_string(len) +
                  " is not a power of two and needs a direct DFT of more than 4e9 "
                  "multiply-adds, beyond the interpreter's limit");
    }
  }
}

Literal EvaluateFftImpl(const Instruction& inst, const Literal& in) {
  const FftAttrs& attrs = inst.attr<FftAttrs>();
  CheckDirectDftWork(attrs, std::max(in.element_count(), inst.shape().ElementCount()));
  const std::vector<int64_t>& in_dims = in.shape().dims;
  const std::vector<int64_t>& out_dims = inst.shape().dims;
  const size_t rank = in_dims.size(), count = attrs.length.size();
  Literal out(inst.shape());
  const bool inverse = attrs.type == FftType::kIfft || attrs.type == FftType::kIrfft;
  const int sign = inverse ? 1 : -1;
  std::vector<Complex> data(static_cast<size_t>(in.element_count()));
  for (int64_t i = 0; i < in.element_count(); ++i) data[static_cast<size_t>(i)] = in.GetComplex(i);
  if (attrs.type == FftType::kIrfft) {
    // Inverse along the outer transformed dims on the half spectrum, then C2R along the last.
    for (size_t d = rank - count; d + 1 < rank; ++d) TransformAxis(data, in_dims, d, sign);
    const int64_t half = in_dims.back(), full = out_dims.back();
    const int64_t lines = half == 0 ? 0 : in.element_count() / half;
    std::vector<Complex> real_lines(static_cast<size_t>(lines * full));
    std::vector<Complex> line(static_cast<size_t>(full));
    for (int64_t l = 0; l < lines; ++l) {
      for (int64_t k = 0; k < full; ++k) {
        line[k] = k < half ? data[l * half + k] : std::conj(data[l * half + (full - k)]);
      }
      Transform(line, sign);
      std::copy(line.begin(), line.end(), real_lines.begin() + l * full);
    }
    data = std::move(real_lines);
  } else {
    for (size_t d = rank - count; d < rank; ++d) TransformAxis(data, in_dims, d, sign);
  }
  double scale = 1;
  if (inverse) {
    for (int64_t len : attrs.length) scale /= static_cast<double>(len);
  }
  if (attrs.type == FftType::kRfft) {  // keep the first N/2 + 1 of the last dimension
    const int64_t full = in_dims.back(), half = out_dims.back();
    for (int64_t i = 0; i < out.element_count(); ++i) {
      out.SetComplex(i, data[static_cast<size_t>((i / half) * full + i % half)]);
    }
    return out;
  }
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const Complex v = data[static_cast<size_t>(i)] * scale;
    if (attrs.type == FftType::kIrfft) {
      out.SetFromDouble(i, v.real());
    } else {
      out.SetComplex(i, v);
    }
  }
  return out;
}

}  // namespace

bool IsComplexElementwise(Opcode op, Operands operands, const Shape& result) {
  switch (op) {
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kComplex:
      return true;
    // Type-agnostic or with their own complex rules (evaluator_convert.cc, evaluator_compare.cc).
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kCompare:
    case Opcode::kCopy:
    case Opcode::kSelect:
      return false;
    default:
      return IsComplex(result.type) ||
             (!operands.empty() && IsComplex(operands[0]->shape().type));
  }
}

void ComplexElementwise(Opcode op, Operands operands, Literal& out) {
  for (const Literal* operand : operands) {
    if (operand->element_count() != out.element_count()) {
      throw Error("operands of '" + std::string(OpcodeName(op)) + "' must have " +
                  std::to_string(out.element_count()) + " elements");
    }
  }
  // real/imag of a real value: the value and zero.
  if ((op == Opcode::kReal || op == Opcode::kImag) && !IsComplex(operands[0]->shape().type)) {
    for (int64_t i = 0; i < out.element_count(); ++i)
      out.SetFromDouble(i, op == Opcode::kReal ? operands[0]->GetAsDouble(i) : 0.0);
    return;
  }
  const PrimitiveType type =
      IsComplex(out.shape().type) ? out.shape().type : operands[0]->shape().type;
  if (type == PrimitiveType::kC128) {
    ComplexTyped<double>(op, operands, out);
  } else {
    ComplexTyped<float>(op, operands, out);
  }
}

Literal EvaluateFft(const Instruction& inst, Operands operands) {
  if (operands.size() != 1 || !operands[0]->shape().IsArray()) {
    throw Error("fft takes one array operand");
  }
  return EvaluateFftImpl(inst, *operands[0]);
}

}  // namespace hlo::eval

// f32-evaluated exp, log, tanh, logistic and erf (see llvm_math_fast.h).
//
// exp: n = round(x / ln 2), r = x - n ln 2 with ln 2
// split in a 9-bit head (n * head is exact for |n| <= 150) and a tail, e^r by its Taylor series
// to r^7 (|r| <= ln2/2: truncation error below 5.3e-9 relative; with r^6 it was 1.2e-7, a
// whole ulp, and the sweep measured 3 ulp), then 2^n applied as two
// power-of-two factors 2^(n/2) and 2^(n - n/2), each a normal f32, so results down in the
// denormal range are scaled (and rounded) once by the last multiply.
//
// tanh: below |x| = 0.625, x + x·s·Q(s) with s = x² and Q a degree-6 fit of (tanh x / x - 1) / s
// (Lawson-reweighted least squares for the smallest relative error; the x·s·Q term is below a
// third of x, so its rounding costs under half an ulp); above, 1 - 2 / (e^(2|x|) + 1) with the exp
// above, where 2 / (e + 1) <= 0.45 keeps exp's error below half that of the result; |x| is
// clamped to 10, beyond which tanh rounds to 1.
//
// log: x = m·2^e with m in [sqrt(1/2), sqrt 2) (denormals scaled by 2^23 first), f = m - 1
// exact, log(1 + f) = f - f²/2 + f³·P(f) with Cephes' degree-8 P, e·ln 2 added in the exp's two
// parts (e·head exact), smallest terms first.
#include "targets/llvm/llvm_math_fast.h"

#include <numbers>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace llvm_codegen::math {
namespace {

using Builder = llvm::IRBuilder<>;

llvm::Value* F(Builder& b, llvm::Value* like, double value) {
  return llvm::ConstantFP::get(like->getType(), value);
}
llvm::Value* I(Builder& b, llvm::Type* type, int64_t value) {
  return llvm::ConstantInt::get(type, static_cast<uint64_t>(value), /*IsSigned=*/true);
}
llvm::Value* MulAdd(Builder& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {x, y, z});
}
// The f32 type's integer twin (i32 or <N x i32>).
llvm::Type* IntTypeLike(Builder& b, llvm::Type* float_type) {
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(float_type))
    return llvm::VectorType::get(b.getInt32Ty(), vector);
  return b.getInt32Ty();
}

// 2^k for an i32 k in [-126, 127] as an f32 (the exponent field built directly).
llvm::Value* PowerOfTwo(Builder& b, llvm::Value* k, llvm::Type* float_type) {
  llvm::Value* biased = b.CreateAdd(k, I(b, k->getType(), 127));
  return b.CreateBitCast(b.CreateShl(biased, I(b, k->getType(), 23)), float_type);
}

constexpr double kLn2Head = 0.693359375;            // 355/512: 9 significant bits
constexpr double kLn2Tail = -2.12194440054690583e-4;  // ln 2 - kLn2Head
// Beyond these e^x is +0 (below half the smallest denormal) or +inf in f32.
constexpr double kLowest = -104.0;
constexpr double kHighest = 89.0;
// log(1 + f) = f - f²/2 + f³·P(f) on [sqrt(1/2) - 1, sqrt 2 - 1): the degree-8 coefficients of
// Cephes' logf (peak relative error 7.6e-8 stated there), highest degree first.
constexpr double kLogP[] = {7.0376836292e-2,  -1.1514610310e-1, 1.1676998740e-1,
                            -1.2420140846e-1, 1.4249322787e-1,  -1.6668057665e-1,
                            2.0000714765e-1,  -2.4999993993e-1, 3.3333331174e-1};
// erf: on |x| < 1, erf(x) / x as a degree-6 polynomial in x² (lowest degree first); on
// [1, 2) and [2, kErfOne), erfc(x) · e^(x²) as degree-9 polynomials in x - center. All three
// fitted here (numpy, Lawson-reweighted least squares on the relative error against the C
// library in double): 1.2e-9, 1.4e-10 and 2.6e-9 relative. Beyond kErfOne, erf rounds to ±1.
constexpr double kErfOne = 3.92;
constexpr double kErfSmall[] = {1.1283791657346427, -0.37612625846216585, 0.11283585321954326,
                                -0.026853817796213205, 0.005188337331104533, -0.0008010269912826119,
                                7.854093670794861e-05};
constexpr double kErfCenterLow = 1.5;
constexpr double kErfLow[] = {0.32158541649949657, -0.1636229176615187, 0.0761510307544228,
                              -0.03293090707471316, 0.013377632993214969, -0.0051459807502563055,
                              0.0018828690904997315, -0.0006612872472007891, 0.0002381069343628951,
                              -7.653904645780488e-05};
constexpr double kErfCenterHigh = 2.96;
constexpr double kErfHigh[] = {0.1812017468841831, -0.05566482804461688, 0.01643382961152599,
                               -0.0046804111369237325, 0.0012901355881501427,
                               -0.0003449340947562566, 8.901078545720224e-05,
                               -2.2585335196481958e-05, 6.4096179570224415e-06,
                               -1.5259574014079466e-06};

// e^y for y already in [kLowest, kHighest] (no NaN): the reduction, the polynomial and 2^n.
llvm::Value* ExpInRange(Builder& b, llvm::Value* y) {
  llvm::Type* float_type = y->getType();
  llvm::Type* int_type = IntTypeLike(b, float_type);
  llvm::Value* n = b.CreateUnaryIntrinsic(
      llvm::Intrinsic::roundeven, b.CreateFMul(y, F(b, y, 1.0 / std::numbers::ln2)));
  llvm::Value* r = MulAdd(b, n, F(b, y, -kLn2Head), y);
  r = MulAdd(b, n, F(b, y, -kLn2Tail), r);
  // 1 + r + r^2/2! + ... + r^7/7!, Horner form (the r^8 term is below 0.05 ulp).
  llvm::Value* p = F(b, y, 1.0 / 5040.0);
  for (double c : {1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0})
    p = MulAdd(b, p, r, F(b, y, c));
  llvm::Value* k = b.CreateFPToSI(n, int_type);  // in [-150, 128]
  llvm::Value* half = b.CreateAShr(k, I(b, int_type, 1));
  return b.CreateFMul(b.CreateFMul(p, PowerOfTwo(b, half, float_type)),
                      PowerOfTwo(b, b.CreateSub(k, half), float_type));
}


}  // namespace

llvm::Value* EmitLogF32Fast(Builder& b, llvm::Value* x) {
  llvm::Type* float_type = x->getType();
  llvm::Type* int_type = IntTypeLike(b, float_type);
  // Denormals are scaled into the normal range first (their exponent corrected by 23).
  llvm::Value* denormal = b.CreateFCmpOLT(x, F(b, x, 0x1p-126));
  llvm::Value* normal = b.CreateSelect(denormal, b.CreateFMul(x, F(b, x, 0x1p23)), x);
  llvm::Value* bits = b.CreateBitCast(normal, int_type);
  // x = m · 2^e with m in [0.5, 1): the exponent field, and the mantissa under exponent -1.
  llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, I(b, int_type, 23)),
                                           I(b, int_type, 0xff)),
                               b.CreateSelect(denormal, I(b, int_type, 126 + 23),
                                              I(b, int_type, 126)));
  llvm::Value* m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, I(b, int_type, 0x007fffff)), I(b, int_type, 0x3f000000)),
      float_type);
  // m below sqrt(1/2) is doubled (e lowered) so f = m - 1 lies in [sqrt(1/2) - 1, sqrt 2 - 1);
  // both subtractions are exact.
  llvm::Value* low = b.CreateFCmpOLT(m, F(b, x, std::numbers::sqrt2 / 2));
  llvm::Value* f = b.CreateFSub(b.CreateSelect(low, b.CreateFAdd(m, m), m), F(b, x, 1.0));
  llvm::Value* ef = b.CreateSIToFP(
      b.CreateSub(e, b.CreateSelect(low, I(b, int_type, 1), I(b, int_type, 0))), float_type);
  llvm::Value* z = b.CreateFMul(f, f);
  llvm::Value* p = F(b, x, kLogP[0]);
  for (size_t i = 1; i < std::size(kLogP); ++i) p = MulAdd(b, p, f, F(b, x, kLogP[i]));
  // log(1 + f) = f - f²/2 + f³·P(f), then e·ln 2 added in its two parts, the small ones first.
  llvm::Value* y = b.CreateFMul(b.CreateFMul(f, z), p);
  y = MulAdd(b, ef, F(b, x, kLn2Tail), y);
  y = MulAdd(b, z, F(b, x, -0.5), y);
  llvm::Value* result = MulAdd(b, ef, F(b, x, kLn2Head), b.CreateFAdd(f, y));
  result = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(float_type)), x,
                          result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, F(b, x, 0.0)),
                          llvm::ConstantFP::getInfinity(float_type, /*Negative=*/true), result);
  return b.CreateSelect(b.CreateFCmpULT(x, F(b, x, 0.0)), llvm::ConstantFP::getNaN(float_type),
                        result);  // x < 0 or NaN
}

llvm::Value* EmitErfF32Fast(Builder& b, llvm::Value* x) {
  llvm::Value* magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // |x| < 1: x · P(x²) = x·c0 + x·z·Q(z), with c0 = 2/sqrt(pi) in two f32 parts (one f32 c0
  // alone is 5e-8 off) and the x·c0 term rounded last, once.
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* q = F(b, x, kErfSmall[std::size(kErfSmall) - 1]);
  for (size_t i = std::size(kErfSmall) - 1; i-- > 1;)
    q = MulAdd(b, q, z, F(b, x, kErfSmall[i]));
  const double c0_head = static_cast<float>(kErfSmall[0]);
  llvm::Value* tail =
      MulAdd(b, x, F(b, x, kErfSmall[0] - c0_head), b.CreateFMul(b.CreateFMul(x, z), q));
  llvm::Value* small = MulAdd(b, x, F(b, x, c0_head), tail);
  // 1 <= |x| < kErfOne: 1 - e^(-x²) · R(|x|), R's coefficients picked per lane for [1, 2) or
  // [2, kErfOne). x² = h + l exactly (l by a fused multiply-add), e^(-x²) = e^(-h) · (1 - l).
  llvm::Value* a = b.CreateSelect(b.CreateFCmpOLT(magnitude, F(b, x, kErfOne)), magnitude,
                                  F(b, x, kErfOne));  // also NaN -> kErfOne (kept below)
  llvm::Value* upper = b.CreateFCmpOGE(a, F(b, x, 2.0));
  auto pick = [&](double low, double high) {
    return b.CreateSelect(upper, F(b, x, high), F(b, x, low));
  };
  llvm::Value* u = b.CreateFSub(a, pick(kErfCenterLow, kErfCenterHigh));
  llvm::Value* r = pick(kErfLow[std::size(kErfLow) - 1], kErfHigh[std::size(kErfHigh) - 1]);
  for (size_t i = std::size(kErfLow) - 1; i-- > 0;)
    r = MulAdd(b, r, u, pick(kErfLow[i], kErfHigh[i]));
  llvm::Value* h = b.CreateFMul(a, a);
  llvm::Value* l = MulAdd(b, a, a, b.CreateFNeg(h));
  llvm::Value* e = b.CreateFMul(EmitExpF32Fast(b, b.CreateFNeg(h)),
                                b.CreateFSub(F(b, x, 1.0), l));
  llvm::Value* large = b.CreateSelect(b.CreateFCmpOLT(magnitude, F(b, x, kErfOne)),
                                      b.CreateFSub(F(b, x, 1.0), b.CreateFMul(e, r)),
                                      F(b, x, 1.0));
  // erf is odd: the sign is x's (the small branch's sums turn -0 into +0).
  llvm::Value* result = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::copysign,
      b.CreateSelect(b.CreateFCmpOLT(magnitude, F(b, x, 1.0)), small, large), x);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitLogisticF32Fast(Builder& b, llvm::Value* x) {
  // 1 / (1 + e^-x) in f32, XLA's definition: +0 once e^-x overflows (the exp gives +inf there).
  llvm::Value* result =
      b.CreateFDiv(F(b, x, 1.0), b.CreateFAdd(F(b, x, 1.0), EmitExpF32Fast(b, b.CreateFNeg(x))));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* EmitExpF32Fast(Builder& b, llvm::Value* x) {
  // Clamp (NaN becomes kLowest here and is selected back at the end).
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOGT(x, F(b, x, kHighest)), F(b, x, kHighest),
                                        x);
  clamped = b.CreateSelect(b.CreateFCmpUGE(clamped, F(b, x, kLowest)), clamped,
                           F(b, x, kLowest));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, ExpInRange(b, clamped));
}

llvm::Value* EmitTanhF32Fast(Builder& b, llvm::Value* x) {
  static constexpr double kQ[] = {-0.3333333432674408,    0.1333332508802414,
                                  -0.053966522216796875,  0.02185082621872425,
                                  -0.00875430554151535,   0.003233944298699498,
                                  -0.0008069266332313418};
  constexpr double kSmall = 0.625;
  // Beyond 10, tanh rounds to 1 in f32 (1 - tanh 10 = 4e-9 < half an ulp below 1).
  constexpr double kSaturated = 10.0;
  llvm::Value* s = b.CreateFMul(x, x);
  llvm::Value* q = F(b, x, kQ[6]);
  for (int i = 5; i >= 0; --i) q = MulAdd(b, q, s, F(b, x, kQ[i]));
  llvm::Value* small = MulAdd(b, b.CreateFMul(x, s), q, x);
  llvm::Value* magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // e^(2|x|) with |x| clamped to [0, 10], inside exp's range (NaN becomes 10 here; it takes the
  // small branch below).
  llvm::Value* e = ExpInRange(
      b, b.CreateFMul(b.CreateSelect(b.CreateFCmpOLT(magnitude, F(b, x, kSaturated)), magnitude,
                                     F(b, x, kSaturated)),
                      F(b, x, 2.0)));
  llvm::Value* large = b.CreateFSub(F(b, x, 1.0),
                                    b.CreateFDiv(F(b, x, 2.0), b.CreateFAdd(e, F(b, x, 1.0))));
  // NaN compares false and takes the small branch, which keeps it NaN; the sign copied last
  // keeps -0 (x + x·s·Q(s) gives +0 for it).
  llvm::Value* result = b.CreateSelect(b.CreateFCmpOGE(magnitude, F(b, x, kSmall)), large, small);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, result, x);
}

}  // namespace llvm_codegen::math

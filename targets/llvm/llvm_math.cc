// f32 transcendentals as straight-line IR, computed in f64 and rounded once (see llvm_math.h).
//
// Building blocks (all f64, all branch-free):
//   ExpD   e^x for |x| <= 700: n = nearest(x / ln2) by the 1.5*2^52 rounding trick,
//          r = x - n*ln2 with ln2 split in two (n*ln2_hi is exact), e^r by its Taylor series to
//          r^11 (|r| <= 0.347: truncation < 2e-15), scaled by 2^n built from exponent bits.
//   LogD   ln x for positive normal x: x = 2^e * m with m in [sqrt(1/2), sqrt(2)),
//          ln m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.172, series to s^15 (< 1e-13).
//   Expm1D e^x - 1: Taylor series to x^10 for |x| < 0.35 (no cancellation), ExpD(x) - 1 beyond.
//   AtanD  atan t for t in [0, 1]: t > tan(pi/8) uses pi/4 + atan((t-1)/(t+1)), then the
//          Taylor series to u^27 on |u| <= 0.415 (< 1e-11).
//   sin/cos: for |x| < 2^17, x - k*pi/2 with pi/2 split in three 33-bit parts (exact products),
//          the quadrant read from the low bits of the rounding trick's sum (no poison-prone
//          float->int conversion); beyond, a Payne-Hanek reduction with integer arithmetic on
//          the bits of 2/pi (the one constant table). Then Taylor series to r^13 / r^14 on
//          |r| <= pi/4.
// Special values are chosen by explicit selects after the general formula, whose garbage on
// those inputs is well-defined (no poison: no fptosi, no out-of-range shifts).
#include "targets/llvm/llvm_math.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <numbers>
#include <utility>

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace llvm_codegen::math {
namespace {

using Builder = llvm::IRBuilder<>;

constexpr double kRoundingShift = 6755399441055744.0;      // 1.5 * 2^52: x + this rounds x to int
constexpr double kLn2Hi = 6.93147180369123816490e-01;      // ln 2, upper 32 bits
constexpr double kLn2Lo = 1.90821492927058770002e-10;      // ln 2 - kLn2Hi
constexpr double kPio2Part1 = 1.57079632673412561417e+00;  // pi/2 in three 33-bit parts
constexpr double kPio2Part2 = 6.07710050630396597660e-11;
constexpr double kPio2Part3 = 2.02226624871116645580e-21;
constexpr double kPi = std::numbers::pi;

llvm::Value* D(Builder& b, double value) { return llvm::ConstantFP::get(b.getDoubleTy(), value); }

// c[0] + x*(c[1] + x*(c[2] + ...)): coefficients from the constant term up.
llvm::Value* Polynomial(Builder& b, llvm::Value* x, std::initializer_list<double> coefficients) {
  const double* first = coefficients.begin();
  const double* last = coefficients.end();
  llvm::Value* result = D(b, *(last - 1));
  for (const double* c = last - 1; c != first;) {
    --c;
    result = b.CreateFAdd(b.CreateFMul(result, x), D(b, *c));
  }
  return result;
}

llvm::Value* Abs(Builder& b, llvm::Value* x) {
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
}
llvm::Value* CopySign(Builder& b, llvm::Value* magnitude, llvm::Value* sign) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
}
llvm::Value* IsNan(Builder& b, llvm::Value* x) { return b.CreateFCmpUNO(x, x); }
llvm::Value* IsInf(Builder& b, llvm::Value* x) {
  return b.CreateFCmpOEQ(Abs(b, x), llvm::ConstantFP::getInfinity(x->getType()));
}
llvm::Value* SignBit(Builder& b, llvm::Value* x) {
  return b.CreateICmpSLT(b.CreateBitCast(x, b.getInt64Ty()), b.getInt64(0));
}
llvm::Value* Widen(Builder& b, llvm::Value* x) { return b.CreateFPExt(x, b.getDoubleTy()); }
llvm::Value* Round(Builder& b, llvm::Value* x) { return b.CreateFPTrunc(x, b.getFloatTy()); }
llvm::Value* Clamp(Builder& b, llvm::Value* x, double lo, double hi) {
  // NaN becomes 0 so that later integer work on it is harmless; callers select NaN back.
  llvm::Value* clamped = b.CreateSelect(b.CreateFCmpOLT(x, D(b, lo)), D(b, lo),
                                        b.CreateSelect(b.CreateFCmpOGT(x, D(b, hi)), D(b, hi), x));
  return b.CreateSelect(IsNan(b, x), D(b, 0.0), clamped);
}
llvm::Value* Floor(Builder& b, llvm::Value* x) {
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
}

// e^x for x in [-700, 700].
llvm::Value* ExpD(Builder& b, llvm::Value* x) {
  llvm::Value* shifted =
      b.CreateFAdd(b.CreateFMul(x, D(b, 1.0 / std::numbers::ln2)), D(b, kRoundingShift));
  llvm::Value* n = b.CreateFSub(shifted, D(b, kRoundingShift));
  llvm::Value* r =
      b.CreateFSub(b.CreateFSub(x, b.CreateFMul(n, D(b, kLn2Hi))), b.CreateFMul(n, D(b, kLn2Lo)));
  llvm::Value* series =
      Polynomial(b, r,
                 {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                  1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800});
  // The integer n sits in the low mantissa bits of `shifted` (two's complement within 2^51).
  llvm::Value* n_int = b.CreateSub(b.CreateBitCast(shifted, b.getInt64Ty()),
                                   b.CreateBitCast(D(b, kRoundingShift), b.getInt64Ty()));
  llvm::Value* scale =
      b.CreateBitCast(b.CreateShl(b.CreateAdd(n_int, b.getInt64(1023)), 52), b.getDoubleTy());
  return b.CreateFMul(series, scale);
}

// ln x for positive normal x (other inputs give well-defined garbage).
llvm::Value* LogD(Builder& b, llvm::Value* x) {
  llvm::Value* bits = b.CreateBitCast(x, b.getInt64Ty());
  llvm::Value* exponent =
      b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 52), b.getInt64(0x7ff)), b.getInt64(1023));
  llvm::Value* mantissa_bits = b.CreateOr(b.CreateAnd(bits, b.getInt64((int64_t{1} << 52) - 1)),
                                          b.getInt64(int64_t{1023} << 52));
  llvm::Value* m = b.CreateBitCast(mantissa_bits, b.getDoubleTy());  // in [1, 2)
  llvm::Value* above = b.CreateFCmpOGT(m, D(b, std::numbers::sqrt2));
  m = b.CreateSelect(above, b.CreateFMul(m, D(b, 0.5)), m);
  llvm::Value* e =
      b.CreateSIToFP(b.CreateAdd(exponent, b.CreateZExt(above, b.getInt64Ty())), b.getDoubleTy());
  llvm::Value* s = b.CreateFDiv(b.CreateFSub(m, D(b, 1.0)), b.CreateFAdd(m, D(b, 1.0)));
  llvm::Value* z = b.CreateFMul(s, s);
  llvm::Value* series =
      Polynomial(b, z, {2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13, 2.0 / 15});
  llvm::Value* log_m = b.CreateFMul(s, series);
  return b.CreateFAdd(b.CreateFAdd(b.CreateFMul(e, D(b, kLn2Lo)), log_m),
                      b.CreateFMul(e, D(b, kLn2Hi)));
}

// e^x - 1 for x in [-700, 700].
llvm::Value* Expm1D(Builder& b, llvm::Value* x) {
  llvm::Value* series =
      b.CreateFMul(x, Polynomial(b, x,
                                 {1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                  1.0 / 40320, 1.0 / 362880, 1.0 / 3628800}));
  llvm::Value* small = b.CreateFCmpOLT(Abs(b, x), D(b, 0.35));
  return b.CreateSelect(small, series, b.CreateFSub(ExpD(b, x), D(b, 1.0)));
}

// atan t for t in [0, 1].
llvm::Value* AtanD(Builder& b, llvm::Value* t) {
  llvm::Value* reduce = b.CreateFCmpOGT(t, D(b, 0.41421356237309503));
  llvm::Value* u = b.CreateSelect(
      reduce, b.CreateFDiv(b.CreateFSub(t, D(b, 1.0)), b.CreateFAdd(t, D(b, 1.0))), t);
  llvm::Value* z = b.CreateFMul(u, u);
  std::initializer_list<double> series = {1.0,       -1.0 / 3,  1.0 / 5,   -1.0 / 7, 1.0 / 9,
                                          -1.0 / 11, 1.0 / 13,  -1.0 / 15, 1.0 / 17, -1.0 / 19,
                                          1.0 / 21,  -1.0 / 23, 1.0 / 25,  -1.0 / 27};
  llvm::Value* atan_u = b.CreateFMul(u, Polynomial(b, z, series));
  return b.CreateFAdd(atan_u, b.CreateSelect(reduce, D(b, kPi / 4), D(b, 0.0)));
}

// sin and cos of the reduced argument, and the quadrant (i64 in [0, 3]).
struct Reduced {
  llvm::Value* sin;
  llvm::Value* cos;
  llvm::Value* quadrant;
};
// The bits of 2/pi after the binary point, 64 per word, behind one zero word (so a window may
// start up to 64 bits before the point). Computed with mpmath; they match fdlibm's table.
constexpr uint64_t kTwoOverPiBits[] = {
    0x0000000000000000ULL, 0xa2f9836e4e441529ULL, 0xfc2757d1f534ddc0ULL, 0xdb6295993c439041ULL,
    0xfe5163abdebbc561ULL, 0xb7246e3a424dd2e0ULL, 0x06492eea09d1921cULL, 0xfe1deb1cb129a73eULL};

llvm::Value* TwoOverPiTable(Builder& b) {
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  const char* name = "retarget.two_over_pi_bits";
  if (llvm::GlobalVariable* existing = module.getNamedGlobal(name)) return existing;
  llvm::Constant* data =
      llvm::ConstantDataArray::get(b.getContext(), llvm::ArrayRef<uint64_t>(kTwoOverPiBits));
  auto* global = new llvm::GlobalVariable(module, data->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, data, name);
  global->setAlignment(llvm::Align(8));
  return global;
}

// 30 bits of the table starting at bit `position` (0 = most significant bit of word 0).
llvm::Value* TableBits30(Builder& b, llvm::Value* table, llvm::Value* position) {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* word = b.CreateLShr(position, 6);
  llvm::Value* shift = b.CreateAnd(position, b.getInt64(63));
  llvm::Value* first = b.CreateLoad(i64, b.CreateInBoundsGEP(i64, table, word));
  llvm::Value* second =
      b.CreateLoad(i64, b.CreateInBoundsGEP(i64, table, b.CreateAdd(word, b.getInt64(1))));
  // (second >> 1) >> (63 - shift) is second >> (64 - shift) without a shift by 64.
  llvm::Value* window =
      b.CreateOr(b.CreateShl(first, shift),
                 b.CreateLShr(b.CreateLShr(second, 1), b.CreateSub(b.getInt64(63), shift)));
  return b.CreateLShr(window, 34);
}

// Payne-Hanek reduction of |x| (f32) for large |x|: x = m 2^k exactly, and x * 2/pi mod 4 needs
// only the bits of 2/pi from weight 2^(1-k) on, because earlier bits multiply m into multiples
// of 4. With W = 90 of those bits, m*W (114 bits, in 30-bit limbs) holds the quadrant in its bits
// 88..89 and the fraction below. Returns the quadrant (i64) and r = fraction * pi/2 (f64).
std::pair<llvm::Value*, llvm::Value*> ReduceLarge(Builder& b, llvm::Value* x) {
  llvm::Value* bits = b.CreateZExt(b.CreateBitCast(x, b.getInt32Ty()), b.getInt64Ty());
  llvm::Value* m = b.CreateOr(b.CreateAnd(bits, b.getInt64(0x7fffff)), b.getInt64(0x800000));
  llvm::Value* k =
      b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 23), b.getInt64(0xff)), b.getInt64(150));
  // Bit i of 2/pi (weight 2^-i) is table bit 63 + i; the window starts at i = k - 1. Callers
  // use this path for |x| >= 2^17 (k >= -6); inf and NaN (k = 105) still read inside the table.
  llvm::Value* table = TwoOverPiTable(b);
  llvm::Value* start = b.CreateAdd(k, b.getInt64(62));
  // Small inputs take the other path; keep their (unused) loads inside the table.
  start = b.CreateSelect(b.CreateICmpSLT(start, b.getInt64(0)), b.getInt64(0), start);
  llvm::Value* w0 = TableBits30(b, table, start);
  llvm::Value* w1 = TableBits30(b, table, b.CreateAdd(start, b.getInt64(30)));
  llvm::Value* w2 = TableBits30(b, table, b.CreateAdd(start, b.getInt64(60)));
  llvm::Value* c = b.CreateMul(m, w0);  // weight 2^60
  llvm::Value* d = b.CreateMul(m, w1);  // weight 2^30
  llvm::Value* a = b.CreateMul(m, w2);  // weight 1
  llvm::Value* low = b.CreateAdd(a, b.CreateShl(b.CreateAnd(d, b.getInt64((1 << 30) - 1)), 30));
  llvm::Value* high = b.CreateAdd(b.CreateAdd(c, b.CreateLShr(d, 30)), b.CreateLShr(low, 60));
  low = b.CreateAnd(low, b.getInt64((int64_t{1} << 60) - 1));
  llvm::Value* quadrant = b.CreateAnd(b.CreateLShr(high, 28), b.getInt64(3));
  llvm::Type* f64 = b.getDoubleTy();
  llvm::Value* fraction =
      b.CreateFAdd(b.CreateFMul(b.CreateUIToFP(b.CreateAnd(high, b.getInt64((1 << 28) - 1)), f64),
                                D(b, 0x1p-28)),
                   b.CreateFMul(b.CreateUIToFP(low, f64), D(b, 0x1p-88)));
  // Round to the nearest quadrant: r in [-pi/4, pi/4].
  llvm::Value* upper = b.CreateFCmpOGE(fraction, D(b, 0.5));
  fraction = b.CreateSelect(upper, b.CreateFSub(fraction, D(b, 1.0)), fraction);
  quadrant = b.CreateAnd(b.CreateAdd(quadrant, b.CreateZExt(upper, b.getInt64Ty())), b.getInt64(3));
  return {quadrant, b.CreateFMul(fraction, D(b, kPi / 2))};
}

// x is f32; everything after widening is f64.
Reduced ReduceAndEvaluate(Builder& b, llvm::Value* x_f32) {
  llvm::Value* x = Widen(b, x_f32);
  llvm::Value* shifted = b.CreateFAdd(b.CreateFMul(x, D(b, 2.0 / kPi)), D(b, kRoundingShift));
  llvm::Value* k = b.CreateFSub(shifted, D(b, kRoundingShift));
  llvm::Value* quadrant = b.CreateAnd(b.CreateBitCast(shifted, b.getInt64Ty()), b.getInt64(3));
  llvm::Value* r = b.CreateFSub(x, b.CreateFMul(k, D(b, kPio2Part1)));
  r = b.CreateFSub(r, b.CreateFMul(k, D(b, kPio2Part2)));
  r = b.CreateFSub(r, b.CreateFMul(k, D(b, kPio2Part3)));
  // Beyond 2^17 the three-part pi/2 loses digits: reduce |x| exactly and mirror for x < 0.
  auto [large_quadrant, large_r] = ReduceLarge(b, Abs(b, x_f32));
  llvm::Value* negative = SignBit(b, x);
  large_quadrant = b.CreateSelect(
      negative, b.CreateAnd(b.CreateSub(b.getInt64(4), large_quadrant), b.getInt64(3)),
      large_quadrant);
  large_r = b.CreateSelect(negative, b.CreateFNeg(large_r), large_r);
  llvm::Value* large = b.CreateFCmpOGE(Abs(b, x), D(b, 0x1p17));
  quadrant = b.CreateSelect(large, large_quadrant, quadrant);
  r = b.CreateSelect(large, large_r, r);
  llvm::Value* z = b.CreateFMul(r, r);
  llvm::Value* sin =
      b.CreateFMul(r, Polynomial(b, z,
                                 {1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880,
                                  -1.0 / 39916800, 1.0 / 6227020800.0}));
  llvm::Value* cos = Polynomial(b, z,
                                {1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800,
                                 1.0 / 479001600, -1.0 / 87178291200.0});
  return {sin, cos, quadrant};
}

llvm::Value* PickByQuadrant(Builder& b, llvm::Value* quadrant, llvm::Value* q0, llvm::Value* q1,
                            llvm::Value* q2, llvm::Value* q3) {
  llvm::Value* low = b.CreateSelect(b.CreateICmpEQ(quadrant, b.getInt64(0)), q0, q1);
  llvm::Value* high = b.CreateSelect(b.CreateICmpEQ(quadrant, b.getInt64(2)), q2, q3);
  return b.CreateSelect(b.CreateICmpULT(quadrant, b.getInt64(2)), low, high);
}

// Keeps x where `keep` holds (e.g. ±0 and NaN inputs that are their own result).
llvm::Value* KeepInput(Builder& b, llvm::Value* keep, llvm::Value* x, llvm::Value* result) {
  return b.CreateSelect(keep, x, result);
}

}  // namespace

llvm::Value* EmitExpm1F32(Builder& b, llvm::Value* x) {
  llvm::Value* result = Round(b, Expm1D(b, Clamp(b, Widen(b, x), -200.0, 200.0)));
  // ±0 and NaN are their own expm1 (the series would turn -0 into +0).
  llvm::Value* keep = b.CreateOr(b.CreateFCmpUNO(x, x),
                                 b.CreateFCmpOEQ(x, llvm::ConstantFP::get(x->getType(), 0.0)));
  return KeepInput(b, keep, x, result);
}

llvm::Value* EmitLog1pF32(Builder& b, llvm::Value* x) {
  llvm::Type* f32 = x->getType();
  llvm::Value* xd = Widen(b, x);
  // log1p(x) = log(u) * x / (u - 1) with u = 1 + x rounded: the factor corrects u's rounding.
  llvm::Value* u = b.CreateFAdd(xd, D(b, 1.0));
  llvm::Value* corrected = b.CreateFMul(LogD(b, u), b.CreateFDiv(xd, b.CreateFSub(u, D(b, 1.0))));
  llvm::Value* result = Round(b, b.CreateSelect(b.CreateFCmpOEQ(u, D(b, 1.0)), xd, corrected));
  result = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(f32)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::get(f32, -1.0)),
                          llvm::ConstantFP::getInfinity(f32, true), result);
  return b.CreateSelect(b.CreateFCmpULT(x, llvm::ConstantFP::get(f32, -1.0)),
                        llvm::ConstantFP::getNaN(f32), result);
}

llvm::Value* EmitSinF32(Builder& b, llvm::Value* x) {
  Reduced r = ReduceAndEvaluate(b, x);
  llvm::Value* result = Round(
      b, PickByQuadrant(b, r.quadrant, r.sin, r.cos, b.CreateFNeg(r.sin), b.CreateFNeg(r.cos)));
  llvm::Type* f32 = x->getType();
  result = b.CreateSelect(IsInf(b, x), llvm::ConstantFP::getNaN(f32), result);
  llvm::Value* keep = b.CreateOr(IsNan(b, x), b.CreateFCmpOEQ(x, llvm::ConstantFP::get(f32, 0.0)));
  return KeepInput(b, keep, x, result);
}

llvm::Value* EmitCosF32(Builder& b, llvm::Value* x) {
  Reduced r = ReduceAndEvaluate(b, x);
  llvm::Value* result = Round(
      b, PickByQuadrant(b, r.quadrant, r.cos, b.CreateFNeg(r.sin), b.CreateFNeg(r.cos), r.sin));
  result = b.CreateSelect(IsInf(b, x), llvm::ConstantFP::getNaN(x->getType()), result);
  return KeepInput(b, IsNan(b, x), x, result);
}

llvm::Value* EmitTanF32(Builder& b, llvm::Value* x) {
  Reduced r = ReduceAndEvaluate(b, x);
  llvm::Value* even = b.CreateICmpEQ(b.CreateAnd(r.quadrant, b.getInt64(1)), b.getInt64(0));
  llvm::Value* result = Round(b, b.CreateSelect(even, b.CreateFDiv(r.sin, r.cos),
                                                b.CreateFNeg(b.CreateFDiv(r.cos, r.sin))));
  llvm::Type* f32 = x->getType();
  result = b.CreateSelect(IsInf(b, x), llvm::ConstantFP::getNaN(f32), result);
  llvm::Value* keep = b.CreateOr(IsNan(b, x), b.CreateFCmpOEQ(x, llvm::ConstantFP::get(f32, 0.0)));
  return KeepInput(b, keep, x, result);
}

llvm::Value* EmitAtan2F32(Builder& b, llvm::Value* y, llvm::Value* x) {
  llvm::Value* yd = Widen(b, y);
  llvm::Value* xd = Widen(b, x);
  llvm::Value* ay = Abs(b, yd);
  llvm::Value* ax = Abs(b, xd);
  llvm::Value* x_negative = SignBit(b, xd);
  // General case on magnitudes: angle in [0, pi/2] from the ratio <= 1, then mirrored.
  llvm::Value* y_larger = b.CreateFCmpOGT(ay, ax);
  llvm::Value* ratio =
      b.CreateFDiv(b.CreateSelect(y_larger, ax, ay), b.CreateSelect(y_larger, ay, ax));
  llvm::Value* angle = AtanD(b, ratio);
  angle = b.CreateSelect(y_larger, b.CreateFSub(D(b, kPi / 2), angle), angle);
  angle = b.CreateSelect(x_negative, b.CreateFSub(D(b, kPi), angle), angle);
  // C99 special cases, later selects taking precedence.
  llvm::Value* zero = D(b, 0.0);
  llvm::Value* pi_or_zero = b.CreateSelect(x_negative, D(b, kPi), zero);
  angle = b.CreateSelect(b.CreateFCmpOEQ(ax, zero), D(b, kPi / 2), angle);
  angle = b.CreateSelect(b.CreateFCmpOEQ(ay, zero), pi_or_zero, angle);
  llvm::Value* y_inf = IsInf(b, yd);
  llvm::Value* x_inf = IsInf(b, xd);
  angle = b.CreateSelect(y_inf, D(b, kPi / 2), angle);
  angle = b.CreateSelect(x_inf, pi_or_zero, angle);
  angle = b.CreateSelect(b.CreateAnd(x_inf, y_inf),
                         b.CreateSelect(x_negative, D(b, 3 * kPi / 4), D(b, kPi / 4)), angle);
  llvm::Value* result = Round(b, CopySign(b, angle, yd));
  llvm::Value* any_nan = b.CreateOr(IsNan(b, xd), IsNan(b, yd));
  return b.CreateSelect(any_nan, llvm::ConstantFP::getNaN(y->getType()), result);
}

llvm::Value* EmitPowF32(Builder& b, llvm::Value* x, llvm::Value* y) {
  llvm::Value* xd = Widen(b, x);
  llvm::Value* yd = Widen(b, y);
  llvm::Value* ax = Abs(b, xd);
  llvm::Value* zero = D(b, 0.0);
  llvm::Value* one = D(b, 1.0);
  llvm::Value* inf = llvm::ConstantFP::getInfinity(b.getDoubleTy());
  // |x|^y = e^(y ln|x|), all in f64: the product's error stays far below an f32 ulp.
  llvm::Value* magnitude = ExpD(b, Clamp(b, b.CreateFMul(yd, LogD(b, ax)), -700.0, 700.0));
  llvm::Value* y_negative = b.CreateFCmpOLT(yd, zero);
  magnitude =
      b.CreateSelect(b.CreateFCmpOEQ(ax, zero), b.CreateSelect(y_negative, inf, zero), magnitude);
  magnitude =
      b.CreateSelect(b.CreateFCmpOEQ(ax, inf), b.CreateSelect(y_negative, zero, inf), magnitude);
  llvm::Value* grows = b.CreateICmpEQ(b.CreateFCmpOGT(ax, one), b.CreateFCmpOGT(yd, zero));
  llvm::Value* inf_exponent_result =
      b.CreateSelect(b.CreateFCmpOEQ(ax, one), one, b.CreateSelect(grows, inf, zero));
  magnitude = b.CreateSelect(IsInf(b, yd), inf_exponent_result, magnitude);
  // Sign: negative base to an odd integer power.
  llvm::Value* y_integer = b.CreateFCmpOEQ(Floor(b, yd), yd);
  llvm::Value* half_y = b.CreateFMul(yd, D(b, 0.5));
  llvm::Value* y_odd = b.CreateAnd(y_integer, b.CreateFCmpONE(Floor(b, half_y), half_y));
  llvm::Value* result =
      b.CreateSelect(b.CreateAnd(y_odd, SignBit(b, xd)), b.CreateFNeg(magnitude), magnitude);
  // Finite negative base to a finite non-integer power: NaN. NaN operands: NaN.
  llvm::Value* finite_negative_x =
      b.CreateAnd(b.CreateFCmpOLT(xd, zero), b.CreateFCmpOGT(xd, b.CreateFNeg(inf)));
  llvm::Value* finite_fraction_y =
      b.CreateAnd(b.CreateFCmpOLT(Abs(b, yd), inf), b.CreateNot(y_integer));
  llvm::Value* nan = llvm::ConstantFP::getNaN(b.getDoubleTy());
  result = b.CreateSelect(b.CreateAnd(finite_negative_x, finite_fraction_y), nan, result);
  result = b.CreateSelect(b.CreateOr(IsNan(b, xd), IsNan(b, yd)), nan, result);
  // pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN; pow(-1, ±inf) = 1.
  llvm::Value* is_one =
      b.CreateOr(b.CreateFCmpOEQ(yd, zero),
                 b.CreateOr(b.CreateFCmpOEQ(xd, one),
                            b.CreateAnd(b.CreateFCmpOEQ(xd, D(b, -1.0)), IsInf(b, yd))));
  return Round(b, b.CreateSelect(is_one, one, result));
}

llvm::Value* EmitCbrtF32(Builder& b, llvm::Value* x) {
  llvm::Value* xd = Widen(b, x);
  llvm::Value* ax = Abs(b, xd);
  // Initial guess: dividing the f64 bit pattern by 3 divides the exponent by 3 (within 7%),
  // then five Newton steps y <- (2y + a/y^2) / 3 (quadratic convergence: < 1e-15).
  llvm::Value* bits = b.CreateBitCast(ax, b.getInt64Ty());
  llvm::Value* guess_bits =
      b.CreateAdd(b.CreateUDiv(bits, b.getInt64(3)), b.getInt64(int64_t{682} << 52));
  llvm::Value* root = b.CreateBitCast(guess_bits, b.getDoubleTy());
  for (int step = 0; step < 5; ++step) {
    root = b.CreateFMul(
        b.CreateFAdd(b.CreateFMul(root, D(b, 2.0)), b.CreateFDiv(ax, b.CreateFMul(root, root))),
        D(b, 1.0 / 3));
  }
  llvm::Value* result = Round(b, CopySign(b, root, xd));
  // ±0, ±inf and NaN are their own cube roots.
  llvm::Type* f32 = x->getType();
  llvm::Value* keep = b.CreateOr(b.CreateFCmpUEQ(x, llvm::ConstantFP::get(f32, 0.0)),
                                 b.CreateFCmpUEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                                 llvm::ConstantFP::getInfinity(f32)));
  return KeepInput(b, keep, x, result);
}

}  // namespace llvm_codegen::math

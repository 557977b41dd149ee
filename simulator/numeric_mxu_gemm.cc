// The matrix unit's GEMM (numeric_mxu.h: MxuGemm, MxuGemmElements), the functional model's
// hottest loop (docs/perf.md "Accelerator simulator speed").
//
// Every output element is still its own chain, exactly as MxuMac computes it:
//   s = +0;  for kk = 0 .. k-1:  s = s + (a[i][kk] * w[kk][j])      (two roundings per step)
// Only the interleaving of different elements' chains differs from a plain triple loop, and that
// cannot change a result. The speed comes from the interleaving: a tile of 4 rows x 2 vectors of
// columns keeps its running sums in registers over the whole k loop, one weight-row load feeds 4
// rows, and 8 (AVX2) or 16 (AVX-512) columns go through one vector operation. Operands are
// decoded from their memory bytes in registers (bf16 -> f32 is a shift, s8 -> s32 a sign
// extension), never into a copy.
//
// This file is compiled with -ffp-contract=off (simulator/CMakeLists.txt): no multiply-add here
// is ever fused, on any instruction set the kernels are cloned for.
#include <bit>
#include <cstring>
#include <string>

#include "simulator/numeric_mxu.h"

namespace simulator {
namespace {

using systolic::Dtype;

// The kernels load elements with memcpy: memory is little-endian (docs/isa.md "Data layout").
static_assert(std::endian::native == std::endian::little,
              "the matrix-unit kernels read little-endian memory directly");

// The 32- and 64-byte vectors below never cross a call boundary that other code sees (everything
// is inlined into the kernels of this file), so GCC's note that passing them without AVX changes
// the ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

// Vectors of 8 or 16 32-bit lanes (GCC/Clang vector extensions: lane-wise operations with the
// scalar type's semantics, IEEE f32 with one rounding each or uint32 wrapping), with the narrow
// element vectors they are decoded from. 8 lanes are one AVX register (two SSE ones); 16 lanes
// one AVX-512 register.
template <int Lanes>
struct Vectors;
template <>
struct Vectors<8> {
  typedef float F32 __attribute__((vector_size(32)));
  typedef uint32_t U32 __attribute__((vector_size(32)));
  typedef int32_t I32 __attribute__((vector_size(32)));
  typedef uint16_t U16 __attribute__((vector_size(16)));
};
template <>
struct Vectors<16> {
  typedef float F32 __attribute__((vector_size(64)));
  typedef uint32_t U32 __attribute__((vector_size(64)));
  typedef int32_t I32 __attribute__((vector_size(64)));
  typedef uint16_t U16 __attribute__((vector_size(32)));
};

// One policy per matrix-unit dtype: the element width, the accumulator type, and how one element
// (Scalar) or kLanes consecutive ones (Vector) decode to it -- the same decoding as MxuMac's.
template <int Lanes>
struct S8Elements {  // s8 x s8 -> s32, in uint32 arithmetic (the wrap without signed overflow)
  using V = Vectors<Lanes>;
  using Acc = uint32_t;
  using Vec = typename V::U32;
  static constexpr int64_t kLanes = Lanes;
  static constexpr int64_t kBytes = 1;
  static Acc Scalar(const uint8_t* p) {
    return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(*p)));
  }
  static Vec Vector(const uint8_t* p) {
    // Sign-extended through 16-bit lanes from a 16-byte vector: GCC 12 turns these conversions
    // into vpmovsxbw / vpmovsxwd but scalarizes a conversion of an 8-byte vector.
    typedef int8_t I8x16 __attribute__((vector_size(16)));
    typedef int16_t I16x8 __attribute__((vector_size(16)));
    typedef int16_t I16x16 __attribute__((vector_size(32)));
    I8x16 raw = {};
    std::memcpy(&raw, p, Lanes);
    const I16x16 halfwords = __builtin_convertvector(raw, I16x16);
    if constexpr (Lanes == 8) {
      const I16x8 low = __builtin_shufflevector(halfwords, halfwords, 0, 1, 2, 3, 4, 5, 6, 7);
      return std::bit_cast<Vec>(__builtin_convertvector(low, typename V::I32));
    } else {
      return std::bit_cast<Vec>(__builtin_convertvector(halfwords, typename V::I32));
    }
  }
};
template <int Lanes>
struct Bf16Elements {  // bf16 is the top half of an f32: the widening is exact
  using V = Vectors<Lanes>;
  using Acc = float;
  using Vec = typename V::F32;
  static constexpr int64_t kLanes = Lanes;
  static constexpr int64_t kBytes = 2;
  static Acc Scalar(const uint8_t* p) {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof(bits));
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
  }
  static Vec Vector(const uint8_t* p) {
    typename V::U16 raw;
    std::memcpy(&raw, p, sizeof(raw));
    return std::bit_cast<Vec>(__builtin_convertvector(raw, typename V::U32) << 16);
  }
};
template <int Lanes>
struct F32Elements {
  using V = Vectors<Lanes>;
  using Acc = float;
  using Vec = typename V::F32;
  static constexpr int64_t kLanes = Lanes;
  static constexpr int64_t kBytes = 4;
  static Acc Scalar(const uint8_t* p) {
    float value;
    std::memcpy(&value, p, sizeof(value));
    return value;
  }
  static Vec Vector(const uint8_t* p) {
    Vec value;
    std::memcpy(&value, p, sizeof(value));
    return value;
  }
};

constexpr int64_t kTileRows = 4;     // rows of a per register tile
constexpr int64_t kTileVectors = 2;  // column vectors per register tile

// Column sums of `Rows` rows of a (k elements each) for columns [j, j + Count * kLanes), stored
// as bit patterns into out (row stride n).
template <class E, int64_t Rows, int64_t Count>
[[gnu::always_inline]] inline void Tile(const uint8_t* a, int64_t k, const uint8_t* w, int64_t n,
                                        int64_t j, uint32_t* out) {
  using Vec = typename E::Vec;
  Vec sums[Rows][Count] = {};  // all-zero bits: the +0 start of every column sum
  for (int64_t kk = 0; kk < k; ++kk) {
    Vec weights[Count];
    for (int64_t v = 0; v < Count; ++v) {
      weights[v] = E::Vector(w + (kk * n + j + v * E::kLanes) * E::kBytes);
    }
    for (int64_t r = 0; r < Rows; ++r) {
      const typename E::Acc x = E::Scalar(a + (r * k + kk) * E::kBytes);
      for (int64_t v = 0; v < Count; ++v) {
        const Vec products = x * weights[v];
        sums[r][v] = sums[r][v] + products;
      }
    }
  }
  for (int64_t r = 0; r < Rows; ++r) {
    for (int64_t v = 0; v < Count; ++v) {
      std::memcpy(out + r * n + j + v * E::kLanes, &sums[r][v], sizeof(Vec));
    }
  }
}

// Columns [j, n) of `Rows` rows in tiles of kTileVectors vectors, then of one; returns the first
// column left (fewer than kLanes remain).
template <class E, int64_t Rows>
[[gnu::always_inline]] inline int64_t VectorColumns(const uint8_t* a, int64_t k, const uint8_t* w,
                                                    int64_t n, int64_t j, uint32_t* out) {
  for (; j + kTileVectors * E::kLanes <= n; j += kTileVectors * E::kLanes) {
    Tile<E, Rows, kTileVectors>(a, k, w, n, j, out);
  }
  for (; j + E::kLanes <= n; j += E::kLanes) Tile<E, Rows, 1>(a, k, w, n, j, out);
  return j;
}

// All columns of `Rows` rows: vectors of Lanes, then of 8, then column by column.
template <template <int> class Elements, int Lanes, int64_t Rows>
[[gnu::always_inline]] inline void RowGroup(const uint8_t* a, int64_t k, const uint8_t* w,
                                            int64_t n, uint32_t* out) {
  using E = Elements<8>;
  int64_t j = VectorColumns<Elements<Lanes>, Rows>(a, k, w, n, 0, out);
  if constexpr (Lanes > 8) j = VectorColumns<E, Rows>(a, k, w, n, j, out);
  for (; j < n; ++j) {
    for (int64_t r = 0; r < Rows; ++r) {
      typename E::Acc sum{0};
      for (int64_t kk = 0; kk < k; ++kk) {
        const typename E::Acc product =
            E::Scalar(a + (r * k + kk) * E::kBytes) * E::Scalar(w + (kk * n + j) * E::kBytes);
        sum = sum + product;
      }
      out[r * n + j] = std::bit_cast<uint32_t>(sum);
    }
  }
}

template <template <int> class Elements, int Lanes>
[[gnu::always_inline]] inline void Gemm(int64_t m, int64_t k, int64_t n, const uint8_t* a,
                                        const uint8_t* w, uint32_t* out) {
  constexpr int64_t kBytes = Elements<8>::kBytes;
  int64_t i = 0;
  for (; i + kTileRows <= m; i += kTileRows) {
    RowGroup<Elements, Lanes, kTileRows>(a + i * k * kBytes, k, w, n, out + i * n);
  }
  for (; i < m; ++i) RowGroup<Elements, Lanes, 1>(a + i * k * kBytes, k, w, n, out + i * n);
}

// The kernels, per instruction set. All compute the same bits: wider registers bring no fused or
// reassociated operation. On x86-64 the 8-lane kernel is cloned for AVX2 and the baseline (picked
// when the program starts) and a 16-lane one is compiled for AVX-512, chosen below when the CPU
// has it; elsewhere the 8-lane kernel is compiled once.
#if defined(__x86_64__) && !defined(__clang__)
#define RETARGET_GEMM_CLONES __attribute__((target_clones("avx2", "default")))
#else
// clang does not clone function templates; its builds (the sanitizer build) run the baseline.
#define RETARGET_GEMM_CLONES
#endif

template <template <int> class Elements>
RETARGET_GEMM_CLONES void Gemm8(int64_t m, int64_t k, int64_t n, const uint8_t* a,
                                const uint8_t* w, uint32_t* out) {
  Gemm<Elements, 8>(m, k, n, a, w, out);
}

#if defined(__x86_64__)
template <template <int> class Elements>
__attribute__((target("avx512f"))) void Gemm16(int64_t m, int64_t k, int64_t n,
                                               const uint8_t* a, const uint8_t* w,
                                               uint32_t* out) {
  Gemm<Elements, 16>(m, k, n, a, w, out);
}
#endif

template <template <int> class Elements>
void GemmFor(int64_t m, int64_t k, int64_t n, const uint8_t* a, const uint8_t* w,
             uint32_t* out) {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return Gemm16<Elements>(m, k, n, a, w, out);
#endif
  Gemm8<Elements>(m, k, n, a, w, out);
}

}  // namespace

void MxuGemmElements(Dtype dtype, int64_t m, int64_t k, int64_t n, const uint8_t* a,
                     const uint8_t* w, uint32_t* out) {
  switch (dtype) {
    case Dtype::kS8: return GemmFor<S8Elements>(m, k, n, a, w, out);
    case Dtype::kBf16: return GemmFor<Bf16Elements>(m, k, n, a, w, out);
    case Dtype::kF32: return GemmFor<F32Elements>(m, k, n, a, w, out);
    case Dtype::kU8:
    case Dtype::kS32:
    case Dtype::kF16:
    case Dtype::kPred:
      break;
  }
  MxuAccumulatorDtype(dtype);  // throws the error naming the dtype
}

std::vector<uint32_t> MxuGemm(Dtype dtype, int64_t m, int64_t k, int64_t n,
                              std::span<const uint32_t> a, std::span<const uint32_t> w) {
  MxuAccumulatorDtype(dtype);  // rejects a dtype the array does not multiply
  // The bit patterns back to memory bytes (StoreBits is LoadBits' inverse), then the kernel.
  const int bytes = systolic::DtypeBytes(dtype);
  std::vector<uint8_t> a_bytes(static_cast<size_t>(m * k * bytes));
  std::vector<uint8_t> w_bytes(static_cast<size_t>(k * n * bytes));
  StoreBitsArray(dtype, a_bytes.data(), m * k, a.data());
  StoreBitsArray(dtype, w_bytes.data(), k * n, w.data());
  std::vector<uint32_t> out(static_cast<size_t>(m * n));
  MxuGemmElements(dtype, m, k, n, a_bytes.data(), w_bytes.data(), out.data());
  return out;
}

}  // namespace simulator

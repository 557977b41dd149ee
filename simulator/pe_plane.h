// Plane<T>: one value of T per processing element of an R x C array, addressed (row, column).
// The state grid of the cycle-exact reference models (pe_reference.cc, pe_sequence.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simulator {

template <class T>
class Plane {
 public:
  Plane(int64_t rows, int64_t cols) : cols_(cols), cells_(static_cast<std::size_t>(rows * cols)) {}
  T& at(int64_t r, int64_t c) { return cells_[static_cast<std::size_t>(r * cols_ + c)]; }
  const T& at(int64_t r, int64_t c) const { return cells_[static_cast<std::size_t>(r * cols_ + c)]; }

 private:
  int64_t cols_;
  std::vector<T> cells_;
};

}  // namespace simulator

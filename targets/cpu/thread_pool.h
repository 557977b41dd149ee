// A fixed-size thread pool for the CPU backend's kernels and GEMM: ParallelFor splits an index
// range into contiguous chunks and blocks until every chunk has run.
//
// Guarantees: ParallelFor(n, ...) calls `body(begin, end)` on disjoint chunks covering [0, n)
// exactly once each; with one thread (or n small) it runs inline on the caller's thread. The
// pool is safe to use from one caller at a time (kernels of one Executable run in sequence);
// nested ParallelFor from inside a body runs the inner loop inline (no deadlock).
// An exception thrown by a body is rethrown on the caller after all chunks finished.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace cpu {

class ThreadPool {
 public:
  // threads <= 0: std::thread::hardware_concurrency() (the machine's cores).
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const;
  // Runs body over [0, n) in chunks of at least `min_chunk` indices.
  void ParallelFor(int64_t n, int64_t min_chunk,
                   const std::function<void(int64_t begin, int64_t end)>& body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cpu

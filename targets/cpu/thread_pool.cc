// cpu::ThreadPool: `threads - 1` worker threads plus the calling thread share each ParallelFor.
//
// Guarantees (see thread_pool.h): chunks are disjoint, cover [0, n) and each runs exactly once;
// ParallelFor returns only after every chunk finished and no worker still touches the job (the
// job lives on the caller's stack); the first exception is rethrown on the caller; nested calls
// from inside a body, and ranges too short for two chunks of min_chunk, run inline. Concurrent callers from
// different threads are serialized rather than interleaved.
#include "targets/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cpu {
namespace {

// True while this thread runs a ParallelFor body (workers: always). Nested ParallelFor calls see
// it and run inline: a body waiting for its own pool's workers could deadlock.
thread_local bool tls_inside_pool_body = false;

// Chunks per thread: a few more chunks than threads lets a thread that was descheduled (the
// machine is shared) catch up through dynamic chunk grabbing without making chunks tiny.
constexpr int64_t kChunksPerThread = 4;

// A worker that just finished a job, and a caller waiting for workers, spin this long before
// sleeping on a condition variable: GEMM issues fork-joins milliseconds apart, and a futex
// wake-up can cost tens of microseconds on a VM. Short enough not to starve other processes.
constexpr auto kSpinBeforeSleeping = std::chrono::microseconds(50);

// Spins until `done()` or the spin time is up; returns done().
template <typename Done>
bool SpinBriefly(const Done& done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinBeforeSleeping;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

struct Job {
  const std::function<void(int64_t, int64_t)>* body = nullptr;
  int64_t n = 0;
  int64_t num_chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int> active_workers{0};  // changed only under Impl::mutex
  std::mutex error_mutex;
  std::exception_ptr first_error;

  // Grabs chunks until none is left. Chunks are n / num_chunks long; the first
  // n % num_chunks of them one longer.
  void RunChunks() {
    for (;;) {
      const int64_t chunk = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= num_chunks) return;
      // Divide before multiplying so that n * chunk cannot overflow for huge n.
      const int64_t begin = (n / num_chunks) * chunk + std::min(chunk, n % num_chunks);
      const int64_t end = begin + n / num_chunks + (chunk < n % num_chunks ? 1 : 0);
      try {
        (*body)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
    }
  }
};

}  // namespace

struct ThreadPool::Impl {
  int threads = 1;
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable work_ready;
  std::condition_variable job_left;
  Job* job = nullptr;         // guarded by mutex
  uint64_t generation = 0;    // guarded by mutex; bumped per job so a worker joins each job once
  std::atomic<uint64_t> published_generation{0};  // a lock-free copy for spinning workers
  bool stopping = false;      // guarded by mutex
  std::mutex caller_mutex;    // one ParallelFor at a time

  void WorkerLoop() {
    tls_inside_pool_body = true;
    uint64_t seen_generation = 0;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (!stopping && !(job && generation != seen_generation)) {
        lock.unlock();
        SpinBriefly([&] {
          return published_generation.load(std::memory_order_acquire) != seen_generation;
        });
        lock.lock();
      }
      work_ready.wait(lock, [&] { return stopping || (job && generation != seen_generation); });
      if (stopping) return;
      seen_generation = generation;
      Job* current = job;
      ++current->active_workers;
      lock.unlock();
      current->RunChunks();
      lock.lock();
      if (--current->active_workers == 0) job_left.notify_all();
    }
  }
};

ThreadPool::ThreadPool(int threads) : impl_(std::make_unique<Impl>()) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  impl_->threads = threads;
  impl_->workers.reserve(threads - 1);
  for (int i = 1; i < threads; ++i) impl_->workers.emplace_back([impl = impl_.get()] { impl->WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->work_ready.notify_all();
  for (std::thread& worker : impl_->workers) worker.join();
}

int ThreadPool::threads() const { return impl_->threads; }

void ThreadPool::ParallelFor(int64_t n, int64_t min_chunk,
                             const std::function<void(int64_t begin, int64_t end)>& body) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(min_chunk, 1);
  const int64_t max_chunks = n / min_chunk;  // so that every chunk has at least min_chunk
  if (impl_->threads == 1 || tls_inside_pool_body || max_chunks <= 1) {
    body(0, n);
    return;
  }

  std::lock_guard<std::mutex> one_caller(impl_->caller_mutex);
  Job job;
  job.body = &body;
  job.n = n;
  job.num_chunks = std::min(max_chunks, kChunksPerThread * impl_->threads);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->job = &job;
    ++impl_->generation;
    impl_->published_generation.store(impl_->generation, std::memory_order_release);
  }
  impl_->work_ready.notify_all();

  tls_inside_pool_body = true;
  job.RunChunks();
  tls_inside_pool_body = false;

  {
    // Every chunk is taken; wait for workers still inside one, then retract the job so a worker
    // that wakes late never sees this (soon dead) stack object.
    SpinBriefly([&] { return job.active_workers.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(impl_->mutex);
    impl_->job_left.wait(lock, [&] { return job.active_workers == 0; });
    impl_->job = nullptr;
  }
  if (job.first_error) std::rethrow_exception(job.first_error);
}

}  // namespace cpu

// cpu::ThreadPool: coverage of [0, n) exactly once, inline execution where promised, nesting,
// exception propagation, concurrent callers, and clean shutdown.
#include "targets/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

// Calls ParallelFor and returns how often each index was visited.
std::vector<int> VisitCounts(cpu::ThreadPool& pool, int64_t n, int64_t min_chunk) {
  std::vector<std::atomic<int>> counts(n);
  pool.ParallelFor(n, min_chunk, [&](int64_t begin, int64_t end) {
    EXPECT_LE(0, begin);
    EXPECT_LT(begin, end);
    EXPECT_LE(end, n);
    for (int64_t i = begin; i < end; ++i) counts[i].fetch_add(1);
  });
  std::vector<int> result;
  for (auto& c : counts) result.push_back(c.load());
  return result;
}

TEST(ThreadPool, ThreadCount) {
  EXPECT_EQ(cpu::ThreadPool(3).threads(), 3);
  EXPECT_EQ(cpu::ThreadPool(1).threads(), 1);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(cpu::ThreadPool(0).threads(), cores);
  EXPECT_EQ(cpu::ThreadPool(-5).threads(), cores);
}

TEST(ThreadPool, EveryIndexExactlyOnce) {
  cpu::ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 4099}) {
    for (int64_t min_chunk : {0, 1, 5, 100, 10000}) {
      const std::vector<int> counts = VisitCounts(pool, n, min_chunk);
      EXPECT_EQ(counts, std::vector<int>(n, 1)) << "n=" << n << " min_chunk=" << min_chunk;
    }
  }
}

TEST(ThreadPool, ChunksRespectMinimumSize) {
  cpu::ThreadPool pool(2);
  std::mutex mutex;
  std::vector<int64_t> sizes;
  pool.ParallelFor(100, 30, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    sizes.push_back(end - begin);
  });
  // 100 / 30 allows at most 3 chunks, each then at least 33 long.
  EXPECT_LE(sizes.size(), 3u);
  for (int64_t size : sizes) EXPECT_GE(size, 30);
}

TEST(ThreadPool, EmptyRangeCallsNothing) {
  cpu::ThreadPool pool(2);
  int calls = 0;
  pool.ParallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
  pool.ParallelFor(-3, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, TinyRangesAndSingleThreadRunInlineAsOneChunk) {
  const std::thread::id caller = std::this_thread::get_id();
  cpu::ThreadPool pool(4);
  int calls = 0;
  pool.ParallelFor(10, 10, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 10);
    ++calls;
  });
  cpu::ThreadPool single(1);
  single.ParallelFor(1000, 1, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(end - begin, 1000);
    ++calls;
  });
  EXPECT_EQ(calls, 2);
}

TEST(ThreadPool, UsesWorkerThreads) {
  cpu::ThreadPool pool(2);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  // Each chunk waits (bounded) until two threads have shown up: the caller alone could not
  // finish this quickly, so a pass means a worker ran chunks concurrently.
  pool.ParallelFor(2, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (seen.size() >= 2) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  EXPECT_EQ(seen.size(), 2u);
}

TEST(ThreadPool, NestedCallsRunInlineOnTheOuterThread) {
  cpu::ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(8, 1, [&](int64_t begin, int64_t end) {
    const std::thread::id outer = std::this_thread::get_id();
    for (int64_t i = begin; i < end; ++i) {
      pool.ParallelFor(100, 1, [&](int64_t b, int64_t e) {
        EXPECT_EQ(std::this_thread::get_id(), outer);
        EXPECT_EQ(e - b, 100);  // inline: one chunk
        total += e - b;
      });
    }
  });
  EXPECT_EQ(total.load(), 800);
}

TEST(ThreadPool, ExceptionIsRethrownAfterAllChunksRan) {
  cpu::ThreadPool pool(2);
  std::atomic<int64_t> visited{0};
  try {
    pool.ParallelFor(64, 1, [&](int64_t begin, int64_t end) {
      visited += end - begin;
      if (begin == 0) throw std::runtime_error("chunk zero failed");
    });
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "chunk zero failed");
  }
  EXPECT_EQ(visited.load(), 64);
  // The pool stays usable.
  EXPECT_EQ(VisitCounts(pool, 50, 1), std::vector<int>(50, 1));
}

TEST(ThreadPool, InlineExceptionPropagates) {
  cpu::ThreadPool pool(1);
  EXPECT_THROW(pool.ParallelFor(5, 1, [](int64_t, int64_t) { throw std::logic_error("x"); }),
               std::logic_error);
}

TEST(ThreadPool, ManyConsecutiveJobs) {
  cpu::ThreadPool pool(2);
  int64_t sum = 0;
  for (int job = 0; job < 2000; ++job) {
    std::atomic<int64_t> job_sum{0};
    pool.ParallelFor(16, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) job_sum += i;
    });
    sum += job_sum;
  }
  EXPECT_EQ(sum, 2000 * 120);
}

TEST(ThreadPool, ConcurrentCallersAreSerialized) {
  cpu::ThreadPool pool(2);
  std::atomic<int64_t> a{0}, b{0};
  auto caller = [&](std::atomic<int64_t>& out) {
    for (int rep = 0; rep < 200; ++rep)
      pool.ParallelFor(10, 1, [&](int64_t begin, int64_t end) { out += end - begin; });
  };
  std::thread first(caller, std::ref(a)), second(caller, std::ref(b));
  first.join();
  second.join();
  EXPECT_EQ(a.load(), 2000);
  EXPECT_EQ(b.load(), 2000);
}

TEST(ThreadPool, CreateAndDestroyRepeatedly) {
  for (int i = 0; i < 50; ++i) {
    cpu::ThreadPool pool(3);
    if (i % 2 == 0) {
      EXPECT_EQ(VisitCounts(pool, 9, 1), std::vector<int>(9, 1));
    }
  }
}

}  // namespace

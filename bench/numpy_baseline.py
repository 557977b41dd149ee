#!/usr/bin/env python3
"""Baseline figures for docs/perf.md, measured on the same machine in the same run as the C++
benchmarks: numpy's f32 matmul (OpenBLAS) at 512x512x512 and numpy's array copy bandwidth.

    numpy_baseline.py OUT.json

Writes {"available": false, "reason": ...} instead when numpy is not installed, so that
scripts/bench.sh degrades gracefully. Thread count: whatever OPENBLAS_NUM_THREADS says (bench.sh
runs it once with 1 thread, the fair comparison for the single-threaded evaluator, and once with
the library default)."""
import json
import os
import statistics
import sys
import time


def median_seconds(fn, repeats):
    """(median CPU seconds, median wall seconds) per call. CPU time is the fair figure on a
    shared machine for one thread; with several BLAS threads it sums them, so use wall time."""
    fn()  # warm-up: page faults, thread pool start-up, library dispatch
    cpu, wall = [], []
    for _ in range(repeats):
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - cpu_start)
        wall.append(time.perf_counter() - wall_start)
    return statistics.median(cpu), statistics.median(wall)


def main():
    out_path = sys.argv[1]
    try:
        import numpy as np
    except ImportError as error:
        result = {"available": False, "reason": str(error)}
    else:
        n = 512
        rng = np.random.default_rng(1)
        a = rng.uniform(0.5, 1.5, (n, n)).astype(np.float32)
        b = rng.uniform(0.5, 1.5, (n, n)).astype(np.float32)
        matmul_cpu, matmul_wall = median_seconds(lambda: a @ b, 30)
        copy_bytes = 256 << 20
        src = np.ones(copy_bytes, dtype=np.uint8)
        dst = np.zeros(copy_bytes, dtype=np.uint8)
        copy_cpu, copy_wall = median_seconds(lambda: np.copyto(dst, src), 10)
        try:
            blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
            blas_name = f'{blas.get("name", "?")} {blas.get("version", "")}'.strip()
        except Exception:  # older numpy: no dict mode
            blas_name = "unknown"
        result = {
            "available": True,
            "numpy": np.__version__,
            "blas": blas_name,
            "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
            "matmul_f32_512": {"cpu_seconds": matmul_cpu, "wall_seconds": matmul_wall,
                               "gflops_cpu": 2 * n**3 / matmul_cpu / 1e9,
                               "gflops_wall": 2 * n**3 / matmul_wall / 1e9},
            "copy_256MiB": {"cpu_seconds": copy_cpu, "wall_seconds": copy_wall,
                            "bytes_per_second_cpu": copy_bytes / copy_cpu},
        }
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()

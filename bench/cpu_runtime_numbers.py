#!/usr/bin/env python3
"""Prints the "CPU runtime" tables of docs/perf.md from gemm_bench / bandwidth_bench JSON.

    cpu_runtime_numbers.py GEMM_BENCH.json BANDWIDTH_BENCH.json

Reads the individual repetitions (run with --benchmark_repetitions) and reports, per benchmark,
the median and the best repetition by wall time. On a shared machine the median says what a
user sees under that load; the best says what the code does when it gets the cores. Every ratio
relates figures of the same run. Standard library only."""
import json
import statistics
import sys


def repetitions(path):
    """run_name -> list of iteration rows, in file order (benchmarks sorted by name)."""
    with open(path) as f:
        doc = json.load(f)
    runs = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "iteration":
            runs.setdefault(b["run_name"].replace("/real_time", ""), []).append(b)
    return dict(sorted(runs.items()))


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def best(rows, key):
    return max(r[key] for r in rows)


def cpu_rate(rows):
    """GFLOP/s by CPU time of the benchmark thread: the whole cost of a 1-thread run."""
    return statistics.median(r["gflops"] * r["real_time"] / r["cpu_time"] for r in rows)


def main():
    gemm = repetitions(sys.argv[1])
    bandwidth = repetitions(sys.argv[2])
    reps = max((len(v) for v in gemm.values()), default=0)
    print(f"GEMM, f32, GFLOP/s by wall time: median / best of {reps} repetitions.\n")
    print("| m x n x k | threads | ours | OpenBLAS | ours / OpenBLAS (median, best) |"
          " Eigen Tensor | ours / Eigen (median) | 1 thread by CPU time: ours, OpenBLAS |")
    print("|---|---|---|---|---|---|---|---|")
    ours_rows = [n for n in gemm if n.startswith("BM_SgemmOurs/")]
    def size(name):
        m, n, k, threads = (int(x) for x in name.split("/")[1:5])
        return (threads, m * n * k)
    ours_rows.sort(key=size)
    for name in ours_rows:
        shape = name.split("/")[1:5]
        rows = gemm[name]
        blas = gemm.get("BM_SgemmOpenBlas/" + "/".join(shape))
        eigen = gemm.get("BM_SgemmEigenTensor/" + "/".join(shape))
        cells = [" x ".join(shape[:3]), shape[3],
                 f"{median(rows, 'gflops'):.1f} / {best(rows, 'gflops'):.1f}"]
        if blas:
            cells += [f"{median(blas, 'gflops'):.1f} / {best(blas, 'gflops'):.1f}",
                      f"{median(rows, 'gflops') / median(blas, 'gflops'):.2f}x, "
                      f"{best(rows, 'gflops') / best(blas, 'gflops'):.2f}x"]
        else:
            cells += ["-", "-"]
        if eigen:
            cells += [f"{median(eigen, 'gflops'):.1f} / {best(eigen, 'gflops'):.1f}",
                      f"{median(rows, 'gflops') / median(eigen, 'gflops'):.2f}x"]
        else:
            cells += ["-", "-"]
        # With two threads the benchmark thread's CPU time misses the worker: no CPU column.
        cells.append(f"{cpu_rate(rows):.1f}, {cpu_rate(blas):.1f}"
                     if blas and shape[3] == "1" else "-")
        print("| " + " | ".join(cells) + " |")

    print("\nOther GEMM and convolution benchmarks (GFLOP/s by wall time, median / best):\n")
    print("| benchmark | GFLOP/s | 1 thread by CPU time | label |")
    print("|---|---|---|---|")
    for name, rows in gemm.items():
        if name.startswith(("BM_SgemmOurs/", "BM_SgemmOpenBlas/", "BM_SgemmEigenTensor/")):
            continue
        one_thread = name.endswith("/1") or name.startswith(("BM_SgemmKernel", "BM_SgemmEigenM"))
        print(f"| {name} | {median(rows, 'gflops'):.1f} / {best(rows, 'gflops'):.1f} | "
              f"{cpu_rate(rows):.1f} | {rows[0].get('label', '')} |" if one_thread else
              f"| {name} | {median(rows, 'gflops'):.1f} / {best(rows, 'gflops'):.1f} | - | "
              f"{rows[0].get('label', '')} |")

    print("\nBandwidth, GB/s read + written by wall time (median / best):\n")
    print("| benchmark | threads | GB/s | vs memcpy (median) | 1 thread by CPU time |")
    print("|---|---|---|---|---|")
    for name, rows in bandwidth.items():
        # BM_<kind>/<threads>, or BM_StreamScale/<MiB>/<threads> (one pair of MiB-sized buffers)
        parts = [p for p in name.split("/") if p != "real_time"]
        kind, threads = parts[0], parts[-1]
        if len(parts) == 3:
            kind += f" ({parts[1]} MiB)"
        base = bandwidth.get(f"BM_Memcpy/{threads}")
        rate = median(rows, "bytes_per_second") / 1e9
        ratio = f"{rate / (median(base, 'bytes_per_second') / 1e9):.2f}x" if base else "-"
        by_cpu = statistics.median(r["bytes_per_second"] * r["real_time"] / r["cpu_time"]
                                   for r in rows) / 1e9
        print(f"| {kind} | {threads} | {rate:.2f} / {best(rows, 'bytes_per_second') / 1e9:.2f} |"
              f" {ratio} | {f'{by_cpu:.2f}' if threads == '1' else '-'} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Turns the JSON of one scripts/bench.sh run into the table of docs/perf.md.

    summarize.py BENCH_DIR

Reads parse_bench.json, interp_bench.json, compiler_bench.json (Google Benchmark) and
numpy_1thread.json /
numpy_default.json (numpy_baseline.py) from BENCH_DIR; writes BENCH_DIR/summary.json and prints a
Markdown table whose ratios relate each figure to a baseline measured in the same run (memcpy
bandwidth for parsing, OpenBLAS matmul for the evaluator), and checks the floors:
gemma3_1b_flax_call parse + verify < 0.5 s, ResNet-50 batch 1 on the interpreter < 30 s, and
on gemma3_1b each basic pass < 100 ms, buffer assignment < 200 ms, the CPU pipeline < 1 s.
Standard library only (runs without numpy)."""
import json
import os
import sys

UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
FLOORS_S = {
    "BM_ParseAndVerify/gemma3_1b_flax_call": 0.5,
    "BM_ResNet50Batch1/iterations:1": 30.0,
    "BM_BufferAssignmentOnGemma3": 0.2,
    "BM_CpuPipelineOnGemma3": 1.0,
}
FLOORS_S.update({"BM_BasicPassOnGemma3/" + name: 0.1 for name in (
    "call_inliner", "tuple_simplifier", "constant_folding", "cse", "dce",
    "while_loop_invariant_hoisting")})


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def runs_by_name(doc):
    if not doc:
        return {}
    return {b["name"]: b for b in doc.get("benchmarks", []) if b.get("run_type") != "aggregate"}


def seconds(run):
    """CPU time per iteration: what the single-threaded code costs on a shared machine."""
    return run["cpu_time"] * UNIT_SECONDS[run.get("time_unit", "ns")]


def wall_seconds(run):
    return run["real_time"] * UNIT_SECONDS[run.get("time_unit", "ns")]


def time_cell(run):
    cpu, wall = seconds(run), wall_seconds(run)
    if cpu >= 1:
        return f"{cpu:.2f} s CPU ({wall:.2f} s wall)"
    return f"{cpu * 1e3:.1f} ms CPU ({wall * 1e3:.1f} ms wall)"


def ratio(value, base):
    """value as a percentage of the baseline, e.g. "12%" (or "1.3x" above it)."""
    if not value or not base:
        return "n/a"
    r = value / base
    return f"{r:.2g}x" if r >= 1 else f"{100 * r:.2g}%"


def main():
    bench_dir = sys.argv[1]
    parse = runs_by_name(load(os.path.join(bench_dir, "parse_bench.json")))
    interp_doc = load(os.path.join(bench_dir, "interp_bench.json"))
    interp = runs_by_name(interp_doc)
    compiler = runs_by_name(load(os.path.join(bench_dir, "compiler_bench.json")))
    numpy1 = load(os.path.join(bench_dir, "numpy_1thread.json")) or {"available": False}
    numpyn = load(os.path.join(bench_dir, "numpy_default.json")) or {"available": False}

    memcpy = interp.get("BM_Memcpy/256", {}).get("bytes_per_second")
    # One BLAS thread: CPU time, like the single-threaded evaluator. Default threads: wall time.
    blas1 = numpy1["matmul_f32_512"]["gflops_cpu"] if numpy1.get("available") else None
    blasn = numpyn["matmul_f32_512"]["gflops_wall"] if numpyn.get("available") else None

    rows, summary = [], {"floors": {}, "baselines": {}, "results": {}}
    summary["baselines"] = {"memcpy_bytes_per_second": memcpy, "numpy_matmul_gflops_1thread": blas1,
                            "numpy_matmul_gflops_default_threads": blasn}

    def floor_cell(name, run):
        if name not in FLOORS_S:
            return ""
        if run.get("error_occurred"):
            summary["floors"][name] = "not run"
            return "not run"
        ok = seconds(run) < FLOORS_S[name]
        summary["floors"][name] = "PASS" if ok else "FAIL"
        return f'< {FLOORS_S[name]:g} s CPU: {"PASS" if ok else "FAIL"}'

    for name, run in parse.items():
        if run.get("error_occurred"):
            rows.append((name, "skipped: " + run.get("error_message", "")[:80], "", floor_cell(name, run)))
            continue
        mbps = run.get("bytes_per_second", 0) / 1e6
        minst = run.get("instructions_per_second", 0) / 1e6
        rows.append((name, f"{time_cell(run)}, {mbps:.1f} MB/s, {minst:.2f} M instr/s",
                     f"{ratio(run.get('bytes_per_second'), memcpy)} of memcpy",
                     floor_cell(name, run)))
        summary["results"][name] = {"cpu_seconds": seconds(run), "wall_seconds": wall_seconds(run),
                                    "MB_per_s": mbps, "Minstr_per_s": minst}
    for name, run in interp.items():
        if run.get("error_occurred"):
            rows.append((name, "skipped: " + run.get("error_message", "")[:80], "", floor_cell(name, run)))
            continue
        if "flop_rate" in run:
            gflops = run["flop_rate"] / 1e9
            # Against one BLAS thread only: the evaluator is single-threaded, and the
            # multi-threaded figure swings wildly when other processes share the cores.
            versus = f"{ratio(gflops, blas1)} of OpenBLAS (1 thread)" if blas1 else "no numpy baseline"
            rows.append((name, f"{time_cell(run)}, {gflops:.2f} GFLOP/s", versus, floor_cell(name, run)))
            summary["results"][name] = {"cpu_seconds": seconds(run), "wall_seconds": wall_seconds(run),
                                        "GFLOP_per_s": gflops}
        elif "bytes_per_second" in run:
            gbps = run["bytes_per_second"] / 1e9
            numpy_copy = numpy1["copy_256MiB"]["bytes_per_second_cpu"] if numpy1.get("available") else None
            versus = f"baseline; numpy copy reaches {ratio(numpy_copy, memcpy)} of it" if numpy_copy else "baseline"
            rows.append((name, f"{gbps:.2f} GB/s copied", versus, ""))
            summary["results"][name] = {"bytes_per_second": run["bytes_per_second"]}
    for name, run in compiler.items():
        if run.get("error_occurred"):
            rows.append((name, "skipped: " + run.get("error_message", "")[:80], "",
                         floor_cell(name, run)))
            continue
        rows.append((name, time_cell(run), "", floor_cell(name, run)))
        summary["results"][name] = {"cpu_seconds": seconds(run), "wall_seconds": wall_seconds(run)}
    if blas1:
        rows.append(("numpy matmul f32 512 (OpenBLAS, 1 thread)", f"{blas1:.2f} GFLOP/s", "baseline", ""))
    if blasn:
        rows.append(("numpy matmul f32 512 (OpenBLAS, default threads)", f"{blasn:.2f} GFLOP/s",
                     "wall time; for information only (sensitive to other load)", ""))
    if not numpy1.get("available"):
        rows.append(("numpy baseline", "not measured: " + numpy1.get("reason", "numpy missing"), "", ""))

    context = (interp_doc or {}).get("context", {})
    summary["machine"] = {k: context.get(k) for k in ("host_name", "num_cpus", "mhz_per_cpu", "load_avg", "date")}
    with open(os.path.join(bench_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)

    print(f"machine: {context.get('num_cpus')} CPUs at {context.get('mhz_per_cpu')} MHz, "
          f"load avg {context.get('load_avg')}, {context.get('date')}")
    print("| benchmark | result | ratio to baseline | floor |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    failed = [k for k, v in summary["floors"].items() if v == "FAIL"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

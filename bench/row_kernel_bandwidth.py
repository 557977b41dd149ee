#!/usr/bin/env python3
"""Memory-bound CPU kernels against a STREAM-like loop over the same bytes, in one run.

For each module (default: the f32 row softmax, log-softmax and layer norm of bench/models,
8192 x 1024), in alternating rounds:

  1. `retarget run FILE --target cpu --repeat N` prints the median time of a whole run (inputs
     read in place, the result written into the returned literal); the module's traffic is
     the bytes of its parameters plus its result, read or written once.
  2. `bandwidth_bench --benchmark_filter=^BM_StreamScale/<MiB>/<threads>/` runs STREAM's
     "scale" loop (y[i] = 3 x[i], compiled by g++ -O3, split over the same thread pool) over
     one input and one output of the module's result size: the same read/write mix (one
     stream in, one out) on buffers that, like the module's, are reused every iteration.

Both report bytes read + written per second; the table gives the medians over the rounds, the
ratio ours / STREAM (the floor is 0.9), and the spread of each side (max/min over rounds - 1).
Threads: every core this process may use, on both sides (the CLI's pool and BM_StreamScale's
second argument). --update-doc FILE replaces the text between `<!-- row-bandwidth:begin -->`
and `<!-- row-bandwidth:end -->` with the same output.

Usage (repository root, after `make build` and `ninja -C build bandwidth_bench`):
  python3 bench/row_kernel_bandwidth.py
  python3 bench/row_kernel_bandwidth.py --rounds 5 --modules bench/models/softmax_rows_f32.hlo
  python3 bench/row_kernel_bandwidth.py --update-doc docs/perf.md
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

from doc_markers import replace_marked

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODULES = [os.path.join(REPO, "bench", "models", name + ".hlo")
                   for name in ("softmax_rows_f32", "log_softmax_rows_f32", "layer_norm_rows_f32")]
STREAM_MIB = (8, 32, 64, 256)  # the sizes BM_StreamScale is registered with
DOC_BEGIN = "<!-- row-bandwidth:begin -->"
DOC_END = "<!-- row-bandwidth:end -->"
BYTES = {"f32": 4, "s32": 4, "u32": 4, "bf16": 2, "f16": 2, "f64": 8, "s64": 8, "u64": 8,
         "s8": 1, "u8": 1, "pred": 1}
ARRAY_RE = re.compile(r"\b(\w+)\[([\d,]*)\]")
TIME_RE = re.compile(r"time: median ([\d.]+) ms")


def array_bytes(text):
    """Bytes of every array type in `text` (e.g. a computation layout), with their sizes."""
    sizes = []
    for type_name, dims in ARRAY_RE.findall(text):
        if type_name not in BYTES:
            sys.exit("row_kernel_bandwidth: element type %s is not handled" % type_name)
        count = 1
        for dim in filter(None, dims.split(",")):
            count *= int(dim)
        sizes.append(count * BYTES[type_name])
    return sizes


def traffic(path):
    """(bytes the module reads + writes once, bytes of its result) from its entry layout."""
    with open(path) as f:
        header = f.readline()
    match = re.search(r"entry_computation_layout=\{\((.*)\)->(.*)\}", header)
    if not match:
        sys.exit("%s: no entry_computation_layout on its first line" % path)
    parameters, result = array_bytes(match.group(1)), array_bytes(match.group(2))
    return sum(parameters) + sum(result), sum(result)


def run_ours(retarget, path, repeat):
    command = [retarget, "run", path, "--target", "cpu", "--repeat", str(repeat)]
    output = subprocess.run(command, capture_output=True, text=True, check=True)
    timing = TIME_RE.search(output.stdout + output.stderr)
    if not timing:
        sys.exit("no 'time: median' line from: " + " ".join(command))
    return float(timing.group(1)) / 1e3


def run_stream(bench, mib, threads, repetitions):
    command = [bench, "--benchmark_filter=^BM_StreamScale/%d/%d/" % (mib, threads),
               "--benchmark_repetitions=%d" % repetitions, "--benchmark_min_time=0.2",
               "--benchmark_format=json"]
    report = json.loads(subprocess.run(command, capture_output=True, text=True,
                                       check=True).stdout)
    rates = [b["bytes_per_second"] for b in report["benchmarks"]
             if b.get("run_type") == "iteration"]
    if not rates:
        sys.exit("no BM_StreamScale/%d/%d result from %s" % (mib, threads, bench))
    return statistics.median(rates)


def spread(values):
    return "%.0f%%" % (100 * (max(values) / min(values) - 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--retarget", default=os.path.join(REPO, "build", "bin", "retarget"))
    parser.add_argument("--bandwidth-bench",
                        default=os.path.join(REPO, "build", "bin", "bandwidth_bench"))
    parser.add_argument("--modules", nargs="*", default=DEFAULT_MODULES)
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two sides")
    parser.add_argument("--repeat", type=int, default=100, help="our timed runs per round")
    parser.add_argument("--update-doc", help="replace the marked table in this markdown file")
    args = parser.parse_args()
    for binary in (args.retarget, args.bandwidth_bench):
        if not os.access(binary, os.X_OK):
            sys.exit("no executable %s: build it first" % binary)
    threads = len(os.sched_getaffinity(0))

    rows = []
    for path in args.modules:
        moved, result = traffic(path)
        mib = result // (1 << 20)
        if result % (1 << 20) or mib not in STREAM_MIB:
            sys.exit("%s: its result (%d bytes) is none of BM_StreamScale's sizes %s MiB"
                     % (path, result, STREAM_MIB))
        ours, stream = [], []
        for round_index in range(args.rounds):
            print("%s: round %d" % (os.path.basename(path), round_index + 1), file=sys.stderr)
            ours.append(moved / run_ours(args.retarget, path, args.repeat))
            stream.append(run_stream(args.bandwidth_bench, mib, threads, 3))
        ratio = statistics.median(ours) / statistics.median(stream)
        rows.append((os.path.splitext(os.path.basename(path))[0], moved, mib, ours, stream,
                     ratio))

    gb = 1e9
    lines = ["Measured %s UTC, %d threads on both sides, %d rounds (ours: median of %d runs "
             "per round; STREAM: median of 3 repetitions per round):"
             % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), threads, args.rounds,
                args.repeat), "",
             "| module | bytes read + written per run | ours GB/s (spread) | STREAM scale "
             "GB/s over the same size (spread) | ours / STREAM |",
             "|---|---|---|---|---|"]
    for name, moved, mib, ours, stream, ratio in rows:
        lines.append("| %s | %.1f MiB | %.1f (%s) | %.1f (%s, %d MiB in + out) | %.2fx |"
                     % (name, moved / (1 << 20), statistics.median(ours) / gb, spread(ours),
                        statistics.median(stream) / gb, spread(stream), mib, ratio))
    print("\n".join(lines))
    if args.update_doc:
        replace_marked(args.update_doc, DOC_BEGIN, DOC_END, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())

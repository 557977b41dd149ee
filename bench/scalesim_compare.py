#!/usr/bin/env python3
"""Dev-only: compare `retarget scalesim` with the installed SCALE-Sim (PyPI `scalesim`).

For each config x topology pair it runs SCALE-Sim and our compat mode, then compares the
COMPUTE_REPORT.csv columns that SCALE-Sim v2 reports (Total Cycles, Stall Cycles, Overall Util %,
Mapping Efficiency %, Compute Util %) layer by layer, and prints the wall time of both.

SCALE-Sim's inputs are read in place from ../shared/anchors/scalesim (never copied into the repo);
its outputs go to a temporary directory that is deleted afterwards (they are never committed).

SCALE-Sim 3.0.0 (the PyPI release) wants config keys that v2's configs lack (ReadRequestBuffer,
[layout], UseRamulatorTrace) and a layout file even when custom layouts are off, so this script
writes an augmented copy of each config to the temporary directory with those features switched
off, and skips the layout loading (with custom layouts off, SCALE-Sim never reads it).

usage: bench/scalesim_compare.py [--retarget build/bin/retarget] [--pairs scale:NCF,...] [--all]
"""
import argparse
import configparser
import contextlib
import csv
import io
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHORS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "anchors", "scalesim"))
GEMM_TOPOLOGIES = {"NCF", "transformer_partial", "gnmt", "gpt2"}
# SCALE-Sim simulates about 5-10 thousand cycles per second, so the default pairs are those of
# under ~1 M cycles (minutes in all). --all adds the slow ones: Resnet18 on 32x32 os (the issue's
# speed benchmark, ~4 minutes), eyeriss x transformer_partial (~6 M cycles). 32x32 gnmt
# (~190 M cycles) would take hours and is left out.
DEFAULT_PAIRS = ["scale:NCF", "scale:transformer_partial", "google:NCF",
                 "google:transformer_partial", "google:alexnet", "scale:alexnet"]
ALL_EXTRA = ["scale:Resnet18", "eyeriss:transformer_partial"]
COLUMNS = ["Total Cycles", "Stall Cycles", "Overall Util %", "Mapping Efficiency %",
           "Compute Util %"]


def augmented_config(src, dst):
    cfg = configparser.ConfigParser()
    cfg.read(src)
    arch = cfg["architecture_presets"]
    arch.setdefault("ReadRequestBuffer", "32")
    arch.setdefault("WriteRequestBuffer", "32")
    if not cfg.has_section("layout"):
        cfg.add_section("layout")
    for key, value in [("IfmapCustomLayout", "False"), ("FilterCustomLayout", "False"),
                       ("IfmapSRAMBankBandwidth", "10"), ("IfmapSRAMBankNum", "10"),
                       ("IfmapSRAMBankPort", "2"), ("FilterSRAMBankBandwidth", "10"),
                       ("FilterSRAMBankNum", "10"), ("FilterSRAMBankPort", "2")]:
        cfg["layout"].setdefault(key, value)
    cfg["run_presets"].setdefault("UseRamulatorTrace", "False")
    if not cfg.has_section("sparsity"):
        cfg.add_section("sparsity")
    cfg["sparsity"].setdefault("SparsitySupport", "false")
    cfg["sparsity"].setdefault("SparseRep", "ellpack_block")
    cfg["sparsity"].setdefault("OptimizedMapping", "false")
    cfg["sparsity"].setdefault("BlockSize", "8")
    cfg["sparsity"].setdefault("RandomNumberGeneratorSeed", "40")
    with open(dst, "w") as f:
        cfg.write(f)


def run_scalesim(cfg, topo, gemm, outdir):
    from scalesim.layout_utils import layouts
    from scalesim.scale_sim import scalesim
    layouts.load_arrays = lambda self, layoutfile="", mnk_inputs=False: None
    # SCALE-Sim calls int(max(list of one-element arrays)), which numpy >= 2.x refuses; give that
    # module a max() that unwraps a one-element array result (the value is unchanged).
    import builtins
    import numpy
    from scalesim.memory import double_buffered_scratchpad_mem

    def unwrapping_max(*args, **kwargs):
        result = builtins.max(*args, **kwargs)
        if isinstance(result, numpy.ndarray) and result.size == 1:
            return result.reshape(-1)[0]
        return result
    double_buffered_scratchpad_mem.max = unwrapping_max
    with contextlib.redirect_stdout(io.StringIO()):
        sim = scalesim(save_disk_space=True, verbose=False, config=cfg, topology=topo,
                       input_type_gemm=gemm)
        sim.run_scale(top_path=outdir)
    for root, _, files in os.walk(outdir):
        if "COMPUTE_REPORT.csv" in files:
            return os.path.join(root, "COMPUTE_REPORT.csv")
    raise RuntimeError("SCALE-Sim wrote no COMPUTE_REPORT.csv")


def read_report(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    return [{h: cell.strip() for h, cell in zip(header, row) if h} for row in rows[1:] if row]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--retarget", default=os.path.join(HERE, "..", "build", "bin", "retarget"))
    ap.add_argument("--pairs", default=",".join(DEFAULT_PAIRS))
    ap.add_argument("--all", action="store_true", help="also the slow topologies (Resnet18)")
    ap.add_argument("--anchors", default=ANCHORS)
    args = ap.parse_args()
    pairs = args.pairs.split(",") + (ALL_EXTRA if args.all else [])
    all_match = True
    print(f"{'config:topology':32} {'layers':>6} {'cycles':>8} {'all cols':>8} "
          f"{'scalesim s':>10} {'retarget s':>10} {'speedup':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for pair in pairs:
            cfg_name, topo_name = pair.split(":")
            cfg_src = os.path.join(args.anchors, "configs", cfg_name + ".cfg")
            topo = os.path.join(args.anchors, "topologies", topo_name + ".csv")
            gemm = topo_name in GEMM_TOPOLOGIES
            work = os.path.join(tmp, pair.replace(":", "_"))
            os.makedirs(work)
            cfg = os.path.join(work, cfg_name + ".cfg")
            augmented_config(cfg_src, cfg)
            t0 = time.perf_counter()
            theirs = read_report(run_scalesim(cfg, topo, gemm, os.path.join(work, "scalesim")))
            t_scalesim = time.perf_counter() - t0
            ours_dir = os.path.join(work, "retarget")
            cmd = [args.retarget, "scalesim", "--config", cfg_src, "--topology", topo,
                   "-o", ours_dir] + (["--gemm"] if gemm else [])
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            t_ours = time.perf_counter() - t0
            ours = read_report(os.path.join(ours_dir, "COMPUTE_REPORT.csv"))
            cycles_ok = len(ours) == len(theirs) and all(
                a["Total Cycles"] == b["Total Cycles"] for a, b in zip(ours, theirs))
            cols_ok = len(ours) == len(theirs) and all(
                float(a[c]) == float(b[c]) for a, b in zip(ours, theirs) for c in COLUMNS)
            if not cycles_ok:
                for i, (a, b) in enumerate(zip(ours, theirs)):
                    if a["Total Cycles"] != b["Total Cycles"]:
                        print(f"  layer {i}: ours {a['Total Cycles']} scalesim {b['Total Cycles']}")
            all_match &= cycles_ok and cols_ok
            print(f"{pair:32} {len(theirs):>6} {'exact' if cycles_ok else 'DIFF':>8} "
                  f"{'exact' if cols_ok else 'DIFF':>8} {t_scalesim:>10.2f} {t_ours:>10.4f} "
                  f"{t_scalesim / max(t_ours, 1e-9):>8.0f}x", flush=True)
    return 0 if all_match else 1


if __name__ == "__main__":
    sys.exit(main())

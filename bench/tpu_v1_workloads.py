#!/usr/bin/env python3
"""Writes int8 HLO modules shaped like the six production workloads of the TPU v1 paper
(N. P. Jouppi et al., "In-Datacenter Performance Analysis of a Tensor Processing Unit",
ISCA 2017, Table 1) and, with --run, simulates them on the `tpu-v1` preset and prints the
validation table of docs/validation.md.

Guarantees: every module is plain HLO text that the retarget parser accepts; every matmul is
s8 x s8 -> s32 (the TPU v1 datapath), followed by int8 requantization in one of four idioms
(below) with ReLU, as int8 inference does. The weight count, batch and MACs per weight byte of each module are
computed here from the shapes (not from the simulator) and written to manifest.json, so the
roofline is independent of what the simulator measures.

What the paper states (Table 1) and what is chosen here ("slice" = what is simulated; TOPS is a
rate, so a representative slice of a workload measures the same bound):
  MLP0  5 FC layers, 20M weights, batch 200, 200 ops/weight byte.
        Chosen: 5 layers of 2048 x 2048 (21.0M weights). Slice: all 5 layers.
  MLP1  4 FC layers, 5M weights, batch 168, 168 ops/weight byte.
        Chosen: 1024->1280->1280->1024->1024 (5.2M weights). Slice: all 4 layers.
  LSTM0 58 layers (24 FC, 34 vector), 52M weights, batch 64, 64 ops/weight byte.
        Chosen: 6 stacked LSTM cells, input = hidden = 1024, gates as 8 separate 1024 x 1024
        dots per cell (50.3M weights). Slice: 2 cells x 2 timesteps (weights re-read from DRAM
        each timestep, as on the TPU, where 52M weights do not fit on chip).
  LSTM1 56 layers (37 FC, 19 vector), 34M weights, batch 96, 96 ops/weight byte.
        Chosen: 4 cells of hidden 1024 (33.6M weights). Slice: 2 cells x 2 timesteps.
  CNN0  16 conv layers, 8M weights, batch 8, 2888 ops/weight byte (= 8 x 19 x 19: a 19 x 19
        board, so every weight is used once per output pixel of each of the 8 images).
        Chosen: 16 3x3 convs, 256 -> 256 channels, 19 x 19, SAME padding (9.4M weights).
        Simulated whole (all 16 layers).
  CNN1  89 layers (72 conv, 13 FC, 4 pool), 100M weights, batch 32, 1750 ops/weight byte.
        The paper gives no shapes. Chosen slice: two 3x3 convs with shallow feature depth
        (64 -> 64 channels, 28 x 28) and one 1024 x 1024 FC layer at batch 32: shallow depths
        and FC layers are what hold CNN1 back in the paper, and this mix gives 1678 MACs per
        weight byte, within 5 % of the paper's 1750.
The paper's "ops/weight byte" counts one multiply-add per weight use (its roofline ridge is
92 TOPS / 34 GB/s / 2 = 1350), so the roofline here is
  min(peak, 2 x MACs-per-weight-byte x 34 GB/s).

Requantization idioms (--idiom; each is how some framework spells int8 inference, and the
figure should depend on the hardware, not on the spelling):
  scale     convert to f32, multiply by the scale, round-nearest-even, clamp, convert (default)
  aqt       AQT / JAX: dequantize by one f32 scale, ReLU in float, multiply by the next layer's
            inverse scale, round-nearest-even, clamp to [-127, 127], convert
  gemmlowp  TFLite / gemmlowp fixed point with single rounding, in s64:
            ((s64(acc) * M + 2^(n-1)) >> n) + zero point, clamp, convert
  shift     integer ReLU (maximum with 0), shift-right-arithmetic, clamp, convert
LSTM gates are float whatever the idiom; only their s8 state h is quantized (by scale).

Usage:
  tpu_v1_workloads.py OUT_DIR                     write the modules and manifest.json
  tpu_v1_workloads.py OUT_DIR --run RETARGET      also run each on tpu-v1, print the table
  options: --idiom scale|aqt|gemmlowp|shift, --only mlp0,cnn0
"""
import argparse
import json
import os
import subprocess
import sys

PEAK_TOPS = 2 * 256 * 256 * 700e6 / 1e12  # 91.75: the preset's 256 x 256 MACs at 700 MHz
WEIGHT_BANDWIDTH = 34e9  # bytes/s, the TPU v1 DDR3 weight memory

# The paper's measured rates (TOPS), Table 3 / Figure 5 of the ISCA 2017 paper.
PAPER_TOPS = {"mlp0": 12.3, "mlp1": 9.7, "lstm0": 3.7, "lstm1": 2.8, "cnn0": 86.0, "cnn1": 14.1}
# The paper's operational intensity (MACs per weight byte), Table 1.
PAPER_INTENSITY = {"mlp0": 200, "mlp1": 168, "lstm0": 64, "lstm1": 96, "cnn0": 2888,
                   "cnn1": 1750}

IDIOMS = ("scale", "aqt", "gemmlowp", "shift")
REQUANT_SCALE = 1.0 / 1024  # random:SEED draws s8 inputs in [0, 16): keeps values in range


class Module:
    """Accumulates HLO instructions of one entry computation and the MAC / weight counts."""

    def __init__(self, name, idiom):
        self.name = name
        self.idiom = idiom
        self.lines = []
        self.params = 0
        self.counter = 0
        self.macs = 0
        self.weight_bytes = 0

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def emit(self, stem, shape, text):
        name = self.fresh(stem)
        self.lines.append(f"  {name} = {shape} {text}")
        return name

    def parameter(self, shape, is_weight=False):
        name = self.emit("p", shape, f"parameter({self.params})")
        self.params += 1
        if is_weight:
            count = 1
            for dim in shape[shape.index("[") + 1:-1].split(","):
                count *= int(dim)
            self.weight_bytes += count  # s8: one byte per weight
        return name

    def scalar(self, dtype, value):
        return self.emit("k", f"{dtype}[]", f"constant({value})")

    def full(self, dtype, dims, value):
        dims_text = ",".join(str(d) for d in dims)
        return self.emit("b", f"{dtype}[{dims_text}]",
                         f"broadcast({self.scalar(dtype, value)}), dimensions={{}}")

    def requantize(self, acc, dims, relu):
        """s32 accumulator -> s8 in this module's idiom (IDIOMS), ReLU folded in."""
        return getattr(self, "requantize_" + self.idiom)(acc, dims, relu)

    def requantize_scale(self, acc, dims, relu):
        """Float scale, round half to even, clamp ([0,127] with ReLU), convert."""
        d = ",".join(str(x) for x in dims)
        as_float = self.emit("f", f"f32[{d}]", f"convert({acc})")
        scaled = self.emit("m", f"f32[{d}]",
                           f"multiply({as_float}, {self.full('f32', dims, REQUANT_SCALE)})")
        rounded = self.emit("r", f"f32[{d}]", f"round-nearest-even({scaled})")
        low = self.scalar("f32", 0 if relu else -128)
        high = self.scalar("f32", 127)
        clamped = self.emit("c", f"f32[{d}]", f"clamp({low}, {rounded}, {high})")
        return self.emit("q", f"s8[{d}]", f"convert({clamped})")

    def requantize_aqt(self, acc, dims, relu):
        """AQT / JAX: dequantize (f32 times the product of the operands' scales), ReLU in
        float, quantize for the next layer (times its inverse scale, round, clamp to the
        symmetric [-127, 127], convert)."""
        d = ",".join(str(x) for x in dims)
        as_float = self.emit("f", f"f32[{d}]", f"convert({acc})")
        dequantized = self.emit("m", f"f32[{d}]",
                                f"multiply({as_float}, {self.full('f32', dims, 1 / 64)})")
        if relu:
            dequantized = self.emit("a", f"f32[{d}]",
                                    f"maximum({dequantized}, {self.full('f32', dims, 0)})")
        scaled = self.emit("m", f"f32[{d}]",
                           f"multiply({dequantized}, {self.full('f32', dims, 64 * REQUANT_SCALE)})")
        rounded = self.emit("r", f"f32[{d}]", f"round-nearest-even({scaled})")
        clamped = self.emit("c", f"f32[{d}]", f"clamp({self.scalar('f32', -127)}, {rounded}, "
                                              f"{self.scalar('f32', 127)})")
        return self.emit("q", f"s8[{d}]", f"convert({clamped})")

    def requantize_gemmlowp(self, acc, dims, relu):
        """TFLite / gemmlowp fixed point (single rounding): ((s64(acc) * M + 2^(n-1)) >> n)
        + zero point, clamp, convert; M / 2^n = REQUANT_SCALE, M in [2^30, 2^31)."""
        d = ",".join(str(x) for x in dims)
        multiplier, shift = 1 << 30, 40  # 2^30 / 2^40 = 1/1024
        wide = self.emit("w", f"s64[{d}]", f"convert({acc})")
        product = self.emit("m", f"s64[{d}]",
                            f"multiply({wide}, {self.full('s64', dims, multiplier)})")
        nudged = self.emit("a", f"s64[{d}]",
                           f"add({product}, {self.full('s64', dims, 1 << (shift - 1))})")
        shifted = self.emit("s", f"s64[{d}]",
                            f"shift-right-arithmetic({nudged}, {self.full('s64', dims, shift)})")
        narrow = self.emit("n", f"s32[{d}]", f"convert({shifted})")
        zero_point = 0
        offset = self.emit("z", f"s32[{d}]",
                           f"add({narrow}, {self.full('s32', dims, zero_point)})")
        low = self.scalar("s32", zero_point if relu else -128)
        clamped = self.emit("c", f"s32[{d}]", f"clamp({low}, {offset}, {self.scalar('s32', 127)})")
        return self.emit("q", f"s8[{d}]", f"convert({clamped})")

    def requantize_shift(self, acc, dims, relu):
        """Integer ReLU, arithmetic shift right by log2(1 / REQUANT_SCALE), clamp, convert."""
        d = ",".join(str(x) for x in dims)
        if relu:
            acc = self.emit("a", f"s32[{d}]", f"maximum({acc}, {self.full('s32', dims, 0)})")
        shifted = self.emit("s", f"s32[{d}]",
                            f"shift-right-arithmetic({acc}, {self.full('s32', dims, 10)})")
        low = self.scalar("s32", 0 if relu else -128)
        clamped = self.emit("c", f"s32[{d}]",
                            f"clamp({low}, {shifted}, {self.scalar('s32', 127)})")
        return self.emit("q", f"s8[{d}]", f"convert({clamped})")

    def fc(self, x, batch, k, n):
        """s8[batch,k] x s8[k,n] -> s32[batch,n] with a fresh weight parameter."""
        w = self.parameter(f"s8[{k},{n}]", is_weight=True)
        return self.fc_with(x, w, batch, k, n)

    def fc_with(self, x, w, batch, k, n):
        self.macs += batch * k * n
        return self.emit("d", f"s32[{batch},{n}]",
                         f"dot({x}, {w}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")

    def conv3x3(self, x, batch, size, cin, cout):
        """NHWC s8 3x3 SAME convolution -> s32, fresh HWIO weights."""
        w = self.parameter(f"s8[3,3,{cin},{cout}]", is_weight=True)
        self.macs += batch * size * size * 9 * cin * cout
        return self.emit("v", f"s32[{batch},{size},{size},{cout}]",
                         f"convolution({x}, {w}), window={{size=3x3 pad=1_1x1_1}}, "
                         f"dim_labels=b01f_01io->b01f")

    def text(self, root):
        body = "\n".join(self.lines)
        return f"HloModule {self.name}\n\nENTRY main {{\n{body}\n  ROOT {root}\n}}\n"


def mlp(name, batch, widths, idiom):
    mod = Module(name, idiom)
    x = mod.parameter(f"s8[{batch},{widths[0]}]")
    for k, n in zip(widths, widths[1:]):
        x = mod.requantize(mod.fc(x, batch, k, n), [batch, n], relu=True)
    return mod, mod.text(f"out = s8[{batch},{widths[-1]}] copy({x})")


def lstm(name, batch, hidden, cells, steps, idiom):
    """Stacked LSTM cells; sigmoid(x) = 0.5 tanh(x/2) + 0.5 so the vector unit's vtanh does it.
    The gates are float, so the idiom does not apply: h is always quantized by scale."""
    mod = Module(name, idiom)
    dims = [batch, hidden]
    shape_f = f"f32[{batch},{hidden}]"
    # Per cell: 4 gates x (input weights, recurrent weights), each hidden x hidden.
    weights = [[(mod.parameter(f"s8[{hidden},{hidden}]", True),
                 mod.parameter(f"s8[{hidden},{hidden}]", True)) for _ in range(4)]
               for _ in range(cells)]
    h = [mod.parameter(f"s8[{batch},{hidden}]") for _ in range(cells)]
    c = [mod.parameter(shape_f) for _ in range(cells)]
    # One input per timestep (a shared one would let the optimizer merge the steps' dots).
    xs = [mod.parameter(f"s8[{batch},{hidden}]") for _ in range(steps)]

    def gate_preactivation(inp, rec, w_in, w_rec):
        summed = mod.emit("a", f"s32[{batch},{hidden}]",
                          f"add({mod.fc_with(inp, w_in, batch, hidden, hidden)}, "
                          f"{mod.fc_with(rec, w_rec, batch, hidden, hidden)})")
        as_float = mod.emit("f", shape_f, f"convert({summed})")
        return mod.emit("m", shape_f,
                        f"multiply({as_float}, {mod.full('f32', dims, REQUANT_SCALE / 16)})")

    def sigmoid(v):
        half = mod.full("f32", dims, 0.5)
        t = mod.emit("t", shape_f, f"tanh({mod.emit('m', shape_f, f'multiply({v}, {half})')})")
        return mod.emit("s", shape_f, f"add({mod.emit('m', shape_f, f'multiply({t}, {half})')}, "
                                      f"{half})")

    for x in xs:
        inp = x
        for layer in range(cells):
            pre = [gate_preactivation(inp, h[layer], *weights[layer][g]) for g in range(4)]
            i_gate, f_gate, o_gate = (sigmoid(p) for p in pre[:3])
            candidate = mod.emit("t", shape_f, f"tanh({pre[3]})")
            keep = mod.emit("m", shape_f, f"multiply({f_gate}, {c[layer]})")
            write = mod.emit("m", shape_f, f"multiply({i_gate}, {candidate})")
            c[layer] = mod.emit("c", shape_f, f"add({keep}, {write})")
            h_float = mod.emit("m", shape_f,
                               f"multiply({o_gate}, {mod.emit('t', shape_f, f'tanh({c[layer]})')})")
            # h in [-1, 1] -> s8 in [-127, 127]
            scaled = mod.emit("m", shape_f, f"multiply({h_float}, {mod.full('f32', dims, 127)})")
            rounded = mod.emit("r", shape_f, f"round-nearest-even({scaled})")
            clamped = mod.emit("c", shape_f, f"clamp({mod.scalar('f32', -127)}, {rounded}, "
                                             f"{mod.scalar('f32', 127)})")
            h[layer] = mod.emit("q", f"s8[{batch},{hidden}]", f"convert({clamped})")
            inp = h[layer]
    # The paper's intensity counts weight bytes fetched: each timestep fetches every weight again.
    mod.weight_bytes *= steps
    outputs = h + c
    shapes = [f"s8[{batch},{hidden}]"] * cells + [shape_f] * cells
    return mod, mod.text(f"out = ({', '.join(shapes)}) tuple({', '.join(outputs)})")


def cnn0(layers, idiom):
    batch, size, channels = 8, 19, 256
    mod = Module("cnn0", idiom)
    x = mod.parameter(f"s8[{batch},{size},{size},{channels}]")
    for _ in range(layers):
        x = mod.requantize(mod.conv3x3(x, batch, size, channels, channels),
                           [batch, size, size, channels], relu=True)
    return mod, mod.text(f"out = s8[{batch},{size},{size},{channels}] copy({x})")


def cnn1(idiom):
    batch, size, channels, fc_width = 32, 28, 64, 1024
    mod = Module("cnn1", idiom)
    x = mod.parameter(f"s8[{batch},{size},{size},{channels}]")
    for _ in range(2):
        x = mod.requantize(mod.conv3x3(x, batch, size, channels, channels),
                           [batch, size, size, channels], relu=True)
    features = mod.parameter(f"s8[{batch},{fc_width}]")  # the FC part of the network
    y = mod.requantize(mod.fc(features, batch, fc_width, fc_width), [batch, fc_width], relu=True)
    conv_shape = f"s8[{batch},{size},{size},{channels}]"
    return mod, mod.text(f"out = ({conv_shape}, s8[{batch},{fc_width}]) tuple({x}, {y})")


def workloads(idiom):
    yield mlp("mlp0", 200, [2048] * 6, idiom)
    yield mlp("mlp1", 168, [1024, 1280, 1280, 1024, 1024], idiom)
    yield lstm("lstm0", 64, 1024, 2, 2, idiom)
    yield lstm("lstm1", 96, 1024, 2, 2, idiom)
    yield cnn0(16, idiom)
    yield cnn1(idiom)


def roofline_tops(macs, weight_bytes_read):
    return min(PEAK_TOPS, 2 * macs / weight_bytes_read * WEIGHT_BANDWIDTH / 1e12)


def simulate(retarget, hlo, stats_path, extra_sets):
    command = [retarget, "run", hlo, "--target", "systolic", "--config", "tpu-v1",
               "--inputs", "random:0", "--stats-json", stats_path, "--force"]
    for setting in extra_sets:
        command += ["--set", setting]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(stats_path) as f:
        return json.load(f)["counters"]


def run(out_dir, retarget, manifest):
    """Simulates each module three times: on tpu-v1 as is; with an unlimited, zero-latency DRAM
    (what is left is array, vector-unit and synchronization time); and with two accumulator
    banks (acc.banks=2: the array's read-modify-write of one 256-wide row per cycle and nothing
    left for the activation pipeline while it accumulates; the preset has three, for the
    paper's double-buffered accumulators read out at peak). Rates use the workload's
    useful MACs (counted here from the shapes), not the simulator's executed MACs, which also
    count the padding columns a convolution streams through the array."""
    print("| workload | MACs/weight byte paper / ours | roofline TOPS | paper TOPS | ours TOPS "
          "| ours / paper | ours / roofline | MAC util. | DRAM MB read + written "
          "| DRAM-traffic bound TOPS | unlimited-DRAM TOPS | 2-acc-bank TOPS | host share |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for entry in manifest:
        name = entry["name"]
        hlo = os.path.join(out_dir, f"{name}.hlo")
        base = simulate(retarget, hlo, os.path.join(out_dir, f"{name}.stats.json"), [])
        free = simulate(retarget, hlo, os.path.join(out_dir, f"{name}.free_dram.json"),
                        ["dram.bandwidth_gbps=100000", "dram.latency_ns=0"])
        banks = simulate(retarget, hlo, os.path.join(out_dir, f"{name}.acc_banks.json"),
                         ["acc.banks=2"])
        ops = 2 * entry["macs"]
        ours = ops / base["seconds"] / 1e12
        traffic = base["dram_bytes_read"] + base["dram_bytes_written"]
        traffic_bound = min(PEAK_TOPS, ops / traffic * WEIGHT_BANDWIDTH / 1e12)
        paper = PAPER_TOPS[name]
        print(f"| {name} | {PAPER_INTENSITY[name]} / {entry['macs_per_weight_byte']:.0f} "
              f"| {entry['roofline_tops']:.1f} | {paper} | {ours:.2f} | {ours / paper:.2f} "
              f"| {ours / entry['roofline_tops']:.2f} | {base['mac_utilization']:.3f} "
              f"| {base['dram_bytes_read'] / 1e6:.1f} + {base['dram_bytes_written'] / 1e6:.1f} "
              f"| {traffic_bound:.1f} | {ops / free['seconds'] / 1e12:.1f} "
              f"| {ops / banks['seconds'] / 1e12:.1f} | {base['host_fallback_share']:.3f} |")


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", help="where the modules and manifest.json are written")
    parser.add_argument("--run", metavar="RETARGET", help="simulate each on tpu-v1 with this binary")
    parser.add_argument("--idiom", choices=IDIOMS, default="scale",
                        help="how each layer requantizes its s32 result to s8 (default: scale)")
    parser.add_argument("--only", metavar="NAMES",
                        help="comma-separated workloads to write and run (default: all six)")
    args = parser.parse_args(argv[1:])
    only = set(args.only.split(",")) if args.only else set(PAPER_TOPS)
    unknown = only - set(PAPER_TOPS)
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(sorted(unknown))} "
                     f"(known: {', '.join(PAPER_TOPS)})")
    os.makedirs(args.out_dir, exist_ok=True)
    manifest = []
    for mod, text in workloads(args.idiom):
        if mod.name not in only:
            continue
        with open(os.path.join(args.out_dir, f"{mod.name}.hlo"), "w") as f:
            f.write(text)
        intensity = mod.macs / mod.weight_bytes
        manifest.append({"name": mod.name, "idiom": args.idiom, "macs": mod.macs,
                         "weight_bytes": mod.weight_bytes, "macs_per_weight_byte": intensity,
                         "roofline_tops": roofline_tops(mod.macs, mod.weight_bytes),
                         "paper_tops": PAPER_TOPS[mod.name]})
    with open(os.path.join(args.out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if args.run:
        run(args.out_dir, args.run, manifest)
    else:
        for entry in manifest:
            print(entry["name"], entry["macs"], entry["weight_bytes"])


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""Random HLO modules for differential testing (fuzz/fuzz_diff.py runs them on every target).

    fuzz/random_hlo.py SEED [--ops N] [--dims D,D,...] [-o FILE.hlo]

A seed reproduces a program: the same SEED, --ops and --dims always give the same text. Every
program is meant to be verifier-clean (`retarget verify` accepts it; a rejection is a generator
bug or a verifier bug, and the differential runner reports it as such).

What the programs contain (docs/testing.md lists it too):
  - element types f32, bf16, f16, f64, s8, s32, pred (converts between all of them), and
    excursions into c64 and c128 (complex, real, imag, abs, arithmetic, row sums and dots),
    every 8- and 4-bit float XLA prints and the 4-bit integers s4 and u4 (converts in,
    elementwise arithmetic, converts out; these values are outputs too, but no other op draws
    them as operands), in a third of the programs;
  - elementwise unary and binary ops, compare, select, clamp, integer shifts, integer divide and
    remainder (including by zero, which XLA defines), bitwise ops;
  - broadcast, reshape, transpose, slice (strided), concatenate, pad (negative and interior),
    reverse, dynamic-slice, dynamic-update-slice;
  - reduce over the last dimension, the first, or all (add, maximum, minimum);
  - dot (matrix, batched, and int8 x int8 -> s32), 2-D convolution (NHWC), row gather and
    scatter-add (the embedding forms);
  - while loops with a counter and a carried array, conditionals (pred and index forms);
  - chains of elementwise ops that fusion merges; every value no other instruction uses is an
    output, so roots are tuples of several arrays and nothing generated is dead.

Floating-point values stay well conditioned on purpose: sums (reduce-add, dot, convolution,
scatter-add) run over non-negative values and accumulate in f32 (f16 and bf16 operands are
converted, or the dot has an f32 result, as JAX writes them: the order of a sum is the backend's
choice, and in 8 or 11 bits two orders differ by more than any useful tolerance), exp, log, sqrt,
divide, sine and cosine get guarded operands,
so that every difference from the interpreter beyond the documented tolerance is a real
disagreement rather than cancellation of random rounding errors.

Shapes come from a small pool of dimension sizes (--dims, or drawn from the seed: tiny to a few
MB per array); the shrinker in fuzz_diff.py re-generates a failing seed with a smaller pool.
"""
import argparse
import random
import sys

FLOAT_TYPES = ["f32", "bf16", "f16", "f64"]
INT_TYPES = ["s32", "s8"]
ALL_TYPES = FLOAT_TYPES + INT_TYPES + ["pred"]
BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "s32": 4, "s8": 1, "pred": 1, "c64": 8,
         "c128": 16}
# Every 8- and 4-bit float XLA prints (the generator calls them all FLOAT8).
FLOAT8_TYPES = ["f8e4m3fn", "f8e5m2", "f8e4m3", "f8e3m4", "f8e4m3fnuz", "f8e5m2fnuz",
                "f8e4m3b11fnuz", "f8e8m0fnu", "f4e2m1fn"]
INT4_TYPES = ["s4", "u4"]
MAX_ARRAY_BYTES = 4 << 20  # a few MB per array at most

FLOAT_UNARY = ["negate", "abs", "tanh", "floor", "ceil", "sign", "logistic",
               "round-nearest-even"]
INT_UNARY = ["negate", "abs", "not"]
FLOAT_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "atan2"]
INT_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor", "divide",
              "remainder", "shift-left", "shift-right-arithmetic", "shift-right-logical"]
PRED_BINARY = ["and", "or", "xor"]
DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]


def shape_text(ty, dims):
    return "%s[%s]" % (ty, ",".join(str(d) for d in dims))


def elements(dims):
    n = 1
    for d in dims:
        n *= d
    return n


class Value:
    def __init__(self, name, ty, dims):
        self.name, self.ty, self.dims = name, ty, list(dims)
        self.uses = 0

    def ref(self):
        self.uses += 1
        return self.name


class Generator:
    def __init__(self, seed, ops, dims_pool=None):
        self.rng = random.Random(seed)
        self.seed = seed
        self.ops = ops
        # Drawn even when given, so that a given pool leaves every later draw as it was.
        size_class = self.rng.choice([4, 16, 16, 64, 64, 256, 1024])
        drawn = sorted({self.rng.randint(1, size_class) for _ in range(4)} | {1})
        self.dims_pool = list(dims_pool) if dims_pool else drawn
        self.entry = []        # lines of the ENTRY computation
        self.computations = {}  # name -> text of helper computations, in creation order
        self.values = []
        self.parameters = []
        self.narrow_outputs = []  # c64, 8-bit float and 4-bit integer values: outputs only
        self.counter = 0
        self.main_type = self.rng.choice(["f32", "f32", "f32", "bf16", "f16", "s32", "s8",
                                          "f64"])
        # Excursions into c64, 8-bit floats and 4-bit integers in a third of the programs only:
        # the GPU backend refuses those types, and a refused program tests nothing else there.
        self.excursions = self.rng.random() < 1 / 3

    # ---- naming and emission ----
    def fresh(self, prefix="v"):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def emit(self, ty, dims, text, keep=True):
        value = Value(self.fresh(), ty, dims)
        self.entry.append("  %s = %s %s" % (value.name, shape_text(ty, dims), text))
        if keep:
            self.values.append(value)
        return value

    def parameter(self, ty, dims):
        value = Value(self.fresh("p"), ty, dims)
        self.entry.append("  %s = %s parameter(%d)" % (value.name, shape_text(ty, dims),
                                                        len(self.parameters)))
        self.parameters.append(value)
        self.values.append(value)
        return value

    def constant(self, ty, number):
        literal = {"pred": "true" if number else "false"}.get(ty, str(number))
        return self.emit(ty, [], "constant(%s)" % literal, keep=False)

    def fits(self, ty, dims):
        return elements(dims) * BYTES[ty] <= MAX_ARRAY_BYTES and all(d >= 1 for d in dims)

    # ---- helper computations ----
    def binary_computation(self, op, ty):
        name = "%s_%s" % (op, ty)
        if name not in self.computations:
            self.computations[name] = (
                "%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                "  ROOT r = %s[] %s(a, b)\n}\n" % (name, ty, ty, ty, op))
        return name

    # ---- operand selection ----
    def random_dims(self, rank=None, min_rank=0):
        if rank is None:
            rank = self.rng.choice([0, 1, 1, 2, 2, 2, 3, 4])
        dims = [self.rng.choice(self.dims_pool) for _ in range(max(rank, min_rank))]
        # Within the size cap for the main types (f64 the widest): the largest dimensions
        # become 1 first.
        while elements(dims) * 8 > MAX_ARRAY_BYTES:
            dims[dims.index(max(dims))] = 1
        return dims

    def pick(self, predicate=lambda v: True):
        """A recent value that satisfies `predicate` (recent ones first: chains for fusion)."""
        candidates = [v for v in self.values[-12:] if predicate(v)]
        if not candidates:
            candidates = [v for v in self.values if predicate(v)]
        return self.rng.choice(candidates) if candidates else None

    def operand(self, ty=None, dims=None, min_rank=0):
        """A value of type `ty` (any when None) and `dims` (any when None), made if none exists."""
        value = self.pick(lambda v: (ty is None or v.ty == ty) and
                          (dims is None or v.dims == list(dims)) and len(v.dims) >= min_rank)
        if value is not None:
            return value
        if dims is not None:
            same_dims = self.pick(lambda v: v.dims == list(dims))
            if same_dims is not None and ty is not None:
                return self.convert(same_dims, ty)
        return self.parameter(ty or self.main_type,
                              self.random_dims(min_rank=min_rank) if dims is None else dims)

    def convert(self, value, ty):
        if value.ty == ty:
            return value
        return self.emit(ty, value.dims, "convert(%s)" % value.ref())

    def non_negative(self, value):
        """|value| for floats (sums over it do not cancel); integers and pred as they are."""
        if value.ty in FLOAT_TYPES:
            return self.emit(value.ty, value.dims, "abs(%s)" % value.ref(), keep=False)
        return value

    def one_plus_magnitude(self, value):
        """1 + |value| (floats): a guarded operand for log, sqrt, rsqrt and divide."""
        magnitude = self.non_negative(value)
        one = self.scalar_broadcast(value.ty, value.dims, 1)
        return self.emit(value.ty, value.dims, "add(%s, %s)" % (magnitude.ref(), one.ref()),
                         keep=False)

    def as_matrix(self, value):
        """`value` (rank >= 2) reshaped to [dim 0, the rest] when it is not a matrix already."""
        if len(value.dims) == 2:
            return value
        return self.emit(value.ty, [value.dims[0], elements(value.dims[1:])],
                         "reshape(%s)" % value.ref())

    def scalar_broadcast(self, ty, dims, number):
        c = self.constant(ty, number)
        if not dims:
            return c
        return self.emit(ty, dims, "broadcast(%s), dimensions={}" % c.ref(), keep=False)

    # ---- the ops ----
    def op_unary(self):
        v = self.operand()
        if v.ty == "pred":
            return self.emit("pred", v.dims, "not(%s)" % v.ref())
        if v.ty in INT_TYPES:
            return self.emit(v.ty, v.dims, "%s(%s)" % (self.rng.choice(INT_UNARY), v.ref()))
        choice = self.rng.choice(FLOAT_UNARY + ["exponential", "sine", "cosine", "log", "sqrt",
                                                "rsqrt"])
        if choice in ("exponential", "sine", "cosine"):
            # Bounded arguments: sin(16) near a zero turns one ulp of 16 into a 1e-4 relative
            # error, a disagreement about the input's rounding, not about sine.
            t = self.emit(v.ty, v.dims, "tanh(%s)" % v.ref(), keep=False)
            return self.emit(v.ty, v.dims, "%s(%s)" % (choice, t.ref()))
        if choice in ("log", "sqrt", "rsqrt"):
            return self.emit(v.ty, v.dims, "%s(%s)" % (choice, self.one_plus_magnitude(v).ref()))
        return self.emit(v.ty, v.dims, "%s(%s)" % (choice, v.ref()))

    def op_binary(self):
        a = self.operand()
        b = self.operand(a.ty, a.dims)
        if a.ty == "pred":
            return self.emit("pred", a.dims, "%s(%s, %s)" % (self.rng.choice(PRED_BINARY),
                                                              a.ref(), b.ref()))
        if a.ty in INT_TYPES:
            return self.emit(a.ty, a.dims, "%s(%s, %s)" % (self.rng.choice(INT_BINARY),
                                                            a.ref(), b.ref()))
        choice = self.rng.choice(FLOAT_BINARY + ["divide"])
        if choice == "divide":
            b = self.one_plus_magnitude(b)
        return self.emit(a.ty, a.dims, "%s(%s, %s)" % (choice, a.ref(), b.ref()))

    def op_compare_select(self):
        a = self.operand()
        b = self.operand(a.ty, a.dims)
        direction = self.rng.choice(DIRECTIONS)  # pred too: false < true
        p = self.emit("pred", a.dims, "compare(%s, %s), direction=%s" % (a.ref(), b.ref(),
                                                                          direction))
        if self.rng.random() < 0.6:
            return self.emit(a.ty, a.dims, "select(%s, %s, %s)" % (p.ref(), a.ref(), b.ref()))
        return p

    def op_clamp(self):
        v = self.operand()
        if v.ty == "pred":
            return self.op_unary()
        low = self.constant(v.ty, -1 if v.ty != "s8" else -3)
        high = self.constant(v.ty, 2 if v.ty in FLOAT_TYPES else 5)
        return self.emit(v.ty, v.dims, "clamp(%s, %s, %s)" % (low.ref(), v.ref(), high.ref()))

    def op_convert(self):
        v = self.operand()
        ty = self.rng.choice([t for t in ALL_TYPES if t != v.ty])
        return self.emit(ty, v.dims, "convert(%s)" % v.ref())

    def op_broadcast(self):
        v = self.pick(lambda v: len(v.dims) < 4) or self.operand()
        if len(v.dims) >= 4:
            return self.op_unary()
        position = self.rng.randint(0, len(v.dims))
        dims = v.dims[:position] + [self.rng.choice(self.dims_pool)] + v.dims[position:]
        if not self.fits(v.ty, dims):
            return self.op_unary()
        mapping = [i for i in range(len(dims)) if i != position]
        return self.emit(v.ty, dims, "broadcast(%s), dimensions={%s}" % (
            v.ref(), ",".join(str(i) for i in mapping)))

    def op_reshape(self):
        v = self.operand()
        n = elements(v.dims)
        choices = [[n]]
        if len(v.dims) >= 2:
            i = self.rng.randrange(len(v.dims) - 1)  # merge two neighbours
            choices.append(v.dims[:i] + [v.dims[i] * v.dims[i + 1]] + v.dims[i + 2:])
        for i, d in enumerate(v.dims):  # split one dimension
            for f in range(2, d):
                if d % f == 0:
                    choices.append(v.dims[:i] + [f, d // f] + v.dims[i + 1:])
                    break
        dims = self.rng.choice(choices)
        if len(dims) > 5:
            dims = [n]
        return self.emit(v.ty, dims, "reshape(%s)" % v.ref())

    def op_transpose(self):
        v = self.operand(min_rank=2)
        permutation = list(range(len(v.dims)))
        self.rng.shuffle(permutation)
        dims = [v.dims[p] for p in permutation]
        return self.emit(v.ty, dims, "transpose(%s), dimensions={%s}" % (
            v.ref(), ",".join(str(p) for p in permutation)))

    def op_slice(self):
        v = self.operand(min_rank=1)
        ranges, dims = [], []
        for d in v.dims:
            start = self.rng.randint(0, d - 1)
            limit = self.rng.randint(start + 1, d)
            stride = self.rng.choice([1, 1, 1, 2, 3])
            ranges.append("[%d:%d:%d]" % (start, limit, stride))
            dims.append((limit - start + stride - 1) // stride)
        return self.emit(v.ty, dims, "slice(%s), slice={%s}" % (v.ref(), ", ".join(ranges)))

    def op_concatenate(self):
        a = self.operand(min_rank=1)
        axis = self.rng.randrange(len(a.dims))
        others = [v for v in self.values if v.ty == a.ty and len(v.dims) == len(a.dims) and
                  all(v.dims[i] == a.dims[i] for i in range(len(a.dims)) if i != axis)]
        b = self.rng.choice(others)
        dims = list(a.dims)
        dims[axis] += b.dims[axis]
        if not self.fits(a.ty, dims):
            return self.op_unary()
        return self.emit(a.ty, dims, "concatenate(%s, %s), dimensions={%d}" % (
            a.ref(), b.ref(), axis))

    def op_pad(self):
        v = self.operand(min_rank=1)
        config, dims = [], []
        for d in v.dims:
            low, high, interior = (self.rng.randint(-1, 2), self.rng.randint(-1, 2),
                                   self.rng.choice([0, 0, 1]))
            size = low + high + d + max(d - 1, 0) * interior
            if size < 1:
                low, high = 0, 0
                size = d + max(d - 1, 0) * interior
            config.append("%d_%d" % (low, high) + ("_%d" % interior if interior else ""))
            dims.append(size)
        if not self.fits(v.ty, dims):
            return self.op_unary()
        pad_value = self.constant(v.ty, 0 if v.ty == "pred" else 1)
        return self.emit(v.ty, dims, "pad(%s, %s), padding=%s" % (v.ref(), pad_value.ref(),
                                                                   "x".join(config)))

    def op_reverse(self):
        v = self.operand(min_rank=1)
        axes = sorted(self.rng.sample(range(len(v.dims)), self.rng.randint(1, len(v.dims))))
        return self.emit(v.ty, v.dims, "reverse(%s), dimensions={%s}" % (
            v.ref(), ",".join(str(a) for a in axes)))

    def op_reduce(self):
        v = self.operand(min_rank=1)
        if v.ty == "pred":
            v = self.convert(v, "s32")
        rank = len(v.dims)
        kind = self.rng.choice(["row", "column", "all"])
        axes = {"row": [rank - 1], "column": [0], "all": list(range(rank))}[kind]
        op = self.rng.choice(["add", "add", "maximum", "minimum"])
        narrow = None
        if op == "add":
            v = self.non_negative(v)
            if v.ty in ("f16", "bf16"):
                narrow, v = v.ty, self.convert(v, "f32")
        init = {"add": 0, "maximum": -1000, "minimum": 1000}[op]
        if v.ty == "s8":
            init = {"add": 0, "maximum": -128, "minimum": 127}[op]
        if v.ty in FLOAT_TYPES and op != "add":
            init = {"maximum": "-inf", "minimum": "inf"}[op]
        start = self.constant(v.ty, init)
        dims = [d for i, d in enumerate(v.dims) if i not in axes]
        total = self.emit(v.ty, dims, "reduce(%s, %s), dimensions={%s}, to_apply=%s" % (
            v.ref(), start.ref(), ",".join(str(a) for a in axes),
            self.binary_computation(op, v.ty)), keep=narrow is None)
        return self.convert(total, narrow) if narrow else total

    def op_dot(self):
        m, n, k = (self.rng.choice(self.dims_pool) for _ in range(3))
        batch = [self.rng.choice(self.dims_pool)] if self.rng.random() < 0.3 else []
        int8 = self.rng.random() < 0.25
        ty = "s8" if int8 else self.rng.choice(FLOAT_TYPES)
        # Sums of f16/bf16 products accumulate in f32, as JAX writes them: either a mixed-precision
        # dot (f32 result) or converts around an f32 dot. The order of a sum is the backend's
        # choice, and in 8 or 11 bits different orders differ by more than the tolerance.
        narrow = ty in ("f16", "bf16")
        widen = narrow and self.rng.random() < 0.5
        result_ty = "s32" if int8 else "f32" if narrow else ty
        if not self.fits("f32", batch + [m, n]) or not self.fits("f32", batch + [m, k]) or \
                not self.fits("f32", batch + [k, n]):
            return self.op_unary()
        lhs = self.non_negative(self.operand(ty, batch + [m, k]))
        rhs = self.non_negative(self.operand(ty, batch + [k, n]))
        if widen:
            lhs, rhs = self.convert(lhs, "f32"), self.convert(rhs, "f32")
        b = len(batch)
        text = "dot(%s, %s), lhs_contracting_dims={%d}, rhs_contracting_dims={%d}" % (
            lhs.ref(), rhs.ref(), b + 1, b)
        if batch:
            text += ", lhs_batch_dims={0}, rhs_batch_dims={0}"
        if widen:
            product = self.emit("f32", batch + [m, n], text, keep=False)
            return self.convert(product, ty)
        return self.emit(result_ty, batch + [m, n], text)

    def op_convolution(self):
        small = [d for d in self.dims_pool if d <= 16] or [1]
        n, c, f = (self.rng.choice(small) for _ in range(3))
        h, w = (self.rng.choice(self.dims_pool) for _ in range(2))
        kh, kw = self.rng.randint(1, min(h, 3)), self.rng.randint(1, min(w, 3))
        stride = self.rng.choice([1, 1, 2])
        pad = self.rng.choice([0, 0, 1])
        out_h = (h + 2 * pad - kh) // stride + 1
        out_w = (w + 2 * pad - kw) // stride + 1
        int8 = self.rng.random() < 0.25
        ty = "s8" if int8 else "f32"
        result_ty = "s32" if int8 else ty
        if not self.fits("f32", [n, h, w, c]) or not self.fits("f32", [n, out_h, out_w, f]) or \
                n * out_h * out_w * f * kh * kw * c > (1 << 26):
            return self.op_unary()
        x = self.non_negative(self.operand(ty, [n, h, w, c]))
        kernel = self.non_negative(self.operand(ty, [kh, kw, c, f]))
        window = "size=%dx%d stride=%dx%d pad=%d_%dx%d_%d" % (kh, kw, stride, stride,
                                                             pad, pad, pad, pad)
        return self.emit(result_ty, [n, out_h, out_w, f],
                         "convolution(%s, %s), window={%s}, dim_labels=b01f_01io->b01f" % (
                             x.ref(), kernel.ref(), window))

    def op_gather(self):
        table = self.as_matrix(self.operand(min_rank=2))
        rows = self.rng.choice(self.dims_pool)
        indices = self.parameter("s32", [rows])
        return self.emit(table.ty, [rows, table.dims[1]],
                         "gather(%s, %s), offset_dims={1}, collapsed_slice_dims={0}, "
                         "start_index_map={0}, index_vector_dim=1, slice_sizes={1,%d}" % (
                             table.ref(), indices.ref(), table.dims[1]))

    def op_scatter(self):
        table = self.operand(min_rank=2)
        if table.ty in ("pred", "f16", "bf16"):  # sums of duplicate rows: order matters below f32
            table = self.convert(table, "f32")
        table = self.as_matrix(table)
        rows = self.rng.choice(self.dims_pool)
        indices = self.parameter("s32", [rows])
        updates = self.non_negative(self.operand(table.ty, [rows, table.dims[1]]))
        base = self.non_negative(table)
        return self.emit(table.ty, table.dims,
                         "scatter(%s, %s, %s), update_window_dims={1}, inserted_window_dims={0}, "
                         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%s" % (
                             base.ref(), indices.ref(), updates.ref(),
                             self.binary_computation("add", table.ty)))

    def op_dynamic_slice(self):
        v = self.operand(min_rank=1)
        sizes = [self.rng.randint(1, d) for d in v.dims]
        starts = [self.parameter("s32", []) for _ in v.dims]
        if self.rng.random() < 0.5:
            update = self.operand(v.ty, sizes)
            return self.emit(v.ty, v.dims, "dynamic-update-slice(%s, %s, %s)" % (
                v.ref(), update.ref(), ", ".join(s.ref() for s in starts)))
        return self.emit(v.ty, sizes, "dynamic-slice(%s, %s), dynamic_slice_sizes={%s}" % (
            v.ref(), ", ".join(s.ref() for s in starts), ",".join(str(s) for s in sizes)))

    def elementwise_body(self, ty, dims, parameter_text):
        """Lines of a small elementwise computation of `ty[dims]` from `x` (the new value last)."""
        shape = shape_text(ty, dims)
        lines = [parameter_text]
        current = "x"
        for i in range(self.rng.randint(1, 3)):
            name = "e%d" % i
            if ty in FLOAT_TYPES:
                op = self.rng.choice(["tanh", "negate", "logistic", "add", "multiply"])
            elif ty == "pred":
                op = "not"
            else:
                op = self.rng.choice(["negate", "add", "multiply", "not"])
            if op in ("add", "multiply"):
                lines.append("  %s = %s %s(%s, %s)" % (name, shape, op, current, current))
            else:
                lines.append("  %s = %s %s(%s)" % (name, shape, op, current))
            current = name
        return lines, current

    def op_while(self):
        v = self.operand()
        shape = shape_text(v.ty, v.dims)
        state = "(s32[], %s)" % shape
        trips = self.rng.randint(0, 5)
        body, cond = self.fresh("body"), self.fresh("cond")
        lines, last = self.elementwise_body(
            v.ty, v.dims, "  t = %s parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n"
            "  x = %s get-tuple-element(t), index=1" % (state, shape))
        self.computations[body] = "%s {\n%s\n  one = s32[] constant(1)\n" \
            "  next = s32[] add(i, one)\n  ROOT r = %s tuple(next, %s)\n}\n" % (
                body, "\n".join(lines), state, last)
        self.computations[cond] = "%s {\n  t = %s parameter(0)\n" \
            "  i = s32[] get-tuple-element(t), index=0\n  n = s32[] constant(%d)\n" \
            "  ROOT c = pred[] compare(i, n), direction=LT\n}\n" % (cond, state, trips)
        zero = self.constant("s32", 0)
        init = self.fresh()
        self.entry.append("  %s = %s tuple(%s, %s)" % (init, state, zero.ref(), v.ref()))
        loop = self.fresh()
        self.entry.append("  %s = %s while(%s), condition=%s, body=%s" % (
            loop, state, init, cond, body))
        return self.emit(v.ty, v.dims, "get-tuple-element(%s), index=1" % loop)

    def op_conditional(self):
        v = self.operand()
        shape = shape_text(v.ty, v.dims)
        count = self.rng.choice([2, 2, 3])
        branches = []
        for _ in range(count):
            name = self.fresh("branch")
            lines, last = self.elementwise_body(v.ty, v.dims, "  x = %s parameter(0)" % shape)
            self.computations[name] = "%s {\n%s\n  ROOT r = %s copy(%s)\n}\n" % (
                name, "\n".join(lines), shape, last)
            branches.append(name)
        if count == 2 and self.rng.random() < 0.5:
            selector = self.parameter("pred", [])
        else:
            raw = self.parameter("s32", [])
            offset = self.constant("s32", self.rng.randint(-2, 1))
            selector = self.emit("s32", [], "add(%s, %s)" % (raw.ref(), offset.ref()), keep=False)
        return self.emit(v.ty, v.dims, "conditional(%s, %s), branch_computations={%s}" % (
            selector.ref(), ", ".join(v.ref() for _ in branches), ", ".join(branches)))

    # ---- excursions into c64, 8-bit floats and 4-bit integers ----
    def excursion_output(self, ty, dims, text):
        """A value of a type only excursions make: an output, never another op's operand."""
        value = self.emit(ty, dims, text, keep=False)
        self.narrow_outputs.append(value)
        return value

    def back_from_excursion(self, value, op):
        """Most excursions return to a type every op draws (f32 or s32) through `op`; the rest
        leave `value` unused, an output of its own type."""
        if self.rng.random() < 0.3:
            return value
        ty = {"c128": "f64"}.get(value.ty, "s32" if value.ty in INT4_TYPES else "f32")
        return self.emit(ty, value.dims, "%s(%s)" % (op, value.ref()))

    def narrow_elementwise(self, source_types, narrow_types, unary, binary, partner_type):
        """A value of a drawn source type converted to a drawn narrow type, then one elementwise
        op in it: from `unary` on it, or from `binary` with a converted `partner_type` value."""
        v = self.operand(self.rng.choice(source_types))
        ty = self.rng.choice(narrow_types)
        a = self.emit(ty, v.dims, "convert(%s)" % v.ref(), keep=False)
        op = self.rng.choice(binary + unary)
        if op in unary:
            return self.excursion_output(ty, v.dims, "%s(%s)" % (op, a.ref()))
        b = self.emit(ty, v.dims, "convert(%s)" % self.operand(partner_type, v.dims).ref(),
                      keep=False)
        return self.excursion_output(ty, v.dims, "%s(%s, %s)" % (op, a.ref(), b.ref()))

    def op_float8(self):
        result = self.narrow_elementwise(
            FLOAT_TYPES, FLOAT8_TYPES, ["negate", "abs"],
            ["add", "subtract", "multiply", "maximum", "minimum"], "f32")
        other = self.rng.choice([t for t in FLOAT8_TYPES + ["f32"] if t != result.ty])
        if other != "f32":
            result = self.excursion_output(other, result.dims, "convert(%s)" % result.ref())
        return self.back_from_excursion(result, "convert")

    def op_int4(self):
        result = self.narrow_elementwise(
            INT_TYPES, INT4_TYPES, ["not", "negate"],
            ["add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor",
             "shift-left", "shift-right-logical", "shift-right-arithmetic"], "s32")
        return self.back_from_excursion(result, "convert")

    def op_complex(self):
        part_ty = self.rng.choice(["f32", "f32", "f32", "f64"])
        cty = {"f32": "c64", "f64": "c128"}[part_ty]
        re_part = self.operand(part_ty)
        dims = re_part.dims
        im_part = self.operand(part_ty, dims)
        if not self.fits(cty, dims):
            return self.op_unary()

        def pair(first, second):
            return self.emit(cty, dims, "complex(%s, %s)" % (first.ref(), second.ref()),
                             keep=False)

        op = self.rng.choice(["add", "subtract", "multiply", "negate", "sum", "dot"])
        if op == "sum" and not dims or op == "dot" and len(dims) != 2:
            op = "add"
        if op in ("sum", "dot"):
            # Non-negative parts, so that no sum cancels (see the module comment).
            parts = [self.non_negative(p) for p in (re_part, im_part)]
        if op == "negate":
            result = self.excursion_output(cty, dims, "negate(%s)" % pair(re_part,
                                                                          im_part).ref())
        elif op == "sum":
            positive = pair(parts[0], parts[1])
            zero = self.emit(cty, [], "constant((0, 0))", keep=False)
            result = self.excursion_output(
                cty, dims[:-1], "reduce(%s, %s), dimensions={%d}, to_apply=%s" % (
                    positive.ref(), zero.ref(), len(dims) - 1,
                    self.binary_computation("add", cty)))
        elif op == "dot":
            if not self.fits(cty, [dims[0], dims[0]]):
                return self.op_unary()
            positive = pair(parts[0], parts[1])
            # The right side is real (zero imaginary parts), so neither part of a product
            # subtracts: re = sum(re_l re_r), im = sum(im_l re_r), with no cancellation.
            real = pair(parts[0], self.scalar_broadcast(part_ty, dims, 0))
            t = self.emit(cty, [dims[1], dims[0]], "transpose(%s), dimensions={1,0}" %
                          real.ref(), keep=False)
            result = self.excursion_output(
                cty, [dims[0], dims[0]],
                "dot(%s, %s), lhs_contracting_dims={1}, rhs_contracting_dims={0}" % (
                    positive.ref(), t.ref()))
        else:
            c, d = pair(re_part, im_part), pair(im_part, re_part)
            result = self.excursion_output(cty, dims, "%s(%s, %s)" % (op, c.ref(), d.ref()))
        return self.back_from_excursion(result, self.rng.choice(["real", "imag", "abs"]))

    EXCURSIONS = {"op_float8", "op_int4", "op_complex"}
    OPS = [("op_unary", 6), ("op_binary", 8), ("op_compare_select", 3), ("op_clamp", 1),
           ("op_convert", 2), ("op_broadcast", 2), ("op_reshape", 2), ("op_transpose", 2),
           ("op_slice", 2), ("op_concatenate", 1), ("op_pad", 1), ("op_reverse", 1),
           ("op_reduce", 3), ("op_dot", 2), ("op_convolution", 1), ("op_gather", 1),
           ("op_scatter", 1), ("op_dynamic_slice", 1), ("op_while", 1), ("op_conditional", 1),
           ("op_float8", 1), ("op_int4", 1), ("op_complex", 1)]

    def generate(self):
        self.parameter(self.main_type, self.random_dims(self.rng.choice([1, 2, 2, 3])))
        names = [name for name, weight in self.OPS for _ in range(weight)
                 if self.excursions or name not in self.EXCURSIONS]
        for _ in range(self.ops):
            getattr(self, self.rng.choice(names))()
        # Every value nothing else uses is an output, so no generated instruction is dead.
        outputs = [v for v in self.values + self.narrow_outputs
                   if v.uses == 0 and v not in self.parameters]
        outputs = outputs or self.values[-1:]
        if len(outputs) > 1:
            root_shape = "(%s)" % ", ".join(shape_text(v.ty, v.dims) for v in outputs)
            self.entry.append("  ROOT root = %s tuple(%s)" % (
                root_shape, ", ".join(v.ref() for v in outputs)))
        else:
            last = outputs[0]
            self.entry.append("  ROOT root = %s copy(%s)" % (shape_text(last.ty, last.dims),
                                                            last.ref()))
        header = "// RUN: interp cpu gpu systolic\n// fuzz/random_hlo.py %d --ops %d --dims %s\n" \
            "HloModule random_%d\n\n" % (self.seed, self.ops,
                                         ",".join(str(d) for d in self.dims_pool), self.seed)
        return header + "".join(c + "\n" for c in self.computations.values()) + \
            "ENTRY main {\n" + "\n".join(self.entry) + "\n}\n"


def generate(seed, ops=12, dims_pool=None):
    return Generator(seed, ops, dims_pool).generate()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seed", type=int, help="reproduces the program")
    parser.add_argument("--ops", type=int, default=12, help="ops to draw (default 12)")
    parser.add_argument("--dims", help="dimension sizes to draw from, e.g. 1,3,8 "
                        "(default: drawn from the seed)")
    parser.add_argument("-o", "--output", help="write here instead of stdout (never replaces "
                        "an existing file)")
    args = parser.parse_args()
    dims = [int(d) for d in args.dims.split(",")] if args.dims else None
    text = generate(args.seed, args.ops, dims)
    if args.output:
        with open(args.output, "x") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()

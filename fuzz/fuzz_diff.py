#!/usr/bin/env python3
"""Differential testing on random programs: every target against the reference interpreter.

    fuzz/fuzz_diff.py --retarget build/bin/retarget [--seconds N] [--first-seed S] [--out DIR]
    fuzz/fuzz_diff.py --retarget build/bin/retarget --seed S   (one program, e.g. to re-check)

For each seed, fuzz/random_hlo.py writes a program; `retarget verify` must accept it; then
`retarget run --compare interp` runs it on cpu, gpu (host emulation where no GPU is present) and
systolic with two machines (the default tpu-v1 with bf16/f32 modes, and gemmini), with the
inputs random:SEED. A run passes when it prints MATCHED: integers exact, floats within the
documented per-type tolerance of `retarget run` (docs/cli.md). A float MISMATCH passes too when
the target is at least as accurate as the interpreter: against the same program widened to f64
with the same inputs, each differing element is within tolerance of the f64 value or closer to
it than the interpreter's (numpy needed: run with the build's venv Python). Anything else is a
finding: MISMATCH, an error exit, a crash (signal), or a hang (--timeout per run).

A finding is shrunk before it is written: the same seed with fewer ops, then smaller dimension
sizes, then instruction by instruction (an instruction becomes a parameter of its shape, dead
code goes), keeping each step that still fails the same way on the same target. The reproducer
goes to DIR/findings/<target>-<kind>-seed<S>.hlo with the failing command in its header. A target's
documented refusal (an op its backend states it does not compile, a program too large for the
configured machine) is not a finding: such runs are counted by reason. The seeds run, the
findings by target and kind, and the refusals are printed at the end and written to
DIR/summary.txt. Exit status: 0 when nothing was found, 1 otherwise.
"""
import argparse
import itertools
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_hlo  # noqa: E402

TARGETS = [
    ("cpu", ["--target", "cpu"]),
    ("gpu", ["--target", "gpu"]),
    ("systolic", ["--target", "systolic"]),
    ("systolic-gemmini", ["--target", "systolic", "--config", "gemmini"]),
]


# Errors that are a target's documented answer, not a disagreement: an op the backend states it
# does not compile (the report counts it as not carried across), a program larger than the
# configured machine. They are counted and listed by reason in the summary, not shrunk.
REFUSALS = [re.compile(p) for p in (
    r"not supported by the \w+ backend",
    r"needs more DRAM than dram\.bytes",
)]


class Outcome:
    def __init__(self, kind, message):
        # kind: ok, accurate (a float mismatch where the target is at least as close to the f64
        # value as the interpreter), refused, mismatch, error, crash, hang; rejected (verify)
        self.kind, self.message = kind, message

    def same_failure(self, other):
        if self.kind != other.kind:
            return False
        if self.kind == "error":  # the same error, not any error (numbers and names may change)
            return normalized(first_error(self.message)) == normalized(first_error(other.message))
        return True


def normalized(message):
    message = re.sub(r"\b(instruction|at|in|of) [%#]?[\w.-]+", r"\1 X", message)
    return re.sub(r"\d+", "N", message)


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return re.sub(r"^\S*:\d+:\d+: ", "", line)[:160]
    return text.strip().splitlines()[-1][:160] if text.strip() else ""


class Runner:
    def __init__(self, retarget, work, timeout):
        self.retarget, self.work, self.timeout = retarget, work, timeout
        self.file = os.path.join(work, "program.hlo")

    def verify(self, text):
        with open(self.file, "w") as out:
            out.write(text)
        done = subprocess.run([self.retarget, "verify", self.file], capture_output=True, text=True)
        return Outcome("ok" if done.returncode == 0 else "rejected", done.stderr)

    def run(self, text, target_args, seed):
        with open(self.file, "w") as out:
            out.write(text)
        command = [self.retarget, "run", self.file] + target_args + [
            "--compare", "interp", "--inputs", "random:%d" % seed, "--max-iterations", "100000"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return Outcome("hang", "no result after %d s" % self.timeout)
        output = done.stdout + done.stderr
        if done.returncode < 0 or done.returncode >= 128:
            return Outcome("crash", "signal %d\n%s" % (-done.returncode, output[-2000:]))
        if done.returncode == 0 and "MATCHED" in done.stdout:
            return Outcome("ok", "")
        if "MISMATCH" in output:
            if self.at_least_as_accurate(text, target_args, seed):
                return Outcome("accurate", output[-2000:])
            return Outcome("mismatch", output[-2000:])
        if any(pattern.search(output) for pattern in REFUSALS):
            return Outcome("refused", output[-2000:])
        return Outcome("error", output[-2000:])


    def at_least_as_accurate(self, text, target_args, seed):
        """For a floating-point mismatch: is the target at least as close as the interpreter to
        the same program evaluated in f64 (every f16/bf16/f32 widened, c64 to c128, same input
        values)? The 8- and 4-bit floats are not widened: their arithmetic is defined by its
        rounding, so an output of theirs must be within its one-ulp tolerance of the
        interpreter's.

        The interpreter is the reference for what each op means, not for rounding: it sums in
        element order, one rounding per add, and a long f32 sum drifts (224,730 terms: 0.1 % off
        the exact sum, while the CPU's blocked sum is 0.004 % off). A target closer to the exact
        value is not wrong. Integer and pred outputs must still equal the interpreter's, and
        every float element outside the tolerance of the interpreter must be within that
        tolerance of the f64 value, or closer to it than the interpreter is."""
        import numpy as np  # only here: the rest of the runner needs the standard library only

        def path(name):
            return os.path.join(self.work, name)

        def run(program, extra):
            done = subprocess.run([self.retarget, "run", program, "--force"] + extra,
                                  capture_output=True,
                                  text=True, timeout=self.timeout)
            return done.returncode == 0

        if not run(self.file, ["--target", "interp", "--inputs", "random:%d" % seed,
                               "--save-inputs", path("inputs.npz"), "--output",
                               path("interp.npz")]):
            return False
        if not run(self.file, target_args + ["--inputs", path("inputs.npz"), "--output",
                                             path("target.npz")]):
            return False
        with open(path("wide.hlo"), "w") as out:
            wide = re.sub(r"\b(bf16|f16|f32)\[", "f64[", text)
            out.write(re.sub(r"\bc64\[", "c128[", wide))
        inputs = np.load(path("inputs.npz"))
        np.savez(path("wide_inputs.npz"), **{
            k: inputs[k].astype(np.float64) if inputs[k].dtype.kind == "f" else
            inputs[k].astype(np.complex128) if inputs[k].dtype.kind == "c" else inputs[k]
            for k in inputs.files})
        if not run(path("wide.hlo"), ["--target", "interp", "--inputs", path("wide_inputs.npz"),
                                      "--output", path("wide.npz")]):
            return False
        root = next(line for line in text.split("\n") if line.startswith("  ROOT "))
        types = re.findall(r"\b([a-z][a-z0-9]*)\[", root.split(" = ", 1)[1])
        interp, target, wide = (np.load(path(n)) for n in ("interp.npz", "target.npz", "wide.npz"))
        for index, element_type in enumerate(types):
            key = "out%d" % index
            i, t, w = interp[key], target[key], wide[key]
            if element_type not in TOLERANCES:
                if not np.array_equal(i, t):
                    return False
                continue
            rtol, atol = TOLERANCES[element_type]
            wide_type = np.complex128 if element_type in ("c64", "c128") else np.float64
            i, t, w = (a.astype(wide_type) for a in (i, t, w))
            with np.errstate(invalid="ignore"):
                close = (np.abs(t - i) <= atol + rtol * np.abs(i)) | (np.isnan(t) & np.isnan(i)) \
                    | (t == i)
                accurate = (np.abs(t - w) <= atol + rtol * np.abs(w)) | \
                    (np.abs(t - w) <= np.abs(i - w))
            if not np.all(close | accurate):
                return False
        return True


# `retarget run`'s documented per-type tolerances (rtol, atol); integers and pred are exact.
# c64 and c128 as f32 and f64 on the modulus of the difference; the 8- and 4-bit floats one ulp
# (2^-mantissa bits, so f8e8m0fnu, all exponent, a factor of two).
TOLERANCES = {"f32": (1e-5, 1e-6), "f16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2),
              "f64": (1e-9, 1e-12), "c64": (1e-5, 1e-6), "c128": (1e-9, 1e-12)}
for _name, _mantissa_bits in (("f8e4m3fn", 3), ("f8e5m2", 2), ("f8e4m3", 3), ("f8e3m4", 4),
                              ("f8e4m3fnuz", 3), ("f8e5m2fnuz", 2), ("f8e4m3b11fnuz", 3),
                              ("f8e8m0fnu", 0), ("f4e2m1fn", 1)):
    TOLERANCES[_name] = (2.0 ** -_mantissa_bits, 2.0 ** -_mantissa_bits)


# ---- shrinking ----
LINE = re.compile(r"^  (ROOT )?(\w+) = (\([^()]*\)|\S+) ([\w-]+)\((.*)$")


def entry_bounds(lines):
    start = next(i for i, line in enumerate(lines) if line.startswith("ENTRY"))
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return start + 1, end


def renumber_parameters(lines):
    start, end = entry_bounds(lines)
    number = 0
    for i in range(start, end):
        if re.search(r" parameter\(\d+\)$", lines[i]):
            lines[i] = re.sub(r"parameter\(\d+\)$", "parameter(%d)" % number, lines[i])
            number += 1
    return lines


def remove_dead(lines):
    while True:
        start, end = entry_bounds(lines)
        body = lines[start:end]
        removed = False
        for i, line in enumerate(body):
            match = LINE.match(line)
            if not match or match.group(1):
                continue
            name = match.group(2)
            used = any(re.search(r"\b%s\b" % name, other.split(" = ", 1)[1])
                       for j, other in enumerate(body) if j != i)
            if not used:
                del lines[start + i]
                removed = True
                break
        if not removed:
            return renumber_parameters(lines)


def instruction_deletions(text):
    """Smaller programs: each non-parameter instruction (last first) replaced by a parameter."""
    lines = text.split("\n")
    start, end = entry_bounds(lines)
    for i in range(end - 1, start - 1, -1):
        match = LINE.match(lines[i])
        if not match or match.group(4) == "parameter" or match.group(3).startswith("("):
            continue
        if match.group(1):  # the root: keep one operand of a tuple root
            continue
        candidate = list(lines)
        candidate[i] = "  %s = %s parameter(999)" % (match.group(2), match.group(3))
        yield "\n".join(remove_dead(candidate))
    match = LINE.match(lines[end - 1])
    if match and match.group(4) == "tuple":
        shapes = {}
        for line in lines[start:end]:
            m = LINE.match(line)
            if m:
                shapes[m.group(2)] = m.group(3)
        for operand in [o.strip() for o in match.group(5).rstrip(")").split(",")]:
            if operand in shapes and not shapes[operand].startswith("("):
                candidate = list(lines)
                candidate[end - 1] = "  ROOT root = %s copy(%s)" % (shapes[operand], operand)
                yield "\n".join(remove_dead(candidate))


def shrink(runner, seed, ops, dims, target_args, failure, log):
    def fails(text):
        if runner.verify(text).kind != "ok":
            return False
        return runner.run(text, target_args, seed).same_failure(failure)

    best = random_hlo.generate(seed, ops, dims)
    # Fewer ops: the same seed draws the same first instructions. `best` is always the program
    # of `high` ops.
    low, high = 1, ops
    while low < high:
        middle = (low + high) // 2
        text = random_hlo.generate(seed, middle, dims)
        if fails(text):
            high, best = middle, text
        else:
            low = middle + 1
    ops = high
    log("  shrunk to %d ops" % ops)
    # Smaller dimension sizes.
    while max(dims) > 1:
        smaller = sorted({max(1, d // 2) for d in dims})
        text = random_hlo.generate(seed, ops, smaller)
        if not fails(text):
            break
        dims, best = smaller, text
    log("  dims %s" % ",".join(str(d) for d in dims))
    # Instruction by instruction, until no deletion keeps the failure.
    progress = True
    while progress:
        progress = False
        for candidate in instruction_deletions(best):
            if len(candidate) < len(best) and fails(candidate):
                best, progress = candidate, True
                break
    log("  %d instructions" % sum(1 for line in best.split("\n") if LINE.match(line)))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retarget", required=True, help="the retarget binary")
    parser.add_argument("--seconds", type=float, default=60, help="stop starting new programs "
                        "after this long (default 60)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--seed", type=int, help="run this one seed only")
    parser.add_argument("--count", type=int, help="run this many seeds from --first-seed, "
                        "however long it takes (instead of --seconds)")
    parser.add_argument("--ops", type=int, default=12, help="ops per program (default 12)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per run (a hang)")
    parser.add_argument("--targets", default=",".join(name for name, _ in TARGETS),
                        help="comma list of " + ", ".join(name for name, _ in TARGETS))
    parser.add_argument("--out", default="build/fuzz-diff", help="work and findings folder")
    parser.add_argument("--no-shrink", action="store_true", help="write findings unshrunk")
    args = parser.parse_args()

    targets = [(name, flags) for name, flags in TARGETS if name in args.targets.split(",")]
    work = os.path.join(args.out, "work")
    findings_dir = os.path.join(args.out, "findings")
    os.makedirs(work, exist_ok=True)
    os.makedirs(findings_dir, exist_ok=True)
    runner = Runner(args.retarget, work, args.timeout)

    def log(message):
        print(message, file=sys.stderr, flush=True)

    # One seed, a count of seeds, or as many as --seconds allows.
    timed = args.seed is None and args.count is None
    if args.seed is not None:
        seeds = [args.seed]
    elif args.count is not None:
        seeds = range(args.first_seed, args.first_seed + args.count)
    else:
        seeds = itertools.count(args.first_seed)
    deadline = time.time() + args.seconds
    programs, findings, refusals, accurate = 0, [], {}, 0
    first_seed = last_seed = None
    for seed in seeds:
        if timed and time.time() > deadline:
            break
        first_seed = seed if first_seed is None else first_seed
        last_seed = seed
        generator = random_hlo.Generator(seed, args.ops)
        text, dims = generator.generate(), generator.dims_pool
        programs += 1
        verdict = runner.verify(text)
        results = []
        if verdict.kind != "ok":
            results.append(("verify", [], verdict))
        else:
            for name, flags in targets:
                results.append((name, flags, runner.run(text, flags, seed)))
        for name, _, outcome in results:
            if outcome.kind == "accurate":
                accurate += 1
            if outcome.kind == "refused":
                reason = normalized(first_error(outcome.message))
                refusals[(name, reason)] = refusals.get((name, reason), 0) + 1
        failed = [(name, flags, outcome) for name, flags, outcome in results
                  if outcome.kind not in ("ok", "accurate", "refused")]
        log("seed %d (%s): %s" % (seed, ",".join(str(d) for d in dims),
                                  "ok" if not failed else
                                  " ".join("%s:%s" % (n, o.kind) for n, _, o in failed)))
        for name, flags, outcome in failed:
            reproducer = text
            if not args.no_shrink and outcome.kind != "rejected":
                reproducer = shrink(runner, seed, args.ops, dims, flags, outcome, log)
            path = os.path.join(findings_dir, "%s-%s-seed%d.hlo" % (name, outcome.kind, seed))
            header = "// fuzz-diff finding: %s on %s\n// retarget run FILE %s --compare interp " \
                "--inputs random:%d\n// %s\n" % (outcome.kind, name, " ".join(flags), seed,
                                                first_error(outcome.message))
            with open(path, "w") as out:
                out.write(header + reproducer)
            findings.append((name, outcome.kind, seed, first_error(outcome.message), path))
            log("  -> %s" % path)

    summary = ["programs run: %d (seeds %s..%s, %d ops each)" % (
        programs, first_seed, last_seed, args.ops),
        "findings: %d" % len(findings),
        "float mismatches where the target was at least as accurate as the interpreter: %d" %
        accurate]
    summary += ["  %s %s seed %d: %s (%s)" % f for f in findings]
    summary.append("refused (documented: not compiled by that target, or too large for it): %d" %
                   sum(refusals.values()))
    summary += ["  %s x%d: %s" % (name, count, reason)
                for (name, reason), count in sorted(refusals.items())]
    with open(os.path.join(args.out, "summary.txt"), "w") as out:
        out.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

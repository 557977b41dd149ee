#!/usr/bin/env python3
"""XLA's own fusion and kernel counts for corpus modules: the baseline for Retarget's optimizer.

Dev-only (needs jax/jaxlib; never part of the build or of `make test`). For each module:

  1. our writer turns the HLO text into an HloModuleProto
     (`retarget print FILE --format proto`), the route of scripts/check_proto_with_jax.py;
  2. jaxlib rebuilds the module from the proto, converts it to MLIR and compiles it with XLA's
     CPU client while XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text is set;
  3. the `*.cpu_after_optimizations.txt` dump that XLA wrote is parsed here and counted.

What is counted, with the definitions of compiler/ownership.h (docs/ownership.md) so that the
numbers line up with `retarget compile --stats-json`:

  * trivial ("no-code") ops: parameter, constant, tuple, get-tuple-element, bitcast, after-all,
    opt-barrier, and the control-flow ops while / conditional / call (their bodies are counted
    instruction by instruction). Every other op is non-trivial.
  * analyzed computations: the entry and every computation reachable from it through while,
    conditional and call, each once (a while body counts once: counts are static). Fusion
    bodies, reducers and comparators belong to the instruction that calls them.
  * kernels: every fusion plus every unfused non-trivial op of an analyzed computation. XLA has
    no host fallback, so each such op is a kernel, custom-calls and library calls (Eigen /
    oneDNN dots and convolutions) included.
  * fusion coverage: non-trivial instructions inside fusions holding at least 2 of them (nested
    fusions opened), divided by all non-trivial instructions (fused ones counted one by one).

Usage (from the repository root, after building the CLI):

  python3 bench/xla_kernel_counts.py                       # the four default modules
  python3 bench/xla_kernel_counts.py --retarget build/bin/retarget --json out/xla.json
  python3 bench/xla_kernel_counts.py --platform gpu        # only where jaxlib has a GPU backend

Prints one markdown table (module, XLA kernels, fusions by kind, coverage); --json writes the
full counts. Exit status 0 when every module compiled, 1 otherwise, 2 when the platform is
not available (e.g. no GPU: XLA's GPU compiler cannot run here; the CPU numbers stand alone).
Checked with jax/jaxlib 0.10.2 on CPU.
"""

import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(REPO), "shared", "corpus", "xla")
DEFAULT_MODULES = ["resnet50_keras_jax_f32", "mha_block_1x12x128x64_bf16",
                   "layer_norm_1x4096x768_bf16", "dlrm_keras_jax_f32_test_step"]

# compiler::GeneratesNoCode, spelled with XLA's opcode names.
NO_CODE_OPCODES = frozenset(["parameter", "constant", "tuple", "get-tuple-element", "bitcast",
                             "after-all", "opt-barrier", "while", "conditional", "call"])
CONTROL_FLOW_OPCODES = frozenset(["while", "conditional", "call"])

# ---------------------------------------------------------------------------------------------
# A minimal reader of XLA's HLO text: computations, and per instruction its opcode, fusion kind,
# custom-call target and called computations. Nothing else of the text matters for counting.

# kind: a fusion's kind (kLoop, ..., or e.g. "kCustom(__ynn_fusion)"), target: a custom-call's.
Instruction = collections.namedtuple("Instruction", "name opcode kind target callees")
_CALLEE_ATTRS = ("calls", "to_apply", "body", "condition", "true_computation",
                 "false_computation", "branch_computations")
_CALLEE_RE = re.compile(r"\b(%s)=(\{[^}]*\}|%%?[\w.\-]+)" % "|".join(_CALLEE_ATTRS))
_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_INSTRUCTION_RE = re.compile(r"^\s+(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_OPCODE_RE = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


class HloTextError(ValueError):
    """The dump does not read as HLO text; the message names the line."""


def _skip_shape(text, line_number):
    """Index just past the result shape at the start of `text` (a tuple shape is parenthesized
    and may nest; an array shape such as f32[2,3]{1,0:T(8,128)} holds no spaces)."""
    if not text.startswith("("):
        end = 0
        depth = 0
        while end < len(text) and (depth > 0 or not text[end].isspace()):
            depth += text[end] in "([{"
            depth -= text[end] in ")]}"
            end += 1
        return end
    stack = []
    for index, char in enumerate(text):
        if char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif stack and char == stack[-1]:
            stack.pop()
            if not stack:
                return index + 1
    raise HloTextError("line %d: unbalanced tuple shape" % line_number)


def _callee_names(attributes):
    names = []
    for _, value in _CALLEE_RE.findall(attributes):
        for name in value.strip("{}").split(","):
            if name.strip():
                names.append(name.strip().lstrip("%"))
    return names


def parse_hlo_text(text):
    """Returns (entry name, {computation name: [Instruction]}) of an HLO module's text."""
    computations, entry, current = {}, None, None
    for line_number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith(("HloModule", "//", "#")):
            continue
        if not line[0].isspace():  # a computation header `[ENTRY] %name (...) -> ... {` or `}`
            if line.rstrip() == "}":
                current = None
                continue
            if not line.rstrip().endswith("{"):
                raise HloTextError("line %d: expected a computation header" % line_number)
            words = line.split()
            is_entry = words[0] == "ENTRY"
            name = words[1 if is_entry else 0].lstrip("%").split("(")[0]
            current = computations.setdefault(name, [])
            entry = name if is_entry else entry
            continue
        match = _INSTRUCTION_RE.match(_STRING_RE.sub('""', line))
        if match is None or current is None:
            raise HloTextError("line %d: expected an instruction inside a computation"
                               % line_number)
        rest = match.group(2)
        after_shape = rest[_skip_shape(rest, line_number):]
        opcode = _OPCODE_RE.match(after_shape)
        if opcode is None:
            raise HloTextError("line %d: no opcode after the shape" % line_number)
        kind = re.search(r"\bkind=(k\w+)", after_shape)
        kind = kind.group(1) if kind else None
        if kind == "kCustom":  # which library runs it, from the backend config's fusion_config
            library = re.search(r'"fusion_config":\{"kind":"([^"]+)"', line)
            kind += "(%s)" % (library.group(1) if library else "?")
        target = re.search(r'custom_call_target="((?:[^"\\]|\\.)*)"', line)
        current.append(Instruction(match.group(1), opcode.group(1),
                                   kind,
                                   target.group(1) if target else None,
                                   _callee_names(after_shape)))
    if entry is None:
        raise HloTextError("no ENTRY computation")
    return entry, computations


# ---------------------------------------------------------------------------------------------
# Counting, with the definitions of compiler/ownership.cc (see the module docstring).

def _analyzed_computations(entry, computations):
    order, seen = [entry], {entry}
    for name in order:
        for inst in computations.get(name, []):
            if inst.opcode not in CONTROL_FLOW_OPCODES:
                continue
            for callee in inst.callees:
                if callee in computations and callee not in seen:
                    seen.add(callee)
                    order.append(callee)
    return order


def _fused_non_trivial(fusion, computations):
    """Non-trivial instructions inside a fusion, nested fusions opened (each body once)."""
    count, pending, seen = 0, list(fusion.callees), set(fusion.callees)
    while pending:
        for inst in computations.get(pending.pop(), []):
            if inst.opcode == "fusion":
                for callee in inst.callees:
                    if callee not in seen:
                        seen.add(callee)
                        pending.append(callee)
            elif inst.opcode not in NO_CODE_OPCODES:
                count += 1
    return count


def count_kernels(text):
    """The counts of one after-optimizations HLO text, as a JSON-ready dict."""
    entry, computations = parse_hlo_text(text)
    fusions_by_kind = collections.Counter()
    unfused_by_opcode = collections.Counter()
    non_trivial = in_multi_op_fusions = kernels = entry_kernels = 0
    for name in _analyzed_computations(entry, computations):
        for inst in computations[name]:
            if inst.opcode == "fusion":
                fused = max(1, _fused_non_trivial(inst, computations))
                fusions_by_kind[inst.kind or "unknown"] += 1
                in_multi_op_fusions += fused if fused >= 2 else 0
            elif inst.opcode in NO_CODE_OPCODES:
                continue
            else:
                fused = 1
                label = inst.opcode
                if inst.opcode == "custom-call":
                    label += ":" + (inst.target or "?")
                unfused_by_opcode[label] += 1
            non_trivial += fused
            kernels += 1
            entry_kernels += name == entry
    return {
        "entry": entry,
        "kernels": kernels,
        "entry_kernels": entry_kernels,
        "fusions": sum(fusions_by_kind.values()),
        "fusions_by_kind": dict(sorted(fusions_by_kind.items())),
        "unfused_kernels_by_opcode": dict(sorted(unfused_by_opcode.items())),
        "non_trivial_instructions": non_trivial,
        "in_multi_op_fusions": in_multi_op_fusions,
        "fusion_coverage": in_multi_op_fusions / non_trivial if non_trivial else 0.0,
    }


# ---------------------------------------------------------------------------------------------
# Compiling with XLA through jaxlib.

def find_retarget(explicit):
    if explicit:
        return explicit
    candidates = [os.path.join(REPO, "build", "bin", "retarget")]
    candidates += sorted(glob.glob(os.path.join(REPO, "build-*", "bin", "retarget")))
    for path in candidates:
        if os.access(path, os.X_OK):
            return path
    sys.exit("no retarget binary found; build it or pass --retarget PATH")


def module_path(name):
    if os.path.sep in name or name.endswith(".hlo"):
        return name
    return os.path.join(CORPUS, name + ".hlo")


def xla_compile_and_dump(retarget, hlo_path, platform, workdir, dump_dir):
    """Compiles one module with XLA on `platform`; returns the after-optimizations dump path."""
    from jax._src.lib import xla_client as xc
    import jax

    proto = os.path.join(workdir, os.path.basename(hlo_path) + ".pb")
    subprocess.run([retarget, "print", hlo_path, "--format", "proto", "-o", proto, "--force"],
                   check=True, capture_output=True, text=True)
    with open(proto, "rb") as f:
        computation = xc.XlaComputation(f.read())
    mlir_text = xc._xla.mlir.xla_computation_to_mlir_module(computation)
    # XLA CPU writes module_N.NAME.cpu_after_optimizations.txt; the GPU compiler puts the
    # compute capability before the platform (…sm_9.0_gpu_after_optimizations.txt).
    pattern = os.path.join(dump_dir, "*%s_after_optimizations.txt" % platform)
    before = set(glob.glob(pattern))
    device = jax.devices(platform)[0]
    device.client.compile_and_load(mlir_text, xc.DeviceList((device,)), xc.CompileOptions())
    written = sorted(set(glob.glob(pattern)) - before)
    if len(written) != 1:
        raise RuntimeError("expected one new %s dump in %s, found %d"
                           % (pattern, dump_dir, len(written)))
    return written[0]


def platform_available(platform):
    try:
        import jax
        return bool(jax.devices(platform))
    except ImportError:  # no jax here: nothing of XLA's can run
        return False
    except RuntimeError:  # "Unknown backend" / no such platform in this jaxlib
        return False


def markdown_table(platform, results):
    lines = ["| module | XLA %s kernels | fusions by kind | unfused kernels | XLA coverage |"
             % platform, "|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append("| %s | error: %s | | | |" % (r["module"], r["error"]))
            continue
        kinds = ", ".join("%s %d" % kv for kv in r["fusions_by_kind"].items()) or "none"
        lines.append("| %s | %d | %s | %d | %.3f |" % (
            r["module"], r["kernels"], kinds, r["kernels"] - r["fusions"], r["fusion_coverage"]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", default=DEFAULT_MODULES,
                        help="corpus module names or .hlo paths (default: the four of issue 3)")
    parser.add_argument("--retarget", help="path to the retarget CLI (default: build/bin)")
    parser.add_argument("--platform", default="cpu", help="XLA platform: cpu (default) or gpu")
    parser.add_argument("--json", metavar="OUT", help="write all counts as JSON")
    parser.add_argument("--dump-dir", help="keep XLA's dumps here (default: a temporary dir)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir:
        dump_dir = os.path.abspath(args.dump_dir or os.path.join(workdir, "dump"))
        # XLA reads XLA_FLAGS once, when the first backend starts: set them before that.
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_dump_to=%s --xla_dump_hlo_as_text"
                                   % dump_dir).strip()
        if not platform_available(args.platform):
            print("XLA %s compiler: not available (jax not importable, or no %s device for "
                  "this jaxlib); no counts." % (args.platform, args.platform))
            return 2
        retarget = find_retarget(args.retarget)
        results = []
        for name in args.modules:
            path = module_path(name)
            result = {"module": os.path.splitext(os.path.basename(path))[0],
                      "platform": args.platform}
            try:
                dump = xla_compile_and_dump(retarget, path, args.platform, workdir, dump_dir)
                with open(dump) as f:
                    result.update(count_kernels(f.read()))
                result["dump"] = os.path.basename(dump)
            except subprocess.CalledProcessError as e:  # our writer refused the module
                lines = e.stderr.strip().splitlines() or ["?"]
                result["error"] = "retarget print: " + next(
                    (line for line in lines if "error" in line), lines[0])[:200]
            except Exception as e:  # XLA raises its own status types; report and go on
                result["error"] = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            results.append(result)
        print(markdown_table(args.platform, results))
        if args.json:
            with open(args.json, "w") as out:
                json.dump(results, out, indent=1, sort_keys=True)
                out.write("\n")
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

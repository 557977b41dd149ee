#!/usr/bin/env python3
"""Regenerates the CHECK lines of golden test files (tests/golden/<pass>/<case>.hlo).

For each FILE: reads its `// RUN: passes=LIST target=T [expect=error]` line, runs
`retarget opt FILE --passes LIST --target T` (stderr instead of stdout with expect=error), drops
every existing `// CHECK...` line and appends fresh ones for the output:

  // CHECK: HloModule <name>, ...          the module header
  // CHECK-LABEL: <computation header> {   one label per computation
  // CHECK-NEXT:  <instruction>            every printed instruction, in order
  // CHECK-NEXT:  }

The input module, the RUN line and every other comment are kept as they are. Review the diff
(`git diff tests/golden`) before committing: blessing records what the pass does now, it does
not check that it is right. See docs/add-a-pass.md.

usage: scripts/bless_golden.py [--retarget build/bin/retarget] [--check] FILE...
  --check   do not write; exit 1 if a file's CHECK lines would change
"""
import argparse
import os
import re
import subprocess
import sys

RUN_RE = re.compile(r"^\s*//\s*RUN:(.*)$")
CHECK_RE = re.compile(r"^\s*//\s*CHECK(-[A-Z]+)?:")


def escape_for_filecheck(text):
    """FileCheck treats {{...}} as a regex and [[...]] as a variable: match them literally."""
    out = []
    i = 0
    while i < len(text):
        pair = text[i:i + 2]
        if pair == "{{":
            out.append(r"{{\{\{}}")
            i += 2
        elif pair == "[[":
            out.append(r"{{\[\[}}")
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def parse_run_line(lines, path):
    runs = [m.group(1) for m in (RUN_RE.match(line) for line in lines) if m]
    if len(runs) != 1:
        sys.exit(f"{path}: expected exactly one '// RUN: passes=... target=...' line, "
                 f"found {len(runs)}")
    passes = re.search(r"passes=(\S*)", runs[0])
    target = re.search(r"target=([a-z]+)", runs[0])
    if not passes or not target:
        sys.exit(f"{path}: the RUN line needs passes=LIST and target=T")
    return passes.group(1), target.group(1), "expect=error" in runs[0]


def check_lines(output, expect_error, path):
    if expect_error:
        # Error text: each non-empty line in order; the file's path differs between checkouts,
        # so it becomes a wildcard.
        checks = []
        for line in output.splitlines():
            if line.strip():
                text = escape_for_filecheck(line.strip().replace(path, "\0"))
                checks.append("// CHECK: " + text.replace("\0", "{{.*}}"))
        return checks
    checks = []
    for line in output.splitlines():
        text = line.strip()
        if not text:
            continue
        if text.startswith("HloModule"):
            checks.append(f"// CHECK: {escape_for_filecheck(text)}")
        elif text.endswith("{") and not line.startswith(" "):
            checks.append(f"// CHECK-LABEL: {escape_for_filecheck(text)}")
        else:
            checks.append(f"// CHECK-NEXT: {escape_for_filecheck(text)}")
    return checks


def bless(path, retarget, check_only):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    passes, target, expect_error = parse_run_line(lines, path)
    result = subprocess.run([retarget, "opt", path, "--passes", passes, "--target", target],
                            capture_output=True, text=True)
    if expect_error and result.returncode == 0:
        sys.exit(f"{path}: expect=error, but retarget opt succeeded")
    if not expect_error and result.returncode != 0:
        sys.exit(f"{path}: retarget opt failed ({result.returncode}):\n{result.stderr}")
    output = result.stderr if expect_error else result.stdout

    kept = [line for line in lines if not CHECK_RE.match(line)]
    while kept and not kept[-1].strip():
        kept.pop()
    new_text = "\n".join(kept + [""] + check_lines(output, expect_error, path)) + "\n"
    with open(path, encoding="utf-8") as f:
        old_text = f.read()
    if new_text == old_text:
        return False
    if not check_only:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new_text)
    return True


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--retarget", default=os.path.join(root, "build", "bin", "retarget"))
    parser.add_argument("--check", action="store_true",
                        help="report files whose CHECK lines would change; write nothing")
    parser.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args()
    if not os.access(args.retarget, os.X_OK):
        sys.exit(f"{args.retarget}: not an executable (build it, or pass --retarget)")
    changed = [path for path in args.files if bless(path, args.retarget, args.check)]
    for path in changed:
        print(("would change: " if args.check else "blessed: ") + path)
    if args.check and changed:
        sys.exit(1)


if __name__ == "__main__":
    main()

"""Replaces the text between two marker lines of a markdown file (the benchmark scripts' tables
in docs/perf.md, e.g. `<!-- xla-cpu-table:begin -->` ... `<!-- xla-cpu-table:end -->`)."""
import sys


def replace_marked(path, begin_marker, end_marker, lines):
    """Puts `lines` between the markers of `path`; exits with a message when they are missing."""
    with open(path) as f:
        text = f.read()
    begin, end = text.find(begin_marker), text.find(end_marker)
    if begin < 0 or end < begin:
        sys.exit("%s: no %s ... %s lines to replace" % (path, begin_marker, end_marker))
    text = text[:begin + len(begin_marker)] + "\n" + "\n".join(lines) + "\n" + text[end:]
    with open(path, "w") as f:
        f.write(text)
    print("updated", path, file=sys.stderr)

#!/usr/bin/env bash
# Compares, per model, what the systolic target's description claims (the ownership analysis:
# `retarget compile --stats-json`, entries owned by host-fallback) with what the systolic
# lowering actually runs on the host (`--emit asm`, the `# host: NAME (reason)` lines). Prints
# one line per model: both counts, how many agree, and the lowering's reasons for the host steps
# the description calls native (conditions an OpRule cannot express; docs/ownership.md).
# Host steps inside conditional branches and while bodies are lowered separately and are not in
# the printed program, so they show up as "description-only".
#
# usage: scripts/systolic_owner_agreement.sh [BUILD_DIR] MODEL.hlo...
set -euo pipefail
build=build
if [[ $# -gt 0 && -d "$1" ]]; then build=$1; shift; fi
retarget="$build/bin/retarget"
python="$build/venv/bin/python3"  # the build's own interpreter (scripts/setup-python.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for model in "$@"; do
  name=$(basename "$model")
  if ! "$retarget" compile "$model" --target systolic --emit asm -o "$work/p.sasm" --force \
      2>"$work/err" >/dev/null; then
    echo "$name: lowering failed: $(tail -1 "$work/err")"
    continue
  fi
  "$retarget" compile "$model" --target systolic --stats-json "$work/s.json" --force \
      -o /dev/null 2>/dev/null
  grep '^# host:' "$work/p.sasm" | awk '{print $3}' | sort -u >"$work/lowering" || true
  "$python" - "$work/s.json" >"$work/description" <<'PY'
import json, sys
for entry in json.load(open(sys.argv[1]))["entries"]:
    if entry["owner"] == "host-fallback":
        print(entry["name"])
PY
  sort -u -o "$work/description" "$work/description"
  echo "$name: lowering host steps $(wc -l <"$work/lowering"), description host-fallback" \
       "$(wc -l <"$work/description"), both $(comm -12 "$work/lowering" "$work/description" | wc -l)," \
       "lowering-only $(comm -23 "$work/lowering" "$work/description" | wc -l)," \
       "description-only $(comm -13 "$work/lowering" "$work/description" | wc -l)"
  comm -23 "$work/lowering" "$work/description" | while read -r inst; do
    grep -F "# host: $inst (" "$work/p.sasm"
  done | sed -E 's/^# host: [^ ]+ \(//; s/[a-z_-]+\.[0-9]+/X/g; s/[0-9]+/N/g' | cut -c1-80 |
    sort | uniq -c | sort -rn | head -5 | sed 's/^/    lowering-only: /'
done

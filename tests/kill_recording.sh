#!/usr/bin/env bash
# Kills a simulated recording with SIGKILL at random points, N times (default 50), in a scratch
# copy of the project; then runs the same command once more and checks that
#   - every cassette is the committed one, byte for byte except provenance.date (a cassette is
#     either the old file or a complete new one; nothing partial, nothing truncated),
#   - no `.NAME.tmp-PID` file is left (the next run removed those of the killed runs),
#   - `tooltape replay` passes on the result.
# Run by hand (about a minute): tests/kill_recording.sh [N]   (BIN=path/to/tooltape to choose)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-50}
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/debug/tooltape}
[ -x "$BIN" ] || { echo "build first: cargo build (or set BIN)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r cases cassettes "$work/"
mkdir -p "$work/tests" && cp -r tests/snapshots "$work/tests/"

normalized() {
  python3 - "$1" <<'EOF'
import json, os, sys, hashlib
root = sys.argv[1]
for d, _, files in sorted(os.walk(root)):
    for f in sorted(files):
        p = os.path.join(d, f)
        rel = os.path.relpath(p, root)
        if ".tmp-" in f:
            print(rel, "TEMP")
            continue
        try:
            v = json.load(open(p))
            v["provenance"]["date"] = "-"
            print(rel, hashlib.sha256(json.dumps(v, sort_keys=True).encode()).hexdigest())
        except Exception as e:
            print(rel, "BROKEN", e)
EOF
}

normalized "$work/cassettes" > "$work/before"
temps_seen=0
for i in $(seq 1 "$N"); do
  delay=$(python3 -c 'import random; print(round(random.uniform(0.0, 2.5), 3))')
  setsid "$BIN" --root "$work" record --simulate --all >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  t=$(find "$work/cassettes" -name '.*.tmp-*' | wc -l)
  temps_seen=$((temps_seen + t))
  normalized "$work/cassettes" | grep -v TEMP > "$work/after" || true
  if ! diff -q "$work/before" "$work/after" >/dev/null; then
    echo "run $i (killed at ${delay}s): a cassette changed or broke:"
    diff "$work/before" "$work/after" | head -5
    exit 1
  fi
done
echo "$N kills: no cassette changed or broken; $temps_seen temp files were left by the killed runs"
"$BIN" --root "$work" record --simulate >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
echo "next run removed $(grep -c 'left by a killed recording' "$work/err" || true) temp files"
left=$(find "$work/cassettes" -name '.*.tmp-*' | wc -l)
normalized "$work/cassettes" > "$work/after"
diff -q "$work/before" "$work/after" >/dev/null || { echo "cassettes differ after the next run"; exit 1; }
[ "$left" -eq 0 ] || { echo "$left temp files left after the next run"; exit 1; }
"$BIN" --root "$work" replay >/dev/null 2>&1 || { echo "replay fails on the result"; exit 1; }
echo "after the next run: 0 temp files, every cassette intact, replay passes"

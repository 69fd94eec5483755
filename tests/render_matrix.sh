#!/usr/bin/env bash
# Runs the matrix (SYSTEMS, comma-separated; default every shipped profile), renders its page and
# screenshots it in headless Chromium: target/matrix.json, target/matrix.html -> docs/matrix.png.
# Called by `make matrix-png`.
set -euo pipefail
cd "$(dirname "$0")/.."
json=${JSON:-target/matrix.json}
html=${HTML:-target/matrix.html}
png=${PNG:-docs/matrix.png}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "tests/render_matrix.sh: no chromium on PATH; install it: apt-get install -y chromium" >&2
    exit 2
fi
mkdir -p "$(dirname "$json")" "$(dirname "$png")"
# A run with findings still renders (exit 1); a usage error (2) stops here.
cargo run --quiet -- matrix ${SYSTEMS:+--systems "$SYSTEMS"} ${FILTER:+--filter "$FILTER"} --out "$json" --html "$html" || [ $? -eq 1 ]
rows=$(grep -o 'data-case="\|data-class="' "$html" | wc -l)
routes=$(grep -o '<th class="route">' "$html" | wc -l)
height=$((600 + rows * 30))
width=${WIDTH:-$((400 + routes * 64))}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --no-first-run --disable-sync --hide-scrollbars \
    --user-data-dir="$profile" --screenshot="$PWD/$png" --window-size="$width,$height" \
    "file://$PWD/$html" 2>/dev/null
echo "wrote $png (${width}x$height) from $html"

#!/usr/bin/env bash
# Renders the conformance matrix as one HTML page and screenshots it in headless Chromium:
# target/conformance.html -> docs/conformance.png. Called by `make report-png`.
set -euo pipefail
cd "$(dirname "$0")/.."
html=${HTML:-target/conformance.html}
png=${PNG:-docs/conformance.png}
width=${WIDTH:-1560}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "tests/render_report.sh: no chromium on PATH; install it: apt-get install -y chromium" >&2
    exit 2
fi
mkdir -p "$(dirname "$html")" "$(dirname "$png")"
cargo run --quiet -- report --format html --out "$html"
rows=$(grep -o 'data-rows="[0-9]*"' "$html" | grep -o '[0-9][0-9]*')
height=$((480 + rows * 26))
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$profile" --screenshot="$PWD/$png" --window-size="$width,$height" \
    "file://$PWD/$html" 2>/dev/null
echo "wrote $png (${width}x$height) from $html"

#!/usr/bin/env bash
# Report speed: writes 1,000 synthetic stored results (4 targets x 3 repeats x
# 28 tests x 3 thread counts, 60 per-second samples each) into a temp results
# directory and times `rqps report --format html` on them (target: < 1 s).
# Arguments go to bench/gen-results.py (e.g. --names 6 --seconds 600).
# RQPS_BIN=path uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${RQPS_BIN:-}" ]; then
    cargo build --release --quiet
    RQPS_BIN=./target/release/rqps
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=$(python3 bench/gen-results.py "$dir/results" "$@")
echo "results: $n stored results in $(du -sh "$dir/results" | cut -f1)"
for format in html term; do
    /usr/bin/time -f "%e %M" -o "$dir/time" \
        "$RQPS_BIN" report --results "$dir/results" --base v1 --format "$format" -o "$dir/report.$format" 2>/dev/null
    read -r secs kb < "$dir/time"
    echo "rqps report --format $format: $secs s, $((kb / 1024)) MiB peak RSS, $(du -h "$dir/report.$format" | cut -f1) written"
done

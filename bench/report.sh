#!/usr/bin/env bash
# Report speed and readers at scale.
#
#   bench/report.sh [gen-results.py options]
#       Writes 1,000 synthetic stored results (4 targets x 3 repeats x 28 tests x 3
#       thread counts, 60 per-second samples each) into a temp results directory and
#       times `rqps report --format html` and `term` on them (target: < 1 s).
#       Arguments go to bench/gen-results.py (e.g. --names 6 --seconds 600).
#
#   bench/report.sh --ci-runs N [--from RUN_DIR]
#       Readers at scale (issue 40): N stored runs of the `ci` profile (2,000 make
#       321 MB), copies of one real `rqps run --profile ci` on SQLite (made here unless
#       --from names a stored run), 20 names in turn. Measures `rqps report` (term,
#       html, json), `rqps history` and `rqps runs` with /usr/bin/time: wall seconds
#       and peak resident memory (targets: report under 200 MB, history under 10 s).
#       RQPS_BASE_BIN=path measures that binary too, alternating with RQPS_BIN, for a
#       before/after in one run on one machine.
#
# RQPS_BIN=path uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${RQPS_BIN:-}" ]; then
    cargo build --release --quiet
    RQPS_BIN=./target/release/rqps
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# One timed command: prints "LABEL: S s, M MiB peak RSS".
timed() {
    local label=$1
    shift
    /usr/bin/time -f "%e %M" -o "$dir/time" "$@" >/dev/null 2>"$dir/stderr" || {
        cat "$dir/stderr" >&2
        return 1
    }
    read -r secs kb < "$dir/time"
    echo "$label: $secs s, $((kb / 1024)) MiB peak RSS"
}

if [ "${1:-}" = "--ci-runs" ]; then
    runs=${2:?--ci-runs N}
    from=""
    [ "${3:-}" = "--from" ] && from=${4:?--from RUN_DIR}
    if [ -z "$from" ]; then
        "$RQPS_BIN" run --profile ci -q --results "$dir/one" >/dev/null
        from=$(ls -d "$dir"/one/*/ | head -1)
    fi
    python3 bench/gen-results.py "$dir/results" --from "$from" --runs "$runs" >/dev/null
    echo "results: $runs runs of the ci profile in $(du -sh "$dir/results" | cut -f1)"
    bins=("$RQPS_BIN")
    [ -n "${RQPS_BASE_BIN:-}" ] && bins=("$RQPS_BASE_BIN" "$RQPS_BIN")
    for round in 1 2; do
        for bin in "${bins[@]}"; do
            echo "round $round, $bin:"
            for format in term html json; do
                timed "  rqps report --format $format" \
                    "$bin" report --results "$dir/results" --base v1 --format "$format" -o "$dir/report.$format"
            done
            timed "  rqps history" "$bin" history --results "$dir/results" -o "$dir/history.txt"
            timed "  rqps runs" "$bin" runs --results "$dir/results"
        done
    done
    exit 0
fi

n=$(python3 bench/gen-results.py "$dir/results" "$@")
echo "results: $n stored results in $(du -sh "$dir/results" | cut -f1)"
for format in html term; do
    /usr/bin/time -f "%e %M" -o "$dir/time" \
        "$RQPS_BIN" report --results "$dir/results" --base v1 --format "$format" -o "$dir/report.$format" 2>/dev/null
    read -r secs kb < "$dir/time"
    echo "rqps report --format $format: $secs s, $((kb / 1024)) MiB peak RSS, $(du -h "$dir/report.$format" | cut -f1) written"
done

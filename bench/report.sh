#!/usr/bin/env bash
# Report speed and readers at scale.
#
#   bench/report.sh [gen-results.py options]
#       Writes 1,000 synthetic stored results (4 targets x 3 repeats x 28 tests x 3
#       thread counts, 60 per-second samples each) into a temp results directory and
#       times `rqps report --format html` and `term` on them (target: < 1 s).
#       Arguments go to bench/gen-results.py (e.g. --names 6 --seconds 600).
#
#   bench/report.sh --ci-runs N [--from RUN_DIR] [--names K]
#       Readers at scale (issues 40, 56): N stored runs of the `ci` profile (2,000 make
#       321 MB), copies of one real `rqps run --profile ci` on SQLite (made here unless
#       --from names a stored run), K names in turn (default 20; issue 56's case is
#       --ci-runs 2000 --names 2: 1,000 repeats each). Measures `rqps report` (term,
#       html, json, csv), `rqps history` and `rqps runs` with /usr/bin/time: wall
#       seconds and peak resident memory (targets: every report, json and csv
#       included, under 200 MB and 30 s; history under 10 s), and the lines each
#       report wrote to standard error (notes alike are folded into one with a
#       count, so a handful, not one per run).
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
    echo "$label: $secs s, $((kb / 1024)) MiB peak RSS, $(wc -l <"$dir/stderr") stderr lines"
}

if [ "${1:-}" = "--ci-runs" ]; then
    runs=${2:?--ci-runs N}
    from=""
    names=20
    shift 2
    while [ $# -gt 0 ]; do
        case "$1" in
            --from) from=${2:?--from RUN_DIR}; shift 2 ;;
            --names) names=${2:?--names K}; shift 2 ;;
            *) echo "unknown argument $1 (see the top of $0)" >&2; exit 2 ;;
        esac
    done
    if [ -z "$from" ]; then
        "$RQPS_BIN" run --profile ci -q --results "$dir/one" >/dev/null
        from=$(ls -d "$dir"/one/*/ | head -1)
    fi
    python3 bench/gen-results.py "$dir/results" --from "$from" --runs "$runs" --names "$names" >/dev/null
    echo "results: $runs runs of the ci profile as $names names in $(du -sh "$dir/results" | cut -f1)"
    bins=("$RQPS_BIN")
    [ -n "${RQPS_BASE_BIN:-}" ] && bins=("$RQPS_BASE_BIN" "$RQPS_BIN")
    for round in 1 2; do
        for bin in "${bins[@]}"; do
            echo "round $round, $bin:"
            for format in term html json csv; do
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

#!/usr/bin/env bash
# `rqps serve` over a large results folder (issue 59): the runs page and a comparison page
# must answer in 1 s or less after the server has started, and the server's memory stay at
# 300 MB or less.
#
#   bench/serve.sh [--runs N] [--names K] [--from RUN_DIR] [--keep DIR]
#       Copies one real `rqps run --profile ci` on SQLite (made here unless --from names a
#       stored run) N times (default 10,000) into a folder under $TMPDIR, as K names in turn
#       (default 2,000: five repeats each; gen-results.py, 3 % noise), starts `rqps serve` on
#       it and measures, with curl, the first answer of each page after start (the page
#       caches nothing yet) and a second one (cached where the page caches):
#         /runs, /runs?page=100, /runs?name=v7 (a filter over every run),
#         /compare?base=v1&target=v2 (HTML and JSON), /history?name=v1*,
#         /run/RUN-ID (the newest run), /compat.
#       Prints each page's seconds, the time to index the folder at start, and the server's
#       peak resident memory (VmHWM) after all of them. A comparison reads the runs of the
#       names it compares (ten here): with --names 20 each name has 500 repeats, the worst
#       case, and the comparison reads 1,000 runs.
#       --keep DIR keeps (or reuses, if it holds runs) the generated folder in DIR.
#
# RQPS_BIN=path uses that binary instead of building the release one. On a quiet machine
# only (load average under 0.5): the figures go into docs/selfbench.md.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=10000
names=2000
from=""
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --names) names=$2; shift 2 ;;
        --from) from=$2; shift 2 ;;
        --keep) keep=$2; shift 2 ;;
        *) echo "unknown argument $1 (see the top of $0)" >&2; exit 2 ;;
    esac
done
if [ -z "${RQPS_BIN:-}" ]; then
    cargo build --release --quiet
    RQPS_BIN=./target/release/rqps
fi
tmp=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

results=${keep:-$tmp/results}
if [ -z "$(ls -A "$results" 2>/dev/null)" ]; then
    if [ -z "$from" ]; then
        "$RQPS_BIN" run --profile ci -q --results "$tmp/one" >/dev/null
        from=$(ls -d "$tmp"/one/*/ | head -1)
    fi
    mkdir -p "$results"
    python3 bench/gen-results.py "$results" --from "$from" --runs "$runs" --names "$names" >/dev/null
fi
echo "results: $(ls "$results" | wc -l) runs in $(du -sh "$results" | cut -f1) ($results)"

"$RQPS_BIN" serve -q --results "$results" --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
server=$!
start=$(date +%s.%N)
until grep -q "^serving" "$tmp/out" 2>/dev/null; do
    kill -0 "$server" 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }
    sleep 0.05
done
ready=$(date +%s.%N)
addr=$(sed -n 's|.*http://\([^/]*\)/.*|\1|p' "$tmp/out")
printf 'start (index %s): %.2f s\n' "$(grep -o 'indexed [0-9]* runs' "$tmp/err")" "$(echo "$ready - $start" | bc)"

newest=$(curl -s "http://$addr/runs?per=1&format=json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["run_id"])')
for page in "/runs" "/runs?page=100" "/runs?name=v7" "/compare?base=v1&target=v2" \
    "/compare?base=v1&target=v2&format=json" "/history?name=v1*" "/run/$newest" "/compat"; do
    first=$(curl -s -o "$tmp/page" -w '%{http_code} %{time_total}' "http://$addr$page")
    again=$(curl -s -o /dev/null -w '%{time_total}' "http://$addr$page")
    printf '%-45s %s s first (HTTP %s), %s s again, %s bytes\n' "$page" "${first#* }" "${first%% *}" "$again" "$(wc -c <"$tmp/page")"
done
echo "server memory: $(awk '/VmHWM/ {printf "%.0f MB peak", $2/1024} /VmRSS/ {printf ", %.0f MB now", $2/1024}' "/proc/$server/status")"

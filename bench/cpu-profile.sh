#!/usr/bin/env bash
# The cost of --cpu-profile: point-query QPS on a throwaway PostgreSQL with
# and without profiling, alternating (off on off on ...), each run its own
# server. Prints each run and the median QPS ratio on/off.
#   bench/cpu-profile.sh [ROUNDS] [READ_SECS]     (RQPS=path picks the binary)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-10}
if [ -z "${RQPS:-}" ]; then
    cargo build --release --quiet
    RQPS=./target/release/rqps
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for r in $(seq "$rounds"); do
    for mode in off on; do
        flag=()
        [ "$mode" = on ] && flag=(--cpu-profile)
        "$RQPS" run --server postgres --profile ci --tests point-query \
            --read-secs "$secs" --name "$mode" --results "$dir/r" -q \
            --json "$dir/$mode-$r.json" "${flag[@]}" >/dev/null 2>&1
        python3 - "$dir/$mode-$r.json" "$mode" "$r" <<'PY'
import json, sys
t = [t for t in json.load(open(sys.argv[1]))["tests"] if t["test"] == "point-query" and t["reported"]][0]
print(f"round {sys.argv[3]} {sys.argv[2]:>3}: {t['qps']:9.1f} QPS  server cpu/o {t['hw']['server_cpu_us_per_op']:.2f} us")
PY
    done
done
python3 - "$dir" "$rounds" <<'PY'
import json, sys, statistics
d, n = sys.argv[1], int(sys.argv[2])
q = lambda m, r: [t for t in json.load(open(f"{d}/{m}-{r}.json"))["tests"] if t["test"] == "point-query" and t["reported"]][0]["qps"]
ratios = [q("on", r) / q("off", r) for r in range(1, n + 1)]
print("on/off QPS ratio per round:", " ".join(f"{x:.3f}" for x in ratios), f"; median {statistics.median(ratios):.3f}")
PY

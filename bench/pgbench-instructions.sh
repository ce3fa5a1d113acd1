#!/usr/bin/env bash
# Instructions and (simulated) first-level data-cache misses per transaction,
# pgbench against rqps's pgbench suite, under valgrind's callgrind with its
# cache simulation: deterministic, so it shows where a client's CPU goes when
# timing on a 2-CPU machine is noise, and it separates "more work" (Ir) from
# "work spread over more memory" (D1 misses: each a line that another
# connection's work, or the kernel's, pushed out since this connection ran).
#
# Each tool runs twice (SHORT and LONG seconds) and the difference is divided
# by the difference of the transactions, so connecting and starting cancel
# out. pgbench: every thread. rqps: the threads that run connections (not
# the main thread, nor the once-a-second sampler, whose cost is per second:
# about 3 million instructions a second, some 60 a transaction at 50,000 a
# second, but hundreds under valgrind, which runs rqps a hundred times slower).
#
# Usage: [RQPS=PATH] bench/pgbench-instructions.sh URL CLIENTS [CLIENT_THREADS] [WORKLOAD] [SHORT] [LONG]
#   URL: postgres://USER@HOST:PORT/DB of a server you run (the pgbench tables
#        at scale 2 are created there if missing); CLIENT_THREADS: rqps's
#        --client-threads (default: its default); WORKLOAD: select-only
#        (default) or tpcb-like; SHORT/LONG: seconds (default 2 and 6).
# Needs valgrind and pgbench (the real binary, not Debian's wrapper).
set -euo pipefail
cd "$(dirname "$0")/.."
URL=${1:?usage: bench/pgbench-instructions.sh URL CLIENTS [CLIENT_THREADS] [WORKLOAD] [SHORT] [LONG]}
C=${2:?clients}
CT=${3:-}
W=${4:-select-only}
SHORT=${5:-2}
LONG=${6:-6}
if [ -z "${RQPS:-}" ]; then
  cargo build --release --quiet
  RQPS=target/release/rqps
fi
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
hostport=${URL#*@}; hostport=${hostport%%/*}
export PGHOST=${hostport%:*} PGPORT=${hostport##*:} PGDATABASE=${URL##*/}
u=${URL#postgres://}; export PGUSER=${u%%@*}
"$PGBIN/psql" -Atqc "SELECT 1 FROM pgbench_accounts LIMIT 1" >/dev/null 2>&1 ||
  "$PGBIN/pgbench" -i -s 2 -q >/dev/null 2>&1
OUT=${OUT:-$(mktemp -d /tmp/pgbench-instructions.XXXX)}
mkdir -p "$OUT"

# run TOOL SECS TAG: prints "transactions Ir D1mr D1mw" of every thread.
run() {
  local tool=$1 secs=$2 tag=$tool-$3 tx
  local cg=(valgrind --tool=callgrind --cache-sim=yes --separate-threads=yes --dump-instr=no
    --callgrind-out-file="$OUT/$tag.cg")
  if [ "$tool" = rqps ]; then
    local ct=()
    [ -n "$CT" ] && ct=(--client-threads "$CT")
    "${cg[@]}" "$RQPS" run --suite pgbench --target "$URL" --results "$OUT/results-$tag" \
      --json "$OUT/$tag.json" --busy-threshold 100 -q --profile quick --skip-init --scale 2 \
      --builtin "$W" --protocol prepared --clients "$C" "${ct[@]}" --time "$secs" \
      >"$OUT/$tag.log" 2>&1 || { tail -3 "$OUT/$tag.log" >&2; exit 1; }
    tx=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(next(t for t in d['tests'] if t['test']=='pgbench')['events'])" "$OUT/$tag.json")
  else
    local s=()
    [ "$W" = select-only ] && s=(-S)
    "${cg[@]}" "$PGBIN/pgbench" -n "${s[@]}" -M prepared -c "$C" -j 2 -T "$secs" \
      >"$OUT/$tag.log" 2>&1 || { tail -3 "$OUT/$tag.log" >&2; exit 1; }
    tx=$(awk '/number of transactions actually processed/ {print $NF}' "$OUT/$tag.log" | cut -d/ -f1)
  fi
  python3 - "$tx" "$OUT/$tag.cg" <<'PY'
import glob, re, sys
tot = None
for f in glob.glob(sys.argv[2] + "-*"):
    t = open(f).read()
    if re.search(r"^cmd:.* run --suite pgbench", t, re.M) and (
        f.endswith("-01") or not re.search(r"evloop::sched::run_until|runner::work", t)):
        continue
    ev = re.search(r"^events: (.*)$", t, re.M).group(1).split()
    v = dict(zip(ev, map(int, re.search(r"^summary: (.*)$", t, re.M).group(1).split())))
    row = [v.get(k, 0) for k in ("Ir", "D1mr", "D1mw")]
    tot = row if tot is None else [a + b for a, b in zip(tot, row)]
print(sys.argv[1], *tot)
PY
}

echo "per transaction, $W, $C clients (pgbench -j 2; rqps ${CT:+--client-threads $CT}${CT:-its default placement}):"
for tool in pgbench rqps; do
  read -r q1 i1 r1 w1 < <(run $tool "$SHORT" short)
  read -r q2 i2 r2 w2 < <(run $tool "$LONG" long)
  n=$((q2 - q1))
  awk -v t="$tool" -v n="$n" -v i=$((i2 - i1)) -v r=$((r2 - r1)) -v w=$((w2 - w1)) -v a="$q1" -v b="$q2" \
    'BEGIN { printf "%-8s instructions %6d   D1 read misses %5.1f   D1 write misses %5.1f   (%d and %d transactions)\n", t, i / n, r / n, w / n, a, b }'
done
echo "files: $OUT"

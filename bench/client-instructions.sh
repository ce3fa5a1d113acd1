#!/usr/bin/env bash
# Instructions per statement of rqps's client threads, under valgrind's
# callgrind: deterministic, so it shows what a change to the wire clients or
# the client core costs where timing on a busy machine is noise.
#
# Runs `rqps run --suite select1` (one SELECT 1 per event) against a
# throwaway server of KIND twice, for SHORT and LONG seconds, each under
# `valgrind --tool=callgrind --separate-threads=yes`, and prints the
# instructions of the client threads (the threads that ran connections: a
# thread per connection, or the core's client threads; not the main thread,
# the sampler or the progress display) per statement, from the difference of
# the two runs, so connecting and the step's start and end cancel out.
# Compare a thread per connection (CLIENT_THREADS=0) with the core
# (CLIENT_THREADS=1 or 2), and a build before a change with one after it.
# Per-function counts: callgrind_annotate on the files kept in OUT.
#
# Usage: [RQPS=PATH] [OUT=DIR] bench/client-instructions.sh KIND [CLIENT_THREADS (default 1)] [THREADS (default 16)] [SHORT (default 2)] [LONG (default 6)]
#   KIND: mariadb or postgres (the system's), or KIND@VERSION from `rqps engine install`
# Needs valgrind and the server package.
set -euo pipefail
cd "$(dirname "$0")/.."
KIND=${1:?usage: bench/client-instructions.sh mariadb|postgres [CLIENT_THREADS] [THREADS] [SHORT] [LONG]}
CT=${2:-1}
THREADS=${3:-16}
SHORT=${4:-2}
LONG=${5:-6}
if [ -z "${RQPS:-}" ]; then
  cargo build --release --quiet
  RQPS=target/release/rqps
fi
OUT=${OUT:-$(mktemp -d /tmp/client-instructions.XXXX)}
mkdir -p "$OUT"

# run SECS TAG: prints "statements instructions" of the client threads.
run() {
  local secs=$1 tag=$2
  valgrind --tool=callgrind --separate-threads=yes --dump-instr=no \
    --callgrind-out-file="$OUT/$tag.cg" \
    "$RQPS" run --server "$KIND" --suite select1 --threads "$THREADS" \
    --client-threads "$CT" --secs "$secs" --warmup-secs 0 -q --busy-threshold 100 \
    --results "$OUT/results-$tag" --json "$OUT/$tag.json" >"$OUT/$tag.log" 2>&1 ||
    { tail -5 "$OUT/$tag.log" >&2; exit 1; }
  python3 - "$OUT" "$tag" <<'PY'
import glob, json, re, sys
out, tag = sys.argv[1], sys.argv[2]
t = json.load(open(f"{out}/{tag}.json"))["tests"][0]
statements = t["reads"] + t["writes"] + t["other"]
total = 0
for f in sorted(glob.glob(f"{out}/{tag}.cg-*")):
    text = open(f).read()
    # The main thread (-01) starts the step; the client threads run it.
    if f.endswith("-01") or not re.search(r"evloop::sched::run_until|runner::work", text):
        continue
    total += int(re.search(r"^summary: (\d+)", text, re.M).group(1))
print(statements, total)
PY
}

read -r q1 i1 < <(run "$SHORT" short)
read -r q2 i2 < <(run "$LONG" long)
echo "$KIND, $THREADS connections, --client-threads $CT: $q1 and $q2 statements;" \
  "client threads' instructions per statement: $(( (i2 - i1) / (q2 - q1) ))  (files: $OUT)"

#!/usr/bin/env bash
# Instructions per query of a sysbench Lua script's client, rqps `--script` against
# sysbench 1.0.20, under valgrind's callgrind: deterministic, so it shows what a change to
# the Lua path costs where timing on a busy machine is noise (bench/sysbench-lua.sh times
# the same on a quiet machine).
#
# Each tool runs the unchanged script twice, for SHORT and LONG seconds, under
# `valgrind --tool=callgrind --separate-threads=yes`; the instructions of its client
# threads (sysbench: its worker threads; rqps: the threads that ran events, a thread per
# connection or the core's client threads) from the difference of the two runs, divided by
# the difference in queries, so start-up, connecting and the end cancel out. The whole
# process's difference is printed beside (rqps's sampler, watchdog and progress threads
# are not client threads).
#
#   bench/lua-instructions.sh URL [--threads 2,16] [--client-threads 1] [--short 2] [--long 6]
#       [--script PATH] [--tools rqps,sysbench] [--table-size 10000]
#
# URL: mysql://USER@HOST:PORT/DB or postgres://USER@HOST:PORT/DB, as bench/sysbench-lua.sh
# takes it (a user without a password; an empty database: the script prepares and drops
# its table). --client-threads: rqps's (0: a thread per connection). Per-function counts:
# callgrind_annotate on the files kept in OUT (default: a new temporary directory).
# RQPS=path/to/rqps measures that binary instead of building this checkout's release build.
set -euo pipefail
cd "$(dirname "$0")/.."
url=${1:?usage: bench/lua-instructions.sh URL [--threads 2,16] [--client-threads 1] [--short 2] [--long 6] [--script PATH] [--tools rqps,sysbench]}
shift
threads=2,16 ct=1 short=2 long=6 script=/usr/share/sysbench/oltp_point_select.lua
tools=rqps,sysbench size=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --client-threads) ct=$2; shift 2 ;;
    --short) short=$2; shift 2 ;;
    --long) long=$2; shift 2 ;;
    --script) script=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --table-size) size=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "${RQPS:-}" ]; then cargo build --release --quiet; RQPS=target/release/rqps; fi
OUT=${OUT:-$(mktemp -d /tmp/lua-instructions.XXXX)}
mkdir -p "$OUT"

. bench/sysbench-target.sh
sysbench_target "$url"
shape=(--tables=1 --table-size="$size")
if ! sysbench "$script" "${sb[@]}" "${shape[@]}" prepare >"$OUT/prepare.log" 2>&1; then
  echo "sysbench prepare failed (is there a table sbtest1 already? use an empty database):" >&2
  tail -3 "$OUT/prepare.log" >&2
  exit 2
fi
trap 'sysbench "$script" "${sb[@]}" "${shape[@]}" cleanup >/dev/null 2>&1 || true' EXIT

cg=(valgrind --tool=callgrind --separate-threads=yes --dump-instr=no)

# sum TAG CLIENT_PATTERN: "client_instructions all_instructions" of TAG's files.
sum() {
  python3 - "$OUT" "$1" "$2" <<'PY'
import glob, re, sys
out, tag, pat = sys.argv[1:4]
client = total = 0
for f in sorted(glob.glob(f"{out}/{tag}.cg-*")):
    text = open(f).read()
    n = int(re.search(r"^summary: (\d+)", text, re.M).group(1))
    total += n
    # The main thread (-01) starts the step; the client threads run it.
    if not f.endswith("-01") and re.search(pat, text):
        client += n
print(client, total)
PY
}

# run_sysbench THREADS SECS TAG: "queries client all".
run_sysbench() {
  "${cg[@]}" --callgrind-out-file="$OUT/$3.cg" sysbench "$script" "${sb[@]}" "${shape[@]}" \
    --threads="$1" --time="$2" run >"$OUT/$3.log" 2>&1 || { tail -5 "$OUT/$3.log" >&2; exit 1; }
  local q; q=$(awk '/queries:/ && !/performed/ { print $2; exit }' "$OUT/$3.log")
  echo "$q $(sum "$3" 'sb_lua_op_|worker_thread|thread_run|db_execute')"
}
# run_rqps THREADS SECS TAG: "queries client all".
run_rqps() {
  "${cg[@]}" --callgrind-out-file="$OUT/$3.cg" "$RQPS" run --target "$url" --suite sysbench \
    --script "$script" -q --busy-threshold 100 --client-threads "$ct" \
    --results "$OUT/results-$3" --json "$OUT/$3.json" --allow-mismatch \
    -- "${shape[@]}" --threads="$1" --time="$2" run >"$OUT/$3.log" 2>&1 ||
    { tail -5 "$OUT/$3.log" >&2; exit 1; }
  local q
  q=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tests"][-1]; print(t["reads"]+t["writes"]+t["other"])' "$OUT/$3.json")
  echo "$q $(sum "$3" 'evloop::sched::run_until|runner::work')"
}

for t in ${threads//,/ }; do
  for tool in ${tools//,/ }; do
    read -r q1 c1 a1 < <("run_$tool" "$t" "$short" "$tool-t$t-short")
    read -r q2 c2 a2 < <("run_$tool" "$t" "$long" "$tool-t$t-long")
    extra=""; [ "$tool" = rqps ] && extra=", --client-threads $ct"
    echo "$tool, ${url%%://*}, $t threads$extra: $q1 and $q2 queries; instructions per query:" \
      "client threads $(( (c2 - c1) / (q2 - q1) )), whole process $(( (a2 - a1) / (q2 - q1) ))"
  done
done
echo "(files: $OUT)"

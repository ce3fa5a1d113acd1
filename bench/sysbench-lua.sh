#!/usr/bin/env bash
# The client cost of a sysbench Lua script through rqps (`--script`) against sysbench itself:
# the same unchanged oltp_point_select.lua on the same server, alternating rounds A B A B,
# each tool's user+system CPU per query (its own process, from /usr/bin/time) and its QPS.
# Prints each run, then per thread count the medians of the rounds' ratios
# (targets: client CPU per query rqps/sysbench <= 0.8, QPS rqps/sysbench >= 1.0).
# Run it on a quiet machine (load average < 0.5), the server on the same host.
#
#   bench/sysbench-lua.sh URL [--threads 2,16] [--rounds 4] [--secs 20] [--table-size 10000]
#
# URL: mysql://USER@HOST:PORT/DB or postgres://USER@HOST:PORT/DB, a user both tools reach
# without a password on their command lines (sysbench takes it only there): a test user
# without one, or PostgreSQL's peer login with HOST a socket directory. rqps reads a
# password from --password-file if the user has one; give sysbench's with MYSQL_PWD /
# PGPASSWORD in the environment. The script prepares and cleans up its one table.
# RQPS=path/to/rqps measures that binary instead of building this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
url=${1:?usage: bench/sysbench-lua.sh URL [--threads 2,16] [--rounds 4] [--secs 20] [--table-size 10000]}
shift
threads=2,16 rounds=4 secs=20 size=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --secs) secs=$2; shift 2 ;;
    --table-size) size=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# RQPS: an rqps binary to measure (default: this checkout's release build, built now).
if [ -n "${RQPS:-}" ]; then rqps=$RQPS; else cargo build --release --quiet; rqps=./target/release/rqps; fi
script=/usr/share/sysbench/oltp_point_select.lua

. bench/sysbench-target.sh
sysbench_target "$url"
shape=(--tables=1 --table-size="$size")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Its own table, dropped at the end; one that is there already is left alone.
if ! sysbench "$script" "${sb[@]}" "${shape[@]}" prepare >"$work/prepare" 2>&1; then
  echo "sysbench prepare failed (is there a table sbtest1 already? use an empty database):" >&2
  tail -3 "$work/prepare" >&2
  exit 2
fi
trap 'sysbench "$script" "${sb[@]}" "${shape[@]}" cleanup >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# One run: "cpu_seconds queries qps".
run_sysbench() {
  /usr/bin/time -f "%U %S" -o "$work/time" \
    sysbench "$script" "${sb[@]}" "${shape[@]}" --threads="$1" --time="$secs" run >"$work/out"
  local q qps
  q=$(awk '/queries:/ && !/performed/ { print $2; exit }' "$work/out")
  qps=$(awk '/queries:/ && !/performed/ { gsub(/[(]/, "", $3); print $3; exit }' "$work/out")
  echo "$(awk '{ print $1 + $2 }' "$work/time") $q $qps"
}
run_rqps() {
  /usr/bin/time -f "%U %S" -o "$work/time" \
    "$rqps" run --target "$url" --suite sysbench --script "$script" -q --busy-threshold 100 \
      --results "$work/results" --json "$work/run.json" --allow-mismatch \
      -- "${shape[@]}" --threads="$1" --time="$secs" run >/dev/null 2>&1
  python3 - "$work/run.json" "$(awk '{ print $1 + $2 }' "$work/time")" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["tests"][-1]
print(sys.argv[2], t["reads"] + t["writes"] + t["other"], f"{t['qps']:.2f}")
EOF
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in ${threads//,/ }; do
  cpu_ratios=() qps_ratios=()
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then s=$(run_sysbench "$t"); q=$(run_rqps "$t"); else q=$(run_rqps "$t"); s=$(run_sysbench "$t"); fi
    read -r s_cpu s_q s_qps <<<"$s"; read -r q_cpu q_q q_qps <<<"$q"
    s_us=$(python3 -c "print(f'{$s_cpu * 1e6 / $s_q:.2f}')"); q_us=$(python3 -c "print(f'{$q_cpu * 1e6 / $q_q:.2f}')")
    echo "threads $t round $r: sysbench ${s_us} us/q ${s_qps} qps; rqps --script ${q_us} us/q ${q_qps} qps"
    cpu_ratios+=("$(python3 -c "print($q_us / $s_us)")"); qps_ratios+=("$(python3 -c "print($q_qps / $s_qps)")")
  done
  python3 - "$t" "${cpu_ratios[*]}" "${qps_ratios[*]}" <<'EOF'
import statistics, sys
cpu = [float(x) for x in sys.argv[2].split()]
qps = [float(x) for x in sys.argv[3].split()]
print(f"threads {sys.argv[1]}: median client CPU/query rqps/sysbench = {statistics.median(cpu):.2f} "
      f"(target <= 0.8), median QPS rqps/sysbench = {statistics.median(qps):.3f} (target >= 1.0)")
EOF
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# rqps's pgbench suite beside real pgbench on one PostgreSQL server.
#
# Starts one throwaway PostgreSQL server (the newest installed under
# /usr/lib/postgresql), then:
#  1. `pgbench -i -s 2` and `rqps --suite pgbench --scale 2` initialisation:
#     the four tables' row counts after each, side by side (must be equal).
#  2. select-only, --protocol prepared, 2 clients: pgbench and rqps in turn,
#     A B A B for ROUNDS rounds of SECS seconds each, on the same tables; per
#     run TPS and client CPU (user and system, microseconds per transaction,
#     from the process's own CPU times: `times` of the subshell that ran it).
#  3. tpcb-like, --protocol prepared, 2 clients: the same alternation and
#     figures, and after each run the balances invariant sum(abalance) =
#     sum(bbalance) = sum(tbalance) = sum(delta) read with psql.
# Prints one line per run and the medians; exits 1 if a row count or the
# invariant differs.
#
# Usage: [RQPS=PATH] [PGBIN=DIR] [PGBENCH=PATH] bench/vs-pgbench.sh [ROUNDS (default 3)] [SECS (default 10)]
# Needs the postgresql package (pgbench, psql, initdb, pg_ctl).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-10}
# RQPS=PATH measures that binary instead of building the release one.
if [ -z "${RQPS:-}" ]; then
  cargo build --release --quiet
  RQPS=$PWD/target/release/rqps
fi
# PGBIN=DIR takes the server binaries (initdb, pg_ctl, psql) from DIR.
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
PGBENCH=${PGBENCH:-/usr/bin/pgbench}
PSQL=$PGBIN/psql
PORT=${PORT:-55432}
work=$(mktemp -d /tmp/vs-pgbench.XXXXXX)
chmod 755 "$work"
as_pg=()
if [ "$(id -u)" = 0 ]; then
  user=$(id -u postgres >/dev/null 2>&1 && echo postgres || echo nobody)
  chown "$user" "$work"
  as_pg=(runuser -u "$user" --)
fi
cleanup() {
  "${as_pg[@]}" "$PGBIN/pg_ctl" -D "$work/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"${as_pg[@]}" "$PGBIN/initdb" -D "$work/data" -U postgres --auth=trust >/dev/null
cat >>"$work/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work'
port = $PORT
shared_buffers = 256MB
max_wal_size = 4GB
# Commits do not wait for the disk: tpcb-like then measures the clients, not
# the shared disk's fsync (at ~200 commits/s the clients' fixed costs swamp
# their cost per transaction).
synchronous_commit = off
EOF
"${as_pg[@]}" "$PGBIN/pg_ctl" -D "$work/data" -l "$work/log" -w start >/dev/null
"$PSQL" -h "$work" -p "$PORT" -U postgres -qc "CREATE DATABASE bench" postgres
export PGHOST=$work PGPORT=$PORT PGUSER=postgres PGDATABASE=bench
URL="postgres://postgres@/bench?host=$work&port=$PORT"
echo "server: $("$PSQL" -Atc 'SHOW server_version'); pgbench: $("$PGBENCH" --version); rqps: $("$RQPS" --version)"
echo "host: $(nproc) CPUs; rounds $ROUNDS x $SECS s"
fail=0

counts() {
  "$PSQL" -Atc "SELECT (SELECT count(*) FROM pgbench_branches) || ' ' || (SELECT count(*) FROM pgbench_tellers) || ' ' || (SELECT count(*) FROM pgbench_accounts) || ' ' || (SELECT count(*) FROM pgbench_history)"
}
balances() {
  "$PSQL" -Atc "SELECT (SELECT sum(abalance) FROM pgbench_accounts) || ' ' || (SELECT sum(bbalance) FROM pgbench_branches) || ' ' || (SELECT sum(tbalance) FROM pgbench_tellers) || ' ' || (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
}
# Runs "$@" and prints the children's user and system CPU seconds.
cpu_of() {
  local t
  t=$( { "$@" >"$work/out" 2>&1; times; } | tail -1)
  # "0m1.234s 0m0.567s": children's user and system time.
  echo "$t" | awk '{ gsub("s","",$1); gsub("s","",$2); split($1,u,"m"); split($2,s,"m"); printf "%.3f %.3f\n", u[1]*60+u[2], s[1]*60+s[2] }'
}
# Each run under a name of its own (RUN_NAME): runs with other options are
# another experiment, which rqps refuses to pool under one name. The JSON
# document is removed first, so a refused or failed run is not read as the
# one before it.
rqps_pgbench() {
  rm -f "$work/run.json"
  "$RQPS" run --suite pgbench --target "$URL" --results "$work/results" \
    --json "$work/run.json" --busy-threshold 100 --quiet --profile quick \
    --name "${RUN_NAME:-init}" "$@"
}
# The transactions and TPS of rqps's last run.
rqps_tx() {
  python3 -c "import json; d=json.load(open('$work/run.json')); t=next(t for t in d['tests'] if t['test']=='pgbench'); print(t['events'], round(t['tps'], 1))"
}

echo
echo "== initialisation at scale 2 (branches tellers accounts history)"
"$PGBENCH" -i -s 2 -q >/dev/null 2>&1
a=$(counts)
echo "pgbench -i -s 2:          $a"
rqps_pgbench --scale 2 --builtin select-only --transactions 1 --clients 1 >/dev/null
b=$(counts)
echo "rqps --scale 2 (its init): $b"
if [ "$a" != "$b" ]; then echo "ROW COUNTS DIFFER"; fail=1; fi

echo
echo "== select-only, --protocol prepared, 2 clients, ${SECS} s per run"
printf '%-8s %5s %10s %14s %14s\n' tool round tps user_us/tx sys_us/tx
: >"$work/sel"
for r in $(seq 1 "$ROUNDS"); do
  read -r u s < <(cpu_of "$PGBENCH" -n -S -M prepared -c 2 -j 2 -T "$SECS")
  tx=$(awk '/number of transactions actually processed/ {print $NF}' "$work/out" | cut -d/ -f1)
  tps=$(awk '/^tps = / {print $3; exit}' "$work/out")
  awk -v r="$r" -v tx="$tx" -v u="$u" -v s="$s" -v tps="$tps" 'BEGIN { printf "%-8s %5d %10s %14.2f %14.2f\n", "pgbench", r, tps, u*1e6/tx, s*1e6/tx }' | tee -a "$work/sel"
  RUN_NAME=select-only-$r
  read -r u s < <(cpu_of rqps_pgbench --skip-init --builtin select-only --protocol prepared --clients 2 --time "$SECS" --scale 2)
  read -r tx tps < <(rqps_tx)
  awk -v r="$r" -v tx="$tx" -v u="$u" -v s="$s" -v tps="$tps" 'BEGIN { printf "%-8s %5d %10s %14.2f %14.2f\n", "rqps", r, tps, u*1e6/tx, s*1e6/tx }' | tee -a "$work/sel"
done
medians() {
python3 - "$1" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
med = {}
for tool in ("pgbench", "rqps"):
    mine = [r for r in rows if r[0] == tool]
    med[tool] = [statistics.median(float(r[i]) for r in mine) for i in (2, 3, 4)]
    print(f"median {tool:8} tps {med[tool][0]:.1f}  user us/tx {med[tool][1]:.2f}  sys us/tx {med[tool][2]:.2f}")
p, q = med["pgbench"], med["rqps"]
print(f"rqps/pgbench: tps {q[0] / p[0]:.3f}  user us/tx {q[1] / p[1]:.3f}")
PY
}
medians "$work/sel"

echo
echo "== tpcb-like, --protocol prepared, 2 clients, ${SECS} s per run; balances after each (accounts branches tellers history)"
printf '%-8s %5s %10s %14s %14s\n' tool round tps user_us/tx sys_us/tx
: >"$work/tpcb"
for r in $(seq 1 "$ROUNDS"); do
  read -r u s < <(cpu_of "$PGBENCH" -n -M prepared -c 2 -j 2 -T "$SECS")
  tx=$(awk '/number of transactions actually processed/ {print $NF}' "$work/out" | cut -d/ -f1)
  tps=$(awk '/^tps = / {print $3; exit}' "$work/out")
  awk -v r="$r" -v tx="$tx" -v u="$u" -v s="$s" -v tps="$tps" 'BEGIN { printf "%-8s %5d %10s %14.2f %14.2f\n", "pgbench", r, tps, u*1e6/tx, s*1e6/tx }' | tee -a "$work/tpcb"
  bal=$(balances)
  read -r x y z h <<<"$bal"; if [ "$x" != "$y" ] || [ "$x" != "$z" ] || [ "$x" != "$h" ]; then echo "INVARIANT BROKEN after pgbench: $bal"; fail=1; fi
  RUN_NAME=tpcb-like-$r
  read -r u s < <(cpu_of rqps_pgbench --skip-init --builtin tpcb-like --protocol prepared --clients 2 --time "$SECS" --scale 2) || true
  if ! python3 -c "import json,sys; d=json.load(open('$work/run.json')); sys.exit(0 if d['status']=='ok' and any(t['test']=='balances' and t['status']=='ok' for t in d['tests']) else 1)"; then echo "rqps run failed (its balances check?)"; fail=1; fi
  read -r tx tps < <(rqps_tx)
  awk -v r="$r" -v tx="$tx" -v u="$u" -v s="$s" -v tps="$tps" 'BEGIN { printf "%-8s %5d %10s %14.2f %14.2f\n", "rqps", r, tps, u*1e6/tx, s*1e6/tx }' | tee -a "$work/tpcb"
  bal=$(balances)
  read -r x y z h <<<"$bal"; if [ "$x" != "$y" ] || [ "$x" != "$z" ] || [ "$x" != "$h" ]; then echo "INVARIANT BROKEN after rqps: $bal"; fail=1; fi
done
medians "$work/tpcb"
echo "rows after: $(counts)"
exit $fail

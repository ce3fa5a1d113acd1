#!/usr/bin/env bash
# rqps's pgbench suite beside real pgbench on one PostgreSQL server.
#
# Starts one throwaway PostgreSQL server (the newest installed under
# /usr/lib/postgresql), then:
#  1. `pgbench -i -s 2` and `rqps --suite pgbench --scale 2` initialisation:
#     the four tables' row counts after each, side by side (must be equal).
#  2. for each client count in CLIENTS (default "2 32 64"), select-only and then
#     tpcb-like, --protocol prepared: pgbench (-j JOBS, default 2) and rqps
#     (its default placement; RQPS_THREADS=N: --client-threads N) in turn,
#     A B A B for ROUNDS rounds of SECS
#     seconds each, on the same tables; per run TPS and the client's cost per
#     transaction: user, system and total CPU microseconds and voluntary
#     context switches (getrusage of the finished process, all its threads);
#     after each tpcb-like run the balances invariant sum(abalance) =
#     sum(bbalance) = sum(tbalance) = sum(delta) read with psql.
# Prints one line per run and the medians; exits 1 if a row count or the
# invariant differs.
#
# PIPELINE=N: instead of the two built-ins, one script file run by both
# tools (`pgbench -f`, `rqps --script`), under PROTOCOL (default prepared):
# N select-only queries (each its own random account) between
# \startpipeline and \endpipeline, so a transaction is one round trip.
#
# Usage: [RQPS=PATH] [PGBIN=DIR] [PGBENCH=PATH] [CLIENTS="2 32 64"] [JOBS=2] [RQPS_THREADS=N] [PIPELINE=N] [PROTOCOL=prepared] bench/vs-pgbench.sh [ROUNDS (default 3)] [SECS (default 10)]
# Needs the postgresql package (pgbench, psql, initdb, pg_ctl).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-10}
CLIENTS=${CLIENTS:-2 32 64}
JOBS=${JOBS:-2}
# RQPS_THREADS=N runs rqps with --client-threads N (0: a thread per connection);
# unset, rqps places its connections as it does by default.
threads_arg=()
placed="its default placement"
if [ -n "${RQPS_THREADS:-}" ]; then threads_arg=(--client-threads "$RQPS_THREADS"); placed="--client-threads $RQPS_THREADS"; fi
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
# Runs "$@" (output in $work/out) and prints its user and system CPU
# seconds and its voluntary context switches, all threads, from getrusage.
cpu_of() {
  python3 - "$work/out" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime:.3f} {r.ru_stime:.3f} {r.ru_nvcsw}")
PY
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

# One line of a run: tool, round, TPS, user, system and total CPU us/tx,
# voluntary context switches per transaction.
line() {
  awk -v tool="$1" -v r="$2" -v tps="$3" -v tx="$4" -v u="$5" -v s="$6" -v w="$7" \
    'BEGIN { printf "%-8s %5d %10.1f %12.2f %12.2f %12.2f %10.3f\n", tool, r, tps, u*1e6/tx, s*1e6/tx, (u+s)*1e6/tx, w/tx }'
}
medians() {
python3 - "$1" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
med = {}
names = ("tps", "user us/tx", "sys us/tx", "total us/tx", "vcsw/tx")
for tool in ("pgbench", "rqps"):
    mine = [r for r in rows if r[0] == tool]
    med[tool] = [statistics.median(float(r[i]) for r in mine) for i in range(2, 7)]
    print(f"median {tool:8} " + "  ".join(f"{n} {v:.3f}" for n, v in zip(names, med[tool])))
p, q = med["pgbench"], med["rqps"]
print("rqps/pgbench: " + "  ".join(f"{n} {b / a:.3f}" if a else f"{n} -" for n, a, b in zip(names, p, q)))
PY
}
check_balances() {
  bal=$(balances)
  read -r x y z h <<<"$bal"; if [ "$x" != "$y" ] || [ "$x" != "$z" ] || [ "$x" != "$h" ]; then echo "INVARIANT BROKEN after $1: $bal"; fail=1; fi
}

PROTOCOL=${PROTOCOL:-prepared}
WORKLOADS="select-only tpcb-like"
if [ -n "${PIPELINE:-}" ]; then
  WORKLOADS=pipelined
  pipe=$work/pipelined.sql
  {
    for i in $(seq 1 "$PIPELINE"); do echo "\\set aid$i random(1, 200000)"; done
    echo "\\startpipeline"
    for i in $(seq 1 "$PIPELINE"); do echo "SELECT abalance FROM pgbench_accounts WHERE aid = :aid$i;"; done
    echo "\\endpipeline"
  } >"$pipe"
  chmod 644 "$pipe"
fi
for c in $CLIENTS; do
  for w in $WORKLOADS; do
    flag=(); [ "$w" = select-only ] && flag=(-S)
    what=(--builtin "$w")
    if [ "$w" = pipelined ]; then flag=(-f "$pipe"); what=(--script "$pipe"); fi
    echo
    echo "== $w${PIPELINE:+ ($PIPELINE queries per pipeline)}, --protocol $PROTOCOL, $c clients, pgbench -j $JOBS / rqps ($placed), ${SECS} s per run"
    printf '%-8s %5s %10s %12s %12s %12s %10s\n' tool round tps user_us/tx sys_us/tx total_us/tx vcsw/tx
    f=$work/$w-$c
    : >"$f"
    for r in $(seq 1 "$ROUNDS"); do
      read -r u s v < <(cpu_of "$PGBENCH" -n "${flag[@]}" -M "$PROTOCOL" -c "$c" -j "$JOBS" -T "$SECS")
      tx=$(awk '/number of transactions actually processed/ {print $NF}' "$work/out" | cut -d/ -f1)
      tps=$(awk '/^tps = / {print $3; exit}' "$work/out")
      line pgbench "$r" "$tps" "$tx" "$u" "$s" "$v" | tee -a "$f"
      if [ "$w" = tpcb-like ]; then check_balances pgbench; fi
      RUN_NAME=$w-$c-$r
      rm -f "$work/run.json"
      read -r u s v < <(cpu_of "$RQPS" run --suite pgbench --target "$URL" --results "$work/results" \
        --json "$work/run.json" --busy-threshold 100 --quiet --profile quick --name "$RUN_NAME" --skip-init "${what[@]}" --protocol "$PROTOCOL" --clients "$c" \
        "${threads_arg[@]}" --time "$SECS" --scale 2)
      if ! python3 -c "import json,sys; d=json.load(open('$work/run.json')); sys.exit(0 if d['status']=='ok' else 1)"; then
        echo "rqps run failed (its balances check?): $(tail -3 "$work/out")"; fail=1
      fi
      read -r tx tps < <(rqps_tx)
      line rqps "$r" "$tps" "$tx" "$u" "$s" "$v" | tee -a "$f"
      if [ "$w" = tpcb-like ]; then check_balances rqps; fi
    done
    medians "$f"
  done
done
echo "rows after: $(counts)"
exit $fail

#!/usr/bin/env bash
# Client cost of TPC-C: runs `rqps run --suite tpcc` on a throwaway MariaDB and
# a throwaway PostgreSQL (one warehouse by default, loaded fresh each time) and
# prints rqps's own CPU per transaction next to the server's, as the run's
# probe measured them from /proc (the per-task CPU of rqps and of the server's
# process tree, warm-up excluded), per New-Order too, and the statements
# (round trips) per transaction. rqps should be a small fraction of the server.
#
#   bench/tpcc-client.sh [--secs S] [--terminals T] [--warehouses W] [any rqps run option]
#
# Needs mariadb-server and postgresql (Debian packages) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-10s %9s %8s %9s %13s %13s %8s %13s %13s\n' engine tpmC 'tx/s' 'stmts/tx' 'client us/tx' 'server us/tx' 'client%' 'client us/NO' 'server us/NO'
for server in mariadb postgres; do
    ./target/release/rqps run --suite tpcc --profile ci --server "$server" \
        --secs 30 --warmup-secs 5 --terminals 4 --busy-threshold 100 -q \
        --results "$out/r" --json "$out/$server.json" "$@" >/dev/null
    python3 - "$out/$server.json" "$server" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
t = next(t for t in doc["tests"] if t["test"] == "tpmC")
hw, d = t["hw"], t["tpcc"]
c, s = hw.get("client_cpu_us_per_op"), hw.get("server_cpu_us_per_op")
no = d.get("hw_per_new_order", {})
f = lambda v: "-" if v is None else f"{v:.0f}"
share = "-" if not (c and s) else f"{100 * c / s:.1f}"
stmts = (t["reads"] + t["writes"] + t["other"]) / max(t["events"], 1)
print(f"{sys.argv[2]:<10} {d['tpmc']:9.0f} {t['tps']:8.1f} {stmts:9.1f} {f(c):>13} {f(s):>13} {share:>8} "
      f"{f(no.get('client_cpu_us')):>13} {f(no.get('server_cpu_us')):>13}")
PY
done

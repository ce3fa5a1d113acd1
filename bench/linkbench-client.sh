#!/usr/bin/env bash
# Client cost of LinkBench: runs the suite against a throwaway MariaDB and a
# throwaway PostgreSQL (one at a time) and prints, per step, the request rate
# and the CPU microseconds per operation of rqps (the client: requesters,
# measurement, sampler) next to the server's process tree, from the
# hardware probe every step stores.
# Needs mariadb-server and postgresql (Debian packages).
#
#   bench/linkbench-client.sh [ENGINES] [extra rqps run options]
#   bench/linkbench-client.sh mariadb,postgres --nodes 50000 --lb-secs 20
set -euo pipefail
cd "$(dirname "$0")/.."
engines="${1:-mariadb,postgres}"
shift || true
cargo build --release --quiet
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for e in ${engines//,/ }; do
    ./target/release/rqps run --suite linkbench --profile ci --server "$e" \
        --nodes 50000 --requesters 1,4 --lb-secs 15 --lb-warmup-secs 3 \
        --busy-threshold 100 --results "$out/r" --json "$out/$e.json" -q "$@" >/dev/null
done
python3 - "$out" ${engines//,/ } <<'PY'
import json, sys
out, engines = sys.argv[1], sys.argv[2:]
def f(v, fmt="{:.1f}"):
    return "-" if v is None else fmt.format(v)
print(f"{'engine':<18} {'step':<5} {'ops/s':>9} {'cpu/o us':>9} {'client us':>10} {'server us':>10} {'client/server':>14}")
for e in engines:
    doc = json.load(open(f"{out}/{e}.json"))
    for t in doc["tests"]:
        if t["test"] == "check":
            continue
        hw = t.get("hw") or {}
        c, s = hw.get("client_cpu_us_per_op"), hw.get("server_cpu_us_per_op")
        ratio = c / s if c is not None and s else None
        unit = "links/s" if t["test"] == "load" else "ops/s"
        print(f"{doc['engine']['name'] + ' ' + doc['engine']['version'].split('-')[0]:<18.18} {t['test']:<5} "
              f"{t['qps']:>9.0f} {f(hw.get('cpu_us_per_op')):>9} {f(c):>10} {f(s):>10} {f(ratio, '{:.2f}'):>14}")
print("load: per row loaded (nodes, links, counts); P<n>: per request, n requesters")
PY

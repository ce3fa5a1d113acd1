#!/usr/bin/env bash
# Client cost of the Insert Benchmark: starts one throwaway server per engine
# (MariaDB, PostgreSQL) and alternates, on a freshly created pi1 each time,
# rqps's l.i0 step (its workers, measurement and sampler) and a minimal client
# that only sends the same prepared 100-row INSERTs through the same driver
# (one connection, no workers, no measurement). Prints per round the insert
# rates, their ratio and the client CPU
# microseconds per inserted row, then the medians.
# Needs mariadb-server and postgresql (Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec ./target/release/rqps bench ibench-client "$@"

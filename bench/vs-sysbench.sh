#!/usr/bin/env bash
# Client cost: starts one throwaway server per engine (MariaDB, PostgreSQL),
# loads one sbtest table, then alternates sysbench oltp_point_select and rqps
# point-query on it (2, 16 and 64 threads, several rounds) and prints, per
# tool, QPS, client CPU microseconds per query split into user and system
# time, and context switches per query; after each thread count's rounds,
# each tool runs once more under strace -f -c for its system calls per query.
# --per-connection adds rqps with a thread per connection to every round and
# compares rqps's default placement with it.
# With --tls each server gets certificates made for the run and accepts TLS
# only; sysbench (--mysql-ssl=on / PGSSLMODE=require) and rqps
# (ssl-mode=REQUIRED / sslmode=require) both use it, and the header says which
# TLS version and cipher each negotiated. Without it both use plaintext.
# Other options: rqps bench vs-sysbench --help.
# Needs mariadb-server, postgresql and sysbench (Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec ./target/release/rqps bench vs-sysbench "$@"

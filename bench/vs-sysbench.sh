#!/usr/bin/env bash
# Client cost: starts one throwaway server per engine (MariaDB, PostgreSQL),
# loads one sbtest table, then alternates sysbench oltp_point_select and rqps
# point-query on it (1 and 2 threads, several rounds) and prints, per tool,
# QPS and client CPU microseconds per query split into user and system time.
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

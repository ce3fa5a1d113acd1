#!/usr/bin/env bash
# rqps's readrandom against a bare loop calling the same RocksDB library
# directly: both in one process pinned to one CPU, on one database whose
# blocks all fit in the block cache, in many short alternating rounds. Prints
# reads per wall second and per CPU second of each, the median ratio with its
# interquartile range (target >= 0.95) and the load average. Installs the release
# into the engine cache first if it is missing (mvn, Maven Central).
#
#   bench/dbbench-client.sh [VERSION] [extra options of rqps bench dbbench-client]
#   bench/dbbench-client.sh 8.10.0 --rounds 100 --secs 0.25   # --bare-vs-bare: the control
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-8.10.0}"
shift || true
cargo build --release --quiet
exec ./target/release/rqps bench dbbench-client --version "$version" "$@"

#!/usr/bin/env bash
# rqps's readrandom against a bare loop calling the same RocksDB library
# directly: both in one process, on one database whose blocks all fit in the
# block cache, alternating rounds. Prints reads per wall second and per CPU
# second of each and the median ratio (target >= 0.95). Installs the release
# into the engine cache first if it is missing (mvn, Maven Central).
#
#   bench/dbbench-client.sh [VERSION] [extra options of rqps bench dbbench-client]
#   bench/dbbench-client.sh 8.10.0 --threads 2 --rounds 7
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-8.10.0}"
shift || true
cargo build --release --quiet
exec ./target/release/rqps bench dbbench-client --version "$version" "$@"

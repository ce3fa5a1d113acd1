#!/usr/bin/env bash
# Harness overhead: rqps's point-query QPS on embedded SQLite against a bare
# prepared-statement loop over the same table, in one process, alternating
# rounds. Prints each round and the median ratio (target >= 0.97).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec ./target/release/rqps bench harness "$@"

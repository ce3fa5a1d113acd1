#!/usr/bin/env bash
# Harness overhead: rqps's point-query QPS on embedded SQLite (its worker,
# driver interface and step runner) against a bare prepared-statement loop
# over the same table, in one process, both pinned to one CPU, alternating
# rounds. Prints each round, the median ratio with its IQR (target >= 0.97)
# and the load average. --bare-vs-bare is the control (ideal median 1.0).
#
#   bench/harness.sh [--secs S] [--rounds N] [--table-size ROWS] [--cpu N] [--bare-vs-bare]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec ./target/release/rqps bench harness "$@"

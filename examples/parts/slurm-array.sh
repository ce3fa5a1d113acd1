#!/bin/bash
# Four rqps client parts as a Slurm job array, driving one database server together.
# Slurm sets SLURM_ARRAY_TASK_ID (1..4 with --array=1-4) and SLURM_ARRAY_TASK_COUNT.
# Submit with an agreed start a little in the future, so every task is running and
# connected before the load begins:
#
#   sbatch --export=ALL,START_AT=$(date -u -d '+3 min' +%Y-%m-%dT%H:%M:%SZ) slurm-array.sh
#
# A task Slurm starts after START_AT still runs, and is flagged late by rqps (and by
# `rqps merge`). Load the tables once before (a run without --part, with the same
# --profile or --tables/--table-size as the parts).
#
# What to run: the RQPS_* variables below, set at submission like START_AT
# (sbatch --export=ALL,START_AT=...,RQPS_TARGET=postgres://sbtest@db:5432/sbtest), or
# edited here. Options after the script's name are added to rqps run's:
#   sbatch --export=ALL,START_AT=... slurm-array.sh --profile ci --warmup-secs 0
# The #SBATCH lines are defaults too: sbatch's own options override them. On one node
# with fewer CPUs, e.g. 2 tasks on a 2-CPU node:
#   sbatch --array=1-2 --cpus-per-task=1 --oversubscribe --export=ALL,START_AT=... slurm-array.sh
# (tests/fleet.rs submits this file so, to a one-node Slurm it starts.)
#
# The password: the target URL holds none (a command line is visible to other processes,
# and so is an sbatch --export=...=VALUE). Each task reads it with --password-file from a
# file only you may read, on a file system every node mounts; rqps refuses the file when
# group or others may read it. Once, before submitting:
#   umask 077; printf '%s\n' "$PW" > ~/.rqps-pw    # or: chmod 600 ~/.rqps-pw
# Point RQPS_PASSWORD_FILE elsewhere to use another file. Afterwards:
#   rqps merge results/part-* --results results/merged
#   rqps report --results results/merged --base NAME
#
# To split a matrix instead (every N-th run of its plan, each task with its own servers):
#   rqps matrix examples/scalability-pg-cpus.toml --part "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT"
#SBATCH --job-name=rqps-parts
#SBATCH --array=1-4
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=8
#SBATCH --exclusive
#SBATCH --output=rqps-part-%a.log
set -eu
: "${START_AT:?set it at submission: sbatch --export=ALL,START_AT=2026-11-23T10:00:00Z slurm-array.sh}"
: "${RQPS_TARGET:=postgres://sbtest@db-server:5432/sbtest}" # the server; no password in it
: "${RQPS_TESTS:=read-only_range=10}"
: "${RQPS_THREADS:=64,128,256}"  # the whole load: each task runs its share of every count
: "${RQPS_READ_SECS:=300}"
: "${RQPS_NAME:=pg16}"
: "${RQPS_PASSWORD_FILE:=$HOME/.rqps-pw}"
exec rqps run --target "$RQPS_TARGET" --password-file "$RQPS_PASSWORD_FILE" \
  --tests "$RQPS_TESTS" --skip-trx --threads "$RQPS_THREADS" \
  --read-secs "$RQPS_READ_SECS" --skip-prepare --name "$RQPS_NAME" \
  --part "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" --start-at "$START_AT" \
  --results "results/part-$SLURM_ARRAY_TASK_ID" "$@"

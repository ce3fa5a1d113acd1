#!/bin/bash
# Four rqps client parts as a Slurm job array, driving one database server together.
# Slurm sets SLURM_ARRAY_TASK_ID (1..4 with --array=1-4) and SLURM_ARRAY_TASK_COUNT.
# Submit with an agreed start a little in the future, so every task is running and
# connected before the load begins:
#
#   sbatch --export=ALL,START_AT=$(date -u -d '+3 min' +%Y-%m-%dT%H:%M:%SZ) slurm-array.sh
#
# A task Slurm starts after START_AT still runs, and is flagged late by rqps (and by
# `rqps merge`). Load the tables once before (a run without --part).
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
exec rqps run --target postgres://sbtest@db-server:5432/sbtest \
  --password-file "${RQPS_PASSWORD_FILE:-$HOME/.rqps-pw}" \
  --tests read-only_range=10 --skip-trx --threads 64,128,256 \
  --read-secs 300 --skip-prepare --name pg16 \
  --part "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" --start-at "$START_AT" \
  --results "results/part-$SLURM_ARRAY_TASK_ID"

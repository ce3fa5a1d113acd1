#!/usr/bin/env bash
# The scalability study on a many-core machine: sysbench point-query and
# read-only (range 100) at 1 to 64 threads against a prebuilt PostgreSQL, the server and
# the client (rqps) on separate CPU sets (--server-cpus, --client-cpus), then
# the scalability table with the limit of each peak (docs/matrices.md, "A
# scalability study").
#
# The many-core machine reaches no package registry, so the study travels as
# one archive made here:
#
#   bench/many-core.sh pack [ARCHIVE]      # default many-core.tar.gz
#       builds rqps (release, stripped), takes postgres@$PG from rqps's engine
#       cache (installing it first when missing: this needs mvn and Maven
#       Central) and this script, into ARCHIVE.
#   tar xzf many-core.tar.gz && many-core/many-core.sh run     # there
#       puts the PostgreSQL into rqps's engine cache on that machine, runs the
#       study into many-core/results and prints the scalability section and
#       the hardware table of the run.
#
# `run` reads (environment, defaults in brackets):
#   THREADS      thread counts [1,2,4,8,16,32,64]
#   CLIENT_CPUS  the client's CPUs [the last quarter of the online CPUs]
#   SERVER_CPUS  the server's CPUs [the others]
#   TESTS        [point-query,read-only_range=100] (oltp_read_only)
#   SECS         measured seconds per test and thread count [10]
#   TABLE_SIZE   rows per table [1000000]
#   PG           PostgreSQL version [16.15]
#   NAME         the run's name [pg$PG-study]
# `bench/many-core.sh run` also works from the source tree (it builds first).
# CARGO_PROFILE=dev packs or runs the debug build instead of the release one
# (only to try the script; figures come from the release build).
set -euo pipefail

PG=${PG:-16.15}
here=$(cd "$(dirname "$0")" && pwd)
profile=${CARGO_PROFILE:-release}
case "$profile" in
release) built=target/release/rqps ;;
dev) built=target/debug/rqps ;;
*) echo "many-core.sh: CARGO_PROFILE is release or dev" >&2; exit 2 ;;
esac

engine_cache() {
    # Where rqps looks for installed engines (src/engine/install.rs, cache_root).
    if [ -n "${RQPS_CACHE_DIR:-}" ]; then
        echo "$RQPS_CACHE_DIR"
    elif [ "$(id -u)" = 0 ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
        echo /var/cache/rqps/engines
    else
        echo "${XDG_CACHE_HOME:-$HOME/.cache}/rqps/engines"
    fi
}

pack() {
    local out=${1:-many-core.tar.gz}
    case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
    cd "$here/.."
    cargo build --profile "$profile" --quiet
    local cache
    cache=$(engine_cache)
    if [ ! -d "$cache/postgres-$PG" ]; then
        "./$built" engine install postgres "$PG"
    fi
    local stage
    stage=$(mktemp -d)
    trap 'rm -rf "$stage"' RETURN
    mkdir -p "$stage/many-core/bin" "$stage/many-core/engines"
    cp "$built" "$stage/many-core/bin/rqps"
    strip "$stage/many-core/bin/rqps"
    cp -a "$cache/postgres-$PG" "$stage/many-core/engines/"
    cp bench/many-core.sh "$stage/many-core/many-core.sh"
    tar czf "$out" -C "$stage" many-core
    echo "packed $(du -h "$out" | cut -f1) into $out: rqps $("./$built" --version | cut -d' ' -f2) ($profile build, stripped), PostgreSQL $PG, many-core.sh"
    echo "there: tar xzf $(basename "$out") && many-core/many-core.sh run"
}

run() {
    local rqps
    if [ -x "$here/bin/rqps" ]; then
        rqps="$here/bin/rqps"
        # The PostgreSQL the archive carries, where rqps finds installed engines.
        local cache
        cache=$(engine_cache)
        if [ ! -d "$cache/postgres-$PG" ]; then
            mkdir -p "$cache"
            cp -a "$here/engines/postgres-$PG" "$cache/"
            # A server rqps starts as root runs as nobody, which must read it.
            chmod -R a+rX "$cache"
        fi
    else
        (cd "$here/.." && cargo build --profile "$profile" --quiet)
        rqps="$here/../$built"
        if [ ! -d "$(engine_cache)/postgres-$PG" ]; then
            "$rqps" engine install postgres "$PG"
        fi
    fi
    local n
    n=$(nproc)
    if [ "$n" -lt 2 ] && [ -z "${CLIENT_CPUS:-}" ]; then
        echo "many-core.sh: needs 2 CPUs or more to give client and server CPUs of their own" >&2
        exit 2
    fi
    local client_n=$(( n / 4 > 0 ? n / 4 : 1 ))
    local client=${CLIENT_CPUS:-$(( n - client_n ))-$(( n - 1 ))}
    local server=${SERVER_CPUS:-0-$(( n - client_n - 1 ))}
    local results="$here/results"
    local name=${NAME:-pg$PG-study}
    echo "study: PostgreSQL $PG on CPUs $server, rqps on CPUs $client, threads ${THREADS:-1,2,4,8,16,32,64}; results in $results"
    "$rqps" run --server "postgres@$PG" \
        --server-cpus "$server" --client-cpus "$client" \
        --profile quick --tests "${TESTS:-point-query,read-only_range=100}" \
        --threads "${THREADS:-1,2,4,8,16,32,64}" \
        --read-secs "${SECS:-10}" --warmup-secs 2 \
        --table-size "${TABLE_SIZE:-1000000}" \
        --name "$name" --results "$results"
    # The run printed its tables (the hardware table says what limited
    # each thread count); the report adds the scalability section.
    if "$rqps" report --results "$results" --base "$name" --format md >"$here/study.md" 2>/dev/null &&
        grep -q '^## Scalability' "$here/study.md"; then
        echo
        sed -n '/^## Scalability/,/^## [^S]/p' "$here/study.md" | sed '$d'
        echo "the whole report: $here/study.md"
    fi
}

case "${1:-}" in
pack) shift; pack "$@" ;;
run) shift; run "$@" ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Two studies for a many-core machine, with rqps's client pinned or not:
#
# `run`: the scalability study: sysbench point-query and read-only (range 100)
# at 1 to 64 threads against a prebuilt PostgreSQL, the server and the client
# (rqps) on separate CPU sets (--server-cpus, --client-cpus), then the
# scalability table with the limit of each peak (docs/matrices.md, "A
# scalability study").
#
# `vs`: rqps's client against sysbench's (`rqps bench vs-sysbench`, issue 30)
# on a prebuilt PostgreSQL and a prebuilt MariaDB at 16 and 48 threads,
# client and server sharing the host, then one table: QPS rqps/sysbench, user
# CPU per query rqps/sysbench, total client CPU per query and context switches
# per query of each tool (docs/selfbench.md, issue 30).
#
# The many-core machine reaches no package registry, so the studies travel as
# one archive made here:
#
#   bench/many-core.sh pack [ARCHIVE]      # default many-core.tar.gz
#       builds rqps (release, stripped), takes postgres@$PG and mariadb@$MARIADB
#       from rqps's engine cache (installing them first when missing: this needs
#       mvn and Maven Central; mariadbd stripped, share/ cut to its SQL files,
#       english/ and charsets/), sysbench with every library it loads (its
#       loader included, so it runs on another distribution) and its Lua
#       files, and this script, into ARCHIVE.
#   tar xzf many-core.tar.gz && many-core/many-core.sh run    # or: vs
#       puts the engines into rqps's engine cache on that machine and runs
#       the study into many-core/results (vs: many-core/results/vs-sysbench.txt).
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
# `vs` reads:
#   VS_THREADS   thread counts [16,48]
#   ROUNDS       alternating rounds per thread count [2]
#   SECS         seconds per run [8]
#   TABLE_SIZE   rows [100000]
#   PG, MARIADB  versions [16.15, 11.4.5]; `system` takes the server on PATH
#                (Debian's) instead, to try the script where none is cached
# `bench/many-core.sh run` (or vs) also works from the source tree (it builds
# first). CARGO_PROFILE=dev packs or runs the debug build instead of the
# release one (only to try the script; figures come from the release build).
set -euo pipefail

PG=${PG:-16.15}
MARIADB=${MARIADB:-11.4.5}
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
    pack_mariadb "$cache" "$stage/many-core/engines"
    pack_sysbench "$stage/many-core/sysbench"
    cp bench/many-core.sh "$stage/many-core/many-core.sh"
    tar czf "$out" -C "$stage" many-core
    echo "packed $(du -h "$out" | cut -f1) into $out: rqps $("./$built" --version | cut -d' ' -f2) ($profile build, stripped), PostgreSQL $PG, MariaDB $MARIADB, sysbench $(sysbench --version | cut -d' ' -f2), many-core.sh"
    echo "there: tar xzf $(basename "$out") && many-core/many-core.sh run   # or vs"
}

# mariadb@$MARIADB from the engine cache $1 into $2: mariadbd stripped (the
# cached one carries debug info, about 330 MB), share/ cut to what the server
# and its install script read (the SQL files, english/ for the messages,
# charsets/).
pack_mariadb() {
    local cache=$1 to=$2
    if [ ! -d "$cache/mariadb-$MARIADB" ]; then
        "./$built" engine install mariadb "$MARIADB"
    fi
    local m="$to/mariadb-$MARIADB"
    cp -a "$cache/mariadb-$MARIADB" "$m"
    local f
    while IFS= read -r f; do
        strip "$f"
    done < <(find "$m" -type f \( -name mariadbd -o -name mysqld \))
    while IFS= read -r f; do
        find "$(dirname "$f")" -mindepth 1 -maxdepth 1 \( -type d ! -name english ! -name charsets \
            -o -type f \( -name '*.jar' -o -name '*.so' \) \) -exec rm -rf {} +
    done < <(find "$m" -type d -name english -path '*/share/*')
}

# sysbench, every shared library it loads (with the loader, so it runs on
# another distribution's libc) and its Lua files into $1; $1/bin/sysbench is
# a wrapper that runs it through that loader.
pack_sysbench() {
    local to=$1
    mkdir -p "$to/bin" "$to/lib" "$to/share"
    local real
    real=$(command -v sysbench) || { echo "many-core.sh: pack needs sysbench (apt-get install sysbench)" >&2; exit 2; }
    cp "$real" "$to/lib/sysbench.bin"
    local lib loader=
    for lib in $(ldd "$real" | awk '/=> \// {print $3} /^[[:space:]]*\/[^ ]*ld-linux/ {print $1}'); do
        cp -L "$lib" "$to/lib/"
        case "$lib" in */ld-linux*) loader=$(basename "$lib") ;; esac
    done
    [ -n "$loader" ] || { echo "many-core.sh: no dynamic loader in ldd $real" >&2; exit 2; }
    cp -a /usr/share/sysbench "$to/share/"
    cat >"$to/bin/sysbench" <<WRAP
#!/bin/sh
# sysbench packed by many-core.sh: its own loader, libraries and Lua files.
d=\$(cd "\$(dirname "\$0")/.." && pwd)
LUA_PATH="\$d/share/sysbench/?.lua;;" exec "\$d/lib/$loader" --library-path "\$d/lib" "\$d/lib/sysbench.bin" "\$@"
WRAP
    chmod +x "$to/bin/sysbench"
    "$to/bin/sysbench" --version >/dev/null
}

# Sets $rqps, and puts engine $1 version $2 where rqps finds installed
# engines (from the archive, or installed when run from the source tree).
setup() {
    if [ -x "$here/bin/rqps" ]; then
        rqps="$here/bin/rqps"
    elif [ -z "${rqps:-}" ]; then
        (cd "$here/.." && cargo build --profile "$profile" --quiet)
        rqps="$here/../$built"
    fi
    local kind=$1 version=$2 cache
    [ "$version" = system ] && return
    cache=$(engine_cache)
    [ -d "$cache/$kind-$version" ] && return
    if [ -d "$here/engines/$kind-$version" ]; then
        mkdir -p "$cache"
        cp -a "$here/engines/$kind-$version" "$cache/"
        # A server rqps starts as root runs as nobody, which must read it.
        chmod -R a+rX "$cache"
    else
        "$rqps" engine install "$kind" "$version"
    fi
}

run() {
    local rqps=
    setup postgres "$PG"
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

# rqps bench vs-sysbench on both engines, then the table of issue 30.
vs() {
    local rqps=
    setup postgres "$PG"
    setup mariadb "$MARIADB"
    if [ -x "$here/sysbench/bin/sysbench" ]; then
        PATH="$here/sysbench/bin:$PATH"
    fi
    command -v sysbench >/dev/null || { echo "many-core.sh: vs needs sysbench (packed by pack, or on PATH)" >&2; exit 2; }
    local pg=postgres maria=mariadb
    [ "$PG" = system ] || pg="postgres@$PG"
    [ "$MARIADB" = system ] || maria="mariadb@$MARIADB"
    mkdir -p "$here/results"
    local out="$here/results/vs-sysbench.txt"
    echo "vs-sysbench on $(nproc) CPUs: $pg and $maria, threads ${VS_THREADS:-16,48}, ${ROUNDS:-2} rounds of ${SECS:-8} s, sysbench $(command -v sysbench); output in $out"
    "$rqps" bench vs-sysbench --engines "$pg,$maria" \
        --threads "${VS_THREADS:-16,48}" --rounds "${ROUNDS:-2}" \
        --secs "${SECS:-8}" --table-size "${TABLE_SIZE:-100000}" | tee "$out"
    echo
    vs_table "$out"
}

# The summary lines of vs-sysbench output $1 as one markdown table.
vs_table() {
    awk '
    /point-query \/ oltp_point_select/ { engine = $1; if (match($0, /[0-9]+\.[0-9]+(\.[0-9]+)?/)) engine = engine " " substr($0, RSTART, RLENGTH) }
    / all: user us\/q/ {
        t = $1
        split($0, a, "rqps/sysbench = "); split(a[2], u, " "); user[engine, t] = u[1]
        split($0, b, "total client us/q "); split(b[2], c, " "); tot[engine, t] = c[1] " vs " c[3]
        sub(/,$/, "", tot[engine, t])
        split($0, d, "QPS rqps/sysbench = "); qps[engine, t] = d[2]
        order[++n] = engine SUBSEP t
    }
    / median of [0-9]+ rounds:/ {
        t = $1
        split($0, a, "QPS rqps/sysbench = "); split(a[2], q, ","); mqps[engine, t] = q[1]
        split($0, b, "total client us/q rqps/sysbench = "); mtot[engine, t] = b[2]
    }
    / all: context switches\/q/ {
        t = $1
        split($0, a, "switches/q rqps "); split(a[2], r, " ")
        split($0, b, "vs sysbench "); split(b[2], x, " ")
        cs[engine, t] = r[1] " vs " x[1]
    }
    END {
        # The done-when figures are the medians of the ratios of the rounds;
        # the pooled ones (all queries of all rounds over all their CPU) beside.
        print "| engine | threads | QPS rqps/sysbench (median of rounds) | total client CPU/q rqps/sysbench (median) | QPS rqps/sysbench (pooled) | user CPU/q rqps/sysbench (pooled) | total client CPU/q rqps vs sysbench (us, pooled) | context switches/q rqps vs sysbench |"
        print "|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            split(order[i], k, SUBSEP)
            print "| " k[1] " | " k[2] " | " mqps[k[1], k[2]] " | " mtot[k[1], k[2]] " | " qps[k[1], k[2]] " | " user[k[1], k[2]] " | " tot[k[1], k[2]] " | " cs[k[1], k[2]] " |"
        }
    }' "$1"
}

case "${1:-}" in
pack) shift; pack "$@" ;;
run) shift; run "$@" ;;
vs) shift; vs "$@" ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac

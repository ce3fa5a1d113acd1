#!/usr/bin/env bash
# sysbench's own cram tests of its Lua API (tests/t/api_*.t, opt_*.t, script_*.t of
# akopytov/sysbench 1.0.20) with rqps in sysbench's place: a `sysbench` on the PATH turns
# sysbench's command line into rqps's, and cram compares what it prints with what the tests
# expect. Every difference is listed in docs/suites/sysbench.md ("What matches sysbench
# exactly, and what differs"). The tests are GPL: fetch them, do not copy them here.
#
#   git clone -b 1.0.20 https://github.com/akopytov/sysbench /tmp/sysbench
#   pip install cram
#   scripts/sysbench-cram.sh /tmp/sysbench [mysql://user@host:port/db [TESTS...]]
#
# The URL is the server of the tests that need one (the MySQL ones; give a user without a
# password, as sysbench takes passwords on its command line only). TESTS default to the
# Lua API's: api_*.t, opt_*.t and script_*.t. RQPS is the rqps binary (default: the
# debug build of this checkout).
set -euo pipefail

src=${1:?usage: scripts/sysbench-cram.sh SYSBENCH_SOURCE_DIR [MYSQL_URL [TESTS...]]}
url=${2:-}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")/.." && pwd)
export RQPS=${RQPS:-$here/target/debug/rqps}
[ -x "$RQPS" ] || { echo "no rqps binary at $RQPS (cargo build, or set RQPS)" >&2; exit 2; }
command -v cram >/dev/null || { echo "cram is not installed (pip install cram)" >&2; exit 2; }

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cat >"$bin/sysbench" <<'WRAPPER'
#!/usr/bin/env bash
# sysbench's command line as an `rqps run` one: the test or script and the command as
# `--script FILE -- ... COMMAND`, the connection options as `--target URL`, the other
# options after `--`. Only what the script prints (standard output) and rqps's errors
# are shown, as sysbench shows its own.
set -uo pipefail
script= command= driver=mysql host=127.0.0.1 port= user=sbtest db=sbtest socket=
args=()
for a in "$@"; do
  case "$a" in
    --version) echo "sysbench 1.0.20 (rqps: $("$RQPS" --version))"; exit 0 ;;
    --db-driver=*) driver=${a#*=} ;;  # the target URL's scheme names the driver
    --test=*) script=${a#*=} ;;
    --mysql-host=*|--pgsql-host=*) host=${a#*=} ;;
    --mysql-port=*|--pgsql-port=*) port=${a#*=} ;;
    --mysql-user=*|--pgsql-user=*) user=${a#*=} ;;
    --mysql-db=*|--pgsql-db=*) db=${a#*=} ;;
    --mysql-socket=*) socket=${a#*=} ;;
    --mysql-password=*|--pgsql-password=*) ;;
    -*) args+=("$a") ;;
    *) if [ -z "$script" ]; then script=$a; elif [ -z "$command" ]; then command=$a;
       else args+=("$a"); fi ;;
  esac
done
target=()
if [ -n "${SBTEST_RQPS_TARGET:-}" ]; then
  target=(--target "$SBTEST_RQPS_TARGET")
elif [ -n "$port$socket" ]; then
  scheme=mysql; [ "$driver" = pgsql ] && scheme=postgres
  target=(--target "$scheme://$user@$host${port:+:$port}/$db")
fi
tmp=$(mktemp -d)
if [ -z "$script" ] && [ ! -t 0 ]; then
  script=$tmp/stdin.lua
  cat >"$script"
elif [ -n "$script" ] && [ ! -e "$script" ] && [ -e "${SBTEST_SCRIPTDIR:-/usr/share/sysbench}/$script.lua" ]; then
  script=${SBTEST_SCRIPTDIR:-/usr/share/sysbench}/$script.lua
elif [ -n "$script" ] && [ ! -e "$script" ] && [ -e "/usr/share/sysbench/$script.lua" ]; then
  script=/usr/share/sysbench/$script.lua
fi
"$RQPS" run --suite sysbench --script "$script" --results "$tmp/results" --busy-threshold 100 \
  "${target[@]}" -- "${args[@]}" ${command:+"$command"} 2>"$tmp/err" \
  | awk '/^sysbench .*on .*, (ok|failed|interrupted)$/ { done = 1 } !done { print }'
rc=${PIPESTATUS[0]}
grep -E '^(error|failed):' "$tmp/err" || true
rm -rf "$tmp"
exit "$rc"
WRAPPER
chmod +x "$bin/sysbench"

if [ -n "$url" ]; then
  rest=${url#*://}; userhost=${rest%%/*}
  export SBTEST_RQPS_TARGET=$url
  export SBTEST_MYSQL_ARGS="--mysql-host=${userhost#*@} --mysql-user=${userhost%@*}"
  export SBTEST_HAS_MYSQL=1
  # The tests' own `mysql -uroot sbtest` (root from 127.0.0.1, no password) reaches it too.
  hostport=${userhost#*@}
  export MYSQL_HOST=${hostport%:*}
  [ "$hostport" != "${hostport#*:}" ] && export MYSQL_TCP_PORT=${hostport#*:}
else
  export SBTEST_MYSQL_ARGS=""
  export SBTEST_HAS_MYSQL=
fi
export SBTEST_HAS_PGSQL=
export SBTEST_VERSION=1.0.20
export SBTEST_VERSION_STRING="sysbench 1.0.20"
export SBTEST_ROOTDIR=$src/tests
export SBTEST_SCRIPTDIR=$src/src/lua
export SBTEST_SUITEDIR=$src/tests/t
export SBTEST_INCDIR=$src/tests/include
export SBTEST_CONFIG=$bin/config.sh
: >"$SBTEST_CONFIG"
export LUA_PATH="$SBTEST_SCRIPTDIR/?;$SBTEST_SCRIPTDIR/?.lua;$SBTEST_INCDIR/?;$SBTEST_INCDIR/?.lua"
export PATH="$bin:$PATH"

if [ $# -eq 0 ]; then
  set -- "$src"/tests/t/api_*.t "$src"/tests/t/opt_*.t "$src"/tests/t/script_*.t
fi
cram --shell=/bin/bash "$@"

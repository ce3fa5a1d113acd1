# Sourced by the bench scripts that run sysbench beside rqps: sets the array `sb` to
# sysbench's connection options for a target URL (mysql:// or postgres://USER@HOST:PORT/DB,
# no password: sysbench takes one only on its command line). Exits 2 on another scheme.
sysbench_target() {
  local url=$1 scheme rest user hostport db host port
  scheme=${url%%://*}; rest=${url#*://}; user=${rest%%@*}; rest=${rest#*@}
  hostport=${rest%%/*}; db=${rest#*/}; host=${hostport%:*}; port=${hostport##*:}
  case "$scheme" in
    mysql|mariadb) sb=(--db-driver=mysql --mysql-host="$host" --mysql-port="$port" --mysql-user="$user" --mysql-db="$db") ;;
    postgres|postgresql) sb=(--db-driver=pgsql --pgsql-host="$host" --pgsql-port="$port" --pgsql-user="$user" --pgsql-db="$db") ;;
    *) echo "unknown scheme $scheme in $url (mysql:// or postgres://)" >&2; exit 2 ;;
  esac
}

#!/usr/bin/env bash
# A PostgreSQL 15 of its own with the production settings docker-compose.yml applies (read from it, so
# the two never differ), for benchmarks that compare those settings with the defaults:
#
#   test/bench/recommended-postgres.sh start [PORT]   # initdb on first use, then start; prints the URL
#   npx tsx test/bench/cycle.ts --server postgres://postgres@127.0.0.1:55432
#   test/bench/recommended-postgres.sh stop
#
# Never touches the PostgreSQL on 5432. Runs as root (the machine's user) and starts the server as the
# postgres user, as the machine's own cluster does. DIR defaults to /tmp/deductions-pg-recommended.
# PG_SETTINGS=defaults starts the same kind of cluster at PostgreSQL's defaults instead (a fair other
# side for a comparison); PG_EXTRA_SETTINGS adds flags to either, for example
# "-c shared_preload_libraries=pg_stat_statements" for the cycle benchmark's --statements (plain
# -c name=value pairs: the value passes through two shells, so no quotes, $ or backquotes).
set -euo pipefail
cd "$(dirname "$0")/../.."
ACTION=${1:-start}
PORT=${2:-55432}
DIR=${PG_RECOMMENDED_DIR:-/tmp/deductions-pg-recommended}
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }

case "$ACTION" in
  start)
    if [ ! -f "$DIR/PG_VERSION" ]; then
      mkdir -p "$DIR" && chown postgres "$DIR" 2>/dev/null || true
      as_postgres "$BIN/initdb -D $DIR -A trust -U postgres >/dev/null"
    fi
    # The "- -c" / "- name=value" pairs of the postgres service's command in docker-compose.yml.
    SETTINGS=$(awk '/^  postgres:/{p=1} /^  redis:/{p=0} p && prev ~ /- -c$/ {sub(/^ *- /, ""); printf "-c %s ", $0} {prev=$0}' docker-compose.yml)
    if [ "${PG_SETTINGS:-recommended}" = defaults ]; then SETTINGS=""; fi
    SETTINGS="$SETTINGS ${PG_EXTRA_SETTINGS:-}"
    as_postgres "$BIN/pg_ctl -D $DIR -l $DIR/server.log -w -o \"-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$DIR $SETTINGS\" start >/dev/null"
    echo "postgres://postgres@127.0.0.1:$PORT  (settings: $SETTINGS)"
    # huge_pages=try is silent about falling back (PostgreSQL 15 has no huge_pages_status): say what the host has.
    awk '/HugePages_Total/ {t=$2} /HugePages_Free/ {f=$2} /HugePages_Rsvd/ {r=$2} /Hugepagesize/ {kb=$2} END {printf "host huge pages (%d kB each): %d, %d taken or reserved; vm.nr_hugepages must cover shared_memory_size_in_huge_pages\n", kb, t, t - f + r}' /proc/meminfo
    ;;
  stop)
    as_postgres "$BIN/pg_ctl -D $DIR -m fast stop >/dev/null"
    ;;
  *)
    echo "usage: $0 start [PORT] | stop" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Prints a PostgreSQL server URL for the test suites (each suite creates and drops its own
# databases on it). TEST_DATABASE_URL wins; else a server on 127.0.0.1:5432; else a private
# cluster started here (Debian's postgresql package: initdb into .tmp/pg on a free port), so
# `make test` passes on a fresh machine where no database server runs.
set -euo pipefail
if [ -n "${TEST_DATABASE_URL:-}" ]; then echo "$TEST_DATABASE_URL"; exit 0; fi
# TEST_POSTGRES_PRIVATE=1 skips the shared server (to check the fallback on a machine that has one).
if [ "${TEST_POSTGRES_PRIVATE:-0}" != 1 ] && pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null && psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
  echo "postgres://postgres@127.0.0.1:5432/postgres"; exit 0
fi
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "no PostgreSQL server reachable and no initdb: apt-get install postgresql" >&2; exit 1; }
dir="$(pwd)/.tmp/pg"
port_file="$dir/port"
if [ -f "$port_file" ] && pg_isready -q -h 127.0.0.1 -p "$(cat "$port_file")"; then
  echo "postgres://postgres@127.0.0.1:$(cat "$port_file")/postgres"; exit 0
fi
rm -rf "$dir"; mkdir -p "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg=()
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; as_pg=(runuser -u postgres --); fi
"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
"${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" -w start >/dev/null
echo "$port" > "$port_file"
echo "postgres://postgres@127.0.0.1:$port/postgres"

#!/bin/bash
# Makes the cluster on first start (POSTGRES_USER, POSTGRES_PASSWORD,
# POSTGRES_DB), then runs postgres in the foreground as user postgres.
set -euo pipefail
BIN=/usr/lib/postgresql/15/bin
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /run/postgresql
  chown -R postgres:postgres "$PGDATA" /run/postgresql
  chmod 700 "$PGDATA"
  exec runuser -u postgres -- "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD must be set" >&2; exit 1; }
  password="$(mktemp)"
  printf '%s' "$POSTGRES_PASSWORD" >"$password"
  "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$password" \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password"
  # Other containers connect over the network, with the password.
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    "$BIN/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/run/postgresql" -w start >/dev/null
    "$BIN/createdb" -h /run/postgresql -U "$POSTGRES_USER" "$POSTGRES_DB"
    "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "database $POSTGRES_DB made for $POSTGRES_USER"
fi

exec "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*' \
  -c unix_socket_directories=/run/postgresql "$@"

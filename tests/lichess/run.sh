#!/usr/bin/env bash
# lichess's own Python client, berserk (pinned, from PyPI, unmodified),
# against Rookery's lichess-compatible API (issue 24). Makes a throwaway
# virtualenv (kept in target/ between runs), starts rookery-server on a free
# port with a temporary database, runs tests/lichess/berserk_test.py; then
# two nodes of a cluster on a throwaway PostgreSQL and nats-server, and
# tests/lichess/cluster_test.py (a bot on one node, a person on the other).
# Skipped, loudly, only when PyPI cannot be reached.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# The virtualenv (tests/lichess/venv.sh): made when missing.
set +e
PYTHON="$("$HERE/venv.sh")"
STATUS=$?
set -e
if [ "$STATUS" -eq 75 ]; then
  echo "!! SKIPPED: berserk could not be installed from PyPI (no network?)." >&2
  echo "!! The lichess-compatible API was NOT tested with berserk." >&2
  exit 0
elif [ "$STATUS" -ne 0 ]; then
  exit "$STATUS"
fi

SERVER="${ROOKERY_SERVER_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/rookery-server}"
ENGINE="${ROOKERY_ENGINE_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/rookery-engine}"
if [ ! -x "$SERVER" ] || [ ! -x "$ENGINE" ]; then
  (cd "$ROOT" && cargo build -p rookery-server -p rookery-engine)
fi

DIR="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT

# start_server NAME ARGS…: rookery-server on a free port of 127.0.0.1, its
# log in $DIR/NAME.log; sets URL to its base URL.
start_server() {
  local name="$1"; shift
  # Every client of the test shares one address: the arena scenario's four
  # players (issue 38) together ask more than one person's rate allows.
  "$SERVER" --addr 127.0.0.1:0 --web-dir "$ROOT/web" --rate-limit 500 --rate-burst 1000 "$@" \
    >"$DIR/$name.out" 2>"$DIR/$name.log" &
  local pid=$!
  PIDS+=("$pid")
  URL=""
  for _ in $(seq 1 600); do
    URL="$(grep -o 'listening on http://[^ ]*' "$DIR/$name.out" | head -1 | sed 's/listening on //; s#/$##' || true)"
    [ -n "$URL" ] && return 0
    if ! kill -0 "$pid" 2>/dev/null; then cat "$DIR/$name.log" >&2; exit 1; fi
    sleep 0.1
  done
  echo "rookery-server ($name) did not start" >&2; cat "$DIR/$name.log" >&2; exit 1
}

start_server server --database "sqlite://$DIR/lichess.db"
echo "== berserk against $URL"
if ! ROOKERY_URL="$URL" ROOKERY_ENGINE="$ENGINE" timeout 600 "$PYTHON" "$HERE/berserk_test.py"; then
  echo "-- server log (last 60 lines):" >&2
  tail -60 "$DIR/server.log" >&2
  exit 1
fi

# ---- A cluster (issue 42): the bot on node A, a person on node B, two
# nodes on a throwaway PostgreSQL and nats-server (Debian's packages).
PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "$PGBIN" ] || ! command -v nats-server >/dev/null; then
  echo "!! SKIPPED: the cluster scenario needs PostgreSQL and nats-server (scripts/test.sh installs them)." >&2
  exit 0
fi
free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# PostgreSQL refuses to run as root: then it runs as Debian's postgres user.
as_pg() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups "$@"; else "$@"; fi; }
mkdir -p "$DIR/pg"
if [ "$(id -u)" = 0 ]; then chmod 755 "$DIR"; chown postgres:postgres "$DIR/pg"; fi
as_pg "$PGBIN/initdb" -D "$DIR/pg/data" -U rookery -A trust -E UTF8 --no-sync >/dev/null
PGPORT="$(free_port)"
as_pg "$PGBIN/postgres" -D "$DIR/pg/data" -p "$PGPORT" -k "$DIR/pg" -c listen_addresses=127.0.0.1 \
  >"$DIR/postgres.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 300); do
  psql -X -q -h 127.0.0.1 -p "$PGPORT" -U rookery -d postgres -c 'SELECT 1' >/dev/null 2>&1 && break
  sleep 0.1
done
psql -X -q -h 127.0.0.1 -p "$PGPORT" -U rookery -d postgres -c 'CREATE DATABASE lichess' >/dev/null
NATSPORT="$(free_port)"
nats-server -a 127.0.0.1 -p "$NATSPORT" >"$DIR/nats.log" 2>&1 &
PIDS+=("$!")
CLUSTER=(--database "postgres://rookery@127.0.0.1:$PGPORT/lichess" --nats "nats://127.0.0.1:$NATSPORT")
start_server node-a "${CLUSTER[@]}"
URL_A="$URL"
start_server node-b "${CLUSTER[@]}"
URL_B="$URL"
echo "== a bot on node A ($URL_A), a person on node B ($URL_B)"
if ! ROOKERY_URL_A="$URL_A" ROOKERY_URL_B="$URL_B" ROOKERY_ENGINE="$ENGINE" \
    timeout 300 "$PYTHON" "$HERE/cluster_test.py"; then
  for name in node-a node-b; do
    echo "-- $name log (last 30 lines):" >&2
    tail -30 "$DIR/$name.log" >&2
  done
  exit 1
fi

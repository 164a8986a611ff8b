#!/usr/bin/env bash
# lichess's own Python client, berserk (pinned, from PyPI, unmodified),
# against Rookery's lichess-compatible API (issue 24). Makes a throwaway
# virtualenv (kept in target/ between runs), starts rookery-server on a free
# port with a temporary database, runs tests/lichess/berserk_test.py.
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
LOG="$DIR/server.log"
cleanup() {
  if [ -n "${PID:-}" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$DIR"
}
trap cleanup EXIT
# Every client of the test shares one address: the arena scenario's four
# players (issue 38) together ask more than one person's rate allows.
"$SERVER" --addr 127.0.0.1:0 --database "sqlite://$DIR/lichess.db" --web-dir "$ROOT/web" \
  --rate-limit 500 --rate-burst 1000 \
  >"$DIR/out" 2>"$LOG" &
PID=$!
URL=""
for _ in $(seq 1 600); do
  URL="$(grep -o 'listening on http://[^ ]*' "$DIR/out" | head -1 | sed 's/listening on //; s#/$##' || true)"
  [ -n "$URL" ] && break
  if ! kill -0 "$PID" 2>/dev/null; then cat "$LOG" >&2; exit 1; fi
  sleep 0.1
done
[ -n "$URL" ] || { echo "rookery-server did not start" >&2; cat "$LOG" >&2; exit 1; }
echo "== berserk against $URL"
if ! ROOKERY_URL="$URL" ROOKERY_ENGINE="$ENGINE" timeout 600 "$PYTHON" "$HERE/berserk_test.py"; then
  echo "-- server log (last 60 lines):" >&2
  tail -60 "$LOG" >&2
  exit 1
fi

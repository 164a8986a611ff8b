#!/usr/bin/env bash
# docker-compose.yml brought up for real (issue 42), with no registry: the
# images are built locally (deploy/docker/build-images.sh: a debootstrapped
# Debian base, PostgreSQL, nats-server and nginx from Debian's packages,
# rookery:latest from the release binaries), then
#
# 1. the default service (`rookery`, SQLite on its volume) is brought up,
#    published on a free port of 127.0.0.1 (ROOKERY_PORT), and once healthy
#    a game with a spectator is played through that port;
# 2. the `cluster` profile is brought up beside it (PostgreSQL, NATS, three
#    nodes, two AI workers, nginx on another free port, ROOKERY_LB_PORT),
#    and through nginx: a game whose players' and spectator's sockets are on
#    three different nodes, then the owner's container killed (docker kill)
#    and the game taken over by another node (tests/docker/compose_check.py);
# 3. `down -v`: no container or volume of the project is left.
#
# ROOKERY_NOFILE is set to this machine's hard limit when that is below the
# compose file's 65536 (Docker cannot grant more than it has).
#
# The binaries: ROOKERY_DOCKER_BIN_DIR, or ${CARGO_TARGET_DIR:-target}/release
# (built with `cargo build --release -p rookery-server -p rookery-engine`
# when missing or older than the sources).
#
# Docker: a daemon that answers is used; if none does and dockerd is
# installed (Debian's docker.io, installed here when missing), this script
# starts one for its run (without iptables rules: nothing here needs NAT,
# and the host's firewall is left as it is) and stops it at the end. Where
# no daemon can run at all, the test is skipped with a message saying so.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
STARTED=$SECONDS
PROJECT="rookery-test-$$"
ENV_FILE="$ROOT/deploy/docker/local.env"
VENV="$ROOT/target/deploy-venv-websockets-15.0.1-pyyaml-6.0.2"
DIR="$(mktemp -d)"
DOCKERD_PID=""
UP=""

echo "== docker-compose.yml brought up with locally built images"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
skip() {
  echo "!! ================================================================" >&2
  echo "!! SKIPPED: docker-compose.yml NOT brought up: $*" >&2
  echo "!! ================================================================" >&2
  exit 0
}
compose() {
  (cd "$ROOT" && docker-compose -p "$PROJECT" --env-file "$ENV_FILE" "$@")
}
cleanup() {
  local rc=$?
  if [ -n "$UP" ]; then
    if [ "$rc" -ne 0 ]; then
      compose --profile cluster ps >&2 || true
      compose --profile cluster logs --no-color --tail 30 >&2 || true
    fi
    compose --profile cluster down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  if [ -n "$DOCKERD_PID" ]; then
    kill "$DOCKERD_PID" 2>/dev/null || true
    wait "$DOCKERD_PID" 2>/dev/null || true
  fi
  rm -rf "$DIR"
}
trap cleanup EXIT
# Stopped (scripts/test.sh stops it when a stage beside it fails): clean up.
trap 'exit 143' TERM INT

if ! docker info >/dev/null 2>&1; then
  if ! command -v dockerd >/dev/null && [ "$(id -u)" -eq 0 ]; then
    echo "== installing docker.io (Debian)"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io; } \
      >"$DIR/apt.log" 2>&1 || true
  fi
  command -v dockerd >/dev/null || skip "no Docker daemon answers and dockerd is not installed"
  [ "$(id -u)" -eq 0 ] || skip "no Docker daemon answers, and only root may start dockerd"
  echo "== starting dockerd for this run"
  dockerd --iptables=false --ip-forward=false >"$DIR/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 1 100); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 0.2
  done
  docker info >/dev/null 2>&1 || skip "dockerd could not run here: $(tail -3 "$DIR/dockerd.log")"
fi
command -v docker-compose >/dev/null || {
  { as_root apt-get update -q && as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q docker-compose; } >"$DIR/apt.log" 2>&1 || true
}
command -v docker-compose >/dev/null || { echo "FAILED: docker-compose could not be installed" >&2; exit 1; }
# The Python client (websockets) that tests/deploy/run.sh installs.
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import websockets" 2>/dev/null; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q websockets==15.0.1 PyYAML==6.0.2
fi
PY="$VENV/bin/python"

BIN_DIR="${ROOKERY_DOCKER_BIN_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}/release}"
if [ -z "${ROOKERY_DOCKER_BIN_DIR:-}" ] && { [ ! -x "$BIN_DIR/rookery-server" ] ||
    [ ! -x "$BIN_DIR/rookery-engine" ] || [ -n "$(cd "$ROOT" &&
    find server/src engine/src swiss/src migrations Cargo.lock -newer "$BIN_DIR/rookery-server" -print -quit)" ]; }; then
  echo "== cargo build --release -p rookery-server -p rookery-engine"
  t0=$SECONDS
  (cd "$ROOT" && cargo build -q --release -p rookery-server -p rookery-engine)
  echo "   built in $((SECONDS - t0)) s"
fi

[ -d "$BIN_DIR" ] && BIN_DIR="$(cd "$BIN_DIR" && pwd)"
echo "== images from $BIN_DIR ($((SECONDS - STARTED)) s in)"
"$ROOT/deploy/docker/build-images.sh" "$BIN_DIR"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
PORT="$(free_port)"
LB_PORT="$(free_port)"
export ROOKERY_PORT="127.0.0.1:$PORT" ROOKERY_LB_PORT="127.0.0.1:$LB_PORT"
hard="$(ulimit -Hn)"
if [ "$hard" != unlimited ] && [ "$hard" -lt 65536 ]; then export ROOKERY_NOFILE="$hard"; fi

# Waits until every container of the project is healthy (or fails the run).
wait_healthy() {
  local what="$1" limit="$2" t0=$SECONDS ids states
  while true; do
    ids="$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")"
    states="$(docker inspect -f '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' $ids)"
    if ! grep -qv ' running \(healthy\|none\)$' <<<"$states"; then
      echo "   $what: $(wc -l <<<"$states") containers running and healthy in $((SECONDS - t0)) s"
      return 0
    fi
    if [ $((SECONDS - t0)) -ge "$limit" ]; then
      echo "FAILED: $what not healthy within $limit s:" >&2
      echo "$states" >&2
      exit 1
    fi
    sleep 1
  done
}

echo "== 1. the default service on $ROOKERY_PORT ($((SECONDS - STARTED)) s in)"
UP=1
compose up -d >"$DIR/up.log" 2>&1 || { cat "$DIR/up.log" >&2; exit 1; }
wait_healthy "default service" 90
# The settings took: the port is bound where ROOKERY_PORT said, and the
# server runs with the open-files limit ROOKERY_NOFILE asked for.
bound="$(compose port rookery 8080)"
[ "$bound" = "$ROOKERY_PORT" ] || { echo "FAILED: rookery published on $bound, not $ROOKERY_PORT" >&2; exit 1; }
nofile="${ROOKERY_NOFILE:-65536}"
# (The log read whole first: grep -q would close the pipe early.)
log="$(compose logs --no-color rookery)"
grep -q "open-files limit.*open_files=$nofile\b" <<<"$log" \
  || { echo "FAILED: the server's open-files limit is not $nofile" >&2; exit 1; }
echo "   published on $bound only; the server's open-files limit is $nofile"
"$PY" "$HERE/compose_check.py" single "http://$ROOKERY_PORT"

echo "== 2. the cluster profile, nginx on $ROOKERY_LB_PORT ($((SECONDS - STARTED)) s in)"
compose --profile cluster up -d >"$DIR/up.log" 2>&1 || { cat "$DIR/up.log" >&2; exit 1; }
wait_healthy "cluster profile" 180
"$PY" "$HERE/compose_check.py" cluster "http://$ROOKERY_LB_PORT" "$PROJECT"

echo "== 3. down -v ($((SECONDS - STARTED)) s in)"
compose --profile cluster down -v --remove-orphans >"$DIR/down.log" 2>&1 || { cat "$DIR/down.log" >&2; exit 1; }
UP=""
left="$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")"
[ -z "$left" ] || { echo "FAILED: containers left after down -v: $left" >&2; exit 1; }
volumes="$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")"
[ -z "$volumes" ] || { echo "FAILED: volumes left after down -v: $volumes" >&2; exit 1; }
echo "   no container or volume of $PROJECT is left"
echo "compose test passed in $((SECONDS - STARTED)) s"

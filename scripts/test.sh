#!/usr/bin/env bash
# Runs every test of the project. Installs what the tests need when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The cluster tests (tests/postgres.rs, tests/workers.rs) start a throwaway
# PostgreSQL and nats-server of their own: the Debian packages must be there.
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v nats-server >/dev/null || missing+=(nats-server)
# promtool (Debian's prometheus package) checks a real /metrics scrape
# (tests/ops.rs).
command -v promtool >/dev/null || missing+=(prometheus)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing ${missing[*]} (for the cluster and metrics tests)"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

echo "== unit and integration tests (debug)"
cargo test --workspace

echo "== the black-box tests again, on PostgreSQL (ROOKERY_TEST_DATABASE=postgres)"
# Those that do not reach into the SQLite file itself (docs/architecture.md).
ROOKERY_TEST_DATABASE=postgres cargo test -p rookery-server \
  --test games --test lists --test restart --test errors --test seats \
  --test limits --test shutdown --test ai_fairness --test retention \
  -- --skip games_stored_before_the_rule_are_rated_by_it

echo "== lichess's Python client (berserk, from PyPI) against the lichess-compatible API"
./tests/lichess/run.sh
./tests/deploy/run.sh

echo "== deep perft (release)"
cargo test --release -p rookery-engine --test perft -- --ignored

# docker-compose.yml brought up for real (tests/docker/run.sh; skipped with
# a message where no Docker daemon can run). It mostly waits (images, health
# checks, a takeover), so it runs in the background beside the fuzzing,
# which keeps one core busy and asserts nothing about time. Its rookery
# image is made from the debug binaries `cargo test` built above: a release
# build of the server took 49 minutes on the shared 2-core machine (thin
# LTO, one codegen unit), too much for CI's budget, and the checks are of
# the images and the compose file, not of speed. Run alone, the script
# takes the release binaries (ROOKERY_DOCKER_BIN_DIR chooses).
echo "== docker-compose.yml brought up (tests/docker/run.sh), in the background beside the fuzzing"
docker_log="$(mktemp)"
ROOKERY_DOCKER_BIN_DIR="${CARGO_TARGET_DIR:-target}/debug" ./tests/docker/run.sh >"$docker_log" 2>&1 &
docker_pid=$!
trap 'kill "$docker_pid" 2>/dev/null || true' EXIT

echo "== fuzz (bounded): every fuzz target for 30 s (installs cargo-fuzz when missing)"
./scripts/fuzz.sh

docker_status=0
wait "$docker_pid" || docker_status=$?
trap - EXIT
echo "== docker-compose.yml brought up: tests/docker/run.sh's output"
cat "$docker_log"
rm -f "$docker_log"
[ "$docker_status" -eq 0 ] || { echo "FAILED: tests/docker/run.sh (exit $docker_status)" >&2; exit 1; }

echo "== browser end-to-end tests (installs Chromium and npm packages when missing)"
./tests/e2e/run.sh

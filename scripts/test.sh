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
# What the later stages install for themselves when run alone, installed here
# at once: some of them run side by side below, and two apt-get at the same
# time fail on apt's lock.
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=(chromium chromium-driver fonts-dejavu-core)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v nginx >/dev/null || missing+=(nginx)
command -v caddy >/dev/null || missing+=(caddy)
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing ${missing[*]} (what the tests need)"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

echo "== unit and integration tests (debug)"
cargo test --workspace

echo "== the black-box tests again, on PostgreSQL (ROOKERY_TEST_DATABASE=postgres)"
# Those that do not reach into the SQLite file itself (docs/architecture.md),
# run as the binaries `cargo test --workspace` built above. A second
# `cargo test` naming them (`-p rookery-server`, or `--workspace --test NAME`)
# builds them anew: without the other packages' tests cargo leaves those
# packages' dev-dependencies, and the features they turn on, out of the
# build, so tokio, rand, sqlx, the server and these nine binaries were
# compiled a second time (1 min 54 s on a fresh machine). Listing the first
# build's executables (`--no-run`, the same arguments) compiles nothing.
pg_tests=(games lists restart errors seats limits shutdown ai_fairness retention)
mapfile -t pg_bins < <(cargo test --workspace --no-run --message-format=json \
  | scripts/cargo-executables.py --kind test --dir server "${pg_tests[@]}")
[ "${#pg_bins[@]}" -eq "${#pg_tests[@]}" ] || { echo "!! the PostgreSQL stage found ${#pg_bins[@]} of its ${#pg_tests[@]} test binaries" >&2; exit 1; }
for bin in "${pg_bins[@]}"; do
  # As cargo runs an integration test: from its package's directory.
  (cd server && ROOKERY_TEST_DATABASE=postgres "$bin" --skip games_stored_before_the_rule_are_rated_by_it)
done

# The binaries the remaining stages drive, built by `cargo test` above.
target="${CARGO_TARGET_DIR:-$PWD/target}"
export ROOKERY_SERVER_BIN="${ROOKERY_SERVER_BIN:-$target/debug/rookery-server}"
export ROOKERY_ENGINE_BIN="${ROOKERY_ENGINE_BIN:-$target/debug/rookery-engine}"
if [ ! -x "$ROOKERY_SERVER_BIN" ] || [ ! -x "$ROOKERY_ENGINE_BIN" ]; then
  cargo build -p rookery-server -p rookery-engine
fi

# The stages left are of two kinds. Deep perft and fuzzing keep a core busy
# and wait on nothing; berserk, the proxies and the browser mostly wait on
# timers, sockets and Chromium. The CPU-bound pair runs beside the others at
# a lower priority (nice 10: the servers under test keep the CPU when they
# want it), its output kept in a log that is printed when it ends. Fuzzing
# builds in fuzz/target and deep perft is the only release build, so neither
# waits on the other stages' build directory.
beside_log="$(mktemp)"
(
  set -e
  echo "== fuzz (bounded): every fuzz target for 30 s (installs cargo-fuzz when missing)"
  nice -n 10 ./scripts/fuzz.sh
  echo "== deep perft (release)"
  nice -n 10 cargo test --release -p rookery-engine --test perft -- --ignored
) >"$beside_log" 2>&1 &
beside=$!

trap 'kill "$beside" 2>/dev/null || true; rm -f "$beside_log"' EXIT

echo "== lichess's Python client (berserk, from PyPI) against the lichess-compatible API"
./tests/lichess/run.sh
./tests/deploy/run.sh

# docker-compose.yml brought up for real (tests/docker/run.sh; skipped with
# a message where no Docker daemon can run). It mostly waits (images, health
# checks, a takeover), so it runs beside the browser tests; it starts after
# the proxies' stage, whose Python environment it reuses. Its rookery image is
# made from the debug binaries `cargo test` built above: a release build of
# the server took 49 minutes on the shared 2-core machine (thin LTO, one
# codegen unit), too much for CI's budget, and the checks are of the images
# and the compose file, not of speed. Run alone, the script takes the
# release binaries (ROOKERY_DOCKER_BIN_DIR chooses).
echo "== docker-compose.yml brought up (tests/docker/run.sh), beside the stages below"
docker_log="$(mktemp)"
ROOKERY_DOCKER_BIN_DIR="$target/debug" ./tests/docker/run.sh >"$docker_log" 2>&1 &
docker_pid=$!
trap 'kill "$beside" "$docker_pid" 2>/dev/null || true; rm -f "$beside_log" "$docker_log"' EXIT

echo "== browser end-to-end tests (installs Chromium and npm packages when missing)"
./tests/e2e/run.sh

echo "== waiting for docker-compose.yml's test, fuzzing and deep perft (run beside the stages above)"
docker_status=0
wait "$docker_pid" || docker_status=$?
echo "== docker-compose.yml brought up: tests/docker/run.sh's output"
cat "$docker_log"
status=0
wait "$beside" || status=$?
cat "$beside_log"
if [ "$docker_status" -ne 0 ]; then
  echo "!! tests/docker/run.sh failed (exit $docker_status): see above" >&2
  exit "$docker_status"
fi
if [ "$status" -ne 0 ]; then
  echo "!! fuzzing or deep perft failed (exit $status): see above" >&2
  exit "$status"
fi

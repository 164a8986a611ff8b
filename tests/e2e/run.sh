#!/usr/bin/env bash
# Browser end-to-end tests of the web client against the real server.
# Installs what they need when missing (Debian's chromium, Node.js, the npm
# packages from package-lock.json), builds rookery-server, runs the tests.
# Screenshots land in artifacts/e2e/ (gitignored).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  echo "== installing Debian's chromium"
  apt_install chromium chromium-driver fonts-dejavu-core
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "== installing Node.js"
  apt_install nodejs npm
fi

NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" -lt 20 ]; then
  echo "tests/e2e needs Node.js 20 or newer (playwright-core); found $(node --version)" >&2
  exit 1
fi

cd "$HERE"
if [ ! -f node_modules/playwright-core/package.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== installing npm packages"
  npm ci --no-audit --no-fund
fi

if [ -z "${ROOKERY_SERVER_BIN:-}" ]; then
  echo "== building rookery-server and rookery-engine (the bot of berserk.test.mjs)"
  (cd "$ROOT" && cargo build -p rookery-server -p rookery-engine)
  export ROOKERY_SERVER_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/rookery-server"
  export ROOKERY_ENGINE_BIN="${ROOKERY_ENGINE_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/rookery-engine}"
fi

echo "== browser end-to-end tests"
export CHROMIUM_PATH="$CHROMIUM"
# Every *.test.mjs file, or only those named in E2E_FILES (space-separated).
# shellcheck disable=SC2206
FILES=(${E2E_FILES:-*.test.mjs})
RUN=(timeout 2400 node --test --test-concurrency=1 --test-reporter=spec "${FILES[@]}")
# Chromium fails every request in flight with net::ERR_NETWORK_CHANGED when
# any network interface of its namespace comes or goes; in CI the compose
# test beside these (docker's bridges and veth pairs) did that, and a page
# whose module failed to load stayed at "Loading…". As root the tests run
# in a network namespace of their own (loopback only: the servers, proxies
# and Chromium they start all talk over 127.0.0.1), where nothing else's
# interfaces are seen. E2E_NETNS=0 runs them in the machine's namespace.
if [ "${E2E_NETNS:-1}" != 0 ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null \
    && unshare --net true 2>/dev/null; then
  echo "   (in a network namespace of their own, loopback only)"
  # What needs the registries is fetched first: berserk.test.mjs's
  # virtualenv (the test itself only finds it there).
  case " ${FILES[*]} " in
    *" berserk.test.mjs "*) "$ROOT/tests/lichess/venv.sh" >/dev/null || true ;;
  esac
  exec unshare --net -- sh -c 'ip link set lo up && exec "$@"' sh "${RUN[@]}"
fi
exec "${RUN[@]}"

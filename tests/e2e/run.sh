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
exec timeout 2400 node --test --test-concurrency=1 --test-reporter=spec "${FILES[@]}"

#!/usr/bin/env bash
# Runs every test of the project. Installs what the tests need when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== unit and integration tests (debug)"
cargo test --workspace

echo "== deep perft (release)"
cargo test --release -p rookery-engine --test perft -- --ignored

echo "== fuzz (bounded): every fuzz target for 30 s (installs cargo-fuzz when missing)"
./scripts/fuzz.sh

echo "== browser end-to-end tests (installs Chromium and npm packages when missing)"
./tests/e2e/run.sh

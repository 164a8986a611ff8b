#!/usr/bin/env bash
# The virtualenv with lichess's Python client, berserk (pinned, from PyPI,
# unmodified), kept in target/ between runs: made when missing, then its
# python's path printed on stdout. Used by tests/lichess/run.sh and by the
# browser test tests/e2e/berserk.test.mjs (which runs tests/lichess/bot.py
# with it). Exits 75 (EX_TEMPFAIL), saying so loudly on stderr, when PyPI
# cannot be reached; any other failure is an error.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BERSERK_VERSION="0.14.0"
VENV="$ROOT/target/berserk-venv-$BERSERK_VERSION"

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import berserk" 2>/dev/null; then
  echo "== installing berserk $BERSERK_VERSION from PyPI into $VENV" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  if ! "$VENV/bin/pip" install -q "berserk==$BERSERK_VERSION" >&2; then
    echo "!! berserk $BERSERK_VERSION could not be installed from PyPI (no network?)." >&2
    rm -rf "$VENV"
    exit 75
  fi
fi
echo "$VENV/bin/python"

#!/usr/bin/env bash
# Calibrates the difficulty levels at 5+0.05, two games at a time
# (CONCURRENCY=N for more: levels 1-7 are bound by depth and node caps, and
# Stockfish's UCI_Elo picks its move at a fixed depth, so a busier machine
# changes neither side's moves, only the risk of a time loss).
#
# A level plays Stockfish 15.1 (Debian's `stockfish`) with
# UCI_LimitStrength at some UCI_Elo (1350, its floor, and up), or another
# level already measured. Each match line prints W-D-L, score and the Elo
# difference with its 95% error bar; a level's Elo is the opponent's rating
# plus that difference.
#
# Usage: tools/calibrate_levels.sh LEVEL OPPONENT PAIRS [FIRST_OPENING]
#   OPPONENT is a Stockfish UCI_Elo (e.g. sf1800) or another level (e.g. L4).
#   OPENINGS=FILE plays the openings of FILE (an EPD file, e.g. a draw
#   from several books by tools/draw_openings.py) instead of the book's.
# Example: tools/calibrate_levels.sh 7 sf1800 20
set -euo pipefail
cd "$(dirname "$0")/.."

level=$1
opponent=$2
pairs=${3:-20}
first=${4:-0}
engine=${ROOKERY_ENGINE:-target/release/rookery-engine}
stockfish=${STOCKFISH:-/usr/games/stockfish}
# A flag falls only 0.2 s past zero: these machines are shared, and a
# scheduling hiccup should not decide a calibration game.
common=(--tc 5+0.05 --concurrency "${CONCURRENCY:-2}" --time-margin 0.2 --pairs "$pairs" --first "$first")
if [ -n "${OPENINGS:-}" ]; then
  common+=(--openings "$OPENINGS")
fi

case $opponent in
  sf*)
    exec python3 tools/match.py "${common[@]}" --name "L$level-vs-SF${opponent#sf}" \
      --engine1 "$engine" --opt1 "Level=$level" \
      --engine2 "$stockfish" --opt2 UCI_LimitStrength=true --opt2 "UCI_Elo=${opponent#sf}" \
      --opt2 Threads=1 --opt2 Hash=16 --opt2 "Move Overhead=50"
    ;;
  L*)
    exec python3 tools/match.py "${common[@]}" --name "L$level-vs-$opponent" \
      --engine1 "$engine" --opt1 "Level=$level" \
      --engine2 "$engine" --opt2 "Level=${opponent#L}"
    ;;
  *)
    echo "opponent must be sfNNNN or LN" >&2
    exit 2
    ;;
esac

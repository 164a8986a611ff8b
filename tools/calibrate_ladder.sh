#!/usr/bin/env bash
# Calibrates the whole ladder at 5+0.05 against Stockfish 15.1: one
# tools/calibrate_levels.sh match per level, one after the other, each
# logged to tools/calibration-logs/ladder-LEVEL.log, then the table.
#
# Time-control matches are only meaningful on a quiet machine (nothing
# else compiling or searching): run this when the machine is yours. At
# 100 games a level (the default, 50 openings both colours) it takes
# about three hours on two cores.
#
# Each level plays the Stockfish UCI_Elo nearest its expected rating (the
# `elo` column of engine/src/level.rs, edit ANCHORS below when the table
# changes); a level expected below Stockfish's floor of 1350 plays the
# level above it instead, and its rating is chained on that level's.
# tools/ladder_table.py turns the logs into ratings with error bars.
#
# Usage: tools/calibrate_ladder.sh [PAIRS] [FIRST_OPENING] [LEVELS...]
# Example: tools/calibrate_ladder.sh 50 100 8 7 6
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${1:-50}
first=${2:-100}
shift $(( $# > 2 ? 2 : $# ))
levels=("$@")
[ ${#levels[@]} -eq 0 ] && levels=(8 7 6 5 4 3 2 1)

# level -> opponent (sfNNNN or LN). Strongest first, so that a chained
# level's opponent is measured before it.
declare -A ANCHORS=(
  [8]=sf2400 [7]=sf2100 [6]=sf1900 [5]=sf1700
  [4]=sf1500 [3]=sf1350 [2]=L3 [1]=L2
)

for level in "${levels[@]}"; do
  opponent=${ANCHORS[$level]}
  log=tools/calibration-logs/ladder-$level.log
  echo "level $level v $opponent, $((2 * pairs)) games -> $log"
  nice -n 5 tools/calibrate_levels.sh "$level" "$opponent" "$pairs" "$first" | tee "$log" | grep FINAL
done
python3 tools/ladder_table.py tools/calibration-logs/ladder-*.log

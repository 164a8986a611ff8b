#!/usr/bin/env bash
# Calibrates the whole ladder at 5+0.05 against Stockfish 15.1: one
# tools/calibrate_levels.sh match per level, one after the other, each
# logged to tools/calibration-logs/ladder-LEVEL-OPPONENT.log, then the table.
#
# Time-control matches are only meaningful on a quiet machine (nothing
# else compiling or searching): run this when the machine is yours. At
# 100 games a level (the default, 50 openings both colours) it takes
# about an hour and a half on two cores (levels 1-6 answer in a few
# milliseconds, so their games are short).
#
# Each level plays the Stockfish UCI_Elo nearest its expected rating (the
# `elo` column of engine/src/level.rs, edit ANCHORS below when the table
# changes); a level far below Stockfish's floor of 1350 also plays the
# level above it, and that rating is chained on the other level's.
# tools/ladder_table.py turns the logs into ratings with error bars.
#
# Usage: tools/calibrate_ladder.sh [PAIRS] [FIRST_OPENING] [LEVELS...]
# Example: tools/calibrate_ladder.sh 50 100 8 7 6
# With openings drawn at random from two files (as the ladder was last
# measured, tools/calibration.md, fifteenth session):
#   tools/draw_openings.py --seed N --count 25 --out /tmp/draw.epd \
#       engine/tests/data/openings.epd tools/probe-openings.epd
#   OPENINGS=/tmp/draw.epd tools/calibrate_ladder.sh 50 0
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${1:-50}
first=${2:-100}
shift $(( $# > 2 ? 2 : $# ))
levels=("$@")
[ ${#levels[@]} -eq 0 ] && levels=(8 7 6 5 4 3 2 1)

# level -> opponents (sfNNNN or LN), one match each; a level's runs are
# pooled. Strongest first, so that a chained level's opponent is measured
# before it. Level 1 is so far below Stockfish's floor that its direct
# match has a wide error bar: it also plays level 2.
declare -A ANCHORS=(
  [8]=sf2600 [7]=sf2000 [6]=sf1850 [5]=sf1650
  [4]=sf1500 [3]=sf1350 [2]=sf1350 [1]="sf1350 L2"
)

for level in "${levels[@]}"; do
  for opponent in ${ANCHORS[$level]}; do
    log=tools/calibration-logs/ladder-$level-$opponent.log
    echo "level $level v $opponent, $((2 * pairs)) games -> $log"
    nice -n 5 tools/calibrate_levels.sh "$level" "$opponent" "$pairs" "$first" | tee "$log" | grep FINAL
  done
done
python3 tools/ladder_table.py tools/calibration-logs/ladder-*.log

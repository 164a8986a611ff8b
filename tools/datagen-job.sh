#!/usr/bin/env bash
# The background self-play data job (issue 41): one generator (one thread unless THREADS says more),
# `nice -n 19`, detached so that it outlives the session that started it,
# adding to a versioned data file in DATA_DIR (outside the repository).
#
#   tools/datagen-job.sh start    build the engine (release), copy the binary
#                                 to DATA_DIR/bin/rookery-engine-COMMIT and
#                                 start it, unless a job is running already
#   tools/datagen-job.sh status   the job's pid, file, last log line, and
#                                 positions per CPU second
#   tools/datagen-job.sh stop     SIGTERM to the job (any moment is safe: the
#                                 file only grows by whole records)
#
# Pausing is `kill -STOP $(cat DATA_DIR/datagen.pid)` and `kill -CONT ...`:
# the games are played to a node budget, never a clock, so a pause changes
# nothing but the wall-clock rate in the log.
#
# The generator's `--dir` names the file after the engine commit, the
# network's hash and the settings (`selfplay-5000n-net-HASH-COMMIT-SETTINGS.bin`,
# with `.meta` beside it: engine/src/datagen/provenance.rs), so `start` with
# the same engine keeps adding to the same file and a new engine starts a new
# one. The engine must be committed: data is only ever made by a commit.
#
# Settings (environment, defaults in brackets): DATA_DIR [/work/nnue-data],
# NODES [5000], EVAL [built-in], THREADS [1: games played at once; more
# only while the machine has nothing else to do], SEED [the engine commit's first 8 hex digits
# plus HASH << 32: binaries that play alike but differ in commit or table
# size still play other games],
# HASH [1, the generator's own default: megabytes of transposition table for each game played at once.
# A 5,000-node search fills a sliver of even 1 MB (65,536 entries), and a
# table that stays in the core's cache plays more games: 314 positions a
# CPU second at 1 MB, 289 at 4, 283-293 at 2, 257-262 at the generator's
# former default 16 (tools/nnue.md, fifteenth session). The size is one of the
# settings a file is named after, so a new size starts a new file].
set -euo pipefail

cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-/work/nnue-data}
NODES=${NODES:-5000}
EVAL=${EVAL:-built-in}
THREADS=${THREADS:-1}
HASH=${HASH:-1}
PID_FILE="$DATA_DIR/datagen.pid"
LOG="$DATA_DIR/datagen.log"

running_pid() {
    [ -f "$PID_FILE" ] || return 1
    local pid
    pid=$(cat "$PID_FILE")
    # The pid is ours only while it is still a datagen process.
    [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q ' datagen ' \
        && echo "$pid"
}

case "${1:-status}" in
start)
    if pid=$(running_pid); then
        echo "datagen-job: already running, pid $pid (log $LOG)"
        exit 0
    fi
    if ! git diff --quiet HEAD -- engine; then
        echo "datagen-job: engine/ has uncommitted changes; commit them first" >&2
        exit 2
    fi
    commit=$(git log -1 --format=%H -- engine)
    target=${CARGO_TARGET_DIR:-target}
    nice -n 19 cargo build --release -p rookery-engine --bin rookery-engine
    mkdir -p "$DATA_DIR/bin"
    binary="$DATA_DIR/bin/rookery-engine-${commit:0:8}"
    cp "$target/release/rookery-engine" "$binary.tmp"
    mv "$binary.tmp" "$binary"
    # The table's size changes the games only a little, so it is in the
    # seed too: a new file must not replay the openings of the one before.
    seed=${SEED:-$((16#${commit:0:8} + (HASH << 32)))}
    echo "# $(date -u '+%F %T') UTC: datagen-job.sh start, $binary, seed $seed, $THREADS thread(s), hash $HASH MB" >> "$LOG"
    cd "$DATA_DIR"
    setsid nohup nice -n 19 "$binary" datagen --dir "$DATA_DIR" --nodes "$NODES" \
        --threads "$THREADS" --hash "$HASH" --seed "$seed" --eval "$EVAL" --report-secs 60 \
        >> "$LOG" 2>&1 < /dev/null &
    echo $! > "$PID_FILE"
    sleep 1
    echo "datagen-job: started pid $(cat "$PID_FILE"), log $LOG"
    tail -n 1 "$LOG"
    ;;
status)
    if ! pid=$(running_pid); then
        echo "datagen-job: not running (log $LOG)"
        exit 1
    fi
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    echo "datagen-job: pid $pid, $(tr '\0' ' ' < "/proc/$pid/cmdline")"
    grep '^datagen: .* holds ' "$LOG" | tail -n 1
    # The running job's last report: after its own start line.
    last=$(awk '/^datagen: .* holds /{l=""} /^datagen: .* positions written/{l=$0} END{print l}' "$LOG")
    if [ -z "$last" ]; then
        echo "no report yet (one a minute)"
        exit 0
    fi
    echo "$last"
    written=$(echo "$last" | sed -E 's/.* ([0-9]+) positions written.*/\1/')
    echo "$written positions in $((ticks / $(getconf CLK_TCK))) s of CPU:" \
        "$(awk -v w="$written" -v t="$ticks" -v hz="$(getconf CLK_TCK)" \
            'BEGIN { if (t > 0) printf "%.0f", w * hz / t; else print "-" }') positions per CPU second"
    ;;
stop)
    if pid=$(running_pid); then
        kill "$pid"
        echo "# $(date -u '+%F %T') UTC: datagen-job.sh stop, pid $pid" >> "$LOG"
        echo "datagen-job: stopped pid $pid"
    else
        echo "datagen-job: not running"
    fi
    ;;
*)
    echo "usage: tools/datagen-job.sh [start|status|stop]" >&2
    exit 2
    ;;
esac

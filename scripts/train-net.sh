#!/usr/bin/env bash
# Trains Rookery's evaluation network (issue 26), start to end:
#
#   1. builds the engine and the trainer (release);
#   2. tops the self-play data up to POSITIONS records with
#      `rookery-engine datagen` (resumable: run the script again after a stop
#      and generation continues where the file ends; POSITIONS=0 skips it);
#   3. trains on every *.bin of the data directory with
#      engine/examples/train_net.rs and writes the quantised net, its
#      training log and a provenance note (data, settings, commit, times).
#
# Everything CPU-heavy runs under `nice -n 19` (these machines are shared).
# Settings are environment variables (defaults in brackets):
#
#   DATA_DIR [target/nnue-data]  where the records live (never committed)
#   POSITIONS [0]                generate until the data file holds this many
#   NODES [5000] THREADS [1] SEED [1]   generation: nodes a move, workers, seed
#   EVAL [hand]                  generation's evaluation: hand, built-in (the
#                                engine's network) or a net file; the data file
#                                is selfplay-${NODES}n.bin for hand, else
#                                selfplay-${NODES}n-${EVAL's file name}.bin
#   OUT [target/nnue/rookery.nnue]      the quantised network
#   HIDDEN [128] EPOCHS [8] BATCH [4096] LR [0.001] LR_DROP_EPOCH [4]
#   RESULT_WEIGHT [0.3] VALIDATION [5] TRAIN_SEED [1]   training
#   HELD_OUT [unset]    START:COUNT: hold out those records instead of the
#                       last VALIDATION percent, so that nets trained as the
#                       file grows are scored on the same positions
#   OUTPUT_BUCKETS [1]  output neurons picked by the number of men on the
#                       board (a divisor of 32; more than 1 writes format v2)
#   MIRROR_FILES [0]    1: train on positions without castling rights
#                       mirrored left to right half the time
#   KING_BUCKETS [0]    1, 4, 8, 16 or 32: king-bucketed inputs (768 per
#                       bucket of the own king's square, mirrored to files
#                       e-h; format v3); 0 the plain 768 inputs
#   TRAIN_THREADS [1]   threads sharing each batch (1.7x at 2 for a plain
#                       256x2 net); a net depends on this number too
#
# Data from a generator started with `--dir` (the documented background job,
# tools/nnue.md) lives in DATA_DIR as selfplay-*.bin, each with its .meta
# provenance; the provenance note names the files read.
#
# Example, the way the first nets were made:
#   DATA_DIR=/work/nnue-data POSITIONS=2000000 scripts/train-net.sh
set -euo pipefail

cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-target/nnue-data}
POSITIONS=${POSITIONS:-0}
NODES=${NODES:-5000}
THREADS=${THREADS:-1}
SEED=${SEED:-1}
EVAL=${EVAL:-hand}
OUT=${OUT:-target/nnue/rookery.nnue}
HIDDEN=${HIDDEN:-128}
EPOCHS=${EPOCHS:-8}
BATCH=${BATCH:-4096}
LR=${LR:-0.001}
LR_DROP_EPOCH=${LR_DROP_EPOCH:-4}
RESULT_WEIGHT=${RESULT_WEIGHT:-0.3}
VALIDATION=${VALIDATION:-5}
TRAIN_SEED=${TRAIN_SEED:-1}
TRAIN_THREADS=${TRAIN_THREADS:-1}
HELD_OUT=${HELD_OUT:-}
MIRROR_FILES=${MIRROR_FILES:-0}
OUTPUT_BUCKETS=${OUTPUT_BUCKETS:-1}
KING_BUCKETS=${KING_BUCKETS:-0}
TARGET_DIR=${CARGO_TARGET_DIR:-target}

nice -n 19 cargo build --release -p rookery-engine --bin rookery-engine --example train_net
ENGINE="$TARGET_DIR/release/rookery-engine"
TRAINER="$TARGET_DIR/release/examples/train_net"

mkdir -p "$DATA_DIR" "$(dirname "$OUT")"
if [ "$EVAL" = hand ]; then
    DATA_FILE="$DATA_DIR/selfplay-${NODES}n.bin"
else
    DATA_FILE="$DATA_DIR/selfplay-${NODES}n-$(basename "$EVAL" .nnue).bin"
fi
generation_started=$(date +%s)
if [ "$POSITIONS" -gt 0 ]; then
    nice -n 19 "$ENGINE" datagen --out "$DATA_FILE" --positions "$POSITIONS" \
        --nodes "$NODES" --threads "$THREADS" --seed "$SEED" --eval "$EVAL" --report-secs 60
fi
generation_seconds=$(( $(date +%s) - generation_started ))

shopt -s nullglob
data_files=("$DATA_DIR"/*.bin)
if [ ${#data_files[@]} -eq 0 ]; then
    echo "train-net.sh: no *.bin data in $DATA_DIR (set POSITIONS to generate some)" >&2
    exit 1
fi
data_args=()
for f in "${data_files[@]}"; do
    data_args+=(--data "$f")
done
if [ -n "$HELD_OUT" ]; then
    data_args+=(--held-out "$HELD_OUT")
fi

training_started=$(date +%s)
nice -n 19 "$TRAINER" "${data_args[@]}" --out "$OUT" --hidden "$HIDDEN" \
    --epochs "$EPOCHS" --batch "$BATCH" --lr "$LR" --lr-drop-epoch "$LR_DROP_EPOCH" \
    --result-weight "$RESULT_WEIGHT" --validation "$VALIDATION" --seed "$TRAIN_SEED" \
    --mirror-files "$MIRROR_FILES" --output-buckets "$OUTPUT_BUCKETS" \
    --king-buckets "$KING_BUCKETS" --threads "$TRAIN_THREADS" | tee "$OUT.log"
training_seconds=$(( $(date +%s) - training_started ))

{
    echo "network: $OUT ($(stat -c %s "$OUT") bytes, sha256 $(sha256sum "$OUT" | cut -d' ' -f1)), 768 x ${KING_BUCKETS} king bucket(s) (0: none) -> ${HIDDEN}x2 -> 1 (${OUTPUT_BUCKETS} output bucket(s)), int16/int8"
    echo "commit: $(git rev-parse HEAD)$(git diff --quiet -- engine scripts || echo ' (engine or scripts modified)')"
    # The records the trainer read (a generator may still be appending).
    grep -E "^.+: [0-9]+ records$" "$OUT.log" | sed 's/^/data: /'
    echo "generation (this run): ${generation_seconds} s, --nodes $NODES --threads $THREADS --seed $SEED --eval $EVAL"
    echo "training: ${training_seconds} s, --hidden $HIDDEN --epochs $EPOCHS --batch $BATCH --lr $LR" \
        "--lr-drop-epoch $LR_DROP_EPOCH --result-weight $RESULT_WEIGHT --validation $VALIDATION" \
        "--seed $TRAIN_SEED${HELD_OUT:+ --held-out $HELD_OUT} --mirror-files $MIRROR_FILES --output-buckets $OUTPUT_BUCKETS" \
        "--king-buckets $KING_BUCKETS --threads $TRAIN_THREADS"
    for f in "${data_files[@]}"; do
        if [ -f "$f.meta" ]; then
            echo "provenance of $f:"
            grep -E '^(engine|evaluation|settings|run):' "$f.meta" | sed 's/^/  /'
        fi
    done
    grep -E "^(epoch +$EPOCHS:|quantised|held-out loss of)" "$OUT.log"
} > "$OUT.txt"
cat "$OUT.txt"

#!/usr/bin/env bash
# Perft speed against cozy-chess and shakmaty in instructions, not seconds:
# each library's perft of the standard suite runs alone under callgrind,
# which counts the instructions executed whatever else the machine does
# (the same count on a busy and an idle machine). Fewer instructions is not
# the same as less time (cache misses and branch mispredictions are not
# counted), so this stands beside `cargo bench --bench perft`'s wall-clock
# ratio, not in its place.
#
#   tools/perft-instructions.sh [MAX_NODES]   # default 2,000,000 per position
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-2000000}
command -v valgrind >/dev/null || { echo "needs valgrind (Debian's valgrind)" >&2; exit 2; }
bench=$(cargo bench -p rookery-engine --bench perft --no-run --message-format=json 2>/dev/null \
    | scripts/cargo-executables.py --kind bench --dir engine perft)
declare -A count
for library in rookery cozy shakmaty; do
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" "$max" "$library" 2>&1)
    leaves=$(echo "$out" | sed -n "s/^$library: \([0-9]*\) leaves.*/\1/p")
    count[$library]=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    printf '%-9s %12s leaves %16s instructions %8.1f per leaf\n' "$library" "$leaves" \
        "${count[$library]}" "$(python3 -c "print(${count[$library]} / $leaves)")"
done
printf 'instructions: cozy-chess / rookery = %.3f, shakmaty / rookery = %.3f\n' \
    "$(python3 -c "print(${count[cozy]} / ${count[rookery]})")" \
    "$(python3 -c "print(${count[shakmaty]} / ${count[rookery]})")"

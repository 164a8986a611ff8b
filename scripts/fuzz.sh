#!/usr/bin/env bash
# Builds every cargo-fuzz target (fuzz/) and runs each for a bounded time,
# failing on the first crash, panic or broken invariant.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 30 (what CI runs); the targets default to
# all of them. New inputs a run finds go to a scratch directory, not to the
# committed corpus (fuzz/corpus/<target>, which only seeds the run), so
# running this never dirties the tree. A crashing input is saved under
# fuzz/artifacts/<target>/ (ignored by git) and libFuzzer prints the command
# that replays it.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${1:-30}"
shift || true

# cargo-fuzz is made for nightly: with a sanitizer (its default) it passes
# -Zsanitizer, and it may pass other -Z flags. The machine has only stable
# Rust; RUSTC_BOOTSTRAP=1 lets a stable compiler accept them. (The build
# below, without a sanitizer, uses stable flags only today; the variable is
# set anyway, as in every cargo fuzz command of fuzz/README.md, so a
# sanitizer build or a future cargo-fuzz works too.) Set for this script
# only, so it never leaks into the normal build.
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# No sanitizer: the code under test is safe Rust (the engine and the server
# have no `unsafe`), where AddressSanitizer finds nothing and costs build
# time and speed. Panics, overflow (debug assertions are on) and broken
# invariants are what the targets look for. 16 codegen units: the build
# (the whole server crate graph, instrumented) is the slow part of a short
# run, and this roughly halves it for a small loss of speed per execution.
build_flags=(--sanitizer none --codegen-units 16)

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

cargo fuzz build "${build_flags[@]}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in "${targets[@]}"; do
    echo "-- fuzz $target for ${seconds}s"
    mkdir -p "$scratch/$target" "corpus/$target"
    # -timeout: an input that runs for seconds is a hang (the UCI target
    # bounds its searches far below that). -max_len: enough for a long PGN.
    cargo fuzz run "${build_flags[@]}" "$target" "$scratch/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=20 -max_len=8192 -print_final_stats=1
done

#!/usr/bin/env python3
"""Draws openings at random from several EPD files into one, for a match.

A fixed-node match replays the same games from the same openings, so a
series of A/B matches should not keep reusing one slice of one book.
This takes COUNT openings from each file (without replacement, by a
seeded generator), shuffles them together and writes them as EPD
(the board and its move counters) to --out; `tools/match.py --openings OUT` then plays
them. Each line written ends with a comment naming where the opening came
from (file and line number), so the draw is recorded in the file itself,
and the same seed and files give the same file byte for byte.

Example:
  tools/draw_openings.py --seed 4101 --count 100 --out /tmp/draw.epd \\
      engine/tests/data/openings.epd tools/probe-openings.epd
"""

import argparse
import random

import chess


def positions(path):
    """(line number, EPD) of every position of `path`: the board and its
    move counters, without the other operations."""
    found = []
    with open(path) as f:
        for number, line in enumerate(f, start=1):
            line = line.strip()
            if line and not line.startswith("#"):
                board, ops = chess.Board.from_epd(line)
                counters = {
                    "hmvc": ops.get("hmvc", board.halfmove_clock),
                    "fmvc": ops.get("fmvc", board.fullmove_number),
                }
                found.append((number, board.epd(**counters)))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="EPD files to draw from")
    ap.add_argument("--count", type=int, required=True, help="openings drawn from each file")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    drawn = []
    for path in args.files:
        pool = positions(path)
        if args.count > len(pool):
            ap.error(f"{path} has {len(pool)} positions, fewer than {args.count}")
        drawn += [(epd, path, number) for number, epd in rng.sample(pool, args.count)]
    rng.shuffle(drawn)
    with open(args.out, "w") as out:
        for epd, path, number in drawn:
            print(f'{epd} c9 "{path}:{number}";', file=out)
    print(f"{len(drawn)} openings, seed {args.seed}, {args.count} from each of {', '.join(args.files)} -> {args.out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes a set of natural, balanced opening positions for engine
matches (`probe-openings.epd`, 1,000 positions, from seed 32): each is
8 to 10 plies from the start, every ply a random pick among Stockfish's
moves within 50 cp of its best (MultiPV 6, depth 7), and is kept when
Stockfish at depth 11 rates it within 60 cp of equal and it is not a
repeat. Match with `tools/match.py --openings tools/probe-openings.epd`.

Unlike the 300 book openings of `engine/tests/data/openings.epd`, these
can be made in any number, so fixed-node probes (which replay the same
games from the same openings) get fresh games.

Usage: tools/probe_openings.py [--count 1000] [--seed 32] [--out FILE]
"""

import argparse
import random

import chess
import chess.engine


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--out", default="tools/probe-openings.epd")
    ap.add_argument("--stockfish", default="/usr/games/stockfish")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    stockfish = chess.engine.SimpleEngine.popen_uci(args.stockfish)
    seen = set()
    with open(args.out, "w") as out:
        while len(seen) < args.count:
            board = chess.Board()
            for _ in range(rng.choice([8, 9, 10])):
                lines = stockfish.analyse(board, chess.engine.Limit(depth=7), multipv=6)
                best = lines[0]["score"].relative.score(mate_score=10000)
                near = [line["pv"][0] for line in lines
                        if best - line["score"].relative.score(mate_score=10000) <= 50]
                board.push(rng.choice(near))
            key = board.epd()
            if key in seen:
                continue
            score = stockfish.analyse(board, chess.engine.Limit(depth=11))["score"].white()
            if abs(score.score(mate_score=10000)) > 60:
                continue
            seen.add(key)
            print(key, file=out)
    stockfish.quit()


if __name__ == "__main__":
    main()

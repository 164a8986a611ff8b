#!/usr/bin/env python3
"""Runs an EPD test suite (default: Win At Chess) against a UCI engine at a
fixed time (or, with --nodes, a fixed node budget) per position and prints
the number solved. A node budget gives the same count on a busy machine as
on an idle one.

A position counts as solved when the engine's move is one of the `bm` moves
(and none of the `am` moves).

Example:
  tools/wac.py --engine target/release/rookery-engine --time 0.5
"""

import argparse
import sys

import chess.engine

from epd import load_epd, solves


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True)
    ap.add_argument("--epd", default="engine/tests/data/wac.epd")
    ap.add_argument("--time", type=float, default=0.5, help="seconds per position")
    ap.add_argument("--nodes", type=int, default=None,
                    help="nodes per position instead of --time (independent of the machine's load)")
    ap.add_argument("--opt", action="append", help="UCI option NAME=VALUE")
    ap.add_argument("--verbose", action="store_true", help="list the failures")
    args = ap.parse_args()

    engine = chess.engine.SimpleEngine.popen_uci(args.engine.split())
    for item in args.opt or []:
        name, _, value = item.partition("=")
        engine.configure({name: int(value) if value.isdigit() else value})
    solved = total = 0
    failures = []
    limit = chess.engine.Limit(nodes=args.nodes) if args.nodes else chess.engine.Limit(time=args.time)
    for board, ops in load_epd(args.epd):
        total += 1
        result = engine.play(board, limit, game=total)
        if solves(ops, result.move):
            solved += 1
        else:
            failures.append(f"{ops.get('id', total)}: played {board.san(result.move)}, "
                            f"expected {' '.join(board.san(m) for m in ops.get('bm', []))}")
    engine.quit()
    if args.verbose:
        print("\n".join(failures))
    budget = f"{args.nodes} nodes" if args.nodes else f"{args.time} s"
    print(f"solved {solved} / {total} at {budget} per position")
    return 0 if total else 1


if __name__ == "__main__":
    sys.exit(main())

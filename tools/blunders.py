#!/usr/bin/env python3
"""How a difficulty level errs: the size of its mistakes, move by move.

For every position of a set, the level (`Level` option) chooses a move, and
the engine at full strength with a fixed node budget judges it: the loss is
the judge's score of its own best move minus its score of the level's move,
in centipawns from the mover's side (mates count as 1,000). The report gives
the mean loss and how often a move gives away a pawn (100 cp), a minor
piece (300 cp) or more, and how often it is the judge's move.

The positions are middlegames: each opening of the book played on by the
judge for --plies plies (a fixed node budget, so the set is the same on any
machine). With --epd and an EPD of tactics (Win At Chess) instead, the
report says how many of the `bm` solutions the level finds: a person misses
tactics far more often than they hang a piece in a quiet position.

Example:
  tools/blunders.py --engine target/release/rookery-engine --levels 1 2 3
"""

import argparse
import statistics

import chess
import chess.engine

from epd import load_epd, solves
from match import load_openings

MATE_CP = 1000


def judge_score(judge, board, color, nodes):
    """The judge's score of `board` for `color`, in centipawns, mates as
    +-1000 and nothing beyond."""
    info = judge.analyse(board, chess.engine.Limit(nodes=nodes), game=object())
    return max(-MATE_CP, min(MATE_CP, info["score"].pov(color).score(mate_score=MATE_CP))), info


def middlegames(judge, book, count, plies, nodes):
    """The first `count` openings of `book`, each played on `plies` plies."""
    positions = []
    for board in load_openings(book):
        for _ in range(plies):
            if board.is_game_over():
                break
            board.push(judge.play(board, chess.engine.Limit(nodes=nodes)).move)
        if not board.is_game_over():
            positions.append((board, {}))
        if len(positions) == count:
            break
    return positions


def judged(judge, board, nodes):
    """The judge's best move in `board` and its score for the side to move."""
    score, info = judge_score(judge, board, board.turn, nodes)
    return info["pv"][0], score


def loss(judge, board, best_score, move, nodes):
    """What `move` gives away against `best_score`, by the judge (>= 0)."""
    after = board.copy()
    after.push(move)
    if after.is_checkmate():
        return 0
    if after.is_game_over():
        played = 0
    else:
        played, _ = judge_score(judge, after, board.turn, nodes)
    return max(0, best_score - played)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, help="the UCI engine, as player and as judge")
    ap.add_argument("--levels", type=int, nargs="+", required=True)
    ap.add_argument("--book", default="engine/tests/data/openings.epd")
    ap.add_argument("--epd", default=None, help="a tactics suite instead of middlegames from --book")
    ap.add_argument("--positions", type=int, default=100)
    ap.add_argument("--plies", type=int, default=12, help="plies the judge plays on from each opening")
    ap.add_argument("--judge-nodes", type=int, default=200_000)
    ap.add_argument("--tries", type=int, default=1, help="moves asked of the level per position")
    args = ap.parse_args()

    judge = chess.engine.SimpleEngine.popen_uci(args.engine.split())
    player = chess.engine.SimpleEngine.popen_uci(args.engine.split())
    if args.epd:
        suite = load_epd(args.epd)[: args.positions]
    else:
        suite = middlegames(judge, args.book, args.positions, args.plies, args.judge_nodes // 10)
    # The judge's verdict on each position, the same for every level.
    verdicts = [judged(judge, board, args.judge_nodes) for board, _ in suite]
    kind = f"{args.epd} (tactics)" if args.epd else f"{args.book}, +{args.plies} plies (middlegames)"
    print(f"{len(suite)} positions from {kind}, judge {args.judge_nodes} nodes")
    print("level  moves  judge's move  mean loss  >=100 cp  >=300 cp  >=500 cp" + ("  solved" if args.epd else ""))
    for level in args.levels:
        player.configure({"Level": level})
        losses, same, solved = [], 0, 0
        for (board, ops), (best, best_score) in zip(suite, verdicts):
            for _ in range(args.tries):
                # A fresh game each time, so the level's random choice and
                # its table start over; a generous clock: the level's own
                # caps bind.
                move = player.play(board, chess.engine.Limit(white_clock=60, black_clock=60),
                                   game=object()).move
                same += move == best
                losses.append(loss(judge, board, best_score, move, args.judge_nodes))
                if ops and solves(ops, move):
                    solved += 1
        n = len(losses)

        def share(threshold):
            return f"{100 * sum(x >= threshold for x in losses) / n:7.1f}%"

        line = (f"{level:5d}  {n:5d}  {100 * same / n:11.1f}%  {statistics.mean(losses):9.0f}"
                f"  {share(100)}  {share(300)}  {share(500)}")
        if args.epd:
            line += f"  {solved}/{n}"
        print(line, flush=True)
    judge.quit()
    player.quit()


if __name__ == "__main__":
    main()

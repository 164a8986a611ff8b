#!/usr/bin/env python3
"""Chess960 games between rookery-engine and another UCI engine (issue 40).

Each game starts from a Chess960 start drawn (seeded) from
engine/tests/data/chess960-starts.epd; each start is played twice, colours
swapped. python-chess (`pip install chess`) referees: it sets UCI_Chess960 on
both engines, sends `position fen` with the start, and stops the run at the
first illegal move (an EngineError) or crash (EngineTerminatedError).

    python3 tools/match960.py --engine target/release/rookery-engine \\
        --other /usr/games/stockfish --other-opt UCI_LimitStrength=true \\
        --other-opt UCI_Elo=2000 --starts 100 --movetime 0.02

Prints one line a game and the score of the first engine.
"""

import argparse
import pathlib
import random
import sys

import chess
import chess.engine

ROOT = pathlib.Path(__file__).resolve().parent.parent


def starts(path):
    fens = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        fens.append(line.split(";")[0].strip())
    return fens


def options(items):
    parsed = {}
    for item in items:
        name, _, value = item.partition("=")
        parsed[name] = value
    return parsed


def play(fen, white, black, limit, max_plies):
    board = chess.Board(fen, chess960=True)
    engines = {chess.WHITE: white, chess.BLACK: black}
    castles = 0
    while not board.is_game_over(claim_draw=True) and board.ply() < max_plies:
        move = engines[board.turn].play(board, limit).move
        if move is None:
            raise RuntimeError(f"no move in {board.fen()}")
        castles += board.is_castling(move)
        board.push(move)
    outcome = board.outcome(claim_draw=True)
    result = outcome.result() if outcome else "1/2-1/2"
    return result, board.ply(), castles


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", required=True)
    parser.add_argument("--other", required=True)
    parser.add_argument("--other-opt", action="append", default=[])
    parser.add_argument("--starts", type=int, default=100)
    parser.add_argument("--seed", type=int, default=960)
    parser.add_argument("--movetime", type=float, default=0.02)
    parser.add_argument("--max-plies", type=int, default=300)
    parser.add_argument("--epd", default=str(ROOT / "engine/tests/data/chess960-starts.epd"))
    args = parser.parse_args()

    fens = starts(pathlib.Path(args.epd))
    chosen = random.Random(args.seed).sample(fens, args.starts)
    ours = chess.engine.SimpleEngine.popen_uci(args.engine)
    other = chess.engine.SimpleEngine.popen_uci(args.other)
    other.configure(options(args.other_opt))
    limit = chess.engine.Limit(time=args.movetime)
    points, games, castles = 0.0, 0, 0
    try:
        for index, fen in enumerate(chosen):
            for ours_white in (True, False):
                white, black = (ours, other) if ours_white else (other, ours)
                result, plies, castled = play(fen, white, black, limit, args.max_plies)
                games += 1
                castles += castled
                score = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
                points += score if ours_white else 1.0 - score
                colour = "white" if ours_white else "black"
                print(f"{games:4d} start {index:3d} rookery {colour}: {result} in {plies} plies,"
                      f" {castled} castles | {fen}", flush=True)
    finally:
        ours.quit()
        other.quit()
    print(f"rookery-engine {points}/{games} = {100 * points / games:.1f}%,"
          f" {castles} castles, no illegal move, no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())

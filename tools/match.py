#!/usr/bin/env python3
"""Plays a match between two UCI engines and prints W-D-L, score and the
Elo difference with a 95% error bar, from the first engine's side.

Each opening (an EPD line: a position after a few book moves) is played
twice, colours swapped, so neither engine profits from a lucky opening.
Games run in parallel (--concurrency), each game with its own two engine
processes. The time control is base+increment in seconds; a side whose
clock runs out loses (draw if the opponent cannot mate). Draws by the
usual rules (threefold, fifty moves, insufficient material) are claimed
at once; games still running after --max-plies plies are scored as draws.

Fixed-node matches (--nodes N: every move searched to N nodes, no clock)
measure a search or evaluation change independently of the machine's load;
they ignore the change's speed cost, so report `bench` nodes/s beside them.

Example:
  tools/match.py --engine1 target/release/rookery-engine --opt1 Level=8 \\
      --engine2 /usr/games/stockfish --opt2 UCI_LimitStrength=true --opt2 UCI_Elo=2000 \\
      --openings engine/tests/data/openings.epd --pairs 50 --tc 5+0.05
"""

import argparse
import math
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import chess
import chess.engine
import chess.pgn

from epd import load_epd


def parse_options(items):
    options = {}
    for item in items or []:
        name, _, value = item.partition("=")
        if value.lower() in ("true", "false"):
            options[name] = value.lower() == "true"
        else:
            try:
                options[name] = int(value)
            except ValueError:
                options[name] = value
    return options


def load_openings(path):
    return [board for board, _ in load_epd(path)]


def start_engine(command, options):
    engine = chess.engine.SimpleEngine.popen_uci(command.split(), timeout=30)
    engine.configure(options)
    return engine


def play_game(opening, white, black, base, inc, max_plies, time_margin, nodes=None, used=None,
              board=None):
    """Returns (result, reason) with result "1-0", "0-1" or "1/2-1/2".
    If given, `board` (a copy of `opening`) is played on, so the caller
    has the game's moves afterwards.
    If given, used[color] (a list) gets the seconds each of that side's
    moves took, in order.

    With `nodes`, every move is searched to that many nodes and the clocks
    are not used: the game is the same however busy the machine is."""
    if board is None:
        board = opening.copy()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    engines = {chess.WHITE: white, chess.BLACK: black}
    plies = 0
    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            return outcome.result(), outcome.termination.name.lower()
        if plies >= max_plies:
            return "1/2-1/2", "max_plies"
        side = board.turn
        if nodes:
            limit = chess.engine.Limit(nodes=nodes)
        else:
            limit = chess.engine.Limit(
                white_clock=clocks[chess.WHITE],
                black_clock=clocks[chess.BLACK],
                white_inc=inc,
                black_inc=inc,
            )
        started = time.monotonic()
        try:
            result = engines[side].play(board, limit, game=id(board))
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as e:
            print(f"engine error: {e}", file=sys.stderr)
            return ("0-1" if side == chess.WHITE else "1-0"), "engine_error"
        spent = time.monotonic() - started
        if used is not None:
            used[side].append(spent)
        clocks[side] -= spent
        if not nodes and clocks[side] < -time_margin:
            if board.has_insufficient_material(not side):
                return "1/2-1/2", "timeout_vs_insufficient"
            return ("0-1" if side == chess.WHITE else "1-0"), "timeout"
        clocks[side] += inc
        if result.move is None or result.move not in board.legal_moves:
            print(f"illegal move {result.move} in {board.fen()}", file=sys.stderr)
            return ("0-1" if side == chess.WHITE else "1-0"), "illegal_move"
        board.push(result.move)
        plies += 1


def elo_from_score(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


# The issue-26 measure of time management: seconds a move over each
# engine's first moves of a game (after the book opening), where a
# sudden-death clock is richest.
EARLY_MOVES = 20


def time_use(per_game):
    """`per_game`: one list of move times per game. Average seconds a move
    over the first EARLY_MOVES moves of each game, and over all moves."""
    def mean(xs):
        return sum(xs) / len(xs) if xs else 0.0

    early = [t for game in per_game for t in game[:EARLY_MOVES]]
    every = [t for game in per_game for t in game]
    return f"{mean(early):.3f} s a move over the first {EARLY_MOVES}, {mean(every):.3f} s over all"


def summary(wins, draws, losses):
    n = wins + draws + losses
    if n == 0:
        return "no games"
    score = (wins + 0.5 * draws) / n
    # Per-game variance of the score, then the standard error of the mean.
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / n
    se = math.sqrt(var / n)
    lo, hi = score - 1.96 * se, score + 1.96 * se
    elo = elo_from_score(score)
    return (
        f"games {n}  W-D-L {wins}-{draws}-{losses}  score {100 * score:.1f}%  "
        f"Elo diff {elo:+.0f} (95%: {elo_from_score(lo):+.0f} .. {elo_from_score(hi):+.0f}, "
        f"±{(elo_from_score(hi) - elo_from_score(lo)) / 2:.0f})"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine1", required=True, help="command of the engine under test")
    ap.add_argument("--opt1", action="append", help="UCI option NAME=VALUE for engine 1")
    ap.add_argument("--engine2", required=True)
    ap.add_argument("--opt2", action="append", help="UCI option NAME=VALUE for engine 2")
    ap.add_argument("--openings", default="engine/tests/data/openings.epd")
    ap.add_argument("--first", type=int, default=0, help="index of the first opening to use")
    ap.add_argument("--pairs", type=int, default=50, help="openings to play (two games each)")
    ap.add_argument("--tc", default="5+0.05", help="base+increment in seconds")
    ap.add_argument("--nodes", type=int, default=None,
                    help="search every move to this many nodes instead of playing on the "
                         "clock (--tc is then ignored): results independent of the machine's load")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--max-plies", type=int, default=400)
    ap.add_argument("--name", default="match")
    ap.add_argument("--pgn", help="append every game to this PGN file (to look at the endings)")
    ap.add_argument("--time-margin", type=float, default=0.0,
                    help="seconds a clock may go below zero before the flag falls "
                         "(like cutechess-cli's timemargin, for busy machines)")
    args = ap.parse_args()

    base, _, inc = args.tc.partition("+")
    base, inc = float(base), float(inc or 0)
    openings = load_openings(args.openings)[args.first : args.first + args.pairs]
    opt1, opt2 = parse_options(args.opt1), parse_options(args.opt2)

    lock = threading.Lock()
    tally = {"w": 0, "d": 0, "l": 0}
    reasons = {}
    times = {1: [], 2: []}
    local = threading.local()

    def engines():
        if not hasattr(local, "e1"):
            local.e1 = start_engine(args.engine1, opt1)
            local.e2 = start_engine(args.engine2, opt2)
        return local.e1, local.e2

    all_engines = []

    def job(index):
        opening = openings[index // 2]
        e1, e2 = engines()
        with lock:
            if e1 not in all_engines:
                all_engines.extend([e1, e2])
        engine1_white = index % 2 == 0
        white, black = (e1, e2) if engine1_white else (e2, e1)
        used = {chess.WHITE: [], chess.BLACK: []}
        board = opening.copy()
        result, reason = play_game(opening, white, black, base, inc, args.max_plies,
                                   args.time_margin, args.nodes, used, board)
        if reason in ("timeout", "illegal_move", "engine_error"):
            engine1_lost = (result == "0-1") == engine1_white
            reason += "_engine1" if engine1_lost else "_engine2"
        if result == "1/2-1/2":
            key = "d"
        elif (result == "1-0") == engine1_white:
            key = "w"
        else:
            key = "l"
        with lock:
            tally[key] += 1
            reasons[reason] = reasons.get(reason, 0) + 1
            times[1].append(used[chess.WHITE if engine1_white else chess.BLACK])
            times[2].append(used[chess.BLACK if engine1_white else chess.WHITE])
            n = sum(tally.values())
            if args.pgn:
                game = chess.pgn.Game.from_board(board)
                game.headers["Event"] = args.name
                game.headers["Round"] = str(index + 1)
                game.headers["White"] = "engine1" if engine1_white else "engine2"
                game.headers["Black"] = "engine2" if engine1_white else "engine1"
                game.headers["Result"] = result
                game.headers["Termination"] = reason
                with open(args.pgn, "a") as out:
                    print(game, file=out, end="\n\n")
            print(f"[{args.name}] game {n}/{2 * len(openings)} opening {args.first + index // 2} "
                  f"engine1 {'white' if engine1_white else 'black'} {result} ({reason})  "
                  f"{summary(tally['w'], tally['d'], tally['l'])}", flush=True)

    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        list(pool.map(job, range(2 * len(openings))))
    for engine in all_engines:
        try:
            engine.quit()
        except Exception:
            pass
    print(f"[{args.name}] FINAL {summary(tally['w'], tally['d'], tally['l'])}  endings {reasons}", flush=True)
    if not args.nodes:
        for engine in (1, 2):
            print(f"[{args.name}] time engine{engine}: {time_use(times[engine])}", flush=True)


if __name__ == "__main__":
    main()

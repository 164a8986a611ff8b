"""A lichess bot written on berserk's bots client (unmodified, from PyPI),
the way lichess-bot works: it listens to its event stream, accepts every
challenge, greets its opponent in the players' chat and plays each game
with rookery-engine over UCI, one game at a time.

Used by tests/lichess/berserk_test.py (in a thread) and by the browser test
tests/e2e/berserk.test.mjs (as a process):

    ROOKERY_URL=http://127.0.0.1:8080 ROOKERY_ENGINE=target/debug/rookery-engine \\
    ROOKERY_BOT_TOKEN=rky_... python tests/lichess/bot.py

The token is a bot account's (scopes `bot` and `challenge`). The process
prints a line for what it does, and stops on SIGTERM or SIGINT.
"""

import os
import signal
import subprocess
import sys

import berserk

GREETING = "Good luck from the bot!"

# The variants the bot plays (lichess-bot's `supported_variants`).
SUPPORTED_VARIANTS = {"standard", "chess960"}


class UciEngine:
    """rookery-engine (any UCI engine) as a child process, at a fixed depth."""

    def __init__(self, path, depth=2):
        self.depth = depth
        self.process = subprocess.Popen(
            [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.send("uci")
        self.wait_for("uciok")
        self.send("isready")
        self.wait_for("readyok")

    def send(self, line):
        self.process.stdin.write(f"{line}\n")
        self.process.stdin.flush()

    def wait_for(self, word):
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the engine ended before {word!r}")
            if line.split() and line.split()[0] == word:
                return line

    def best(self, moves, initial_fen="startpos", chess960=False):
        """The engine's move after `moves` (UCI, space-separated) from the
        game's start (`initialFen` of its gameFull). In a Chess960 game the
        engine is switched to `UCI_Chess960`, as lichess-bot does: castling
        is then read and written king takes rook, as lichess's API spells
        it."""
        self.send(f"setoption name UCI_Chess960 value {'true' if chess960 else 'false'}")
        start = "startpos" if initial_fen == "startpos" else f"fen {initial_fen}"
        self.send(f"position {start} moves {moves}".rstrip())
        self.send(f"go depth {self.depth}")
        return self.wait_for("bestmove").split()[1]

    def close(self):
        self.process.kill()
        self.process.wait()


def play_game(lichess, engine, game_id, color, greeting, log):
    """Greets, then plays game `game_id` as `color` until it ends."""
    lichess.bots.post_message(game_id, greeting)
    log(f"bot: greeted in {game_id}")
    initial_fen, chess960 = "startpos", False
    for line in lichess.bots.stream_game_state(game_id):
        if line["type"] not in {"gameFull", "gameState"}:
            continue  # chatLine, opponentGone
        if line["type"] == "gameFull":
            initial_fen = line.get("initialFen", "startpos")
            chess960 = line["variant"]["key"] == "chess960"
        state = line["state"] if line["type"] == "gameFull" else line
        if state["status"] != "started":
            log(f"bot: game {game_id} over: {state['status']} {state.get('winner', '')}".rstrip())
            return state
        moves = state["moves"]
        count = len(moves.split()) if moves else 0
        if (count % 2 == 0) == (color == "white"):
            lichess.bots.make_move(game_id, engine.best(moves, initial_fen, chess960))
    return None


def play(url, token, engine_path, stop=None, greeting=GREETING, log=print):
    """The bot's loop: accept challenges and play the games they start,
    until the event stream ends or `stop` (a threading.Event) is set."""
    lichess = berserk.Client(session=berserk.TokenSession(token), base_url=url)
    engine = UciEngine(engine_path)
    try:
        for event in lichess.bots.stream_incoming_events():
            if stop is not None and stop.is_set():
                break
            if event["type"] == "challenge" and event["challenge"]["direction"] == "in":
                challenge = event["challenge"]
                if challenge["variant"]["key"] not in SUPPORTED_VARIANTS:
                    lichess.bots.decline_challenge(challenge["id"], reason="variant")
                    log(f"bot: declined a {challenge['variant']['key']} challenge")
                    continue
                lichess.bots.accept_challenge(challenge["id"])
                log(f"bot: accepted a challenge from {challenge['challenger']['name']}")
            elif event["type"] == "gameStart":
                game = event["game"]
                log(f"bot: playing {game['gameId']} as {game['color']}")
                play_game(lichess, engine, game["gameId"], game["color"], greeting, log)
    finally:
        engine.close()


def main():
    def leave(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGINT, leave)

    def log(text):
        print(text, flush=True)

    url = os.environ["ROOKERY_URL"]
    log(f"bot: starting against {url}")
    play(url, os.environ["ROOKERY_BOT_TOKEN"], os.environ["ROOKERY_ENGINE"], log=log)


if __name__ == "__main__":
    sys.exit(main())

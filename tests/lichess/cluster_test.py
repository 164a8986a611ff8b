"""lichess's clients on a cluster (issue 42): the bot of tests/lichess/bot.py
(berserk's bots client, the way lichess-bot works) connected to node A only,
and a person connected to node B only, who challenges it there and plays the
game there. The challenge, the gameStart and the game's states reach the
bot's event stream on A over NATS; its moves, made on A, reach the person's
streams on B. Run by tests/lichess/run.sh, which starts two nodes on a
throwaway PostgreSQL and nats-server: ROOKERY_URL_A, ROOKERY_URL_B and the
rookery-engine binary (ROOKERY_ENGINE).
"""

import os
import queue
import random
import sys
import threading
import time

import berserk
import requests

import bot as rookery_bot

URL_A = os.environ["ROOKERY_URL_A"]
URL_B = os.environ["ROOKERY_URL_B"]
ENGINE = os.environ["ROOKERY_ENGINE"]
PASSWORD = "a long and rare phrase"


def account(url, name, scopes):
    """Signs a person up through node `url`: a personal API token."""
    web = requests.Session()
    answer = web.post(f"{url}/api/accounts", json={"name": name, "password": PASSWORD})
    assert answer.status_code == 201, answer.text
    answer = web.post(f"{url}/api/account/tokens", json={"scopes": scopes})
    assert answer.status_code == 201, answer.text
    return answer.json()["token"]


def client(url, token):
    return berserk.Client(session=berserk.TokenSession(token), base_url=url)


def follow(stream, into):
    def run():
        try:
            for line in stream:
                into.put(line)
        except Exception as err:  # the stream ended with the test
            into.put({"type": "ended", "error": str(err)})

    threading.Thread(target=run, daemon=True).start()


def next_of(lines, kinds, timeout=30):
    deadline = time.time() + timeout
    while True:
        left = deadline - time.time()
        assert left > 0, f"nothing of {kinds} within {timeout}s"
        line = lines.get(timeout=left)
        if line.get("type") in kinds:
            return line


def main():
    bot_token = account(URL_A, "clusterbot", ["bot", "challenge"])
    client(URL_A, bot_token).account.upgrade_to_bot()
    stop = threading.Event()
    said = []
    threading.Thread(
        target=rookery_bot.play,
        args=(URL_A, bot_token, ENGINE, stop),
        kwargs={"log": said.append},
        daemon=True,
    ).start()
    person_token = account(URL_B, "erin", ["play", "challenge"])
    person = client(URL_B, person_token)
    # The bot's event stream is open on A once A lists it online (A knows
    # its own streams at once; the other nodes hear of them within 5 s).
    deadline = time.time() + 20
    while not any(b["id"] == "clusterbot" for b in client(URL_A, person_token).bots.get_online_bots()):
        assert time.time() < deadline, "the bot never came online"
        time.sleep(0.2)
    events = queue.Queue()
    follow(person.board.stream_incoming_events(), events)
    made = person.challenges.create(
        "clusterbot", rated=False, clock_limit=300, clock_increment=3, color="black"
    )
    started = next_of(events, {"gameStart"}, timeout=30)
    game_id = started["game"]["gameId"]
    assert game_id == made["id"], (game_id, made["id"])
    # The bot logs its acceptance once its accept request has returned,
    # which may be after the gameStart reached the person: wait for it.
    deadline = time.time() + 10
    while not any(line.startswith("bot: accepted a challenge from erin") for line in said):
        assert time.time() < deadline, said
        time.sleep(0.1)
    lines = queue.Queue()
    follow(person.board.stream_game_state(game_id), lines)
    full = next_of(lines, {"gameFull"})
    assert full["white"]["title"] == "BOT", full
    state = full["state"]
    rng = random.Random(42)
    while state["status"] == "started":
        moves = state["moves"].split() if state["moves"] else []
        if len(moves) % 2 == 1 and len(moves) >= 21:
            # On the person's own turn: the bot is not thinking then.
            person.board.resign_game(game_id)
        elif len(moves) % 2 == 1:
            legal = requests.get(f"{URL_B}/api/games/{game_id}").json()["legal_moves"]
            person.board.make_move(game_id, rng.choice(legal))
        state = next_of(lines, {"gameState"}, timeout=60)
    finished = next_of(events, {"gameFinish"}, timeout=30)
    assert finished["game"]["gameId"] == game_id, finished
    plies = len(state["moves"].split())
    assert plies >= 21, state
    stop.set()
    print(
        f"cluster: the bot on node A accepted a challenge made on node B and played "
        f"{(plies + 1) // 2} moves; the person on B resigned ({state['status']}); "
        f"gameStart and gameFinish reached B's event stream"
    )


if __name__ == "__main__":
    sys.exit(main())

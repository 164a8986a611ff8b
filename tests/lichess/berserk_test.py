"""lichess's own Python client, berserk (unmodified, from PyPI), against
Rookery's lichess-compatible API (issue 24).

Run by tests/lichess/run.sh, which starts rookery-server and passes its
address (ROOKERY_URL) and the rookery-engine binary (ROOKERY_ENGINE).
Each scenario prints what it checked; any failure raises.
"""

import os
import queue
import random
import sys
import threading
import time

import berserk
import requests
from berserk.exceptions import ResponseError

import bot as rookery_bot

URL = os.environ["ROOKERY_URL"]
ENGINE = os.environ["ROOKERY_ENGINE"]
PASSWORD = "a long and rare phrase"


def account(name, scopes):
    """Signs a person up on Rookery and returns a personal API token."""
    web = requests.Session()
    answer = web.post(f"{URL}/api/accounts", json={"name": name, "password": PASSWORD})
    assert answer.status_code == 201, answer.text
    answer = web.post(f"{URL}/api/account/tokens", json={"scopes": scopes})
    assert answer.status_code == 201, answer.text
    return answer.json()["token"]


def client(token):
    return berserk.Client(session=berserk.TokenSession(token), base_url=URL)


def legal_moves(game_id):
    """Rookery's own API tells the legal moves (the client has no rules)."""
    return requests.get(f"{URL}/api/games/{game_id}").json()["legal_moves"]


def expect_error(status, call, *args):
    try:
        call(*args)
    except ResponseError as err:
        assert err.status_code == status, f"{call.__name__}: {err.status_code} {err}"
        body = err.response.json()
        assert isinstance(body.get("error"), str) and body["error"], body
        return body["error"]
    raise AssertionError(f"{call.__name__} should have failed with {status}")


def follow(stream, into):
    """Puts every line of a berserk stream into a queue (a thread)."""

    def run():
        try:
            for line in stream:
                into.put(line)
        except Exception as err:  # the stream ended or broke: tell the reader
            into.put({"type": "error", "error": repr(err)})
        into.put({"type": "end"})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def next_of(lines, kinds, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.time()))
        except queue.Empty:
            break
        if line.get("type") in kinds:
            return line
        assert line.get("type") != "end", f"the stream ended waiting for {kinds}"
    raise AssertionError(f"no {kinds} within {timeout} s")


def board_plays_the_ai():
    token = account("boardy", ["play", "challenge"])
    lichess = client(token)
    me = lichess.account.get()
    assert me["id"] == "boardy" and me["username"] == "boardy", me
    assert lichess.users.get_public_data("boardy")["username"] == "boardy"
    events = queue.Queue()
    follow(lichess.board.stream_incoming_events(), events)
    game = lichess.challenges.create_ai(level=1, clock_limit=600, clock_increment=5, color="white")
    game_id = game["id"]
    started = next_of(events, {"gameStart"})
    assert started["game"]["gameId"] == game_id, started
    playing = requests.get(
        f"{URL}/api/account/playing", headers={"Authorization": f"Bearer {token}"}
    ).json()["nowPlaying"]
    assert [g["gameId"] for g in playing] == [game_id], playing
    lines = queue.Queue()
    follow(lichess.board.stream_game_state(game_id), lines)
    full = next_of(lines, {"gameFull"})
    assert full["white"]["id"] == "boardy" and full["black"]["aiLevel"] == 1, full
    assert full["clock"]["initial"] == 600000 and full["speed"] == "rapid", full
    state = full["state"]
    rng = random.Random(7)
    plies = 0
    # Refusals first: an illegal move, and a move out of turn, in lichess's
    # shape, changing nothing.
    expect_error(400, lichess.board.make_move, game_id, "e2e5")
    while state["status"] == "started" and plies < 400:
        moves = state["moves"].split() if state["moves"] else []
        if len(moves) % 2 == 0:  # our turn (we are white)
            lichess.board.make_move(game_id, rng.choice(legal_moves(game_id)))
            plies += 1
            if plies == 1:
                expect_error(400, lichess.board.make_move, game_id, "e7e5")
        state = next_of(lines, {"gameState"}, timeout=60)
        if plies > 300:
            lichess.board.resign_game(game_id)
    assert state["status"] in {"mate", "stalemate", "draw", "resign", "outoftime"}, state
    pgn = lichess.games.export(game_id, as_pgn=True)
    assert "[White \"boardy\"]" in pgn and "1." in pgn, pgn
    exported = lichess.games.export(game_id)
    assert exported["id"] == game_id and exported["status"] == state["status"], exported
    finished = next_of(events, {"gameFinish"})
    assert finished["game"]["gameId"] == game_id
    print(f"board v AI level 1: {len(state['moves'].split())} plies, {state['status']}, PGN {len(pgn)} bytes")
    return token, game_id


def bot_meets_a_person(board_token, board_game):
    bot_token = account("robo", ["bot", "challenge"])
    bot = client(bot_token)
    bot.account.upgrade_to_bot()
    assert bot.account.get()["title"] == "BOT"
    # A bot plays through the Bot API only.
    expect_error(400, bot.board.make_move, board_game, "e2e4")
    stop = threading.Event()
    # The same bot the browser test plays against (tests/lichess/bot.py).
    threading.Thread(target=rookery_bot.play, args=(URL, bot_token, ENGINE, stop), daemon=True).start()
    deadline = time.time() + 10
    while not any(b["id"] == "robo" for b in client(board_token).bots.get_online_bots()):
        assert time.time() < deadline, "the bot never came online"
        time.sleep(0.2)

    person_token = account("carla", ["play", "challenge"])
    person = client(person_token)
    events = queue.Queue()
    follow(person.board.stream_incoming_events(), events)
    made = person.challenges.create("robo", rated=False, clock_limit=300, clock_increment=3, color="black")
    challenge_id = made["id"]
    started = next_of(events, {"gameStart"}, timeout=30)
    game_id = started["game"]["gameId"]
    assert game_id == challenge_id, (game_id, challenge_id)
    lines = queue.Queue()
    follow(person.board.stream_game_state(game_id), lines)
    full = next_of(lines, {"gameFull"})
    assert full["white"]["title"] == "BOT", full
    state = full["state"]
    rng = random.Random(11)
    chat_seen = False
    while state["status"] == "started":
        moves = state["moves"].split() if state["moves"] else []
        if len(moves) % 2 == 1:
            person.board.make_move(game_id, rng.choice(legal_moves(game_id)))
        line = next_of(lines, {"gameState", "chatLine"}, timeout=60)
        if line["type"] == "chatLine":
            chat_seen = chat_seen or line["text"] == rookery_bot.GREETING
            continue
        state = line
        if len(moves) > 300:
            person.board.resign_game(game_id)
    chat = person.board.get_game_chat(game_id)
    assert any(c["text"] == rookery_bot.GREETING and c["user"] == "robo" for c in chat), chat
    # Another game's token cannot touch it.
    expect_error(404, client(board_token).board.make_move, game_id, "e2e4")
    stop.set()
    print(f"bot v person: {len(state['moves'].split())} plies, {state['status']}, chat seen live: {chat_seen}")

    # A declined challenge: the challenger hears why.
    other = account("dora", ["challenge"])
    dora = client(other)
    dora_events = queue.Queue()
    follow(dora.board.stream_incoming_events(), dora_events)
    made = dora.challenges.create("carla", rated=False, clock_limit=180, clock_increment=0)
    next_of(events, {"challenge"})
    person.challenges.decline(made["id"], reason="later")
    declined = next_of(dora_events, {"challengeDeclined"})
    assert declined["challenge"]["declineReasonKey"] == "later", declined
    expect_error(400, person.challenges.accept, made["id"])
    print("refusals: illegal move 400, out of turn 400, other game 404, bot on Board API 400, declined challenge told")


# Chess960 start 6 (QNBNRBKR): Black's king already stands on g8, its
# short castle's square: once the f8 bishop is out, castling moves only the
# rook (h8 to f8), written king takes rook, g8h8, as lichess's API spells
# Chess960 castling (the king's "two squares" would be no move at all).
START_6 = "qnbnrbkr/pppppppp/8/8/8/8/PPPPPPPP/QNBNRBKR w KQkq - 0 1"
BLACK_PLAN = ["g7g6", "f8g7", "g8h8"]


def bot_plays_chess960():
    """A person challenges a bot to Chess960 (lichess's `variant=chess960`
    with a start's FEN); the bot, in lichess-bot's way (berserk's bots
    client, the engine set to UCI_Chess960 and given `position fen`),
    accepts and plays it to the end."""
    bot_token = account("fischer", ["bot", "challenge"])
    client(bot_token).account.upgrade_to_bot()
    stop = threading.Event()
    threading.Thread(target=rookery_bot.play, args=(URL, bot_token, ENGINE, stop), daemon=True).start()
    person_token = account("judit", ["play", "challenge"])
    person = client(person_token)
    deadline = time.time() + 10
    while not any(b["id"] == "fischer" for b in person.bots.get_online_bots()):
        assert time.time() < deadline, "the bot never came online"
        time.sleep(0.2)
    events = queue.Queue()
    follow(person.board.stream_incoming_events(), events)
    # Variants the server does not play are refused.
    expect_error(400, person.challenges.create, "fischer", False, 300, 3, None, "black", "atomic")
    made = person.challenges.create(
        "fischer", rated=False, clock_limit=300, clock_increment=3, color="black",
        variant="chess960", position=START_6,
    )
    chess960 = {"key": "chess960", "name": "Chess960", "short": "960"}
    assert made["variant"] == chess960, made
    assert made["initialFen"] == START_6, made
    started = next_of(events, {"gameStart"}, timeout=30)
    game_id = started["game"]["gameId"]
    assert game_id == made["id"], (game_id, made["id"])
    assert started["game"]["variant"] == chess960 and started["game"]["perf"] == "chess960", started
    lines = queue.Queue()
    follow(person.board.stream_game_state(game_id), lines)
    full = next_of(lines, {"gameFull"})
    assert full["variant"] == chess960 and full["initialFen"] == START_6, full
    state = full["state"]
    rng = random.Random(960)
    plan = list(BLACK_PLAN)
    castled = False
    while state["status"] == "started":
        moves = state["moves"].split() if state["moves"] else []
        if len(moves) % 2 == 1:  # our turn (black)
            legal = legal_moves(game_id)
            while plan and plan[0] not in legal:
                plan.pop(0)  # the bot's moves spoiled this step: skip it
            choice = plan.pop(0) if plan else rng.choice(legal)
            castled = castled or choice == "g8h8"
            person.board.make_move(game_id, choice)
        state = next_of(lines, {"gameState"}, timeout=60)
        if len(moves) > 300:
            person.board.resign_game(game_id)
    assert state["status"] in {"mate", "stalemate", "draw", "resign", "outoftime"}, state
    final = requests.get(f"{URL}/api/games/{game_id}").json()
    assert final["variant"] == "chess960", final
    assert castled, "black's plan to castle was spoiled"
    at = final["moves"].index("g8h8")
    assert final["san"][at] == "O-O", final["san"][at]
    # Every castle of the game, either side's, is spelled king takes rook:
    # onto the e- or h-file rook of this start.
    for uci, san in zip(final["moves"], final["san"]):
        if san.startswith("O-O"):
            assert uci[2:4] in {"e1", "h1", "e8", "h8"}, (uci, san)
    pgn = person.games.export(game_id, as_pgn=True)
    assert '[Variant "Chess960"]' in pgn and f'[FEN "{START_6}"]' in pgn, pgn
    assert person.games.export(game_id)["variant"] == "chess960"
    stop.set()
    castles = sum(1 for san in final["san"] if san.startswith("O-O"))
    print(f"bot v person, Chess960 start 6: {len(final['moves'])} plies, {state['status']}, "
          f"castles {castles} (black castled king takes rook: {castled})")
def a_team_swiss_to_its_end():
    """A leader makes a team and a 3-round Swiss with rounds one second
    apart; four members join with berserk's `teams` and `tournaments`
    clients and play every game over the Board API (white moves, black
    resigns); the standings, the TRF and the games are read at the end."""
    lead_token = account("swisslead", ["play", "challenge"])
    made = requests.post(
        f"{URL}/api/team",
        headers={"Authorization": f"Bearer {lead_token}"},
        json={"name": "Berserk Club", "open": True},
    )
    assert made.status_code == 200, made.text
    team_id = made.json()["id"]
    lead = client(lead_token)
    names = ["sw_ann", "sw_ben", "sw_cat", "sw_dan"]
    players = {name: client(account(name, ["play", "challenge"])) for name in names}
    for player in players.values():
        player.teams.join(team_id)
    team = lead.teams.get_team(team_id)
    assert team["nbMembers"] == 5 and team["leader"]["id"] == "swisslead", team
    members = {m["id"] for m in lead.teams.get_members(team_id)}
    assert members == set(names) | {"swisslead"}, members

    created = lead.tournaments.create_swiss(
        team_id, clockLimit=60, clockIncrement=0, nbRounds=3, name="Berserk Swiss",
        startsAt=int(time.time() * 1000) + 3_600_000, roundInterval=1, rated=False,
    )
    swiss_id = created["id"]
    assert created["status"] == "created" and created["nbRounds"] == 3, created
    streams = {}
    for name, player in players.items():
        player.tournaments.join_swiss(swiss_id)
        streams[name] = queue.Queue()
        follow(player.board.stream_incoming_events(), streams[name])
    assert lead.tournaments.get_swiss(swiss_id)["nbPlayers"] == 4
    lead.tournaments.schedule_swiss_next_round(swiss_id, int(time.time() * 1000))

    for round_number in (1, 2, 3):
        games = {}
        for name in names:
            start = next_of(streams[name], {"gameStart"})["game"]
            assert start["swissId"] == swiss_id and start["source"] == "swiss", start
            games.setdefault(start["gameId"], {})[start["color"]] = name
        assert len(games) == 2, games
        for game_id, seats in games.items():
            players[seats["white"]].board.make_move(game_id, "e2e4")
            players[seats["black"]].board.resign_game(game_id)
        print(f"swiss round {round_number}: {sorted(games.values(), key=str)}")

    deadline = time.time() + 60
    while lead.tournaments.get_swiss(swiss_id)["status"] != "finished":
        assert time.time() < deadline, "the Swiss did not finish"
        time.sleep(0.2)
    results = list(lead.tournaments.stream_swiss_results(swiss_id))
    assert len(results) == 4, results
    assert sum(r["points"] for r in results) == 6, results
    assert results[0]["rank"] == 1 and results[0]["points"] >= results[-1]["points"], results
    trf = lead.tournaments.export_swiss_trf(swiss_id)
    assert trf.startswith("012 Berserk Swiss") and "XXR 3" in trf, trf
    pgn = "".join(lead.tournaments.export_swiss_games(swiss_id, as_pgn=True))
    assert pgn.count('[Event "Berserk Swiss"]') == 6, pgn
    listed = [s["id"] for s in lead.tournaments.swiss_by_team(team_id)]
    assert listed == [swiss_id], listed
    expect_error(400, players["sw_ann"].tournaments.join_swiss, swiss_id)
    print(f"swiss: 3 rounds played over the Board API, standings {[(r['username'], r['points']) for r in results]}")
def seek_finds_an_opponent():
    """board.seek holds its request until the pool pairs two seekers."""
    tokens = [account("sid", ["play"]), account("sue", ["play"])]
    events = queue.Queue()
    follow(client(tokens[1]).board.stream_incoming_events(), events)
    waited = []
    seekers = [
        threading.Thread(target=lambda t=t: waited.append(client(t).board.seek(5, 3, rated=True)))
        for t in tokens
    ]
    for seeker in seekers:
        seeker.start()
    for seeker in seekers:
        seeker.join(timeout=60)
    assert len(waited) == 2, waited
    started = next_of(events, {"gameStart"})
    assert started["game"]["rated"] is True, started
    client(tokens[0]).board.resign_game(started["game"]["gameId"])
    print(f"seek: two board.seek calls paired into a rated 5+3 game after {max(waited):.1f} s")


def first_legal_move(game_id):
    """Four players asking at once may meet the server's per-client rate
    limit (they share one address here): wait and ask again."""
    for _ in range(50):
        answer = requests.get(f"{URL}/api/games/{game_id}")
        if answer.status_code == 200:
            return answer.json()["legal_moves"][0]
        assert answer.status_code == 429, answer.text
        time.sleep(0.2)
    raise AssertionError("rate limited for too long")


def patiently(call, *args):
    """A board call, asked again while rate limited (429)."""
    for _ in range(50):
        try:
            return call(*args)
        except ResponseError as err:
            if err.status_code != 429:
                raise
            time.sleep(0.2)
    raise AssertionError("rate limited for too long")


def play_arena_game(me, game_id, colour, played):
    """Black goes berserk; each side plays the first legal move; after four
    plies the side to move resigns."""
    if colour == "black":
        patiently(me.board.go_berserk, game_id)
    acted = -1
    for state in me.board.stream_game_state(game_id):
        state = state.get("state", state)
        if state.get("type") not in (None, "gameState"):
            continue
        if state["status"] != "started":
            played.append(game_id)
            return
        moves = state["moves"].split()
        # The same position comes again after a berserk (a new clock).
        if (len(moves) % 2 == 0) != (colour == "white") or len(moves) == acted:
            continue
        acted = len(moves)
        if len(moves) >= 4:
            patiently(me.board.resign_game, game_id)
        else:
            patiently(me.board.make_move, game_id, first_legal_move(game_id))


def arena_player(token, played):
    me = client(token)
    try:
        for event in me.board.stream_incoming_events():
            if event.get("type") == "gameStart":
                game = event["game"]
                threading.Thread(
                    target=play_arena_game,
                    args=(me, game["gameId"], game["color"], played),
                    daemon=True,
                ).start()
    except Exception:  # the stream ends with the test
        pass


def an_arena_over_the_board_api():
    """An arena made with tournaments.create_arena, joined by four accounts,
    their pairings played over the Board API, and the final standings."""
    names = ["ada", "ben", "cal", "dot"]
    tokens = {name: account(name, ["play", "challenge"]) for name in names}
    host = client(tokens["ada"])
    arena = host.tournaments.create_arena(
        clockTime=1, clockIncrement=0, minutes=0.25, name="Berserk cup", wait_minutes=0,
        password="cup",
    )
    arena_id = arena["id"]
    assert arena["fullName"] == "Berserk cup Arena", arena
    expect_error(403, client(tokens["ben"]).tournaments.join_arena, arena_id, "wrong")
    played = []
    for name in names:
        threading.Thread(target=arena_player, args=(tokens[name], played), daemon=True).start()
    time.sleep(0.5)  # the event streams open before the first wave
    for name in names:
        client(tokens[name]).tournaments.join_arena(
            arena_id, password="cup", should_pair_immediately=True
        )
    current = host.tournaments.get()
    assert any(a["id"] == arena_id for a in current["started"] + current["created"]), current
    deadline = time.time() + 90
    while time.time() < deadline:
        info = host.tournaments.get_tournament(arena_id)
        if info["isFinished"] and not info["duels"]:
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"the arena did not end: {info}")
    results = list(host.tournaments.stream_results(arena_id))
    assert [r["rank"] for r in results] == [1, 2, 3, 4], results
    assert sorted(r["username"].lower() for r in results) == names, results
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0, results
    info = host.tournaments.get_tournament(arena_id)
    assert [p["name"] for p in info["podium"]] == [r["username"] for r in results[:3]], info
    assert info["stats"]["berserks"] == info["stats"]["games"], info["stats"]
    pgns = list(host.tournaments.export_arena_games(arena_id, as_pgn=True))
    assert len(pgns) == info["stats"]["games"] >= 2, (len(pgns), info["stats"])
    assert all('[Event "Berserk cup Arena"]' in pgn for pgn in pgns), pgns
    print(
        f"arena: {info['stats']['games']} games over the Board API, every black berserk, "
        f"winner {results[0]['username']} with {results[0]['score']} points"
    )


def main():
    board_token, board_game = board_plays_the_ai()
    bot_meets_a_person(board_token, board_game)
    bot_plays_chess960()
    a_team_swiss_to_its_end()
    seek_finds_an_opponent()
    an_arena_over_the_board_api()
    print("berserk: every scenario passed")


if __name__ == "__main__":
    sys.exit(main())

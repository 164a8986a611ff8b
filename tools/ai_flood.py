#!/usr/bin/env python3
"""The AI flood of issue 8, as a measurement (not a test).

Against a running server (loopback only), creates N AI v AI games at
level 8 v level 8, then plays a human v AI level 1 game at 60+0 and measures,
for each of the AI's replies, the time from the human's move being
acknowledged to the AI's move being visible, and the AI's clock used.

Start the server with room for the flood, e.g.:

    cargo build --release -p rookery-server
    target/release/rookery-server --addr 127.0.0.1:8099 --database /tmp/flood.db \\
        --max-ai-games 10 --max-ai-games-per-client 10 --ai-move-delay-ms 0
    python3 tools/ai_flood.py --server http://127.0.0.1:8099 --games 10 --moves 10

Prints one line per reply and a summary. Standard library only.
"""

import argparse
import json
import statistics
import sys
import time
import urllib.error
import urllib.request


def call(server, method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server + path, data=data, method=method)
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--server", default="http://127.0.0.1:8099")
    parser.add_argument("--games", type=int, default=10, help="AI v AI games")
    parser.add_argument("--moves", type=int, default=10, help="human moves")
    parser.add_argument("--level", type=int, default=1, help="the human's opponent")
    parser.add_argument("--admin-token", help="stops the AI v AI games at the end")
    args = parser.parse_args()
    if not args.server.startswith(("http://127.", "http://localhost")):
        sys.exit("loopback servers only")

    shows = []
    for _ in range(args.games):
        status, answer = call(args.server, "POST", "/api/games", {
            "white": {"kind": "ai", "level": 8},
            "black": {"kind": "ai", "level": 8},
        })
        if status != 201:
            sys.exit(f"creating an AI v AI game: {status} {answer}")
        shows.append(answer["game"]["id"])
    time.sleep(2)  # let every show get a search running or queued

    status, answer = call(args.server, "POST", "/api/games", {
        "white": {"kind": "human"},
        "black": {"kind": "ai", "level": args.level},
        "clock": {"initial": 60, "increment": 0},
    })
    if status != 201:
        sys.exit(f"creating the human game: {status} {answer}")
    game, token = answer["game"], answer["seat"]["token"]
    gid = game["id"]
    # Every state arrives on the game's NDJSON stream as it happens (polling
    # would hit the rate limit while a strong AI thinks).
    stream = urllib.request.urlopen(f"{args.server}/api/games/{gid}/stream", timeout=120)
    stream.readline()  # the state now
    replies = []
    for _ in range(args.moves):
        if game["status"] != "active" or not game["legal_moves"]:
            break
        before_ai_ms = game["clock"]["black_ms"]
        status, game = call(args.server, "POST", f"/api/games/{gid}/move",
                            {"uci": game["legal_moves"][0]}, token)
        if status != 200:
            sys.exit(f"move: {status} {game}")
        ply = len(game["moves"])
        started = time.monotonic()
        while True:
            line = stream.readline()
            if not line:
                sys.exit("the stream ended")
            game = json.loads(line)
            if len(game["moves"]) > ply or game["status"] != "active":
                break
        waited = time.monotonic() - started
        used = (before_ai_ms - game["clock"]["black_ms"]) / 1000
        replies.append(waited)
        print(f"reply {len(replies):2}: {waited * 1000:7.0f} ms "
              f"(AI clock used {used:5.2f} s)")
    if args.admin_token:
        for show in shows:
            call(args.server, "DELETE", f"/api/games/{show}", token=args.admin_token)
    if replies:
        print(f"{len(replies)} replies with {args.games} AI v AI games running: "
              f"median {statistics.median(replies) * 1000:.0f} ms, "
              f"max {max(replies) * 1000:.0f} ms")


if __name__ == "__main__":
    main()

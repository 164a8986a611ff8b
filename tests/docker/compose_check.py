#!/usr/bin/env python3
"""Black-box checks of docker-compose.yml's services, brought up by
tests/docker/run.sh. Everything a client does goes through the published
port on 127.0.0.1; `docker` itself is asked only which container did what
(a node's /metrics and log, the lease table) and to kill a node.

single URL
    The default service: /readyz; a game created and joined, White moving
    over a WebSocket, Black over HTTP, a spectator's WebSocket seeing every
    ply of a checkmate; the PGN.

cluster URL PROJECT
    The `cluster` profile behind its nginx: White's and Black's WebSockets
    and a spectator's land on three different nodes (each node's
    rookery_websockets gauge tells where a socket landed), both players move
    over their own sockets, every socket sees every state in order, and the
    moves of the seats not on the game's owner are forwarded to it (its
    rookery_nats_forward_seconds count grows). Then the owner's container is
    killed (`docker kill`, SIGKILL): the next move, sent through the
    balancer and retried on 502/503/504 as documented, is accepted once
    another node has taken the game over (a new owner and a higher epoch in
    the lease table); a spectator connecting afresh sees the whole line, and
    the game goes on.

Every wait has a timeout; the first failed check ends the run (exit 1).
"""

import json
import os
import re
import subprocess
import sys
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "deploy"))
from through_proxy import WAIT, Failed, Http, Socket, check, next_state, step  # noqa: E402

# Scholar's mate: seven plies, White mates on the last.
MATE = ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"]
# The cluster's game: six plies before the owner is killed, four after.
BEFORE = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
AFTER = ["b5a4", "g8f6", "e1g1", "f8e7"]
# How long a move may wait for a takeover: the lease (4 s) and its sweep,
# nginx giving up on the dead node, and the restarted container if Docker
# restarts it.
TAKEOVER = 30.0


def humans():
    return {"white": {"kind": "human"}, "black": {"kind": "human"}}


def socket(base, path):
    return Socket(types.SimpleNamespace(proxy=base, source="127.0.0.1"), None, path)


def follow(ws, line, who):
    """Reads `ws`'s states until one holds all of `line`: the moves only
    ever grow, one ply at a time, in `line`'s order."""
    seen = None
    while True:
        game = next_state(ws, lambda g: True, who)
        moves = game["moves"]
        check(moves == line[: len(moves)], f"{who}: another order: {moves}")
        if seen is not None:
            check(len(moves) >= seen, f"{who}: moves went back: {moves}")
            check(len(moves) <= seen + 1, f"{who}: a state was skipped: {moves}")
        if len(moves) == len(line):
            return game
        seen = len(moves)


def single(base):
    client = Http(base, None, "127.0.0.1")
    check(client.json("GET", "/readyz") == {"status": "ready"}, "/readyz through the port")
    created = client.json("POST", "/api/games", humans(), expect=201)
    game = created["game"]["id"]
    white = created["seat"]["token"]
    black = client.json("POST", f"/api/games/{game}/join")["seat"]["token"]
    spectator = socket(base, f"/ws/games/{game}")
    player = socket(base, f"/ws/games/{game}?token={white}")
    next_state(player, lambda g: g["status"] == "active", "White's socket")
    for ply, uci in enumerate(MATE, start=1):
        if ply % 2:
            player.send(json.dumps({"type": "move", "uci": uci}))
            next_state(player, lambda g: len(g["moves"]) == ply, "White's socket")
        else:
            client.json("POST", f"/api/games/{game}/move", {"uci": uci},
                        {"Authorization": f"Bearer {black}"})
    final = follow(spectator, MATE, "spectator")
    check(final["result"] == "1-0" and final["termination"] == "checkmate",
          f"final state: {final['result']} {final['termination']}")
    status, _, pgn = client.request("GET", f"/api/games/{game}/pgn")
    check(status == 200 and b"Qxf7#" in pgn, f"PGN: {status} {pgn[:200]!r}")
    step(f"game {game}: White on a WebSocket, Black over HTTP, the spectator saw "
         f"all {len(MATE)} plies to checkmate; PGN read")


class Compose:
    """The project's containers, as Docker sees them."""

    def __init__(self, project):
        self.project = project

    def docker(self, *args, check_rc=True):
        done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=60)
        if check_rc and done.returncode != 0:
            raise Failed(f"docker {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def container(self, service):
        ids = self.docker("ps", "-q", "--filter", f"label=com.docker.compose.project={self.project}",
                          "--filter", f"label=com.docker.compose.service={service}").split()
        check(len(ids) == 1, f"service {service}: containers {ids}")
        return ids[0]

    def metrics(self, service):
        """`name{labels}` → value, from the node's own /metrics."""
        text = self.docker("exec", self.container(service), "curl", "-sf",
                           "http://127.0.0.1:8080/metrics")
        values = {}
        for row in text.splitlines():
            if row and not row.startswith("#"):
                name, _, value = row.rpartition(" ")
                values[name] = float(value)
        return values

    def node_ids(self, service):
        """The cluster names this container's processes took (one a start:
        a restarted container has two)."""
        return set(re.findall(r"cluster member.*?node=([0-9a-f]{32})", self.node_logs(service)))

    def node_logs(self, service):
        done = subprocess.run(["docker", "logs", self.container(service)],
                              capture_output=True, text=True, timeout=60)
        return re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)

    def lease(self, game):
        row = self.docker("exec", self.container("postgres"), "psql", "-U", "rookery", "-d",
                          "rookery", "-tAc",
                          f"SELECT owner, epoch FROM game_leases WHERE game_id::text = '{game}'")
        check(row.strip(), f"no lease for game {game}")
        owner, epoch = row.strip().split("|")
        return owner, int(epoch)


NODES = ["node-1", "node-2", "node-3"]


def landed(compose, kind, before):
    """The node whose `kind` WebSocket count rose above `before`."""
    deadline = time.monotonic() + WAIT
    key = f'rookery_websockets{{kind="{kind}"}}'
    while time.monotonic() < deadline:
        now = {node: compose.metrics(node).get(key, 0.0) for node in NODES}
        risen = [node for node in NODES if now[node] > before[node]]
        if risen:
            check(len(risen) == 1, f"one socket, {kind} counts rose on {risen}")
            return risen[0]
        time.sleep(0.2)
    raise Failed(f"no node counted the new {kind} socket within {WAIT} s")


def open_elsewhere(compose, base, path, kind, avoid, who):
    """Opens `path` through the balancer until it lands on a node not in
    `avoid` (round robin moves on at every connection)."""
    key = f'rookery_websockets{{kind="{kind}"}}'
    for _ in range(15):
        before = {node: compose.metrics(node).get(key, 0.0) for node in NODES}
        ws = socket(base, path)
        next_state(ws, lambda g: True, who)
        node = landed(compose, kind, before)
        if node not in avoid:
            return ws, node
        ws.close()
        # Wait until the node has counted it gone, so the next try's
        # "before" is right.
        deadline = time.monotonic() + WAIT
        while compose.metrics(node).get(key, 0.0) > before[node]:
            check(time.monotonic() < deadline, f"{node} still counts a closed {kind} socket")
            time.sleep(0.2)
    raise Failed(f"{who}: 15 connections through the balancer, none on a node outside {avoid}")


def move_with_retries(client, game, uci, token):
    """POST a move through the balancer, retrying while the game moves to
    another node (502/504 from nginx while the dead node is tried, 503
    `unavailable` from a node) until it is accepted. The seconds waited."""
    started = time.monotonic()
    answers = []
    while True:
        try:
            status, _, body = client.request("POST", f"/api/games/{game}/move", {"uci": uci},
                                             {"Authorization": f"Bearer {token}"})
        except OSError as err:
            status, body = None, repr(err).encode()
        if status == 200:
            state = json.loads(body)
            check(state["moves"][-1] == uci, f"{uci}: answered {state['moves']}")
            return time.monotonic() - started, answers
        answers.append(status)
        check(status in (None, 502, 503, 504),
              f"move {uci} while the owner is dead: {status} {body[:300]!r}")
        check(time.monotonic() - started < TAKEOVER,
              f"move {uci}: not accepted within {TAKEOVER} s of the kill ({answers})")
        time.sleep(0.25)


def cluster(base, project):
    compose = Compose(project)
    client = Http(base, None, "127.0.0.1")
    check(client.json("GET", "/readyz") == {"status": "ready"}, "/readyz through nginx")
    names = {node: compose.node_ids(node) for node in NODES}
    for node, ids in names.items():
        check(len(ids) == 1, f"{node}: cluster names in its log: {ids}")
    node_of = {next(iter(ids)): node for node, ids in names.items()}

    body = humans()
    body["clock"] = {"initial": 600, "increment": 0}
    created = client.json("POST", "/api/games", body, expect=201)
    game = created["game"]["id"]
    white = created["seat"]["token"]
    black = client.json("POST", f"/api/games/{game}/join")["seat"]["token"]
    owner, epoch = compose.lease(game)
    check(owner in node_of, f"lease owner {owner} is none of {node_of}")
    first_owner = node_of[owner]

    white_ws, white_node = open_elsewhere(compose, base, f"/ws/games/{game}?token={white}",
                                          "seat", set(), "White's socket")
    black_ws, black_node = open_elsewhere(compose, base, f"/ws/games/{game}?token={black}",
                                          "seat", {white_node}, "Black's socket")
    watcher, watcher_node = open_elsewhere(compose, base, f"/ws/games/{game}", "spectator",
                                           {white_node, black_node}, "spectator")
    step(f"game {game} owned by {first_owner} (epoch {epoch}); White's socket on "
         f"{white_node}, Black's on {black_node}, the spectator's on {watcher_node}")

    forwards = "rookery_nats_forward_seconds_count"
    forwarded_before = {node: compose.metrics(node).get(forwards, 0.0) for node in NODES}
    sockets = {"White": white_ws, "Black": black_ws, "spectator": watcher}
    for ply, uci in enumerate(BEFORE, start=1):
        mover = white_ws if ply % 2 else black_ws
        mover.send(json.dumps({"type": "move", "uci": uci}))
        for who, ws in sockets.items():
            follow(ws, BEFORE[:ply], who)
    for node in {white_node, black_node} - {first_owner}:
        sent = compose.metrics(node).get(forwards, 0.0) - forwarded_before[node]
        check(sent >= len(BEFORE) // 2,
              f"{node} forwarded {sent} commands to the owner, fewer than its seat's moves")
    step(f"{len(BEFORE)} plies over the two seats' sockets, each seen in order by all "
         f"three sockets; the non-owner seats' moves went to {first_owner} over NATS")

    for ws in sockets.values():
        try:
            ws.close()
        except Exception:  # the connection may already be gone
            pass
    killed = compose.container(first_owner)
    compose.docker("kill", killed)
    waited, answers = move_with_retries(client, game, AFTER[0], white)
    step(f"docker kill {first_owner}: the next move was accepted {waited:.1f} s later "
         f"through nginx (answers before it: {answers or 'none'})")

    owner, later_epoch = compose.lease(game)
    check(later_epoch > epoch, f"epoch {later_epoch} after the takeover, {epoch} before")
    names = {node: compose.node_ids(node) for node in NODES if node != first_owner}
    new_owner = [node for node, ids in names.items() if owner in ids]
    check(new_owner, f"new owner {owner} is neither of the living nodes {names}")
    # (Not rookery_leases_taken_over_total: it counts the sweep's takeovers
    # only, and a move that arrives first takes the game over itself.)

    line = BEFORE + AFTER[:1]
    watcher = socket(base, f"/ws/games/{game}")
    state = next_state(watcher, lambda g: True, "a new spectator")
    check(state["moves"] == line, f"after the takeover the game holds {state['moves']}")
    for ply, uci in enumerate(AFTER[1:], start=len(line) + 1):
        token = white if ply % 2 else black
        client.json("POST", f"/api/games/{game}/move", {"uci": uci},
                    {"Authorization": f"Bearer {token}"})
        line.append(uci)
        follow(watcher, line, "the new spectator")
    final = client.json("GET", f"/api/games/{game}")
    check(final["moves"] == BEFORE + AFTER and final["status"] == "active",
          f"final: {final['status']} {final['moves']}")
    step(f"{new_owner[0]} took the game over (epoch {epoch} → {later_epoch}); every "
         f"acknowledged move is there, and {len(AFTER) - 1} more plies were seen by a "
         f"spectator connected afresh")


def main():
    mode = sys.argv[1]
    try:
        if mode == "single":
            single(sys.argv[2])
        elif mode == "cluster":
            cluster(sys.argv[2], sys.argv[3])
        else:
            raise SystemExit(f"unknown mode {mode}")
    except Failed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Plays a game through a proxy in front of rookery-server (over TLS, or
plain HTTP for the cluster's balancer) and checks what the proxy must do.
Started by tests/deploy/run.sh, which starts the server and the proxy from
deploy/'s files.

- /readyz and /healthz answer through the proxy; plain HTTP redirects to
  HTTPS (nginx only: Caddy's redirect listener is off in the test).
- The Host reaches the server: a request whose Origin is the page's own
  passes the cross-site check, a foreign one is refused.
- A human v human game: created and joined over HTTP, White plays over a
  WebSocket (seat token in the URL), Black over HTTP, Black's subprotocol
  WebSocket is accepted, a spectator's WebSocket sees every move, and the
  game's NDJSON stream delivers each state before the next move is made (a
  buffering proxy would hold the lines back), then ends with the game.
- The session cookie is Secure (--secure-cookies).
- The server keys clients by the address the proxy saw: one address
  spends its request budget and gets 429, another does not; the first
  one's forged X-Forwarded-For or Forwarded does not get it a new budget,
  while the same headers sent straight to the server (from the trusted
  proxy's address) would, which is why the proxy must overwrite them.
- nginx's access log holds the WebSocket requests but not the seat token.

Every wait has a timeout; the first failed check ends the run (exit 1).
"""

import argparse
import asyncio
import http.client
import json
import queue
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

from websockets.asyncio.client import connect as ws_connect

WAIT = 10.0  # seconds: the longest any one expected thing may take

# Scholar's mate: seven plies, White mates on the last.
MOVES = ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"]


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


class Http:
    """One HTTP(S) request per connection, from a chosen source address."""

    def __init__(self, base, context, source):
        parts = urllib.parse.urlsplit(base)
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.context = context
        self.source = source

    def connection(self, timeout=WAIT):
        source = (self.source, 0) if self.source else None
        if self.scheme == "https":
            return http.client.HTTPSConnection(
                self.host, self.port, context=self.context, timeout=timeout,
                source_address=source,
            )
        return http.client.HTTPConnection(
            self.host, self.port, timeout=timeout, source_address=source
        )

    def request(self, method, path, body=None, headers=None):
        headers = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn = self.connection()
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            return response.status, response.headers, payload
        finally:
            conn.close()

    def json(self, method, path, body=None, headers=None, expect=200):
        status, _, payload = self.request(method, path, body, headers)
        check(
            status == expect,
            f"{method} {path}: expected {expect}, got {status} {payload[:300]!r}",
        )
        return json.loads(payload)


class NdjsonReader(threading.Thread):
    """Reads a streamed response line by line, as the lines arrive."""

    def __init__(self, client, path):
        super().__init__(daemon=True)
        self.lines = queue.Queue()
        # Every line is due within WAIT in this test, so a longer silence
        # ends the reader and fails the wait for the line.
        self.conn = client.connection(timeout=WAIT)
        self.conn.request("GET", path)
        try:
            self.response = self.conn.getresponse()
        except TimeoutError:
            raise Failed(f"GET {path}: no response head within {WAIT} s (buffered?)")
        check(self.response.status == 200, f"GET {path}: {self.response.status}")
        kind = self.response.headers.get("Content-Type", "")
        check("ndjson" in kind, f"GET {path}: Content-Type {kind!r}")
        self.ended = threading.Event()

    def run(self):
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                if line.strip():
                    self.lines.put(json.loads(line))
        except Exception as err:  # reported by the waits below, as a timeout
            print(f"   stream reader: {err!r}", file=sys.stderr)
        finally:
            self.ended.set()
            self.conn.close()

    def until(self, predicate, what):
        deadline = time.monotonic() + WAIT
        while True:
            left = deadline - time.monotonic()
            check(left > 0, f"NDJSON stream: no {what} within {WAIT} s (buffered?)")
            try:
                state = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if predicate(state):
                return state


class Socket:
    """A WebSocket client with blocking calls, run on an asyncio loop of
    its own thread. Not websockets' sync client: over TLS 1.3 it lost
    about one handshake in a hundred here (a thread reading while another
    writes the same TLS connection), through nginx and Caddy alike; the
    asyncio client lost none in 300."""

    loop = None

    @classmethod
    def run(cls, coroutine, timeout=WAIT + 1):
        if cls.loop is None:
            cls.loop = asyncio.new_event_loop()
            threading.Thread(target=cls.loop.run_forever, daemon=True).start()
        return asyncio.run_coroutine_threadsafe(coroutine, cls.loop).result(timeout)

    def __init__(self, args, context, path, **options):
        parts = urllib.parse.urlsplit(args.proxy)
        if parts.scheme == "https":
            url = f"wss://{parts.netloc}{path}"
            options["ssl"] = context
        else:
            url = f"ws://{parts.netloc}{path}"

        async def opening():
            return await ws_connect(
                url, open_timeout=WAIT, local_addr=(args.source, 0), **options
            )

        try:
            self.ws = self.run(opening())
        except Exception as err:
            raise Failed(f"WebSocket {path}: {err!r}") from err
        self.subprotocol = self.ws.subprotocol

    def send(self, text):
        self.run(self.ws.send(text))

    def recv(self, timeout):
        """The next message; TimeoutError after `timeout` seconds."""
        return self.run(asyncio.wait_for(self.ws.recv(), timeout), timeout + 1)

    def close(self):
        self.run(self.ws.close())


def next_state(ws, predicate, who):
    """The next `state` message that satisfies `predicate` (presence
    messages and older states are skipped)."""
    deadline = time.monotonic() + WAIT
    while True:
        left = deadline - time.monotonic()
        check(left > 0, f"{who}: no expected state within {WAIT} s")
        try:
            message = json.loads(ws.recv(left))
        except TimeoutError:
            continue
        check(message.get("type") != "error", f"{who}: error {message}")
        if message.get("type") == "state" and predicate(message["game"]):
            return message["game"]


def step(text):
    print(f"   {text}", flush=True)


def play(args, context):
    client = Http(args.proxy, context, args.source)
    parts = urllib.parse.urlsplit(args.proxy)
    own_origin = f"{parts.scheme}://{parts.netloc}"

    ready = client.json("GET", "/readyz")
    check(ready == {"status": "ready"}, f"/readyz: {ready}")
    status, _, body = client.request("GET", "/healthz")
    check(status == 200, f"/healthz: {status} {body!r}")
    step("/readyz and /healthz answer through the proxy")

    if args.redirect:
        plain = Http(args.redirect, None, args.source)
        status, headers, _ = plain.request("GET", "/api/levels")
        location = headers.get("Location", "")
        check(
            status == 301 and location.startswith("https://")
            and location.endswith("/api/levels"),
            f"plain HTTP: expected a 301 to https://, got {status} {location!r}",
        )
        step("plain HTTP is redirected to HTTPS")

    humans = {"white": {"kind": "human"}, "black": {"kind": "human"}}
    refused = client.json(
        "POST", "/api/games", humans, {"Origin": "https://elsewhere.example"}, expect=403
    )
    check(refused["error"]["code"] == "forbidden", f"foreign Origin: {refused}")
    created = client.json("POST", "/api/games", humans, {"Origin": own_origin}, expect=201)
    game_id = created["game"]["id"]
    white = created["seat"]["token"]
    check(created["seat"]["color"] == "white", f"creator's seat: {created['seat']}")
    step(f"game {game_id} created (the page's own Origin passes, a foreign one is 403)")

    stream = NdjsonReader(client, f"/api/games/{game_id}/stream")
    stream.start()
    stream.until(lambda g: g["status"] == "waiting", "waiting state")

    joined = client.json("POST", f"/api/games/{game_id}/join", expect=200)
    black = joined["seat"]["token"]
    check(joined["seat"]["color"] == "black", f"joined seat: {joined['seat']}")
    stream.until(lambda g: g["status"] == "active", "active state")
    step("joined as Black; the NDJSON stream saw both states")

    spectator = Socket(args, context, f"/ws/games/{game_id}")
    next_state(spectator, lambda g: g["id"] == game_id, "spectator")
    player = Socket(args, context, f"/ws/games/{game_id}?token={white}")
    next_state(player, lambda g: g["id"] == game_id, "White's socket")
    by_protocol = Socket(
        args, context, f"/ws/games/{game_id}",
        subprotocols=["rookery", f"rookery.token.{black}"],
    )
    check(by_protocol.subprotocol == "rookery", f"subprotocol: {by_protocol.subprotocol!r}")
    next_state(by_protocol, lambda g: g["id"] == game_id, "Black's socket")
    by_protocol.close()
    step("spectator, White (?token=) and Black (subprotocol) sockets opened")

    for ply, uci in enumerate(MOVES, start=1):
        if ply % 2 == 1:
            player.send(json.dumps({"type": "move", "uci": uci}))
            next_state(player, lambda g: len(g["moves"]) == ply, "White's socket")
        else:
            client.json(
                "POST", f"/api/games/{game_id}/move", {"uci": uci},
                {"Authorization": f"Bearer {black}"},
            )
        seen = next_state(spectator, lambda g: len(g["moves"]) >= ply, "spectator")
        check(seen["moves"][:ply] == MOVES[:ply], f"spectator saw {seen['moves']}")
        line = stream.until(lambda g: len(g["moves"]) >= ply, f"state after ply {ply}")
        if ply < len(MOVES):
            check(line["status"] == "active", f"stream after ply {ply}: {line['status']}")
    step(f"{len(MOVES)} plies: the spectator saw each, the stream had each line "
         "before the next move")

    # The state after the last move is the finished one.
    final = seen
    check(
        final["result"] == "1-0" and final["termination"] == "checkmate",
        f"final state: {final['result']} {final['termination']}",
    )
    check(
        line["status"] == "finished" and line["result"] == "1-0",
        f"stream's last state: {line['status']} {line['result']}",
    )
    check(stream.ended.wait(WAIT), "NDJSON stream still open after the game ended")
    player.close()
    spectator.close()
    status, _, pgn = client.request("GET", f"/api/games/{game_id}/pgn")
    check(status == 200 and b"Qxf7#" in pgn and b"1-0" in pgn, f"PGN: {status} {pgn!r}")
    step("checkmate seen by the spectator; the stream ended with the game; PGN read")

    name = "d" + uuid.uuid4().hex[:12]
    status, headers, body = client.request(
        "POST", "/api/accounts", {"name": name, "password": "a stable horse 42"}
    )
    check(status == 201, f"POST /api/accounts: {status} {body[:300]!r}")
    cookie = headers.get("Set-Cookie", "")
    check(
        cookie.startswith("rookery_session=") and "Secure" in cookie,
        f"session cookie not Secure: {cookie!r}",
    )
    step("account created; its session cookie is Secure")

    client_addresses(args, context)

    if args.access_log:
        deadline = time.monotonic() + WAIT
        while True:
            with open(args.access_log) as f:
                log = f.read()
            if f"/ws/games/{game_id}" in log or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        check(f"/ws/games/{game_id}" in log, "access log: no WebSocket request")
        check(white not in log and black not in log, "access log holds a seat token")
        step("nginx's access log has the WebSocket requests, not the seat token")


def client_addresses(args, context):
    """With --rate-burst B and a rate near zero, B requests spend a client's
    budget; the next one is 429 for that client only."""
    spender = Http(args.proxy, context, args.spender)
    other = Http(args.proxy, context, args.other)
    direct = Http(args.server, None, None)
    codes = [spender.request("GET", "/api/levels")[0] for _ in range(args.burst + 2)]
    check(
        set(codes) == {200, 429} and codes[-1] == 429 and codes.count(200) <= args.burst + 1,
        f"{args.spender}: expected its budget spent, got {codes}",
    )
    forged = "198.51.100.7"
    for header, value in [("X-Forwarded-For", forged), ("Forwarded", f"for={forged}")]:
        status, _, _ = spender.request("GET", "/api/levels", headers={header: value})
        check(status == 429, f"{args.spender} with {header}: {value} got {status}, not 429: "
              "the proxy let a forged client address through")
    status, _, _ = other.request("GET", "/api/levels")
    check(status == 200, f"{args.other}: {status}: the server did not tell clients apart")
    step(f"{args.spender} spent its budget ({codes.count(200)} requests, then 429); "
         f"forged X-Forwarded-For and Forwarded did not help it; {args.other} still 200")

    # The same headers straight to the server, whose peer (127.0.0.1) is a
    # trusted proxy: believed. So the proxy's overwriting is what stops a
    # forger, and the server does key by the forwarded address.
    status, _, _ = direct.request("GET", "/api/levels", headers={"X-Forwarded-For": args.spender})
    check(status == 429, f"direct, X-Forwarded-For {args.spender}: {status}, not 429")
    status, _, _ = direct.request("GET", "/api/levels", headers={"Forwarded": f"for={forged}"})
    check(status == 200, f"direct, Forwarded for={forged}: {status}, not 200")
    step("control: straight to the server, the same headers are believed")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy", required=True, help="https://127.0.0.1:PORT")
    parser.add_argument("--server", required=True, help="the server itself, http://...")
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--redirect", help="the proxy's plain-HTTP address")
    parser.add_argument("--access-log")
    parser.add_argument("--burst", type=int, required=True, help="the server's --rate-burst")
    parser.add_argument("--source", required=True, help="loopback address to play from")
    parser.add_argument("--spender", required=True, help="loopback address that spends its budget")
    parser.add_argument("--other", required=True, help="another loopback address")
    args = parser.parse_args()
    context = ssl.create_default_context(cafile=args.cafile)
    try:
        play(args, context)
    except Failed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

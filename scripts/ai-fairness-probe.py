#!/usr/bin/env python3
"""Issue 23's probe: a level-1 reply's time while HOSTILE loopback addresses
(127.0.0.2, 127.0.0.3, ...) each keep two untimed level-8 games searching on
a server with --ai-threads 2; the player plays from 127.0.0.20. Standard
library only; Linux (every 127.x.y.z address is local).

usage: scripts/ai-fairness-probe.py path/to/rookery-server HOSTILE ROUNDS"""
import http.client, json, os, subprocess, sys, tempfile, threading, time

binary, hostile, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
port = 18000 + os.getpid() % 1000
db = tempfile.mkdtemp()
server = subprocess.Popen([binary, "--addr", f"127.0.0.1:{port}", "--database",
                           os.path.join(db, "r.db"),
                           "--ai-threads", "2", "--rate-limit", "1000", "--rate-burst", "1000"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "error"})

def call(source, method, path, body=None, token=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    conn.request(method, path, json.dumps(body) if body is not None else None, headers)
    r = conn.getresponse()
    data = json.loads(r.read() or b"null")
    conn.close()
    return r.status, data

for _ in range(200):
    try:
        call("127.0.0.1", "GET", "/api/levels"); break
    except Exception:
        time.sleep(0.05)

stop = False
def create(source, level):
    s, c = call(source, "POST", "/api/games", {"white": {"kind": "human"}, "black": {"kind": "ai", "level": level}})
    assert s == 201, c
    return c["game"]["id"], c["seat"]["token"]

def flood(source):
    games = [create(source, 8) for _ in range(2)]
    n = 0
    while not stop:
        for i, (gid, tok) in enumerate(games):
            s, st = call(source, "GET", f"/api/games/{gid}")
            if st["status"] == "finished":
                games[i] = create(source, 8); continue
            if st["turn"] == "white" and st["legal_moves"]:
                n += 1
                call(source, "POST", f"/api/games/{gid}/move", {"uci": st["legal_moves"][n % len(st["legal_moves"])]}, tok)
        time.sleep(0.02)

threads = [threading.Thread(target=flood, args=(f"127.0.0.{i+2}",)) for i in range(hostile)]
for t in threads: t.start()
time.sleep(3)
times = []
player = "127.0.0.20"
gid, tok = create(player, 1)
n = 0
while len(times) < rounds:
    s, st = call(player, "GET", f"/api/games/{gid}")
    if st["status"] == "finished":
        gid, tok = create(player, 1); continue
    if st["turn"] != "white":
        time.sleep(0.01); continue
    n += 1
    ply = len(st["moves"])
    asked = time.monotonic()
    s, st = call(player, "POST", f"/api/games/{gid}/move", {"uci": st["legal_moves"][n % len(st["legal_moves"])]}, tok)
    assert s == 200, st
    while True:
        s, st = call(player, "GET", f"/api/games/{gid}")
        if len(st["moves"]) > ply + 1 or st["status"] == "finished":
            break
        time.sleep(0.005)
    times.append(time.monotonic() - asked)
    time.sleep(0.3)
stop = True
for t in threads: t.join()
server.terminate(); server.wait()
ms = sorted(int(t * 1000) for t in times)
print(f"hostile={hostile} rounds={rounds} level-1 reply ms: median {ms[len(ms)//2]} max {ms[-1]} all {[int(t*1000) for t in times]}")

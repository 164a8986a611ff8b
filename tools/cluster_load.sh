#!/usr/bin/env bash
# The load probe against a cluster on loopback (issues 13 and 42): NODES
# rookery-server nodes sharing a throwaway PostgreSQL and nats-server, behind
# Debian's nginx (reuseport), all started and stopped by this script, and
# the probe spread over as many processes as the open-files limit needs.
#
#   tools/cluster_load.sh [NODES] [--probes P] [rookery-load options...]
#   e.g. tools/cluster_load.sh 3 --games 5000 --spectators 8 --play-seconds 60
#        (50,000 sockets: the figures of docs/performance.md, 29 November)
#
# Needs the Debian packages postgresql, nats-server and nginx (or
# nginx-light), curl, and a release build:
#   cargo build --release -p rookery-server -p rookery-loadprobe
#
# Where the sockets go. nginx listens on one balanced port (round robin
# over the nodes, no pinning) and on one port per node. Game g is created
# through node (g mod NODES)'s port, so that node owns it; its two players
# connect through the balanced port, and its spectators through the other
# nodes' ports, in turn: no spectator is on its game's owner, so every move
# reaches them over NATS (rookery-load --node-target).
#
# How many processes. One process may hold `ulimit -Hn` files (20,000 on
# the machines this was written on). The probe is split into P processes
# (default: enough for the sockets, 15,000 or fewer each), each with its
# share of --games and its own sockets; nginx gets enough workers for two
# files per socket (client and node) plus room; each node must hold its
# third of the sockets (it says so and stops when it cannot).
#
# PG_DIR=/dev/shm keeps PostgreSQL's data on tmpfs (no fsync cost).
#
# What it reports, besides each probe's own output (kept in the work
# directory): the moves' latency to every subscriber and to one over all
# probes together; lost, missing and out-of-order states summed; and per
# node its sockets, RSS before the sockets and with them idle (so memory
# per socket), CPU during play (cores), the games it owns; NATS messages
# and bytes per move (the server's /varz counters over the play); nginx's
# and the probes' CPU. Logs stay in the printed work directory when a step
# fails, and with KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

nodes=2
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  nodes=$1
  shift
fi
probes=""
games=1000
spectators=10
probe_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --probes) probes=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --spectators) spectators=$2; shift 2 ;;
    *) probe_args+=("$1"); shift ;;
  esac
done
server=${ROOKERY_SERVER:-target/release/rookery-server}
probe=${ROOKERY_LOAD:-target/release/rookery-load}
for binary in "$server" "$probe"; do
  [ -x "$binary" ] || { echo "missing $binary: cargo build --release -p rookery-server -p rookery-loadprobe" >&2; exit 2; }
done
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "nginx is not installed (apt-get install nginx-light)" >&2; exit 2; }
command -v nats-server >/dev/null || { echo "nats-server is not installed" >&2; exit 2; }
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$pg_bin" ] || { echo "postgresql is not installed" >&2; exit 2; }

limit=$(ulimit -Hn)
[ "$limit" = unlimited ] && limit=1048576
sockets=$((games * (2 + spectators)))
per_process=$((limit - 1000 < 15000 ? limit - 1000 : 15000))
[ -n "$probes" ] || probes=$(((sockets + per_process - 1) / per_process))
[ "$probes" -ge 1 ] || probes=1
# Two files per socket in nginx, spread over workers that each keep a
# thousand files of room.
workers=$(((2 * sockets + limit - 1001) / (limit - 1000)))
[ "$workers" -ge 2 ] || workers=2
connections=$((limit - 500))

work=$(mktemp -d /tmp/rookery-cluster-XXXXXX)
chmod 755 "$work"
pids=()
probe_pids=()
finished=no
cleanup() {
  for pid in "${probe_pids[@]}" "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  as_service_user "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  [ -n "${pg_data:-}" ] && rm -rf "$pg_data"
  if [ "$finished" = yes ] && [ -z "${KEEP:-}" ]; then rm -rf "$work"; else echo "logs kept in $work" >&2; fi
}
trap cleanup EXIT

as_service_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# Waits for `listening on http://ADDR` as the first line of a node's log.
wait_listening() {
  local log=$1
  for _ in $(seq 1 200); do
    if grep -q "^listening on http://" "$log" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "no 'listening on' in $log" >&2
  return 1
}
cpu_ticks() { # utime + stime of the processes named, in clock ticks
  local total=0 pid
  for pid in "$@"; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
varz() { curl -sf "http://127.0.0.1:$nats_http/varz"; }
# Waits until every probe has written STEP.PID (or one has exited).
wait_step() {
  local step=$1 pid
  while true; do
    local done=0
    for pid in "${probe_pids[@]}"; do
      [ -e "$work/sync/$step.$pid" ] && done=$((done + 1))
      kill -0 "$pid" 2>/dev/null || [ -e "$work/sync/$step.$pid" ] || {
        echo "probe $pid exited before '$step':" >&2
        tail -5 "$work/probe-$pid.log" >&2
        exit 1
      }
    done
    [ "$done" -eq "${#probe_pids[@]}" ] && return 0
    sleep 0.1
  done
}

echo "== $sockets sockets ($games games x (2 players + $spectators spectators)) over $nodes nodes, $probes probe processes, nginx with $workers workers; open-files limit $limit a process; work directory $work"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== PostgreSQL${PG_DIR:+ (data in $PG_DIR)}"
# PG_DIR=/dev/shm puts the database on tmpfs: the moves' path without the
# disk's fsync (each move is committed before it is broadcast).
if [ -n "${PG_DIR:-}" ]; then
  pg_data=$(mktemp -d "$PG_DIR/rookery-cluster-pg-XXXXXX")
  ln -s "$pg_data" "$work/pg"
else
  mkdir "$work/pg"
fi
[ "$(id -u)" -eq 0 ] && chown postgres "$work/pg/"
as_service_user "$pg_bin/initdb" -D "$work/pg" -A trust -U rookery >"$work/initdb.log"
pg_port=$(free_port)
as_service_user "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" -w \
  -o "-p $pg_port -k $work/pg -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
database="postgres://rookery@127.0.0.1:$pg_port/postgres"

echo "== nats-server"
nats_port=$(free_port)
nats_http=$(free_port)
nats-server -a 127.0.0.1 -p "$nats_port" -m "$nats_http" >"$work/nats.log" 2>&1 &
pids+=($!)

echo "== $nodes nodes"
node_pids=()
node_addrs=()
for i in $(seq 1 "$nodes"); do
  # The probe is one client with many connections: the per-client limits
  # are lifted, as rookery-load does for the server it starts.
  ROOKERY_MAX_CONNECTIONS=1000000 ROOKERY_MAX_CONNECTIONS_PER_IP=1000000 \
    ROOKERY_MAX_AI_GAMES=1000 ROOKERY_MAX_AI_GAMES_PER_CLIENT=1000 \
    ROOKERY_MAX_WAITING_GAMES_PER_CLIENT=1000000 RUST_LOG=warn \
    "$server" --addr 127.0.0.1:0 --database "$database" --nats "nats://127.0.0.1:$nats_port" \
    --trusted-proxy 127.0.0.1 --rate-limit 100000 --rate-burst 100000 \
    --ws-rate-limit 1000 --ws-rate-burst 1000 --ai-move-delay-ms 0 \
    >"$work/node$i.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  node_pids+=("$pid")
  wait_listening "$work/node$i.log"
  addr=$(sed -n 's|^listening on http://||p' "$work/node$i.log" | head -1)
  node_addrs+=("$addr")
  echo "node $i: $addr (pid $pid)"
done

echo "== nginx"
lb_port=$(free_port)
upstreams=""
for addr in "${node_addrs[@]}"; do upstreams+="        server $addr;"$'\n'; done
node_ports=()
node_servers=""
for i in "${!node_addrs[@]}"; do
  port=$(free_port)
  node_ports+=("$port")
  node_servers+="    server {
        listen 127.0.0.1:$port reuseport backlog=4096;
        location / { proxy_pass http://${node_addrs[$i]}; }
    }
"
done
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<NGINX
worker_processes $workers;
worker_rlimit_nofile $limit;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections $connections; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    upstream rookery_nodes {
$upstreams        keepalive 64;
    }
    map \$http_upgrade \$connection_upgrade {
        default upgrade;
        ''      '';
    }
    proxy_http_version 1.1;
    proxy_set_header Upgrade \$http_upgrade;
    proxy_set_header Connection \$connection_upgrade;
    proxy_set_header Host \$http_host;
    proxy_set_header X-Forwarded-For \$remote_addr;
    proxy_set_header Forwarded "";
    proxy_read_timeout 1h;
    proxy_send_timeout 1h;
    proxy_buffering off;
    server {
        listen 127.0.0.1:$lb_port reuseport backlog=4096;
        location / { proxy_pass http://rookery_nodes; }
    }
$node_servers}
NGINX
"$nginx" -p "$work/nginx" -c "$work/nginx.conf"
sleep 0.5
nginx_workers=($(pgrep -P "$(cat "$work/nginx.pid")"))
echo "nginx: balanced on 127.0.0.1:$lb_port, nodes on ports ${node_ports[*]}, ${#nginx_workers[@]} workers"

echo "== $probes rookery-load processes through nginx"
mkdir "$work/sync"
node_targets=()
for port in "${node_ports[@]}"; do node_targets+=(--node-target "127.0.0.1:$port"); done
left=$games
for p in $(seq 1 "$probes"); do
  share=$((left / (probes - p + 1)))
  left=$((left - share))
  # Each probe its own source addresses: 127.0.0.(2 + 4 (p - 1)) on.
  "$probe" --target "127.0.0.1:$lb_port" "${node_targets[@]}" --games "$share" \
    --spectators "$spectators" --sync-dir "$work/sync" --latencies-out "$work/latencies-$p" \
    --http-games 0 "${probe_args[@]}" >"$work/probe-$p.out" 2>"$work/probe-$p.err" &
  probe_pids+=($!)
  ln -s "probe-$p.out" "$work/probe-$!.log"
done

ticks=$(getconf CLK_TCK)
wait_step created
declare -a rss_before fds_before
for i in "${!node_pids[@]}"; do
  rss_before[$i]=$(rss_kib "${node_pids[$i]}")
  fds_before[$i]=$(fds "${node_pids[$i]}")
done
touch "$work/sync/created.go"

wait_step open
sleep 1
declare -a rss_idle node_fds cpu_start
for i in "${!node_pids[@]}"; do
  curl -sf "http://${node_addrs[$i]}/metrics" >"$work/node$((i + 1))-open.prom" || true
  rss_idle[$i]=$(rss_kib "${node_pids[$i]}")
  node_fds[$i]=$(fds "${node_pids[$i]}")
  cpu_start[$i]=$(cpu_ticks "${node_pids[$i]}")
done
nginx_start=$(cpu_ticks "${nginx_workers[@]}")
probes_start=$(cpu_ticks "${probe_pids[@]}")
nats_start=$(varz)
play_start=$(date +%s.%N)
echo "all sockets open; load average $(cut -d' ' -f1-3 /proc/loadavg); playing"
touch "$work/sync/open.go"

wait_step played
play_end=$(date +%s.%N)
declare -a cpu_end
for i in "${!node_pids[@]}"; do cpu_end[$i]=$(cpu_ticks "${node_pids[$i]}"); done
for i in "${!node_pids[@]}"; do
  curl -sf --max-time 5 "http://${node_addrs[$i]}/metrics" >"$work/node$((i + 1))-played.prom" || true
done
nginx_end=$(cpu_ticks "${nginx_workers[@]}")
probes_end=$(cpu_ticks "${probe_pids[@]}")
nats_end=$(varz)
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
touch "$work/sync/played.go"

status=0
for pid in "${probe_pids[@]}"; do wait "$pid" || status=1; done
owners=$(as_service_user "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U rookery -d postgres -tA \
  -c "SELECT owner, count(*) FROM game_leases GROUP BY owner" 2>/dev/null || true)

echo "== each probe"
for p in $(seq 1 "$probes"); do
  echo "-- probe $p"
  grep -E "^(sockets|moves sent|move to|states received|load average)" "$work/probe-$p.out" || true
  grep -v "file-descriptor limit" "$work/probe-$p.err" | head -5 || true
done

echo "== together"
python3 - "$work" "$probes" "$play_start" "$play_end" "$ticks" "$nginx_start" "$nginx_end" \
  "$probes_start" "$probes_end" "$nats_start" "$nats_end" <<'PY'
import json, re, sys
work, probes = sys.argv[1], int(sys.argv[2])
play = float(sys.argv[4]) - float(sys.argv[3])
ticks = float(sys.argv[5])
nginx = (int(sys.argv[7]) - int(sys.argv[6])) / ticks / play
probe_cpu = (int(sys.argv[9]) - int(sys.argv[8])) / ticks / play
nats0, nats1 = json.loads(sys.argv[10]), json.loads(sys.argv[11])

def pct(values, q):
    return values[round((len(values) - 1) * q)] if values else float("nan")

def summary(kind):
    values = []
    for p in range(1, probes + 1):
        with open(f"{work}/latencies-{p}.{kind}") as f:
            values.extend(float(line) for line in f if line.strip())
    values.sort()
    return (f"n={len(values)} p50={pct(values, .5):.2f} ms p90={pct(values, .9):.2f} ms "
            f"p99={pct(values, .99):.2f} ms max={values[-1] if values else float('nan'):.2f} ms")

totals = {}
sent = opened = failed = 0
for p in range(1, probes + 1):
    text = open(f"{work}/probe-{p}.out").read()
    m = re.search(r"moves sent: (\d+) \((\d+) failed", text)
    sent += int(m.group(1)); failed += int(m.group(2))
    m = re.search(r"sockets: (\d+) open \((\d+) failed\)", text)
    opened += int(m.group(1)); failed += int(m.group(2))
    m = re.search(r"states received: .*", text)
    for name, value in re.findall(r"([a-z ()]+): (\d+)", m.group(0)):
        totals[name.strip()] = totals.get(name.strip(), 0) + int(value)
print(f"sockets open: {opened}; moves sent: {sent} in {play:.1f} s ({sent / play:.0f} a second); "
      f"failures (sockets not opened, moves not sent): {failed}")
print("move to every subscriber of its game:", summary("every"))
print("move to one subscriber:", summary("one"))
print("; ".join(f"{k}: {v}" for k, v in totals.items()))
for key in ["in_msgs", "out_msgs", "in_bytes", "out_bytes"]:
    delta = nats1[key] - nats0[key]
    print(f"NATS {key}: {delta} during play, {delta / max(sent, 1):.1f} a move")
print(f"nginx CPU during play: {nginx:.2f} cores; the probes' CPU: {probe_cpu:.2f} cores")
PY

echo "== per node"
for i in "${!node_pids[@]}"; do
  pid=${node_pids[$i]}
  rss_end=$(rss_kib "$pid")
  python3 - "$((i + 1))" "${rss_before[$i]}" "${rss_idle[$i]}" "$rss_end" "${fds_before[$i]}" \
    "${node_fds[$i]}" "${cpu_start[$i]}" "${cpu_end[$i]}" "$ticks" "$play_start" "$play_end" <<'PY'
import sys
n, before, idle, end, fds0, fds1 = sys.argv[1], *map(int, sys.argv[2:7])
cpu = (int(sys.argv[8]) - int(sys.argv[7])) / float(sys.argv[9]) / (float(sys.argv[11]) - float(sys.argv[10]))
sockets = fds1 - fds0
print(f"node {n}: {sockets} sockets ({fds1} open files); RSS {before / 1024:.1f} MiB before the "
      f"sockets, {idle / 1024:.1f} MiB with them idle, {end / 1024:.1f} MiB after play -> "
      f"{(idle - before) / max(sockets, 1):.1f} KiB a socket; CPU during play {cpu:.2f} cores")
PY
done
# Inside the nodes, over the play (their /metrics at the start and the end
# of play): where a move's time went, and what the log says went wrong.
python3 - "$work" "$nodes" <<'PY'
import re, sys
work, nodes = sys.argv[1], int(sys.argv[2])

def buckets(path, name):
    found = {}
    try:
        text = open(path).read()
    except OSError:
        return found
    for le, count in re.findall(name + r'_bucket\{[^}]*le="([^"]+)"[^}]*\} (\S+)', text):
        found[le] = found.get(le, 0.0) + float(count)
    return found

def quantile(start, end, q):
    rows = sorted(((float("inf") if le == "+Inf" else float(le)), end[le] - start.get(le, 0.0))
                  for le in end)
    total = rows[-1][1] if rows else 0
    if total <= 0:
        return None, 0
    for le, count in rows:
        if count >= q * total:
            return le, int(total)
    return rows[-1][0], int(total)

names = {
    "rookery_move_broadcast_seconds": "move to broadcast (owner)",
    "rookery_db_commit_seconds": "database commit",
    "rookery_nats_forward_seconds": "command forwarded to the owner",
}
for n in range(1, nodes + 1):
    parts = []
    for name, label in names.items():
        start = buckets(f"{work}/node{n}-open.prom", name)
        end = buckets(f"{work}/node{n}-played.prom", name)
        p50, count = quantile(start, end, 0.5)
        p99, _ = quantile(start, end, 0.99)
        if count:
            parts.append(f"{label}: {count}, p50 <= {p50 * 1000:g} ms, p99 <= {p99 * 1000:g} ms")
    log = open(f"{work}/node{n}.log").read()
    counts = {
        "takeovers of a silent owner's game": log.count("silent past its lease: taking it over"),
        "forwarded commands timed out": log.count("cluster command failed"),
        "slow database pool acquires": log.count("time to acquire exceeded"),
    }
    parts.append("in its log over the whole run: " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    print(f"node {n} during play: " + "; ".join(parts))
PY
echo "games owned per node (lease table): $(echo "$owners" | awk -F'|' '{printf "%s ", $2}')"
echo "load average at the end of play: $load_end"
if [ -s "$work/nginx-error.log" ]; then
  echo "nginx error log: $(wc -l <"$work/nginx-error.log") lines, the first:"
  head -3 "$work/nginx-error.log"
fi
finished=yes
exit "$status"

#!/usr/bin/env bash
# The load probe against a cluster on loopback (issue 13): NODES
# rookery-server nodes sharing a throwaway PostgreSQL and nats-server, behind
# nginx (round robin, no pinning), all started and stopped by this script.
#
#   tools/cluster_load.sh [NODES] [rookery-load options...]
#   e.g. tools/cluster_load.sh 2 --games 1000 --spectators 4 --play-seconds 30
#
# Needs the Debian packages postgresql, nats-server and nginx (or
# nginx-light), and a release build:
#   cargo build --release -p rookery-server -p rookery-loadprobe
#
# The probe connects from several loopback source addresses, so the
# players and spectators of one game land on different nodes. Besides the
# probe's own figures it prints, per node, the most open sockets seen (file
# descriptors, sampled every second) and its RSS. Logs stay in the printed
# work directory when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

nodes=2
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  nodes=$1
  shift
fi
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

work=$(mktemp -d /tmp/rookery-cluster-XXXXXX)
chmod 755 "$work"
pids=()
finished=no
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  as_service_user "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  if [ "$finished" = yes ]; then rm -rf "$work"; else echo "logs kept in $work" >&2; fi
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

echo "== PostgreSQL"
mkdir "$work/pg"
[ "$(id -u)" -eq 0 ] && chown postgres "$work/pg"
as_service_user "$pg_bin/initdb" -D "$work/pg" -A trust -U rookery >"$work/initdb.log"
pg_port=$(free_port)
as_service_user "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" -w \
  -o "-p $pg_port -k $work/pg -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
database="postgres://rookery@127.0.0.1:$pg_port/postgres"

echo "== nats-server"
nats_port=$(free_port)
nats-server -a 127.0.0.1 -p "$nats_port" >"$work/nats.log" 2>&1 &
pids+=($!)

echo "== $nodes nodes"
node_pids=()
upstreams=""
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
  echo "node $i: $addr (pid $pid)"
  upstreams+="        server $addr;"$'\n'
done

echo "== nginx"
lb_port=$(free_port)
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<EOF
worker_processes 4;
worker_rlimit_nofile 20000;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 9000; }
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
    server {
        listen 127.0.0.1:$lb_port;
        location / {
            proxy_pass http://rookery_nodes;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_read_timeout 1h;
            proxy_buffering off;
        }
    }
}
EOF
"$nginx" -p "$work/nginx" -c "$work/nginx.conf"

# Per node: the most file descriptors seen open (its sockets, plus a few
# files), sampled every second while the probe runs.
(
  declare -A most
  while true; do
    for i in "${!node_pids[@]}"; do
      fds=$(ls "/proc/${node_pids[$i]}/fd" 2>/dev/null | wc -l)
      [ "$fds" -gt "${most[$i]:-0}" ] && most[$i]=$fds
      echo "node $((i + 1)): at most ${most[$i]:-0} open file descriptors"
    done >"$work/fds.new"
    mv "$work/fds.new" "$work/fds"
    sleep 1
  done
) &
pids+=($!)

echo "== rookery-load through nginx on 127.0.0.1:$lb_port"
"$probe" --target "127.0.0.1:$lb_port" "$@"

echo "== per node"
cat "$work/fds"
for i in "${!node_pids[@]}"; do
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/${node_pids[$i]}/status" 2>/dev/null || echo "?")
  echo "node $((i + 1)): RSS ${rss} KiB at the end"
done
finished=yes

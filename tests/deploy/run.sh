#!/usr/bin/env bash
# deploy/ proven on this machine (issue 25). Installs Debian's nginx, caddy
# and docker-compose when missing, and `websockets` and `PyYAML` from PyPI
# into a throwaway virtualenv (kept in target/ between runs).
#
# 1. The files as shipped: `nginx -t` on deploy/nginx-rookery.conf (only
#    the certificate and log paths changed), `caddy validate` on
#    deploy/Caddyfile, `systemd-analyze verify` on deploy/rookery.service
#    (binary and environment file paths changed; any warning fails), and
#    `docker-compose config` for the default and every profile of
#    docker-compose.yml, whose rookery services must check /readyz.
# 2. rookery-server (target/debug, built when missing or stale) on a free
#    loopback port with a temporary SQLite database, run as the unit runs it
#    (--trusted-proxy 127.0.0.1 --secure-cookies --public-url ...), then in
#    front of it, in turn, nginx and Caddy, each started from the shipped
#    file (tests/deploy/render.py changes ports, paths and the certificate
#    only) with a certificate made here, as non-daemon processes of this
#    script. tests/deploy/through_proxy.py plays a game through each
#    (WebSockets, a spectator, the NDJSON stream unbuffered, /readyz, the
#    client's address as the proxy saw it; see its header). Then the same
#    through deploy/nginx-cluster.conf, the cluster profile's balancer,
#    with this one server as its three nodes (plain HTTP, as in compose).
# 3. The health-check commands of the Dockerfile and docker-compose.yml run
#    against that server (port changed), quickly and without Docker
#    (tests/docker/run.sh runs them in Docker itself).
#
# Every process started here is stopped on exit.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
STARTED=$SECONDS
PACKAGES=(websockets==15.0.1 PyYAML==6.0.2)
VENV="$ROOT/target/deploy-venv-websockets-15.0.1-pyyaml-6.0.2"
# The server's request budget per client (--rate-burst) with almost no
# refill (--rate-limit), so that spending it is quick and certain.
BURST=40

echo "== deploy/: the proxy, systemd and compose files, and a game through nginx and Caddy"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then as_root apt-get update -q >/dev/null; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
}

command -v nginx >/dev/null || { echo "== installing nginx (Debian)"; apt_install nginx; }
command -v caddy >/dev/null || { echo "== installing caddy (Debian)"; apt_install caddy; }
if ! command -v docker-compose >/dev/null; then
  echo "== installing docker-compose (Debian)"
  apt_install docker-compose || true
fi

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import websockets, yaml" 2>/dev/null; then
  echo "== installing ${PACKAGES[*]} from PyPI into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  if ! "$VENV/bin/pip" install -q "${PACKAGES[@]}"; then
    rm -rf "$VENV"
    echo "!! ${PACKAGES[*]} could not be installed from PyPI: nothing can be played through the proxies." >&2
    exit 1
  fi
fi
PY="$VENV/bin/python"

# Built when missing or older than its sources (after scripts/test.sh's
# `cargo test` it is neither: a `cargo build -p` there could rebuild
# dependencies with other features for nothing).
# ROOKERY_SERVER_BIN names another binary, used as it is.
SERVER="${ROOKERY_SERVER_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/rookery-server}"
if [ -z "${ROOKERY_SERVER_BIN:-}" ] && { [ ! -x "$SERVER" ] || [ -n "$(cd "$ROOT" &&
    find server/src engine/src migrations Cargo.lock -newer "$SERVER" -print -quit)" ]; }; then
  (cd "$ROOT" && cargo build -q -p rookery-server)
fi

DIR="$(mktemp -d)"
# nginx's workers (user nobody when started by root) must reach its
# temporary directories inside.
chmod 755 "$DIR"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT

fail() {
  echo "FAILED: $*" >&2
  for log in "$DIR"/*.log; do
    [ -s "$log" ] || continue
    echo "-- $log (last 30 lines):" >&2
    tail -30 "$log" >&2
  done
  exit 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until `curl ARGS...` succeeds, or fails the run.
wait_for() {
  local what="$1" pid="$2"
  shift 2
  for _ in $(seq 1 100); do
    if curl -sf -o /dev/null --max-time 1 "$@"; then return 0; fi
    kill -0 "$pid" 2>/dev/null || fail "$what exited"
    sleep 0.1
  done
  fail "$what did not answer within 10 s"
}

# A certificate for 127.0.0.1, which the clients trust (and nothing else).
TLS="$DIR/tls"
mkdir -p "$TLS"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=127.0.0.1 -keyout "$TLS/privkey.pem" -out "$TLS/fullchain.pem" \
  -addext basicConstraints=critical,CA:FALSE \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost 2>/dev/null

# nginx's main configuration, as Debian's /etc/nginx/nginx.conf wraps a site
# (the http context), with every path inside $DIR/nginx.
nginx_main() {
  local prefix="$1" site="$2"
  mkdir -p "$prefix"
  cat >"$prefix/nginx.conf" <<EOF
worker_processes 1;
pid $prefix/nginx.pid;
error_log $DIR/nginx-error.log info;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    access_log off;
    sendfile on;
    gzip on;
    client_body_temp_path $prefix/body;
    proxy_temp_path $prefix/proxy;
    fastcgi_temp_path $prefix/fastcgi;
    uwsgi_temp_path $prefix/uwsgi;
    scgi_temp_path $prefix/scgi;
    include $site;
}
EOF
}

echo "== 1. the shipped files ($((SECONDS - STARTED)) s in)"
"$PY" "$HERE/render.py" nginx-check "$ROOT/deploy/nginx-rookery.conf" \
  "$DIR/check-site.conf" --tls-dir "$TLS" --access-log "$DIR/check-access.log"
nginx_main "$DIR/nginx-check" "$DIR/check-site.conf"
nginx -t -q -p "$DIR/nginx-check" -c "$DIR/nginx-check/nginx.conf" \
  || fail "nginx -t: deploy/nginx-rookery.conf"
echo "   nginx -t: deploy/nginx-rookery.conf is valid (as shipped, with a certificate here)"

HOME="$DIR" XDG_DATA_HOME="$DIR/caddy-data" XDG_CONFIG_HOME="$DIR/caddy-config" \
  caddy validate --config "$ROOT/deploy/Caddyfile" --adapter caddyfile >"$DIR/caddy-validate.log" 2>&1 \
  || fail "caddy validate: deploy/Caddyfile ($(tail -3 "$DIR/caddy-validate.log"))"
echo "   caddy validate: deploy/Caddyfile is valid (as shipped)"

if command -v systemd-analyze >/dev/null; then
  sed -e "s#/usr/local/bin/rookery-server#$SERVER#" \
      -e "s#/etc/rookery/rookery.env#$ROOT/deploy/rookery.env#" \
      "$ROOT/deploy/rookery.service" >"$DIR/rookery.service"
  warnings="$(systemd-analyze verify "$DIR/rookery.service" 2>&1)" \
    || fail "systemd-analyze verify: $warnings"
  [ -z "$warnings" ] || fail "systemd-analyze verify deploy/rookery.service: $warnings"
  echo "   systemd-analyze verify: deploy/rookery.service has no unknown or bad setting"
else
  echo "!! systemd-analyze is missing: deploy/rookery.service NOT verified" >&2
fi

if command -v docker-compose >/dev/null; then
  # The default (no profile) and each profile named in the file.
  profiles="$(python3 - "$ROOT/docker-compose.yml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
names = set()
for found in re.findall(r'profiles:\s*\[([^\]]*)\]', text):
    names.update(name.strip().strip('"\'') for name in found.split(",") if name.strip())
print(" ".join(sorted(names)))
EOF
)"
  for profile in "" $profiles; do
    flag=()
    [ -n "$profile" ] && flag=(--profile "$profile")
    # `config` validates as `config -q` does, and prints the resolved file.
    (cd "$ROOT" && docker-compose "${flag[@]}" config) >"$DIR/compose-${profile:-default}.yml" \
      2>"$DIR/compose.log" || fail "docker-compose ${flag[*]:+${flag[*]} }config: docker-compose.yml is not valid"
    # Every service of the server image (not the AI workers) checks /readyz.
    "$PY" - "$DIR/compose-${profile:-default}.yml" <<'EOF' || fail "docker-compose ${flag[*]:+${flag[*]} }config: a server without a /readyz health check"
import sys, yaml
services = yaml.safe_load(open(sys.argv[1]))["services"]
servers = [name for name, service in services.items()
           if service.get("image") == "rookery:latest" and "worker" not in str(service.get("command", ""))]
assert servers, "no server service"
for name in servers:
    test = services[name].get("healthcheck", {}).get("test", [])
    assert any("/readyz" in part for part in test), f"{name}: {test}"
EOF
    echo "   docker-compose ${flag[*]:+${flag[*]} }config: valid; servers check /readyz"
  done
else
  echo "!! ================================================================" >&2
  echo "!! docker-compose could not be installed: docker-compose.yml NOT validated" >&2
  echo "!! ================================================================" >&2
fi

echo "== 2. rookery-server behind nginx, Caddy, and the cluster profile's nginx ($((SECONDS - STARTED)) s in)"
"$SERVER" --addr 127.0.0.1:0 --database "sqlite://$DIR/deploy.db" --web-dir "$ROOT/web" \
  --trusted-proxy 127.0.0.1 --secure-cookies --public-url https://chess.example.org \
  --rate-limit 0.01 --rate-burst "$BURST" >"$DIR/server.out" 2>"$DIR/server.log" &
PIDS+=($!)
SERVER_PID=$!
SERVER_URL=""
for _ in $(seq 1 300); do
  SERVER_URL="$(grep -o 'listening on http://[^ ]*' "$DIR/server.out" | head -1 | sed 's/listening on //; s#/$##' || true)"
  [ -n "$SERVER_URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "rookery-server exited"
  sleep 0.1
done
[ -n "$SERVER_URL" ] || fail "rookery-server did not start"
SERVER_PORT="${SERVER_URL##*:}"
echo "   rookery-server on $SERVER_URL"

# Starts a proxy (the command after WHAT, URL and LOG) as a process of
# this script and waits until the server's /healthz answers through it.
start_proxy() {
  local what="$1" url="$2" log="$3"
  shift 3
  "$@" >>"$log" 2>&1 &
  PIDS+=($!)
  wait_for "$what" "$!" --cacert "$TLS/fullchain.pem" "$url/healthz"
  echo "-- $what on $url"
}
# Plays through the proxy at URL (through_proxy.py's options follow).
play_through() {
  local url="$1"
  shift
  "$PY" "$HERE/through_proxy.py" --proxy "$url" --server "$SERVER_URL" \
    --cafile "$TLS/fullchain.pem" --burst "$BURST" "$@" || fail "through $url"
}

NGINX_HTTPS="$(free_port)"
NGINX_HTTP="$(free_port)"
"$PY" "$HERE/render.py" nginx "$ROOT/deploy/nginx-rookery.conf" "$DIR/site.conf" \
  --tls-dir "$TLS" --access-log "$DIR/nginx-access.log" --server-port "$SERVER_PORT" \
  --https-port "$NGINX_HTTPS" --http-port "$NGINX_HTTP"
nginx_main "$DIR/nginx" "$DIR/site.conf"
start_proxy "nginx (deploy/nginx-rookery.conf)" "https://127.0.0.1:$NGINX_HTTPS" "$DIR/nginx-error.log" \
  nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -g 'daemon off;'
play_through "https://127.0.0.1:$NGINX_HTTPS" --redirect "http://127.0.0.1:$NGINX_HTTP" \
  --access-log "$DIR/nginx-access.log" --source 127.0.0.2 --spender 127.0.0.3 --other 127.0.0.4

CADDY_HTTPS="$(free_port)"
"$PY" "$HERE/render.py" caddy "$ROOT/deploy/Caddyfile" "$DIR/Caddyfile" \
  --tls-dir "$TLS" --server-port "$SERVER_PORT" --https-port "$CADDY_HTTPS"
start_proxy "Caddy (deploy/Caddyfile)" "https://127.0.0.1:$CADDY_HTTPS" "$DIR/caddy.log" \
  env HOME="$DIR" XDG_DATA_HOME="$DIR/caddy-data" XDG_CONFIG_HOME="$DIR/caddy-config" \
  caddy run --config "$DIR/Caddyfile" --adapter caddyfile
play_through "https://127.0.0.1:$CADDY_HTTPS" --source 127.0.0.5 --spender 127.0.0.6 --other 127.0.0.7

# The cluster profile's balancer, with this one server as its three nodes
# (plain HTTP, as in docker-compose.yml).
LB_HTTP="$(free_port)"
"$PY" "$HERE/render.py" nginx-cluster "$ROOT/deploy/nginx-cluster.conf" "$DIR/cluster.conf" \
  --server-port "$SERVER_PORT" --http-port "$LB_HTTP"
nginx_main "$DIR/nginx-lb" "$DIR/cluster.conf"
start_proxy "nginx (deploy/nginx-cluster.conf)" "http://127.0.0.1:$LB_HTTP" "$DIR/nginx-error.log" \
  nginx -p "$DIR/nginx-lb" -c "$DIR/nginx-lb/nginx.conf" -g 'daemon off;'
play_through "http://127.0.0.1:$LB_HTTP" --source 127.0.0.8 --spender 127.0.0.9 --other 127.0.0.10

echo "== 3. the container health checks, against this server ($((SECONDS - STARTED)) s in)"
# The Dockerfile's HEALTHCHECK command, as Docker runs it (sh -c).
check="$(sed -n '/^HEALTHCHECK/,/[^\\]$/p' "$ROOT/Dockerfile" | sed 's/\\$//' | tr '\n' ' ' | sed 's/.* CMD //')"
[ -n "$check" ] || fail "no HEALTHCHECK in the Dockerfile"
ROOKERY_ADDR="0.0.0.0:$SERVER_PORT" sh -c "$check" >/dev/null || fail "Dockerfile HEALTHCHECK: $check"
echo "   Dockerfile HEALTHCHECK passes: $check"
if [ -f "$DIR/compose-default.yml" ]; then
  "$PY" - "$DIR/compose-default.yml" "$SERVER_PORT" <<'EOF' || fail "docker-compose.yml's health check"
import subprocess, sys, yaml
service = yaml.safe_load(open(sys.argv[1]))["services"]["rookery"]
test = [part.replace(":8080/", f":{sys.argv[2]}/") for part in service["healthcheck"]["test"]]
assert test[0] == "CMD", test
subprocess.run(test[1:], check=True, stdout=subprocess.DEVNULL)
print("   docker-compose.yml's rookery health check passes:", " ".join(test[1:]))
EOF
fi

echo "deploy test passed in $((SECONDS - STARTED)) s"

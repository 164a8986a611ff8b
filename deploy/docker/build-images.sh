#!/usr/bin/env bash
# Builds every image docker-compose.yml needs without pulling from any
# registry: a Debian bookworm base made with debootstrap from Debian's
# archive and imported, PostgreSQL, nats-server and nginx from Debian's
# packages on that base, and rookery:latest from binaries built on this
# machine (the Dockerfile's runtime-only stage `prebuilt`: no Rust image).
#
#   deploy/docker/build-images.sh [BIN_DIR]
#   docker-compose --env-file deploy/docker/local.env --profile cluster up -d
#
# BIN_DIR holds rookery-server and rookery-engine (default: the release
# build, ${CARGO_TARGET_DIR:-target}/release; build it first with
#   cargo build --release -p rookery-server -p rookery-engine).
# Binaries built on Debian bookworm (glibc 2.36) or older run on the base.
#
# Cached: the base is made once (about a minute) and kept as the image
# rookery-local/debian:bookworm-slim; the other images are ordinary docker
# builds whose layers Docker keeps, so a second run takes seconds. Delete the
# base image (docker rmi) to make it anew. Needs root (debootstrap), the
# debootstrap package, a running Docker daemon and Debian's archive.
# The tags are those in deploy/docker/local.env.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN_DIR="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release}"

# The tags, from local.env (KEY=VALUE lines), so that compose and this
# script cannot disagree.
# shellcheck disable=SC1091
source "$HERE/local.env"
BASE="$ROOKERY_BASE_IMAGE"

for binary in rookery-server rookery-engine; do
  [ -x "$BIN_DIR/$binary" ] || {
    echo "missing $BIN_DIR/$binary: cargo build --release -p rookery-server -p rookery-engine" >&2
    exit 2
  }
done
docker info >/dev/null 2>&1 || { echo "no Docker daemon answers (docker info)" >&2; exit 2; }

# Debian's mirror, as apt on this machine is configured (deb822 or one-line).
mirror() {
  local found=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    found="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)"
  fi
  if [ -z "$found" ] && [ -f /etc/apt/sources.list ]; then
    found="$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list)"
  fi
  echo "${found:-http://deb.debian.org/debian}"
}

started=$SECONDS
if docker image inspect "$BASE" >/dev/null 2>&1; then
  echo "== base: $BASE (cached)"
else
  command -v debootstrap >/dev/null || {
    echo "== installing debootstrap (Debian)"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
  }
  echo "== base: debootstrap bookworm (minbase) from $(mirror), imported as $BASE"
  rootfs="$(mktemp -d /var/tmp/rookery-rootfs-XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase bookworm "$rootfs" "$(mirror)" >"$rootfs.log" 2>&1 || {
    tail -20 "$rootfs.log" >&2
    exit 1
  }
  rm -f "$rootfs.log"
  # As slim as debian:bookworm-slim: no package cache, lists or docs; and
  # services that packages install are not started during a build.
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
  chmod 755 "$rootfs/usr/sbin/policy-rc.d"
  rm -rf "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
  tar -C "$rootfs" --numeric-owner -c . | docker import \
    --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$BASE" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
  echo "   made in $((SECONDS - started)) s"
fi

# apt-get inside a build reaches Debian's archive through the host's own
# network (the daemon may run without NAT for its containers).
build() {
  local tag="$1"
  shift
  echo "== $tag"
  local t0=$SECONDS
  # Its output only on failure (the classic builder's notice that it is
  # deprecated would be noise on every run).
  local log
  log="$(mktemp)"
  if ! docker build --network host --build-arg "BASE_IMAGE=$BASE" -t "$tag" "$@" >"$log" 2>&1; then
    tail -30 "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  echo "   built in $((SECONDS - t0)) s"
}
build "$ROOKERY_POSTGRES_IMAGE" "$HERE/postgres"
build "$ROOKERY_NATS_IMAGE" "$HERE/nats"
build "$ROOKERY_NGINX_IMAGE" "$HERE/nginx"

# rookery:latest from the binaries: a small context of its own (the
# repository's context would send target/ to the daemon).
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
mkdir "$context/bin"
cp "$BIN_DIR/rookery-server" "$BIN_DIR/rookery-engine" "$context/bin/"
cp -r "$ROOT/web" "$context/web"
build rookery:latest --target prebuilt -f "$ROOT/Dockerfile" "$context"
echo "images ready in $((SECONDS - started)) s"

# Rookery: build the server (and the UCI engine) in a Rust image, run them in
# a slim Debian image with the web client and a volume for the SQLite file.
#
#   docker compose up --build        (see docker-compose.yml)
#
# Where no registry can be reached, the stage `prebuilt` makes the same
# image from binaries built on the host, with no Rust image:
# deploy/docker/build-images.sh builds it (and its base, from Debian's
# archive) with `--target prebuilt --build-arg BASE_IMAGE=...` and a small
# context holding bin/rookery-server, bin/rookery-engine and web/.

ARG BASE_IMAGE=debian:bookworm-slim

# What every Rookery image has: curl, the user, the environment, the
# health check and the entry point. The binaries come in the stages below.
FROM ${BASE_IMAGE} AS runtime
# curl, for the health check below. It fails on a 503 and, with
# --fail-with-body, keeps the body, so `docker inspect` shows why a
# container is not ready ({"status": "not ready", "reasons": [...]}); bash's
# /dev/tcp could only grep a status line. It adds curl and its libraries
# (a few MB); the server itself has no HTTP client subcommand.
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# A user of its own: the server needs no privileges, only its data volume.
RUN useradd --system --home-dir /data --shell /usr/sbin/nologin rookery \
    && mkdir -p /data /app \
    && chown rookery:rookery /data
ENV ROOKERY_ADDR=0.0.0.0:8080 \
    DATABASE_URL=sqlite:///data/rookery.db \
    ROOKERY_WEB_DIR=/app/web \
    RUST_LOG=info
USER rookery
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
# SIGTERM (Docker's default stop signal) shuts the server down gracefully.
STOPSIGNAL SIGTERM
# Healthy when ready (GET /readyz: the database takes a write, migrations
# are applied, NATS is connected in a cluster), on the port ROOKERY_ADDR
# names. An AI worker (--role worker) serves no HTTP: override it there, as
# docker-compose.yml does.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD curl -sS --fail-with-body --max-time 2 "http://127.0.0.1:${ROOKERY_ADDR##*:}/readyz" || exit 1
ENTRYPOINT ["/usr/local/bin/rookery-server"]

# Binaries built elsewhere (deploy/docker/build-images.sh). It comes before
# the Rust stage so that the classic builder, which builds every stage up to
# the target, does not need the Rust image either.
FROM runtime AS prebuilt
COPY bin/rookery-server bin/rookery-engine /usr/local/bin/
COPY web /app/web

FROM rust:1-bookworm AS build
WORKDIR /src
# The whole workspace: manifests, the engine, the server, the schema, the web
# client, the terminal client, the Swiss pairing crate and the load probe
# (workspace members; the client and the probe are not
# built here), and the root tests (server/tests links to them).
COPY Cargo.toml Cargo.lock ./
COPY engine engine
COPY server server
COPY cli cli
COPY swiss swiss
COPY tools/loadprobe tools/loadprobe
COPY migrations migrations
COPY tests tests
COPY web web
RUN cargo build --release --locked -p rookery-server -p rookery-engine \
    && mkdir -p /out \
    && cp target/release/rookery-server target/release/rookery-engine /out/

# The default target: the binaries built above.
FROM runtime
COPY --from=build /out/rookery-server /out/rookery-engine /usr/local/bin/
COPY --from=build /src/web /app/web

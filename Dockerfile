# Rookery: build the server (and the UCI engine) in a Rust image, run them in
# a slim Debian image with the web client and a volume for the SQLite file.
#
#   docker compose up --build        (see docker-compose.yml)

FROM rust:1-bookworm AS build
WORKDIR /src
# The whole workspace: manifests, the engine, the server, the schema, the web
# client, the terminal client (a workspace member), and the root tests
# (server/tests links to them).
COPY Cargo.toml Cargo.lock ./
COPY engine engine
COPY server server
COPY cli cli
COPY migrations migrations
COPY tests tests
COPY web web
RUN cargo build --release --locked -p rookery-server -p rookery-engine \
    && mkdir -p /out \
    && cp target/release/rookery-server target/release/rookery-engine /out/

FROM debian:bookworm-slim
# A user of its own: the server needs no privileges, only its data volume.
RUN useradd --system --home-dir /data --shell /usr/sbin/nologin rookery \
    && mkdir -p /data /app \
    && chown rookery:rookery /data
COPY --from=build /out/rookery-server /out/rookery-engine /usr/local/bin/
COPY --from=build /src/web /app/web
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
ENTRYPOINT ["/usr/local/bin/rookery-server"]

//! `rookery-server`: Rookery's online service. HTTP + WebSocket API, the
//! static web client, and SQLite, on top of the `rookery_engine` crate.
//! The contract it implements is `docs/API.md`.
//!
//! The house, floor by floor (docs/architecture.md draws it):
//!
//! - [`config`]: flags and environment.
//! - [`domain`]: what a game is, as data (seats, players, moves, endings,
//!   the record the store writes and reads back, challenges, the variant):
//!   the floor every other stands on.
//! - [`protocol`]: the JSON shapes of the contract, on HTTP, WebSocket and
//!   the cluster's wire, lichess's shapes and PGN.
//! - [`token`]: seat and player tokens (random, stored hashed).
//! - [`live`]: live games: registry, per-game actor, game state machine and
//!   its error, clock.
//! - [`ai`]: the AI scheduler (searches on its own bounded pool of search
//!   threads, off the async runtime), the searches sent to workers over
//!   NATS, and post-game analysis jobs.
//! - [`store`]: the database (SQLite or PostgreSQL through sqlx; migrations
//!   in `migrations/`): games, moves, ratings, accounts, leases.
//! - [`cluster`]: several nodes sharing one PostgreSQL database and NATS:
//!   game ownership, forwarding to the owner, presence.
//! - [`identity`]: accounts, sessions, scopes, password hashing, login
//!   throttling; [`social`]: follows, blocks, who may challenge whom,
//!   reports and moderators' actions, the chat's rules; [`events`]: each account's event stream (challenges,
//!   game starts).
//! - [`http`]: the edge: the accept loop and its timers, TLS, client
//!   addresses, origins, rate limits, bodies, logging, the HTTP error
//!   ([`http::error::ApiError`]), the handlers per resource (`http::api`),
//!   the lichess-compatible routes (`http::lichess`), the WebSocket
//!   endpoint (`http::ws`) and the static web client (`http::web`).
//! - [`mail`]: the letters the server sends (e-mail verification and
//!   password-reset links) through the operator's SMTP server.
//! - [`metrics`]: the Prometheus metrics; [`util`]: small helpers every
//!   floor uses.
//! - [`pools`]: quick pairing by time control (issue 38);
//!   [`tournaments`]: Arena tournaments and their director (issue 38).
//!
//! [`run`] starts the whole service on a bound listener and returns after a
//! graceful shutdown; `main.rs` only parses flags, installs logging and
//! waits for signals.

pub mod ai;
pub mod cluster;
pub mod config;
pub mod domain;
pub mod events;
pub mod http;
pub mod identity;
pub mod live;
pub mod mail;
pub mod metrics;
pub mod pools;
pub mod protocol;
pub mod social;
pub mod store;
pub mod teams;
pub mod token;
pub mod tournaments;
pub mod util;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use tokio::net::TcpListener;

use crate::ai::analysis::Analyses;
use crate::ai::AiScheduler;
use crate::cluster::Cluster;
pub use crate::config::Config;
use crate::http::rate_limit::{ClientBuckets, GameLedger, Limits};
use crate::http::serve::ConnectionLimits;
use crate::live::Registry;
use crate::store::Store;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub registry: Registry,
    pub config: Arc<Config>,
    /// Per-client rate limits (HTTP requests, WebSocket messages).
    pub limits: Arc<Limits>,
    /// Live AI v AI games, for their caps.
    pub ai_games: Arc<GameLedger>,
    /// Waiting games created on this node, for the cap per client.
    pub waiting_games: Arc<GameLedger>,
    /// Post-game analysis jobs.
    pub analyses: Analyses,
    /// The analysis board's evaluations (issue 36).
    pub board: crate::ai::board::BoardAnalyses,
    /// Failed logins, per name and per address (issue 21).
    pub login_throttle: Arc<crate::identity::throttle::LoginThrottle>,
    /// The directors of Swiss tournaments (issue 39).
    pub swiss: crate::tournaments::swiss::Directors,
    /// The chat's word filter and flood gate (issue 37).
    pub chat: Arc<crate::social::chat::ChatRules>,
    /// Quick pairing's pools (issue 38).
    pub pools: crate::pools::Pools,
    /// Arena tournaments and their director (issue 38).
    pub arenas: crate::tournaments::arena::Arenas,
    /// The SMTP server's sender (issue 36); `None` without `--smtp-host`.
    pub mailer: Option<crate::mail::Mailer>,
}

impl AppState {
    pub fn store(&self) -> &Store {
        self.registry.store()
    }
}

/// A started service: database open, not yet serving. Unfinished games
/// resume in the background once it serves.
pub struct App {
    state: AppState,
    /// `--tls-cert`/`--tls-key`, read at start-up.
    tls: Option<http::tls::TlsAcceptor>,
}

impl App {
    /// Opens the database (running migrations) and starts its writer.
    pub async fn start(config: Config) -> anyhow::Result<App> {
        let tls = http::tls::from_config(&config)?;
        let mailer = match config.mail_settings()? {
            Some(settings) => {
                Some(crate::mail::Mailer::new(settings).context("setting up --smtp-host")?)
            }
            None => None,
        };
        let chat_filter = match &config.ops.chat_filter {
            Some(path) => {
                let filter = crate::social::chat::WordFilter::load(path)
                    .with_context(|| format!("reading the chat filter {}", path.display()))?;
                tracing::info!(words = filter.len(), "chat filter loaded");
                filter
            }
            None => crate::social::chat::WordFilter::default(),
        };
        let store = Store::open_with(&config.storage.database, config.store_options()).await?;
        // A cluster's database, but no --nats: this node would write games
        // other nodes own, with no lease to fence it (issue 23).
        if !config.clustered() {
            let live = store.live_leases().await.unwrap_or(0);
            if live > 0 {
                store.close().await;
                anyhow::bail!(
                    "this database belongs to a cluster ({live} games are leased by its nodes): \
                     start this node with --nats like the others (or wait until their leases \
                     expire if the whole cluster is down)"
                );
            }
        }
        let ai = match &config.cluster.nats {
            Some(url) => AiScheduler::with_workers(
                config.ai_threads(),
                config.cluster.ai_remote_slots,
                config.search_priority(),
                config.ai_move_delay(),
                crate::ai::remote::RemoteSearch::connect(url, config.ai_job_grace()).await?,
            ),
            None => AiScheduler::with_priority(
                config.ai_threads(),
                config.search_priority(),
                config.ai_move_delay(),
            ),
        };
        ai.set_max_searches_per_client(config.ai.max_ai_searches_per_client);
        let analyses = Analyses::new(store.clone(), ai.clone(), config.analysis_options());
        let board = crate::ai::board::BoardAnalyses::new(
            ai.clone(),
            config.ai.analysis_nodes,
            config.ai.max_analyses_per_client,
        );
        // AI v AI games left unfinished by the last run count towards the
        // caps from the first request on (one read, before serving).
        let ai_games = Arc::new(GameLedger::default());
        ai_games.count_resumed(store.unfinished_ai_v_ai_games().await?);
        // A cluster member shares its games with the other nodes; with
        // SQLite, `--nats` only sends the AI's searches to workers.
        let cluster = if config.clustered() {
            let url = config.cluster.nats.as_deref().unwrap_or_default();
            Some(Cluster::connect(url, store.clone(), config.lease()).await?)
        } else {
            if config.cluster.nats.is_some() {
                tracing::info!("SQLite: games stay on this node (a cluster needs PostgreSQL)");
            }
            None
        };
        let director_lease = cluster
            .as_ref()
            .map(|cluster| (cluster.node().clone(), cluster.lease()));
        let registry =
            Registry::with_cluster(store, ai, config.registry_options(), cluster.clone());
        // A person's events reach their stream on whichever node it is.
        if let Some(cluster) = &cluster {
            cluster.relay_events(registry.events().clone()).await?;
            cluster.share_presence(registry.events().clone()).await?;
        }
        let swiss = crate::tournaments::swiss::Directors::new(registry.clone(), director_lease);
        registry.set_max_lag(config.ws.ws_max_lag);
        let limits = Limits {
            http: ClientBuckets::new(config.http_rate()),
            ws: ClientBuckets::new(config.ws_rate()),
            signups: ClientBuckets::new(config.signup_rate()),
            board: ClientBuckets::new(config.board_analysis_rate()),
            mails: ClientBuckets::new(crate::http::rate_limit::MAIL_RATE),
        };
        let pools = crate::pools::Pools::new(registry.clone(), config.pool_options());
        let arenas =
            crate::tournaments::arena::Arenas::new(registry.clone(), config.arena_options());
        Ok(App {
            state: AppState {
                pools,
                arenas,
                registry,
                config: Arc::new(config),
                limits: Arc::new(limits),
                ai_games,
                waiting_games: Arc::default(),
                analyses,
                board,
                login_throttle: Arc::default(),
                swiss,
                chat: Arc::new(crate::social::chat::ChatRules::new(chat_filter)),
                mailer,
            },
            tls,
        })
    }

    /// Whether the server speaks HTTPS (and WSS) rather than HTTP.
    pub fn serves_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Serves `--metrics-addr` on `listener` until the service shuts down:
    /// the same accept loop as the service (header timer, keep-alive
    /// timer), with a small cap of connections (16, 8 an address: a
    /// scraper needs one).
    pub fn serve_metrics(
        &self,
        listener: TcpListener,
    ) -> impl Future<Output = ()> + Send + 'static {
        let router = self.metrics_router();
        let limits = ConnectionLimits {
            max_connections: 16,
            max_connections_per_ip: 8,
            ..connection_limits(&self.state.config)
        };
        let mut stopping = self.state.registry.shutdown_signal();
        http::serve::serve(listener, router, limits, None, async move {
            while !*stopping.borrow_and_update() {
                if stopping.changed().await.is_err() {
                    break;
                }
            }
        })
    }

    /// The router of `--metrics-addr`: `GET /metrics` alone, with no token
    /// (that address is the operator's private one).
    pub fn metrics_router(&self) -> Router {
        let state = self.state.clone();
        Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let state = state.clone();
                async move { crate::http::metrics::render(&state) }
            }),
        )
    }

    pub fn router(&self) -> Router {
        build_router(self.state.clone())
    }

    /// Serves on `listener` until `shutdown` completes, then stops gracefully:
    /// no new connections, live games stop (their searches too) after
    /// finishing the writes they have begun, open streams and WebSockets
    /// close, and the database is closed. Connections still open
    /// `--shutdown-grace-ms` after the shutdown began (a client that stopped
    /// reading or sending) are closed, so the process always exits.
    ///
    /// Games whose clock runs or whose AI is to move resume in the
    /// background once serving begins; the rest load on demand.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let registry = self.state.registry.clone();
        let router = self.router();
        let limits = connection_limits(&self.state.config);
        let stop_games = registry.clone();
        let analyses = self.state.analyses.clone();
        registry.start_background();
        analyses.start_background();
        self.state.swiss.start_background();
        self.state.pools.start();
        self.state.arenas.start();
        http::serve::serve(listener, router, limits, self.tls.clone(), async move {
            shutdown.await;
            tracing::info!("shutting down");
            // Live games stop first: their subscribers' streams end, so the
            // long-lived connections close and the server can drain.
            stop_games.shutdown().await;
        })
        .await;
        // Analyses stop first (their positions so far are stored; they
        // resume at the next start), then the games.
        analyses.shutdown().await;
        registry.shutdown().await;
        self.state.store().close().await;
        tracing::info!("stopped");
        Ok(())
    }
}

/// Starts the service on `listener` and serves until `shutdown` completes.
pub async fn run(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    App::start(config).await?.serve(listener, shutdown).await
}

/// The connection caps and timers of the accept loop, from the flags.
fn connection_limits(config: &Config) -> ConnectionLimits {
    ConnectionLimits {
        max_connections: config.http.max_connections.max(1),
        max_connections_per_ip: config.http.max_connections_per_ip.max(1),
        header_timeout: config.header_timeout(),
        keepalive_idle: config.keepalive_idle(),
        trusted: crate::http::client_ip::TrustedProxies::new(config.http.trusted_proxies.clone()),
        shutdown_grace: config.shutdown_grace(),
        write_timeout: config.ws_write_timeout(),
        send_buffer: (config.http.send_buffer_bytes > 0).then_some(config.http.send_buffer_bytes),
    }
}

/// The whole HTTP surface.
pub fn build_router(state: AppState) -> Router {
    let web = http::web::service(&state);
    Router::new()
        .merge(http::api::router(state.clone()))
        .merge(http::ws::router(state.clone()))
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .merge(web)
        // Outermost last: trace, find the client, check the head (Host,
        // sizes), read the body, check the origin (after the body, so a
        // refused request leaves its keep-alive connection usable), then
        // the answer's deadline.
        .layer(axum::middleware::from_fn_with_state(
            http::serve::RequestTimeout(state.config.request_timeout()),
            http::serve::limit_time,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            http::origin::check_origin,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            http::body::read_whole_body,
        ))
        .layer(axum::middleware::from_fn(http::head::check_head))
        .layer(axum::middleware::from_fn_with_state(
            http::headers::Tls(state.config.site.tls_cert.is_some()),
            http::headers::security_headers,
        ))
        .layer(axum::middleware::from_fn_with_state(
            crate::http::client_ip::TrustedProxies::new(state.config.http.trusted_proxies.clone()),
            http::client_ip::resolve_client,
        ))
        .layer(
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(http::logging::RequestSpan),
        )
}

/// The address a listener is bound to, for the `listening on` line:
/// `https://` when the server serves TLS itself.
pub fn listening_line(addr: SocketAddr, tls: bool) -> String {
    let scheme = if tls { "https" } else { "http" };
    format!("listening on {scheme}://{addr}")
}

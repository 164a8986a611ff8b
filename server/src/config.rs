//! Configuration: command-line flags, each with an environment variable as
//! fallback (flags win), and defaults that run a local server.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::http::client_ip::{ProxyRange, TrustedProxies};
use crate::http::origin::AllowedOrigin;
use crate::http::rate_limit::RateLimit;

/// The web client's directory in this source tree, found from the server
/// crate's directory at build time. A deployed binary is pointed elsewhere
/// with `--web-dir` / `ROOKERY_WEB_DIR`.
pub const DEFAULT_WEB_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../web");

#[derive(Debug, Clone, Parser)]
#[command(
    name = "rookery-server",
    version,
    about = "Rookery: online chess with its own engine"
)]
pub struct Config {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "ROOKERY_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: String,

    /// Database: a SQLite URL or path (created if missing), or a PostgreSQL
    /// URL `postgres://user:password@host:port/database` (the database must
    /// exist; its tables are created).
    #[arg(
        long = "database",
        env = "DATABASE_URL",
        default_value = "sqlite://rookery.db"
    )]
    pub database: String,

    /// A one-off task instead of serving (`backup`).
    #[command(subcommand)]
    pub command: Option<Task>,

    /// Log lines as text (for people) or JSON (one object a line, for log
    /// collectors). Secrets are redacted in both.
    #[arg(long, env = "ROOKERY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Also serve `GET /metrics` (Prometheus's text format) on this
    /// address, with no token: for a scraper on a private network. The
    /// main listener serves it too, behind `--admin-token` when one is set.
    #[arg(long, env = "ROOKERY_METRICS_ADDR")]
    pub metrics_addr: Option<String>,

    /// What this process is: `server` (the HTTP/WebSocket service) or
    /// `worker` (an AI worker taking search jobs from NATS; needs `--nats`).
    #[arg(long, env = "ROOKERY_ROLE", value_enum, default_value_t = Role::Server)]
    pub role: Role,

    /// NATS server URL (`nats://host:4222`). A server sends its AI searches
    /// to the workers over it; a worker takes them from it.
    #[arg(long, env = "ROOKERY_NATS")]
    pub nats: Option<String>,

    /// With `--nats`: searches sent to workers at once (more wait in the
    /// node's queue).
    #[arg(long, env = "ROOKERY_AI_REMOTE_SLOTS", default_value_t = 64)]
    pub ai_remote_slots: usize,

    /// With `--nats`: how long past a job's think time a node waits for a
    /// worker's answer before it sends the job again, in milliseconds.
    #[arg(long, env = "ROOKERY_AI_JOB_GRACE_MS", default_value_t = 2_000)]
    pub ai_job_grace_ms: u64,

    /// With `--nats` and a PostgreSQL `--database`: how long a node's lease
    /// of a live game lasts without renewal, in milliseconds. When a node
    /// dies, another takes its games over after at most this long.
    #[arg(long, env = "ROOKERY_LEASE_MS", default_value_t = 4_000)]
    pub lease_ms: u64,

    /// Directory of the web client served at `/`.
    #[arg(long, env = "ROOKERY_WEB_DIR", default_value = DEFAULT_WEB_DIR)]
    pub web_dir: PathBuf,

    /// Minimum time between two moves of an AI v AI game, in milliseconds,
    /// so that a person can follow it.
    #[arg(long, env = "ROOKERY_AI_MOVE_DELAY_MS", default_value_t = 1000)]
    pub ai_move_delay_ms: u64,

    /// Searches that may run at once (default: the number of cores).
    #[arg(long, env = "ROOKERY_AI_THREADS")]
    pub ai_threads: Option<usize>,

    /// The nice value (0 to 19) the search threads lower themselves to, so
    /// that searches never starve the threads serving requests and sockets.
    #[arg(long, env = "ROOKERY_AI_NICE", default_value_t = crate::ai::DEFAULT_NICE,
          value_parser = clap::value_parser!(i32).range(0..=19))]
    pub ai_nice: i32,

    /// Search threads use Linux's SCHED_IDLE policy instead of a nice
    /// value: any other thread that wakes takes their core at once.
    #[arg(long, env = "ROOKERY_AI_IDLE")]
    pub ai_idle: bool,

    /// HTTP requests per second each client address may make, sustained
    /// (all its connections together; behind `--trusted-proxy`, the
    /// forwarded address).
    #[arg(long, env = "ROOKERY_RATE_LIMIT", default_value_t = 50.0)]
    pub rate_limit: f64,

    /// HTTP requests a client address may make in a burst.
    #[arg(long, env = "ROOKERY_RATE_BURST", default_value_t = 200)]
    pub rate_burst: u32,

    /// WebSocket messages per second each client address may send,
    /// sustained (all its sockets together).
    #[arg(long, env = "ROOKERY_WS_RATE_LIMIT", default_value_t = 20.0)]
    pub ws_rate_limit: f64,

    /// WebSocket messages a client address may send in a burst.
    #[arg(long, env = "ROOKERY_WS_RATE_BURST", default_value_t = 60)]
    pub ws_rate_burst: u32,

    /// Largest request body, in bytes.
    #[arg(long, env = "ROOKERY_MAX_BODY_BYTES", default_value_t = 16 * 1024)]
    pub max_body_bytes: usize,

    /// Largest WebSocket message a client may send, in bytes.
    #[arg(long, env = "ROOKERY_MAX_WS_MESSAGE_BYTES", default_value_t = 4 * 1024)]
    pub max_ws_message_bytes: usize,

    /// How often the server pings each WebSocket, in milliseconds.
    #[arg(long, env = "ROOKERY_WS_PING_INTERVAL_MS", default_value_t = 30_000)]
    pub ws_ping_interval_ms: u64,

    /// A WebSocket that has not answered a ping with a pong this long after
    /// it was sent is closed (4000), in milliseconds.
    #[arg(long, env = "ROOKERY_WS_PONG_TIMEOUT_MS", default_value_t = 20_000)]
    pub ws_pong_timeout_ms: u64,

    /// A WebSocket frame the client does not take within this many
    /// milliseconds ends the connection.
    #[arg(long, env = "ROOKERY_WS_WRITE_TIMEOUT_MS", default_value_t = 10_000)]
    pub ws_write_timeout_ms: u64,

    /// Messages a WebSocket may fall behind its game before it is closed
    /// (4008; the client reconnects for a fresh state).
    #[arg(long, env = "ROOKERY_WS_MAX_LAG", default_value_t = crate::live::DEFAULT_MAX_LAG)]
    pub ws_max_lag: usize,

    /// Most database writes committed in one transaction (group commit);
    /// 1 commits each write alone.
    #[arg(long, env = "ROOKERY_MAX_WRITE_BATCH", default_value_t = 256)]
    pub max_write_batch: usize,

    /// How long a write waits for a database locked by another process
    /// before the request fails with 503 `unavailable`, in milliseconds.
    #[arg(long, env = "ROOKERY_DB_BUSY_TIMEOUT_MS", default_value_t = 5000)]
    pub db_busy_timeout_ms: u64,

    /// The longest a request waits for a game's answer before 503
    /// `unavailable`, in milliseconds.
    #[arg(long, env = "ROOKERY_GAME_DEADLINE_MS", default_value_t = 10_000)]
    pub game_deadline_ms: u64,

    /// A waiting game nobody joined is aborted after this many seconds.
    #[arg(long, env = "ROOKERY_WAITING_EXPIRY_SECS", default_value_t = 86_400)]
    pub waiting_expiry_secs: u64,

    /// Serve HTTPS (and WSS) with this PEM certificate chain, for a server
    /// run without a TLS proxy in front (needs `--tls-key`).
    #[arg(long, env = "ROOKERY_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of `--tls-cert`.
    #[arg(long, env = "ROOKERY_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// The address people reach this server at (`https://chess.example.org`),
    /// for links the server writes (lichess's `url` fields, PGN `Site`).
    /// Default: none, links are relative to the server.
    #[arg(long, env = "ROOKERY_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Marks the session cookie `Secure` (sent over HTTPS only). Set it when
    /// the server is reached over HTTPS through a proxy; a server serving
    /// TLS itself sets it anyway.
    #[arg(long, env = "ROOKERY_SECURE_COOKIES")]
    pub secure_cookies: bool,

    /// In a game with a clock, a person who has not made their first move
    /// this many milliseconds after their turn began aborts the game (it
    /// counts nowhere); twice as long for clocks of 15 minutes or more.
    /// Neither clock runs before that side's first move.
    #[arg(long, env = "ROOKERY_FIRST_MOVE_MS", default_value_t = 30_000)]
    pub first_move_ms: u64,

    /// An open seek whose creator's last connection closed is withdrawn
    /// (aborted) after this many milliseconds, unless they reconnect.
    #[arg(long, env = "ROOKERY_SEEK_GRACE_MS", default_value_t = 10_000)]
    pub seek_grace_ms: u64,

    /// An untimed active game with no move or action for this many seconds
    /// is adjudicated: the side to move loses on time (aborted before each
    /// side has moved).
    #[arg(long, env = "ROOKERY_IDLE_GAME_SECS", default_value_t = 604_800)]
    pub idle_game_secs: u64,

    /// A game with no subscriber and nothing to wait for (no running clock,
    /// no AI to move) leaves memory after this many milliseconds idle; it
    /// loads again from the database when asked for.
    #[arg(long, env = "ROOKERY_UNLOAD_AFTER_MS", default_value_t = 60_000)]
    pub unload_after_ms: u64,

    /// After SIGTERM, connections still open after this many milliseconds
    /// are dropped and the process exits.
    #[arg(long, env = "ROOKERY_SHUTDOWN_GRACE_MS", default_value_t = 5_000)]
    pub shutdown_grace_ms: u64,

    // ---- Limits a client cannot escape (issue 8): AI v AI caps, the
    // admin token, connections, timeouts, proxies and origins.
    /// Live AI v AI games at once, server-wide (default: two per core).
    #[arg(long, env = "ROOKERY_MAX_AI_GAMES")]
    pub max_ai_games: Option<usize>,

    /// Live AI v AI games one client (IP address) may have at once.
    #[arg(long, env = "ROOKERY_MAX_AI_GAMES_PER_CLIENT", default_value_t = 2)]
    pub max_ai_games_per_client: usize,

    /// Secret that allows operator actions (`DELETE /api/games/{id}`);
    /// without it they are refused.
    #[arg(long, env = "ROOKERY_ADMIN_TOKEN")]
    pub admin_token: Option<AdminToken>,

    /// Open connections at once, server-wide; more are refused at accept.
    #[arg(long, env = "ROOKERY_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,

    /// Open connections at once from one IP address (trusted proxies are
    /// exempt).
    #[arg(long, env = "ROOKERY_MAX_CONNECTIONS_PER_IP", default_value_t = 64)]
    pub max_connections_per_ip: usize,

    /// How long a client may take to send a request's headers, counted
    /// from their first byte (or from connecting, for a connection's first
    /// request), in milliseconds.
    #[arg(long, env = "ROOKERY_HEADER_TIMEOUT_MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,

    /// How long a keep-alive connection may wait, after a response, for
    /// the first byte of its next request before it is closed, in
    /// milliseconds.
    #[arg(long, env = "ROOKERY_KEEPALIVE_IDLE_MS", default_value_t = 10_000)]
    pub keepalive_idle_ms: u64,

    /// How long the server may take to answer a request once its body is
    /// in, in milliseconds (streams and WebSockets are not cut: only the
    /// time to their first byte counts).
    #[arg(long, env = "ROOKERY_REQUEST_TIMEOUT_MS", default_value_t = 30_000)]
    pub request_timeout_ms: u64,

    /// A proxy (IP address or CIDR range) whose `X-Forwarded-For` /
    /// `Forwarded` headers name the real client; repeatable.
    #[arg(
        long = "trusted-proxy",
        env = "ROOKERY_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<ProxyRange>,

    /// An origin (`https://chess.example.org`) besides the server's own
    /// whose pages may send state-changing requests; repeatable.
    #[arg(
        long = "allowed-origin",
        env = "ROOKERY_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<AllowedOrigin>,

    // ---- Post-game analysis (issue 11).
    /// Analyses that search at once, server-wide (others wait, queued).
    #[arg(long, env = "ROOKERY_MAX_ANALYSES", default_value_t = 1)]
    pub max_analyses: usize,

    /// Unfinished analyses one client (IP address) may have asked for.
    #[arg(long, env = "ROOKERY_MAX_ANALYSES_PER_CLIENT", default_value_t = 2)]
    pub max_analyses_per_client: usize,

    /// The search budget of each analysed position, in nodes (the same
    /// budget gives the same results on any machine).
    #[arg(long, env = "ROOKERY_ANALYSIS_NODES", default_value_t = 200_000)]
    pub analysis_nodes: u64,
}

/// The log's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// One-off tasks of `rookery-server`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Task {
    /// Copies a live SQLite database, consistent as of one instant, to a new
    /// file while the server keeps playing (SQLite's `VACUUM INTO`). Restore
    /// by stopping the server and putting the copy in the database's place.
    Backup {
        /// The database to copy (default: the top-level `--database`).
        #[arg(long = "database")]
        database: Option<String>,
        /// The copy's path; it must not exist yet.
        #[arg(long)]
        to: PathBuf,
    },
}

/// What a `rookery-server` process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// The service: HTTP, WebSocket, games, database.
    Server,
    /// An AI worker: searches jobs from NATS, serves nothing else.
    Worker,
}

/// The operator's secret. Its `Debug` hides it, so printing a `Config`
/// never leaks it.
#[derive(Clone, PartialEq, Eq)]
pub struct AdminToken(pub String);

impl std::fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AdminToken(..)")
    }
}

impl std::str::FromStr for AdminToken {
    type Err = String;
    fn from_str(text: &str) -> Result<AdminToken, String> {
        if text.trim().len() < 16 {
            return Err("the admin token must be at least 16 characters".into());
        }
        Ok(AdminToken(text.trim().to_string()))
    }
}

impl Config {
    /// The defaults, as if no flag and no environment variable were given
    /// (for tests and embedding).
    pub fn defaults() -> Config {
        Config {
            addr: "127.0.0.1:8080".into(),
            database: "sqlite://rookery.db".into(),
            role: Role::Server,
            nats: None,
            ai_remote_slots: 64,
            ai_job_grace_ms: 2_000,
            lease_ms: 4_000,
            web_dir: PathBuf::from(DEFAULT_WEB_DIR),
            ai_move_delay_ms: 1000,
            ai_threads: None,
            ai_nice: crate::ai::DEFAULT_NICE,
            ai_idle: false,
            rate_limit: 50.0,
            rate_burst: 200,
            ws_rate_limit: 20.0,
            ws_rate_burst: 60,
            max_body_bytes: 16 * 1024,
            max_ws_message_bytes: 4 * 1024,
            ws_ping_interval_ms: 30_000,
            ws_pong_timeout_ms: 20_000,
            ws_write_timeout_ms: 10_000,
            ws_max_lag: crate::live::DEFAULT_MAX_LAG,
            max_write_batch: 256,
            db_busy_timeout_ms: 5000,
            game_deadline_ms: 10_000,
            waiting_expiry_secs: 86_400,
            first_move_ms: 30_000,
            secure_cookies: false,
            command: None,
            log_format: LogFormat::Text,
            metrics_addr: None,
            public_url: None,
            tls_cert: None,
            tls_key: None,
            seek_grace_ms: 10_000,
            idle_game_secs: 604_800,
            unload_after_ms: 60_000,
            shutdown_grace_ms: 5_000,
            max_ai_games: None,
            max_ai_games_per_client: 2,
            admin_token: None,
            max_connections: 4096,
            max_connections_per_ip: 64,
            header_timeout_ms: 10_000,
            keepalive_idle_ms: 10_000,
            request_timeout_ms: 30_000,
            trusted_proxies: Vec::new(),
            allowed_origins: Vec::new(),
            max_analyses: 1,
            max_analyses_per_client: 2,
            analysis_nodes: 200_000,
        }
    }

    pub fn analysis_options(&self) -> crate::ai::analysis::AnalysisOptions {
        crate::ai::analysis::AnalysisOptions {
            max_running: self.max_analyses.max(1),
            max_per_client: self.max_analyses_per_client,
            nodes_per_ply: self.analysis_nodes.max(1),
        }
    }

    /// The WebSocket timers, each at least a millisecond.
    pub fn ws_ping_interval(&self) -> Duration {
        Duration::from_millis(self.ws_ping_interval_ms.max(1))
    }

    pub fn ws_pong_timeout(&self) -> Duration {
        Duration::from_millis(self.ws_pong_timeout_ms.max(1))
    }

    pub fn ws_write_timeout(&self) -> Duration {
        Duration::from_millis(self.ws_write_timeout_ms.max(1))
    }

    pub fn store_options(&self) -> crate::store::StoreOptions {
        crate::store::StoreOptions {
            max_batch: self.max_write_batch.max(1),
            busy_timeout: Duration::from_millis(self.db_busy_timeout_ms),
        }
    }

    pub fn registry_options(&self) -> crate::live::RegistryOptions {
        crate::live::RegistryOptions {
            deadline: Duration::from_millis(self.game_deadline_ms.max(1)),
            waiting_expiry: Duration::from_secs(self.waiting_expiry_secs),
            idle_expiry: Duration::from_secs(self.idle_game_secs),
            unload_after: Duration::from_millis(self.unload_after_ms),
            timing: crate::live::game::Timing {
                first_move: Duration::from_millis(self.first_move_ms.max(1)),
                seek_grace: Duration::from_millis(self.seek_grace_ms),
            },
        }
    }

    /// The base of absolute links: `--public-url` without a trailing
    /// slash, or empty (links relative to the server).
    pub fn public_base(&self) -> String {
        self.public_url
            .as_deref()
            .map(|url| url.trim().trim_end_matches('/').to_string())
            .unwrap_or_default()
    }

    /// Whether the session cookie is `Secure`.
    pub fn secure_cookies(&self) -> bool {
        self.secure_cookies || self.tls_cert.is_some()
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_millis(self.shutdown_grace_ms)
    }

    /// The global cap on live AI v AI games: by default two per core, so
    /// the shows keep every core busy without a queue that grows.
    pub fn max_ai_games(&self) -> usize {
        self.max_ai_games
            .unwrap_or_else(|| 2 * std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    pub fn header_timeout(&self) -> Duration {
        Duration::from_millis(self.header_timeout_ms.max(1))
    }

    pub fn keepalive_idle(&self) -> Duration {
        Duration::from_millis(self.keepalive_idle_ms.max(1))
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms.max(1))
    }

    pub fn trusted(&self) -> TrustedProxies {
        TrustedProxies::new(self.trusted_proxies.clone())
    }

    /// Whether this node shares its games with other nodes: NATS for the
    /// messages and PostgreSQL for the state (SQLite is one machine's file).
    pub fn clustered(&self) -> bool {
        self.nats.is_some()
            && (self.database.starts_with("postgres://")
                || self.database.starts_with("postgresql://"))
    }

    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.lease_ms.max(500))
    }

    pub fn ai_job_grace(&self) -> Duration {
        Duration::from_millis(self.ai_job_grace_ms)
    }

    pub fn ai_move_delay(&self) -> Duration {
        Duration::from_millis(self.ai_move_delay_ms)
    }

    /// How the search threads give way to the runtime's threads.
    pub fn search_priority(&self) -> crate::ai::SearchPriority {
        if self.ai_idle {
            crate::ai::SearchPriority::Idle
        } else {
            crate::ai::SearchPriority::Nice(self.ai_nice)
        }
    }

    pub fn ai_threads(&self) -> usize {
        self.ai_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1)
    }

    pub fn http_rate(&self) -> RateLimit {
        RateLimit {
            per_second: self.rate_limit,
            burst: self.rate_burst,
        }
    }

    /// HTTP and WebSocket have their own numbers. A scripted client (a
    /// bot, a test suite) sends many cheap requests back to back over one
    /// keep-alive connection while playing normally, so the HTTP bucket is
    /// generous: a flood is hundreds of requests in a moment, which it
    /// still stops. A WebSocket carries a player's own actions only (states
    /// come from the server), a few per move at most, so its bucket is
    /// tighter.
    pub fn ws_rate(&self) -> RateLimit {
        RateLimit {
            per_second: self.ws_rate_limit,
            burst: self.ws_rate_burst,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse() {
        let config = Config::try_parse_from([
            "rookery-server",
            "--addr",
            "0.0.0.0:0",
            "--database",
            "/tmp/x.db",
            "--ai-move-delay-ms",
            "5",
            "--rate-burst",
            "7",
            "--ws-rate-burst",
            "3",
        ])
        .unwrap();
        assert_eq!(config.addr, "0.0.0.0:0");
        assert_eq!(config.database, "/tmp/x.db");
        assert_eq!(config.ai_move_delay(), Duration::from_millis(5));
        assert_eq!(config.http_rate().burst, 7);
        assert_eq!(config.ws_rate().burst, 3);
        assert_eq!(config.ws_rate().per_second, 20.0);
        assert!(config.ai_threads() >= 1);
        assert!(Config::try_parse_from(["rookery-server", "--ai-move-delay-ms", "soon"]).is_err());
        assert_eq!(config.ai_nice, crate::ai::DEFAULT_NICE);
        let nice = Config::try_parse_from(["rookery-server", "--ai-nice", "19"]).unwrap();
        assert_eq!(nice.ai_nice, 19);
        for bad in ["-5", "20", "low"] {
            assert!(Config::try_parse_from(["rookery-server", "--ai-nice", bad]).is_err());
        }
        assert_eq!(nice.search_priority(), crate::ai::SearchPriority::Nice(19));
        let idle = Config::try_parse_from(["rookery-server", "--ai-idle"]).unwrap();
        assert_eq!(idle.search_priority(), crate::ai::SearchPriority::Idle);
    }

    #[test]
    fn limit_flags_parse() {
        let config = Config::try_parse_from([
            "rookery-server",
            "--max-ai-games",
            "3",
            "--admin-token",
            "0123456789abcdef0123",
            "--trusted-proxy",
            "10.0.0.0/8",
            "--trusted-proxy",
            "::1",
            "--allowed-origin",
            "https://chess.example.org",
            "--header-timeout-ms",
            "250",
            "--keepalive-idle-ms",
            "750",
        ])
        .unwrap();
        assert_eq!(config.max_ai_games(), 3);
        assert_eq!(config.trusted_proxies.len(), 2);
        assert_eq!(config.allowed_origins.len(), 1);
        assert_eq!(config.header_timeout(), Duration::from_millis(250));
        assert_eq!(config.keepalive_idle(), Duration::from_millis(750));
        assert!(!format!("{config:?}").contains("0123456789abcdef0123"));
        for bad in [
            ["--trusted-proxy", "10.0.0.0/33"],
            ["--trusted-proxy", "example.org"],
            ["--allowed-origin", "chess.example.org"],
            ["--admin-token", "short"],
        ] {
            let args = ["rookery-server", bad[0], bad[1]];
            assert!(Config::try_parse_from(args).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn defaults_match_the_flags_defaults() {
        let variables = [
            "ROOKERY_ADDR",
            "DATABASE_URL",
            "ROOKERY_WEB_DIR",
            "ROOKERY_ROLE",
            "ROOKERY_NATS",
            "ROOKERY_AI_REMOTE_SLOTS",
            "ROOKERY_AI_JOB_GRACE_MS",
            "ROOKERY_AI_MOVE_DELAY_MS",
            "ROOKERY_AI_THREADS",
            "ROOKERY_RATE_LIMIT",
            "ROOKERY_RATE_BURST",
            "ROOKERY_WS_RATE_LIMIT",
            "ROOKERY_WS_RATE_BURST",
            "ROOKERY_MAX_BODY_BYTES",
            "ROOKERY_MAX_WS_MESSAGE_BYTES",
            "ROOKERY_WS_PING_INTERVAL_MS",
            "ROOKERY_WS_PONG_TIMEOUT_MS",
            "ROOKERY_WS_WRITE_TIMEOUT_MS",
            "ROOKERY_WS_MAX_LAG",
            "ROOKERY_MAX_WRITE_BATCH",
            "ROOKERY_DB_BUSY_TIMEOUT_MS",
            "ROOKERY_GAME_DEADLINE_MS",
            "ROOKERY_WAITING_EXPIRY_SECS",
            "ROOKERY_IDLE_GAME_SECS",
            "ROOKERY_SHUTDOWN_GRACE_MS",
            "ROOKERY_MAX_AI_GAMES",
            "ROOKERY_MAX_AI_GAMES_PER_CLIENT",
            "ROOKERY_ADMIN_TOKEN",
            "ROOKERY_MAX_CONNECTIONS",
            "ROOKERY_MAX_CONNECTIONS_PER_IP",
            "ROOKERY_HEADER_TIMEOUT_MS",
            "ROOKERY_KEEPALIVE_IDLE_MS",
            "ROOKERY_REQUEST_TIMEOUT_MS",
            "ROOKERY_TRUSTED_PROXIES",
            "ROOKERY_ALLOWED_ORIGINS",
            "ROOKERY_MAX_ANALYSES",
            "ROOKERY_MAX_ANALYSES_PER_CLIENT",
            "ROOKERY_ANALYSIS_NODES",
        ];
        if variables.iter().any(|v| std::env::var_os(v).is_some()) {
            return; // the environment chose other values on purpose
        }
        let parsed = Config::try_parse_from(["rookery-server"]).unwrap();
        assert_eq!(format!("{parsed:?}"), format!("{:?}", Config::defaults()));
    }
}

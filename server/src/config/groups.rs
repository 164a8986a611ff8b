//! The server's flags by concern, each group a clap `Args` struct that
//! `Config` flattens and `--help` shows under its own heading: HTTP limits,
//! WebSocket, AI, games, storage, cluster, public address and TLS,
//! operations. Each group's `Default` is its flags' defaults (see
//! `Config::defaults`); the accessors that turn flags into durations and
//! options are on `Config`.

use std::path::PathBuf;

use super::values::{AllowedOrigin, ProxyRange};

/// Limits a client cannot escape at the HTTP edge (issue 8): connections,
/// timeouts, body size, request rates, trusted proxies and origins.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "HTTP limits")]
pub struct HttpFlags {
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

    /// Largest request body, in bytes.
    #[arg(long, env = "ROOKERY_MAX_BODY_BYTES", default_value_t = 16 * 1024)]
    pub max_body_bytes: usize,

    /// The kernel's send buffer of each connection (SO_SNDBUF), in bytes:
    /// bounds what a client that stops reading can hold in the server's
    /// memory. 0 leaves the kernel's own size and autotuning.
    #[arg(long, env = "ROOKERY_SEND_BUFFER_BYTES", default_value_t = 0)]
    pub send_buffer_bytes: usize,

    /// HTTP requests per second each client address may make, sustained
    /// (all its connections together; behind `--trusted-proxy`, the
    /// forwarded address).
    #[arg(long, env = "ROOKERY_RATE_LIMIT", default_value_t = 50.0)]
    pub rate_limit: f64,

    /// HTTP requests a client address may make in a burst.
    #[arg(long, env = "ROOKERY_RATE_BURST", default_value_t = 200)]
    pub rate_burst: u32,

    /// Accounts each client address may create per hour, sustained
    /// (`POST /api/accounts`; a flooder's free accounts).
    #[arg(long, env = "ROOKERY_SIGNUPS_PER_HOUR", default_value_t = 20.0)]
    pub signups_per_hour: f64,

    /// Accounts a client address may create in a burst.
    #[arg(long, env = "ROOKERY_SIGNUP_BURST", default_value_t = 20)]
    pub signup_burst: u32,

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
}

impl Default for HttpFlags {
    fn default() -> HttpFlags {
        HttpFlags {
            max_connections: 4096,
            max_connections_per_ip: 64,
            header_timeout_ms: 10_000,
            keepalive_idle_ms: 10_000,
            request_timeout_ms: 30_000,
            max_body_bytes: 16 * 1024,
            send_buffer_bytes: 0,
            rate_limit: 50.0,
            rate_burst: 200,
            signups_per_hour: 20.0,
            signup_burst: 20,
            trusted_proxies: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// WebSockets: message size and rate, ping/pong and write timers, lag.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "WebSocket")]
pub struct WsFlags {
    /// Largest WebSocket message a client may send, in bytes.
    #[arg(long, env = "ROOKERY_MAX_WS_MESSAGE_BYTES", default_value_t = 4 * 1024)]
    pub max_ws_message_bytes: usize,

    /// WebSocket messages per second each client address may send,
    /// sustained (all its sockets together).
    #[arg(long, env = "ROOKERY_WS_RATE_LIMIT", default_value_t = 20.0)]
    pub ws_rate_limit: f64,

    /// WebSocket messages a client address may send in a burst.
    #[arg(long, env = "ROOKERY_WS_RATE_BURST", default_value_t = 60)]
    pub ws_rate_burst: u32,

    /// How often the server pings each WebSocket, in milliseconds.
    #[arg(long, env = "ROOKERY_WS_PING_INTERVAL_MS", default_value_t = 30_000)]
    pub ws_ping_interval_ms: u64,

    /// A WebSocket that has not answered a ping with a pong this long after
    /// it was sent is closed (4000), in milliseconds.
    #[arg(long, env = "ROOKERY_WS_PONG_TIMEOUT_MS", default_value_t = 20_000)]
    pub ws_pong_timeout_ms: u64,

    /// A WebSocket frame, or a part of an HTTP response (an NDJSON
    /// stream's line), the client does not take within this many
    /// milliseconds ends the connection.
    #[arg(long, env = "ROOKERY_WS_WRITE_TIMEOUT_MS", default_value_t = 10_000)]
    pub ws_write_timeout_ms: u64,

    /// Messages a WebSocket may fall behind its game before it is closed
    /// (4008; the client reconnects for a fresh state).
    #[arg(long, env = "ROOKERY_WS_MAX_LAG", default_value_t = crate::live::DEFAULT_MAX_LAG)]
    pub ws_max_lag: usize,
}

impl Default for WsFlags {
    fn default() -> WsFlags {
        WsFlags {
            max_ws_message_bytes: 4 * 1024,
            ws_rate_limit: 20.0,
            ws_rate_burst: 60,
            ws_ping_interval_ms: 30_000,
            ws_pong_timeout_ms: 20_000,
            ws_write_timeout_ms: 10_000,
            ws_max_lag: crate::live::DEFAULT_MAX_LAG,
        }
    }
}

/// The AI: search threads and their priority, the pace and caps of AI v AI
/// games, and post-game analysis (issue 11).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "AI and analysis")]
pub struct AiFlags {
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

    /// Minimum time between two moves of an AI v AI game, in milliseconds,
    /// so that a person can follow it.
    #[arg(long, env = "ROOKERY_AI_MOVE_DELAY_MS", default_value_t = 1000)]
    pub ai_move_delay_ms: u64,

    /// Live AI v AI games at once, server-wide (default: two per core).
    #[arg(long, env = "ROOKERY_MAX_AI_GAMES")]
    pub max_ai_games: Option<usize>,

    /// Live AI v AI games one client (IP address) may have at once.
    #[arg(long, env = "ROOKERY_MAX_AI_GAMES_PER_CLIENT", default_value_t = 2)]
    pub max_ai_games_per_client: usize,

    /// Searches of games with a human seat one client (IP address) is owed
    /// at once: beyond it, its searches wait behind every other client's
    /// and give up their thread to a client holding fewer.
    #[arg(long, env = "ROOKERY_MAX_AI_SEARCHES_PER_CLIENT",
          default_value_t = crate::ai::DEFAULT_MAX_SEARCHES_PER_CLIENT,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_ai_searches_per_client: usize,

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

    /// The analysis board's evaluations (`POST /api/analysis`) one client
    /// (IP address) may ask for per minute, in bursts of up to ten.
    #[arg(long, env = "ROOKERY_BOARD_ANALYSES_PER_MINUTE", default_value_t = 60,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub board_analyses_per_minute: u32,
}

impl Default for AiFlags {
    fn default() -> AiFlags {
        AiFlags {
            ai_threads: None,
            ai_nice: crate::ai::DEFAULT_NICE,
            ai_idle: false,
            ai_move_delay_ms: 1000,
            max_ai_games: None,
            max_ai_games_per_client: 2,
            max_ai_searches_per_client: crate::ai::DEFAULT_MAX_SEARCHES_PER_CLIENT,
            max_analyses: 1,
            max_analyses_per_client: 2,
            analysis_nodes: 200_000,
            board_analyses_per_minute: 60,
        }
    }
}

/// Live games: the request deadline, the first-move, seek, waiting and
/// idle timers, unloading from memory, the cap on waiting games and how
/// long finished games are kept.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Games")]
pub struct GameFlags {
    /// The longest a request waits for a game's answer before 503
    /// `unavailable`, in milliseconds.
    #[arg(long, env = "ROOKERY_GAME_DEADLINE_MS", default_value_t = 10_000)]
    pub game_deadline_ms: u64,

    /// A waiting game nobody joined is aborted after this many seconds.
    #[arg(long, env = "ROOKERY_WAITING_EXPIRY_SECS", default_value_t = 86_400)]
    pub waiting_expiry_secs: u64,

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

    /// Games waiting for an opponent (open seeks and invitations) one
    /// client (IP address) may have at once; beyond it creating another is
    /// 429 `rate_limited`.
    #[arg(
        long,
        env = "ROOKERY_MAX_WAITING_GAMES_PER_CLIENT",
        default_value_t = 200
    )]
    pub max_waiting_games_per_client: usize,

    /// An aborted game in which at most one move was played is deleted
    /// this many seconds after it ended (0 keeps them).
    #[arg(
        long,
        env = "ROOKERY_ABORTED_GAME_RETENTION_SECS",
        default_value_t = 86_400
    )]
    pub aborted_game_retention_secs: u64,

    /// A finished game with no registered player is deleted this many
    /// seconds after it ended (0, the default, keeps them).
    #[arg(
        long,
        env = "ROOKERY_ANONYMOUS_GAME_RETENTION_SECS",
        default_value_t = 0
    )]
    pub anonymous_game_retention_secs: u64,
}

impl Default for GameFlags {
    fn default() -> GameFlags {
        GameFlags {
            game_deadline_ms: 10_000,
            waiting_expiry_secs: 86_400,
            first_move_ms: 30_000,
            seek_grace_ms: 10_000,
            idle_game_secs: 604_800,
            unload_after_ms: 60_000,
            max_waiting_games_per_client: 200,
            aborted_game_retention_secs: 86_400,
            anonymous_game_retention_secs: 0,
        }
    }
}

/// The database and how its writes are committed.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Storage")]
pub struct StorageFlags {
    /// Database: a SQLite URL or path (created if missing), or a PostgreSQL
    /// URL `postgres://user:password@host:port/database` (the database must
    /// exist; its tables are created).
    #[arg(
        long = "database",
        env = "DATABASE_URL",
        default_value = "sqlite://rookery.db"
    )]
    pub database: String,

    /// Most database writes committed in one transaction (group commit);
    /// 1 commits each write alone.
    #[arg(long, env = "ROOKERY_MAX_WRITE_BATCH", default_value_t = 256)]
    pub max_write_batch: usize,

    /// How long a write waits for a database locked by another process
    /// before the request fails with 503 `unavailable`, in milliseconds.
    #[arg(long, env = "ROOKERY_DB_BUSY_TIMEOUT_MS", default_value_t = 5000)]
    pub db_busy_timeout_ms: u64,
}

impl Default for StorageFlags {
    fn default() -> StorageFlags {
        StorageFlags {
            database: "sqlite://rookery.db".into(),
            max_write_batch: 256,
            db_busy_timeout_ms: 5000,
        }
    }
}

/// NATS (issue 13): AI searches sent to workers and, on PostgreSQL, games
/// shared between nodes under leases (issue 23).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Cluster")]
pub struct ClusterFlags {
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
}

impl Default for ClusterFlags {
    fn default() -> ClusterFlags {
        ClusterFlags {
            nats: None,
            ai_remote_slots: 64,
            ai_job_grace_ms: 2_000,
            lease_ms: 4_000,
        }
    }
}

/// How people reach the server: its public address, TLS served by the
/// server itself, and the session cookie's `Secure` mark.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Public address and TLS")]
pub struct SiteFlags {
    /// The address people reach this server at (`https://chess.example.org`),
    /// for links the server writes (lichess's `url` fields, PGN `Site`).
    /// Default: none, links are relative to the server.
    #[arg(long, env = "ROOKERY_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Serve HTTPS (and WSS) with this PEM certificate chain, for a server
    /// run without a TLS proxy in front (needs `--tls-key`).
    #[arg(long, env = "ROOKERY_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of `--tls-cert`.
    #[arg(long, env = "ROOKERY_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Marks the session cookie `Secure` (sent over HTTPS only). Set it when
    /// the server is reached over HTTPS through a proxy; a server serving
    /// TLS itself sets it anyway.
    #[arg(long, env = "ROOKERY_SECURE_COOKIES")]
    pub secure_cookies: bool,
}

/// Mail (issue 36): the SMTP server that carries e-mail verification and
/// password-reset links. Without `--smtp-host` the server sends no mail and
/// says so where a form would.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Mail")]
pub struct MailFlags {
    /// The SMTP server's host name (needs `--smtp-from` and `--public-url`,
    /// the base of the links). Default: none, no mail is sent.
    #[arg(long, env = "ROOKERY_SMTP_HOST", requires = "smtp_from")]
    pub smtp_host: Option<String>,

    /// The SMTP server's port. Default: 25 with `--smtp-tls none`, 587 with
    /// `starttls`, 465 with `tls`.
    #[arg(long, env = "ROOKERY_SMTP_PORT")]
    pub smtp_port: Option<u16>,

    /// How the connection is secured: `starttls` (the default: a plain
    /// connection upgraded to TLS, required), `tls` (TLS from the first
    /// byte) or `none` (plain; for a relay on this host or network).
    #[arg(long, env = "ROOKERY_SMTP_TLS", value_enum)]
    pub smtp_tls: Option<crate::mail::SmtpTls>,

    /// The user name for SMTP AUTH (needs `--smtp-password`).
    #[arg(long, env = "ROOKERY_SMTP_USER", requires = "smtp_password")]
    pub smtp_user: Option<String>,

    /// The password for SMTP AUTH (prefer the environment variable: a
    /// flag shows in the process list).
    #[arg(
        long,
        env = "ROOKERY_SMTP_PASSWORD",
        requires = "smtp_user",
        hide_env_values = true
    )]
    pub smtp_password: Option<String>,

    /// The letters' `From:` address (`Rookery <chess@example.org>`).
    #[arg(long, env = "ROOKERY_SMTP_FROM")]
    pub smtp_from: Option<String>,
}

/// Operations: the log's format, the metrics address and the operator's
/// token.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Operations")]
pub struct OpsFlags {
    /// Log lines as text (for people) or JSON (one object a line, for log
    /// collectors). Secrets are redacted in both.
    #[arg(long, env = "ROOKERY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Also serve `GET /metrics` (Prometheus's text format) on this
    /// address, with no token: for a scraper on a private network. The
    /// main listener serves it too, behind `--admin-token` when one is set.
    #[arg(long, env = "ROOKERY_METRICS_ADDR")]
    pub metrics_addr: Option<String>,

    /// Secret that allows operator actions (`DELETE /api/games/{id}`);
    /// without it they are refused.
    #[arg(long, env = "ROOKERY_ADMIN_TOKEN")]
    pub admin_token: Option<AdminToken>,

    /// A file of words kept out of game chat, one a line (`#` starts a
    /// comment): each, whole and in any case, is shown as asterisks.
    #[arg(long, env = "ROOKERY_CHAT_FILTER", value_name = "FILE")]
    pub chat_filter: Option<PathBuf>,
}

/// The log's format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
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

/// Quick pairing (pools) and Arena tournaments (issue 38).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Quick pairing and tournaments")]
pub struct PlayFlags {
    /// Time between the pools' pairing waves.
    #[arg(long, env = "ROOKERY_POOL_WAVE_MS", default_value_t = 1_000)]
    pub pool_wave_ms: u64,

    /// How long a pool keeps the place of a connection that dropped (a
    /// reload resumes it within this time).
    #[arg(long, env = "ROOKERY_POOL_GRACE_MS", default_value_t = 3_000)]
    pub pool_grace_ms: u64,

    /// Time between an arena director's waves when nothing wakes it (a
    /// game's end or a join wakes it at once).
    #[arg(long, env = "ROOKERY_ARENA_WAVE_MS", default_value_t = 1_000)]
    pub arena_wave_ms: u64,

    /// How long an arena director's lease runs without renewal (another
    /// node may direct the arena after it).
    #[arg(long, env = "ROOKERY_ARENA_LEASE_MS", default_value_t = 10_000)]
    pub arena_lease_ms: u64,

    /// Names of the accounts that may create arenas, comma-separated.
    /// Default: empty, every account may.
    #[arg(long, env = "ROOKERY_ARENA_CREATORS", value_delimiter = ',')]
    pub arena_creators: Vec<String>,
}

impl Default for PlayFlags {
    fn default() -> PlayFlags {
        PlayFlags {
            pool_wave_ms: 1_000,
            pool_grace_ms: 3_000,
            arena_wave_ms: 1_000,
            arena_lease_ms: 10_000,
            arena_creators: Vec::new(),
        }
    }
}

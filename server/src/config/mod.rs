//! Configuration: command-line flags, each with an environment variable as
//! fallback (flags win), and defaults that run a local server. `Config`
//! holds the process's own flags (address, web client, role, shutdown) and
//! the subcommands (`backup`, `worker`, `admin`); the rest come in groups by concern
//! (`groups.rs`), each under its own heading in `--help`. The accessors
//! here turn flags into the durations and options the rest of the server
//! takes.

mod groups;
pub mod values;

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use self::values::RateLimit;

pub use groups::{
    AdminToken, AiFlags, ClusterFlags, GameFlags, HttpFlags, LogFormat, MailFlags, OpsFlags,
    PlayFlags, SiteFlags, StorageFlags, WsFlags,
};

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

    /// Directory of the web client served at `/`.
    #[arg(long, env = "ROOKERY_WEB_DIR", default_value = DEFAULT_WEB_DIR)]
    pub web_dir: PathBuf,

    /// What this process is: `server` (the HTTP/WebSocket service) or
    /// `worker` (an AI worker taking search jobs from NATS; needs `--nats`).
    #[arg(long, env = "ROOKERY_ROLE", value_enum, default_value_t = Role::Server)]
    pub role: Role,

    /// After SIGTERM, connections still open after this many milliseconds
    /// are dropped and the process exits.
    #[arg(long, env = "ROOKERY_SHUTDOWN_GRACE_MS", default_value_t = 5_000)]
    pub shutdown_grace_ms: u64,

    /// Instead of serving: a one-off task (`backup`) or an AI worker
    /// (`worker`).
    #[command(subcommand)]
    pub command: Option<Task>,

    #[command(flatten)]
    pub http: HttpFlags,

    #[command(flatten)]
    pub ws: WsFlags,

    #[command(flatten)]
    pub ai: AiFlags,

    #[command(flatten)]
    pub games: GameFlags,

    #[command(flatten)]
    pub storage: StorageFlags,

    #[command(flatten)]
    pub cluster: ClusterFlags,

    #[command(flatten)]
    pub site: SiteFlags,

    #[command(flatten)]
    pub mail: MailFlags,

    #[command(flatten)]
    pub ops: OpsFlags,

    #[command(flatten)]
    pub play: PlayFlags,
}

/// What `rookery-server` runs instead of serving.
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
    /// Runs an AI worker: takes search jobs from NATS and serves nothing
    /// else (the same as `--role worker`).
    Worker(WorkerArgs),
    /// The operator's account tasks: `admin grant NAME moderator`, `admin
    /// revoke NAME moderator` (written in the moderators' audit log as the
    /// operator's), `admin reset-password NAME` (prints a new password and
    /// ends every session of the account: for a server that sends no mail).
    Admin {
        #[command(subcommand)]
        action: AdminAction,
        /// The database (default: the top-level `--database`).
        #[arg(long = "database", global = true)]
        database: Option<String>,
    },
}

/// What `rookery-server admin` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum AdminAction {
    /// Grants a role: `admin grant NAME moderator`.
    Grant {
        /// The account's name.
        name: String,
        /// The role: `moderator`.
        #[arg(value_enum)]
        role: AccountRole,
    },
    /// Revokes a role: `admin revoke NAME moderator`.
    Revoke {
        /// The account's name.
        name: String,
        /// The role: `moderator`.
        #[arg(value_enum)]
        role: AccountRole,
    },
    /// Sets a new random password for the account and prints it; every
    /// session of the account ends (its API tokens stay).
    ResetPassword {
        /// The account's name.
        name: String,
    },
}

/// A role an account may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AccountRole {
    /// Sees the reports' queue and the audit log, and acts on players.
    Moderator,
}

/// The flags of `rookery-server worker`, with the server's environment
/// variables.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkerArgs {
    /// NATS server URL (`nats://host:4222`) to take search jobs from.
    #[arg(long, env = "ROOKERY_NATS", value_name = "URL")]
    pub nats: String,

    /// Searches that may run at once (default: the top-level
    /// `--ai-threads`, else the number of cores).
    #[arg(long, env = "ROOKERY_AI_THREADS")]
    pub ai_threads: Option<usize>,
}

/// What a `rookery-server` process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// The service: HTTP, WebSocket, games, database.
    Server,
    /// An AI worker: searches jobs from NATS, serves nothing else.
    Worker,
}

/// An AI worker to run, from `worker` or `--role worker`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    /// The NATS server's URL.
    pub nats: String,
    /// Searches at once (at least 1).
    pub threads: usize,
}

impl Config {
    /// The pools' settings (issue 38).
    pub fn pool_options(&self) -> crate::pools::PoolOptions {
        crate::pools::PoolOptions {
            wave: Duration::from_millis(self.play.pool_wave_ms.max(10)),
            grace: Duration::from_millis(self.play.pool_grace_ms),
        }
    }

    /// The arena director's settings (issue 38).
    pub fn arena_options(&self) -> crate::tournaments::arena::ArenaOptions {
        crate::tournaments::arena::ArenaOptions {
            wave: Duration::from_millis(self.play.arena_wave_ms.max(10)),
            lease: Duration::from_millis(self.play.arena_lease_ms.max(1_000)),
        }
    }

    /// Whether the account `name` may create arenas (`--arena-creators`).
    pub fn may_create_arenas(&self, name: &str) -> bool {
        let creators = &self.play.arena_creators;
        creators.iter().all(|c| c.trim().is_empty())
            || creators.iter().any(|c| c.trim().eq_ignore_ascii_case(name))
    }

    /// The defaults, as if no flag and no environment variable were given
    /// (for tests and embedding).
    pub fn defaults() -> Config {
        Config {
            addr: "127.0.0.1:8080".into(),
            web_dir: PathBuf::from(DEFAULT_WEB_DIR),
            role: Role::Server,
            shutdown_grace_ms: 5_000,
            command: None,
            http: HttpFlags::default(),
            ws: WsFlags::default(),
            ai: AiFlags::default(),
            games: GameFlags::default(),
            storage: StorageFlags::default(),
            cluster: ClusterFlags::default(),
            site: SiteFlags::default(),
            mail: MailFlags::default(),
            ops: OpsFlags::default(),
            play: PlayFlags::default(),
        }
    }

    /// The AI worker this process runs instead of serving, if it is one:
    /// `worker` with its own flags (`--ai-threads` falls back to the
    /// top-level one), or `--role worker` (`ROOKERY_ROLE=worker`) with the
    /// top-level `--nats`, which it then needs.
    pub fn worker(&self) -> anyhow::Result<Option<Worker>> {
        let (nats, threads) = match &self.command {
            Some(Task::Worker(args)) => (args.nats.clone(), args.ai_threads.or(self.ai.ai_threads)),
            _ if self.role == Role::Worker => {
                let Some(nats) = &self.cluster.nats else {
                    anyhow::bail!("a worker needs --nats URL (or ROOKERY_NATS)");
                };
                (nats.clone(), self.ai.ai_threads)
            }
            _ => return Ok(None),
        };
        Ok(Some(Worker {
            nats,
            threads: threads_or_cores(threads),
        }))
    }

    pub fn analysis_options(&self) -> crate::ai::analysis::AnalysisOptions {
        crate::ai::analysis::AnalysisOptions {
            max_running: self.ai.max_analyses.max(1),
            max_per_client: self.ai.max_analyses_per_client,
            nodes_per_ply: self.ai.analysis_nodes.max(1),
        }
    }

    /// The WebSocket timers, each at least a millisecond.
    pub fn ws_ping_interval(&self) -> Duration {
        Duration::from_millis(self.ws.ws_ping_interval_ms.max(1))
    }

    pub fn ws_pong_timeout(&self) -> Duration {
        Duration::from_millis(self.ws.ws_pong_timeout_ms.max(1))
    }

    pub fn ws_write_timeout(&self) -> Duration {
        Duration::from_millis(self.ws.ws_write_timeout_ms.max(1))
    }

    pub fn store_options(&self) -> crate::store::StoreOptions {
        crate::store::StoreOptions {
            max_batch: self.storage.max_write_batch.max(1),
            busy_timeout: Duration::from_millis(self.storage.db_busy_timeout_ms),
        }
    }

    pub fn registry_options(&self) -> crate::live::RegistryOptions {
        let games = &self.games;
        let retention = |secs: u64| (secs > 0).then(|| Duration::from_secs(secs));
        crate::live::RegistryOptions {
            deadline: Duration::from_millis(games.game_deadline_ms.max(1)),
            waiting_expiry: Duration::from_secs(games.waiting_expiry_secs),
            idle_expiry: Duration::from_secs(games.idle_game_secs),
            unload_after: Duration::from_millis(games.unload_after_ms),
            aborted_retention: retention(games.aborted_game_retention_secs),
            anonymous_retention: retention(games.anonymous_game_retention_secs),
            timing: crate::live::game::Timing {
                first_move: Duration::from_millis(games.first_move_ms.max(1)),
                seek_grace: Duration::from_millis(games.seek_grace_ms),
            },
        }
    }

    /// The base of absolute links: `--public-url` without a trailing
    /// slash, or empty (links relative to the server).
    pub fn public_base(&self) -> String {
        self.site
            .public_url
            .as_deref()
            .map(|url| url.trim().trim_end_matches('/').to_string())
            .unwrap_or_default()
    }

    /// The SMTP settings of `--smtp-host` and the rest, or `None` without
    /// `--smtp-host`. Links in letters must work from a mailbox, so mail
    /// needs `--public-url`.
    pub fn mail_settings(&self) -> anyhow::Result<Option<crate::mail::MailSettings>> {
        use crate::mail::SmtpTls;
        let Some(host) = &self.mail.smtp_host else {
            return Ok(None);
        };
        let public_base = self.public_base();
        if public_base.is_empty() {
            anyhow::bail!("--smtp-host needs --public-url: the links in the letters are absolute");
        }
        let tls = self.mail.smtp_tls.unwrap_or(SmtpTls::Starttls);
        let port = self.mail.smtp_port.unwrap_or(match tls {
            SmtpTls::None => 25,
            SmtpTls::Starttls => 587,
            SmtpTls::Tls => 465,
        });
        Ok(Some(crate::mail::MailSettings {
            host: host.clone(),
            port,
            tls,
            credentials: self
                .mail
                .smtp_user
                .clone()
                .zip(self.mail.smtp_password.clone()),
            from: self.mail.smtp_from.clone().unwrap_or_default(),
            public_base,
        }))
    }

    /// Whether the session cookie is `Secure`.
    pub fn secure_cookies(&self) -> bool {
        self.site.secure_cookies || self.site.tls_cert.is_some()
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_millis(self.shutdown_grace_ms)
    }

    /// The global cap on live AI v AI games: by default two per core, so
    /// the shows keep every core busy without a queue that grows.
    pub fn max_ai_games(&self) -> usize {
        self.ai
            .max_ai_games
            .unwrap_or_else(|| 2 * std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    pub fn header_timeout(&self) -> Duration {
        Duration::from_millis(self.http.header_timeout_ms.max(1))
    }

    pub fn keepalive_idle(&self) -> Duration {
        Duration::from_millis(self.http.keepalive_idle_ms.max(1))
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.http.request_timeout_ms.max(1))
    }

    /// Whether this node shares its games with other nodes: NATS for the
    /// messages and PostgreSQL for the state (SQLite is one machine's file).
    pub fn clustered(&self) -> bool {
        let database = &self.storage.database;
        self.cluster.nats.is_some()
            && (database.starts_with("postgres://") || database.starts_with("postgresql://"))
    }

    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.cluster.lease_ms.max(500))
    }

    pub fn ai_job_grace(&self) -> Duration {
        Duration::from_millis(self.cluster.ai_job_grace_ms)
    }

    pub fn ai_move_delay(&self) -> Duration {
        Duration::from_millis(self.ai.ai_move_delay_ms)
    }

    /// How the search threads give way to the runtime's threads.
    pub fn search_priority(&self) -> crate::ai::SearchPriority {
        if self.ai.ai_idle {
            crate::ai::SearchPriority::Idle
        } else {
            crate::ai::SearchPriority::Nice(self.ai.ai_nice)
        }
    }

    pub fn ai_threads(&self) -> usize {
        threads_or_cores(self.ai.ai_threads)
    }

    pub fn http_rate(&self) -> RateLimit {
        RateLimit {
            per_second: self.http.rate_limit,
            burst: self.http.rate_burst,
        }
    }

    /// The analysis board's evaluations per client address.
    pub fn board_analysis_rate(&self) -> RateLimit {
        RateLimit {
            per_second: f64::from(self.ai.board_analyses_per_minute) / 60.0,
            burst: self.ai.board_analyses_per_minute.min(10),
        }
    }

    /// Sign-ups per client address.
    pub fn signup_rate(&self) -> RateLimit {
        RateLimit {
            per_second: self.http.signups_per_hour / 3600.0,
            burst: self.http.signup_burst,
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
            per_second: self.ws.ws_rate_limit,
            burst: self.ws.ws_rate_burst,
        }
    }
}

/// Searches at once: `threads`, by default the number of cores; at least 1.
fn threads_or_cores(threads: Option<usize>) -> usize {
    threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
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
        assert_eq!(config.storage.database, "/tmp/x.db");
        assert_eq!(config.ai_move_delay(), Duration::from_millis(5));
        assert_eq!(config.http_rate().burst, 7);
        assert_eq!(config.ws_rate().burst, 3);
        assert_eq!(config.ws_rate().per_second, 20.0);
        assert!(config.ai_threads() >= 1);
        assert!(Config::try_parse_from(["rookery-server", "--ai-move-delay-ms", "soon"]).is_err());
        assert_eq!(config.ai.ai_nice, crate::ai::DEFAULT_NICE);
        let nice = Config::try_parse_from(["rookery-server", "--ai-nice", "19"]).unwrap();
        assert_eq!(nice.ai.ai_nice, 19);
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
        assert_eq!(config.http.trusted_proxies.len(), 2);
        assert_eq!(config.http.allowed_origins.len(), 1);
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
        use clap::CommandFactory;
        let command = Config::command();
        let mut variables = command.get_arguments().filter_map(|arg| arg.get_env());
        if variables.any(|v| std::env::var_os(v).is_some()) {
            return; // the environment chose other values on purpose
        }
        let parsed = Config::try_parse_from(["rookery-server"]).unwrap();
        assert_eq!(format!("{parsed:?}"), format!("{:?}", Config::defaults()));
    }

    #[test]
    fn groups_have_their_headings() {
        use clap::CommandFactory;
        let command = Config::command();
        let heading = |id: &str| {
            let arg = command.get_arguments().find(|arg| arg.get_id() == id);
            arg.unwrap_or_else(|| panic!("{id}")).get_help_heading()
        };
        assert_eq!(heading("addr"), None);
        assert_eq!(heading("role"), None);
        assert_eq!(heading("max_connections"), Some("HTTP limits"));
        assert_eq!(heading("ws_max_lag"), Some("WebSocket"));
        assert_eq!(heading("analysis_nodes"), Some("AI and analysis"));
        assert_eq!(heading("first_move_ms"), Some("Games"));
        assert_eq!(heading("database"), Some("Storage"));
        assert_eq!(heading("lease_ms"), Some("Cluster"));
        assert_eq!(heading("tls_key"), Some("Public address and TLS"));
        assert_eq!(heading("log_format"), Some("Operations"));
    }

    #[test]
    fn a_worker_by_subcommand_or_by_role() {
        if ["ROOKERY_NATS", "ROOKERY_AI_THREADS", "ROOKERY_ROLE"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
        {
            return; // the environment chose other values on purpose
        }
        let worker = |args: &[&str]| {
            let config = Config::try_parse_from(["rookery-server"].iter().chain(args));
            config
                .map_err(|err| err.to_string())?
                .worker()
                .map_err(|err| err.to_string())
        };
        let nats = "nats://127.0.0.1:4222".to_string();
        let expected = |threads| {
            Ok(Some(Worker {
                nats: nats.clone(),
                threads,
            }))
        };
        let args = ["worker", "--nats", &nats, "--ai-threads", "3"];
        assert_eq!(worker(&args), expected(3));
        let args = ["--ai-threads", "2", "worker", "--nats", &nats];
        assert_eq!(worker(&args), expected(2));
        let args = [
            "--ai-threads",
            "2",
            "worker",
            "--nats",
            &nats,
            "--ai-threads",
            "4",
        ];
        assert_eq!(worker(&args), expected(4));
        let args = ["--role", "worker", "--nats", &nats, "--ai-threads", "5"];
        assert_eq!(worker(&args), expected(5));
        assert_eq!(worker(&[]), Ok(None));
        assert_eq!(worker(&["--nats", &nats]), Ok(None));
        let missing = worker(&["worker"]).unwrap_err();
        assert!(missing.contains("--nats <URL>"), "{missing}");
        let missing = worker(&["--role", "worker"]).unwrap_err();
        assert!(missing.contains("a worker needs --nats URL"), "{missing}");
        assert!(worker(&["worker", "--nats", &nats, "--ai-threads", "many"]).is_err());
    }
}

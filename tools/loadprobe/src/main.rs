//! `rookery-load`: a load probe for `rookery-server`, on loopback only.
//!
//! It starts a release `rookery-server` (or targets one already running on
//! a loopback address), then:
//!
//! 1. creates `--games` human v human games over HTTP (and `--ai-games`
//!    AI v AI games that keep the search threads busy);
//! 2. reads the server's RSS, opens 2 player sockets and `--spectators`
//!    spectator sockets per game, waits until every socket has its first
//!    state and the server is idle, and reads the RSS again: the difference
//!    over the number of sockets is the memory per idle socket;
//! 3. plays one move per game every `--move-every-ms` for `--play-seconds`,
//!    each move sent by the player's own WebSocket, and times how long each
//!    move takes to reach each subscriber (the players included), checking
//!    that every subscriber sees every state once and in order;
//! 4. closes the sockets and measures durable moves per second over HTTP
//!    (each answer means the move is committed).
//!
//! Sockets come from several loopback source addresses (127.0.0.2, ...):
//! one source/destination address pair has only ~28k ephemeral ports. The
//! probe raises its own file-descriptor limit to the hard limit.
//!
//! A socket's source port is chosen when it connects, not when it is bound
//! to its source address (`IP_BIND_ADDRESS_NO_PORT`): a port picked at
//! bind time must be free of every socket on that address, TIME_WAIT ones
//! included, and after a run from one address (10,000 closed sockets in
//! TIME_WAIT for a minute) each such bind searched the port range for
//! about 3 ms inside the probe's runtime threads. For the same reason the
//! sockets are closed with a reset (`SO_LINGER` 0) when the run ends: an
//! orderly close from the probe's side would leave them all in TIME_WAIT
//! on the probe's address for a minute, and the ports they hold would be
//! missing from the next run's range (some sockets then fail to open). The
//! moves start only once every socket has its first state, so none is
//! timed during the opening.
//!
//! Timestamps are `CLOCK_MONOTONIC` nanoseconds, so a latency is the time
//! from just before the mover's frame is written to just after a
//! subscriber's frame is parsed.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use rookery_engine::{Game, Position};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

#[derive(Debug, Clone, Parser)]
#[command(
    name = "rookery-load",
    about = "Loopback load probe for rookery-server"
)]
struct Args {
    /// The server binary to start (ignored with --target).
    #[arg(long, default_value = "target/release/rookery-server")]
    server: PathBuf,
    /// Extra argument for the started server (repeatable).
    #[arg(long = "server-arg", allow_hyphen_values = true)]
    server_args: Vec<String>,
    /// Target a running server on a loopback address instead of starting one.
    #[arg(long)]
    target: Option<SocketAddr>,
    /// One node of a cluster, reached on its own (repeatable; with
    /// --target, the balancer in front of them all). Game g is created
    /// through the (g mod N)th, so that node owns it; its players connect
    /// through --target and its spectators through the other nodes, in
    /// turn: every spectator is on a node other than its game's owner.
    #[arg(long = "node-target")]
    node_targets: Vec<SocketAddr>,
    /// Several probes in step (tools/cluster_load.sh): at each step
    /// (`created`: games made, no socket yet; `open`: every socket has its
    /// first state, no move yet; `played`: the moves are over, sockets
    /// still open) the probe writes DIR/STEP.PID and waits for DIR/STEP.go.
    #[arg(long)]
    sync_dir: Option<PathBuf>,
    /// Writes each move's time to every subscriber of its game (ms, one a
    /// line) to PREFIX.every, and each delivery's to PREFIX.one, so that
    /// several probes' figures can be put together.
    #[arg(long)]
    latencies_out: Option<PathBuf>,
    /// The running server's process id, to read its RSS (with --target).
    #[arg(long)]
    pid: Option<u32>,
    /// A process between the probe and the server (a proxy's worker;
    /// repeatable): its CPU during play is reported beside the server's.
    #[arg(long = "proxy-pid")]
    proxy_pids: Vec<u32>,
    /// Human v human games played during the measurement.
    #[arg(long, default_value_t = 1000)]
    games: usize,
    /// Spectator sockets per game (each game also has its 2 player sockets).
    #[arg(long, default_value_t = 10)]
    spectators: usize,
    /// AI v AI games (level 8) searching during the measurement.
    #[arg(long, default_value_t = 0)]
    ai_games: usize,
    /// One move per game this often.
    #[arg(long, default_value_t = 2000)]
    move_every_ms: u64,
    /// How long the games are played.
    #[arg(long, default_value_t = 30)]
    play_seconds: u64,
    /// Loopback source addresses to spread the sockets over (127.0.0.2...).
    #[arg(long, default_value_t = 4)]
    sources: u8,
    /// Sockets being opened at once.
    #[arg(long, default_value_t = 128)]
    connect_concurrency: usize,
    /// Games played back to back over HTTP for the durable moves/s figure
    /// (0 skips it).
    #[arg(long, default_value_t = 64)]
    http_games: usize,
    /// How long the durable moves/s phase runs.
    #[arg(long, default_value_t = 10)]
    http_seconds: u64,
    /// The whole run is abandoned after this long.
    #[arg(long, default_value_t = 900)]
    max_seconds: u64,
    /// Directory for the started server's database (default: a new one in
    /// the temporary directory). A tmpfs here takes the disk's fsync out of
    /// the latency, to measure the WebSocket path alone.
    #[arg(long)]
    db_dir: Option<PathBuf>,
    /// Worker threads of the probe's runtime.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Also print, for each second of play, how many moves were sent and
    /// how long the slowest took to reach every subscriber: a tail that
    /// comes in stalls shows when they happened.
    #[arg(long)]
    timeline: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let limit = raise_fd_limit();
    eprintln!("probe: file-descriptor limit {limit}");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let max = Duration::from_secs(args.max_seconds);
    runtime.block_on(async move {
        match tokio::time::timeout(max, run(args)).await {
            Ok(result) => result,
            Err(_) => bail!("the run took longer than --max-seconds"),
        }
    })
}

/// Raises RLIMIT_NOFILE's soft limit to the hard one; returns the new soft
/// limit.
fn raise_fd_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 0;
        }
        let wanted = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &wanted) == 0 {
            return wanted.rlim_cur;
        }
    }
    limit.rlim_cur
}

/// `CLOCK_MONOTONIC` in nanoseconds.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct we pass.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A started server, stopped with SIGTERM when dropped.
struct Started {
    child: tokio::process::Child,
    dir: PathBuf,
    database: PathBuf,
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: signalling our own child by its id.
            unsafe {
                libc::kill(pid as i32, libc::SIGTERM);
            }
        }
        // Give it the shutdown it promises before removing its files.
        for _ in 0..100 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // Best effort: a leftover temporary file is no failure of the run.
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.database.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn start_server(args: &Args) -> anyhow::Result<(SocketAddr, u32, Started)> {
    let dir = std::env::temp_dir().join(format!("rookery-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).context("creating the probe's directory")?;
    let log = std::fs::File::create(dir.join("server.log")).context("server log")?;
    let database = args
        .db_dir
        .as_ref()
        .unwrap_or(&dir)
        .join(format!("load-{}.db", std::process::id()));
    let mut child = tokio::process::Command::new(&args.server)
        .args(["--addr", "127.0.0.1:0"])
        .arg("--database")
        .arg(&database)
        // The probe is one client with many connections: lift the per-client
        // limits so they are not what is measured.
        .args(["--rate-limit", "100000", "--rate-burst", "100000"])
        .args(["--ws-rate-limit", "1000", "--ws-rate-burst", "1000"])
        .args(["--ai-move-delay-ms", "0"])
        .args(&args.server_args)
        // Likewise the connection, AI v AI and waiting-game caps
        // (environment variables, which a server from before those caps
        // simply ignores).
        .env("ROOKERY_MAX_CONNECTIONS", "1000000")
        .env("ROOKERY_MAX_CONNECTIONS_PER_IP", "1000000")
        .env("ROOKERY_MAX_AI_GAMES", "1000")
        .env("ROOKERY_MAX_AI_GAMES_PER_CLIENT", "1000")
        .env("ROOKERY_MAX_WAITING_GAMES_PER_CLIENT", "1000000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", args.server.display()))?;
    let pid = child.id().context("server pid")?;
    let stdout = child.stdout.take().context("server stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .context("waiting for `listening on`")??
        .context("the server exited before listening")?;
    let addr: SocketAddr = line
        .strip_prefix("listening on http://")
        .context("unexpected first line")?
        .parse()
        .context("listening address")?;
    Ok((
        addr,
        pid,
        Started {
            child,
            dir,
            database,
        },
    ))
}

/// VmRSS of a process in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds a process has used (utime + stime).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (ticks(11).unwrap_or(0.0) + ticks(12).unwrap_or(0.0)) / hz
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A long legal line that never ends the game: the same for every game.
fn opening_line(plies: usize) -> Vec<String> {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    'attempt: loop {
        let mut game = Game::new(Position::startpos());
        let mut line = Vec::with_capacity(plies);
        while line.len() < plies {
            let moves: Vec<_> = game.position().legal_moves().iter().copied().collect();
            // xorshift: any fixed sequence will do.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let start = (seed % moves.len() as u64) as usize;
            let next = (0..moves.len())
                .map(|i| moves[(start + i) % moves.len()])
                .find(|mv| {
                    let mut after = game.clone();
                    after.play(*mv).is_ok() && after.outcome().is_none()
                });
            match next {
                Some(mv) => {
                    line.push(mv.to_uci());
                    if game.play(mv).is_err() {
                        continue 'attempt;
                    }
                }
                None => continue 'attempt,
            }
        }
        return line;
    }
}

struct Seated {
    id: String,
    white: String,
    black: String,
}

async fn post(
    http: &reqwest::Client,
    url: String,
    token: Option<&str>,
    body: Value,
) -> anyhow::Result<Value> {
    let mut request = http.post(url).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await?;
    let status = response.status();
    let value: Value = response.json().await?;
    if !status.is_success() {
        bail!("HTTP {status}: {value}");
    }
    Ok(value)
}

async fn human_game(http: &reqwest::Client, base: &str) -> anyhow::Result<Seated> {
    let created = post(
        http,
        format!("{base}/api/games"),
        None,
        json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
    )
    .await?;
    let id = created["game"]["id"].as_str().context("id")?.to_string();
    let white = created["seat"]["token"].as_str().context("white token")?;
    let joined = post(http, format!("{base}/api/games/{id}/join"), None, json!({})).await?;
    let black = joined["seat"]["token"].as_str().context("black token")?;
    Ok(Seated {
        white: white.to_string(),
        black: black.to_string(),
        id,
    })
}

/// `count` games, the i-th created through `bases[i mod bases.len()]`.
async fn create_games(bases: &[String], count: usize) -> anyhow::Result<Vec<Seated>> {
    let http = reqwest::Client::new();
    let mut out = Vec::with_capacity(count);
    let mut pending = futures_util::stream::iter(0..count)
        .map(|i| human_game(&http, &bases[i % bases.len()]))
        .buffered(32);
    while let Some(game) = pending.next().await {
        out.push(game?);
    }
    Ok(out)
}

type Ws = WebSocketStream<TcpStream>;

async fn open_socket(target: SocketAddr, source: IpAddr, path: &str) -> anyhow::Result<Ws> {
    let socket = TcpSocket::new_v4()?;
    port_at_connect(&socket)?;
    socket.bind(SocketAddr::new(source, 0))?;
    let stream = socket.connect(target).await?;
    stream.set_nodelay(true)?;
    // Closed with a reset at the end of the run, leaving no TIME_WAIT
    // socket behind (see the module's documentation).
    stream.set_zero_linger()?;
    // The probe holds as many sockets as the server: small buffers keep it
    // from being the machine's largest process.
    let config = WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_write_buffer_size(64 * 1024);
    let (ws, _) = tokio_tungstenite::client_async_with_config(
        format!("ws://{target}{path}"),
        stream,
        Some(config),
    )
    .await?;
    Ok(ws)
}

/// Leaves the choice of the source port to `connect` (Linux's
/// `IP_BIND_ADDRESS_NO_PORT`), where a port only has to make the
/// address/port pair unique and a TIME_WAIT one may be reused, instead of
/// `bind`, which looks for a port no socket on the address holds.
fn port_at_connect(socket: &TcpSocket) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: setsockopt reads `on` (its size given) on a socket we own.
    let done = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// When each move was sent and how many subscribers it reached, by
/// (game, ply after the move).
struct MoveTable {
    plies: usize,
    sent: Vec<AtomicU64>,
    reached: Vec<AtomicU32>,
    last_arrival: Vec<AtomicU64>,
}

impl MoveTable {
    fn new(games: usize, plies: usize) -> MoveTable {
        let n = games * (plies + 1);
        MoveTable {
            plies,
            sent: (0..n).map(|_| AtomicU64::new(0)).collect(),
            reached: (0..n).map(|_| AtomicU32::new(0)).collect(),
            last_arrival: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn slot(&self, game: usize, ply: usize) -> Option<usize> {
        (ply <= self.plies).then_some(game * (self.plies + 1) + ply)
    }
}

/// What one subscriber saw.
#[derive(Default)]
struct SubscriberStats {
    latencies_us: Vec<u32>,
    states: u64,
    other_messages: u64,
    presence: u64,
    /// WebSocket pings from the server (answered by the library).
    pings: u64,
    errors: u64,
    lost: u64,
    out_of_order: u64,
    closed_early: bool,
}

#[derive(Deserialize)]
struct Incoming {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    game: Option<IncomingGame>,
}

#[derive(Deserialize)]
struct IncomingGame {
    moves: Vec<serde::de::IgnoredAny>,
}

struct Shared {
    table: MoveTable,
    first_states: AtomicUsize,
    /// Set when every socket has its first state: the moves may start.
    go: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
}

/// Reads one subscriber's socket until the probe stops.
async fn subscriber(
    mut stream: SplitStream<Ws>,
    game: usize,
    shared: Arc<Shared>,
) -> SubscriberStats {
    let mut stats = SubscriberStats::default();
    let mut last_ply: Option<usize> = None;
    let mut stop = shared.stop.clone();
    loop {
        let frame = tokio::select! {
            frame = stream.next() => frame,
            _ = stop.wait_for(|s| *s) => return stats,
        };
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => {
                stats.closed_early = !*shared.stop.borrow();
                return stats;
            }
            Some(Ok(Message::Ping(_))) => {
                stats.pings += 1;
                continue;
            }
            Some(Ok(_)) => continue,
        };
        let arrived = now_ns();
        let Ok(message) = serde_json::from_str::<Incoming>(text.as_str()) else {
            stats.other_messages += 1;
            continue;
        };
        match (message.kind.as_str(), message.game) {
            ("state", Some(state)) => {
                stats.states += 1;
                let ply = state.moves.len();
                match last_ply {
                    None => {
                        shared.first_states.fetch_add(1, Ordering::Relaxed);
                    }
                    Some(last) if ply < last => stats.out_of_order += 1,
                    // Same position again: a presence or other non-move
                    // change; not a move delivery.
                    Some(last) if ply == last => {}
                    Some(last) => {
                        stats.lost += (ply - last - 1) as u64;
                        if let Some(slot) = shared.table.slot(game, ply) {
                            let sent = shared.table.sent[slot].load(Ordering::Acquire);
                            if sent > 0 {
                                let us = arrived.saturating_sub(sent) / 1000;
                                stats.latencies_us.push(us.min(u64::from(u32::MAX)) as u32);
                            }
                            shared.table.reached[slot].fetch_add(1, Ordering::Relaxed);
                            shared.table.last_arrival[slot].fetch_max(arrived, Ordering::Relaxed);
                        }
                    }
                }
                if last_ply.is_none_or(|last| ply > last) {
                    last_ply = Some(ply);
                }
            }
            ("error", _) => stats.errors += 1,
            ("presence", _) => stats.presence += 1,
            _ => stats.other_messages += 1,
        }
    }
}

/// Plays one game's moves through its players' sockets, the first `phase`
/// after `go`.
async fn mover(
    game: usize,
    mut sinks: [SplitSink<Ws, Message>; 2],
    line: Arc<Vec<String>>,
    every: Duration,
    plies: usize,
    phase: Duration,
    shared: Arc<Shared>,
) -> u64 {
    let mut failed = 0;
    let mut go = shared.go.clone();
    if go.wait_for(|go| *go).await.is_err() {
        return 0;
    }
    tokio::time::sleep(phase).await;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for ply in 0..plies {
        tick.tick().await;
        if *shared.stop.borrow() {
            break;
        }
        let Some(slot) = shared.table.slot(game, ply + 1) else {
            break;
        };
        let text = json!({"type": "move", "uci": line[ply]}).to_string();
        shared.table.sent[slot].store(now_ns(), Ordering::Release);
        if sinks[ply % 2].send(Message::text(text)).await.is_err() {
            failed += 1;
            break;
        }
    }
    let mut stop = shared.stop.clone();
    let _ = stop.wait_for(|s| *s).await;
    for sink in &mut sinks {
        // The probe is done with the socket; a failed close changes nothing.
        let _ = sink.close().await;
    }
    failed
}

/// How late a plain thread wakes from a 1 ms sleep, over and over, while
/// the games are played: the machine's own wake-up delay (other processes,
/// the probe, the server), to read the latency tails against. A move
/// crosses several thread wake-ups on its way to a subscriber.
struct Jitter {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<f64>>,
}

impl Jitter {
    fn start() -> Jitter {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut late_ms = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let before = now_ns();
                std::thread::sleep(Duration::from_millis(1));
                let slept = now_ns().saturating_sub(before);
                late_ms.push(slept.saturating_sub(1_000_000) as f64 / 1e6);
            }
            late_ms
        });
        Jitter { stop, thread }
    }

    /// The overshoots measured, in milliseconds.
    fn stop(self) -> Vec<f64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// Per second from the first move: moves sent, and their p50 and max to
/// every subscriber. `all_open` (when every socket had its first state) is
/// marked, since moves sent before it overlap the connection storm.
fn print_timeline(timed: &[(u64, f64)], all_open: u64) {
    let Some(first) = timed.iter().map(|(sent, _)| *sent).min() else {
        return;
    };
    let mut seconds: Vec<Vec<f64>> = Vec::new();
    for &(sent, ms) in timed {
        let second = ((sent - first) / 1_000_000_000) as usize;
        if seconds.len() <= second {
            seconds.resize_with(second + 1, Vec::new);
        }
        seconds[second].push(ms);
    }
    println!(
        "timeline (seconds from the first move; all sockets had their first state at {:+.1} s):",
        (all_open as f64 - first as f64) / 1e9
    );
    for (second, mut values) in seconds.into_iter().enumerate() {
        values.sort_by(f64::total_cmp);
        println!(
            "  {second:>3} s: {:>4} moves, p50 {:>7.2} ms, max {:>8.2} ms",
            values.len(),
            percentile(&values, 0.5),
            values.last().copied().unwrap_or(f64::NAN)
        );
    }
}

/// Percentile of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn summary(name: &str, mut values: Vec<f64>) -> String {
    values.sort_by(f64::total_cmp);
    format!(
        "{name}: n={} p50={:.2} ms p90={:.2} ms p99={:.2} ms max={:.2} ms",
        values.len(),
        percentile(&values, 0.5),
        percentile(&values, 0.9),
        percentile(&values, 0.99),
        values.last().copied().unwrap_or(f64::NAN)
    )
}

async fn run(args: Args) -> anyhow::Result<()> {
    let (target, pid, started) = match args.target {
        Some(target) => {
            if !target.ip().is_loopback() {
                bail!("--target must be a loopback address");
            }
            (target, args.pid, None)
        }
        None => {
            let (addr, pid, started) = start_server(&args).await?;
            (addr, Some(pid), Some(started))
        }
    };
    let base = format!("http://{target}");
    let sockets_per_game = 2 + args.spectators;
    let total_sockets = args.games * sockets_per_game;
    println!(
        "rookery-load: {} games x (2 players + {} spectators) = {} sockets, one move per game every {} ms for {} s, {} AI v AI games; target {target}",
        args.games, args.spectators, total_sockets, args.move_every_ms, args.play_seconds, args.ai_games
    );
    println!("load average at start: {}", load_average());

    let http = reqwest::Client::new();
    for _ in 0..args.ai_games {
        post(
            &http,
            format!("{base}/api/games"),
            None,
            json!({"white": {"kind": "ai", "level": 8}, "black": {"kind": "ai", "level": 8}}),
        )
        .await
        .context("creating an AI v AI game")?;
    }
    let creators: Vec<String> = if args.node_targets.is_empty() {
        vec![base.clone()]
    } else {
        for node in &args.node_targets {
            if !node.ip().is_loopback() {
                bail!("--node-target must be a loopback address");
            }
        }
        args.node_targets
            .iter()
            .map(|node| format!("http://{node}"))
            .collect()
    };
    let seated = create_games(&creators, args.games)
        .await
        .context("creating games")?;
    step(&args, "created").await?;
    let plies = (args.play_seconds * 1000 / args.move_every_ms.max(1)) as usize + 1;
    let line = Arc::new(opening_line(plies));

    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_before = pid.and_then(rss_kib);

    // Open every socket.
    let (stop_tx, stop_rx) = watch::channel(false);
    let (go_tx, go_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        table: MoveTable::new(args.games, plies),
        first_states: AtomicUsize::new(0),
        go: go_rx,
        stop: stop_rx,
    });
    let sources: Vec<IpAddr> = (0..args.sources.max(1))
        .map(|i| IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + i)))
        .collect();
    let opening = Arc::new(Semaphore::new(args.connect_concurrency.max(1)));
    let open_started = now_ns();
    let mut opens = Vec::with_capacity(total_sockets);
    for (g, game) in seated.iter().enumerate() {
        for k in 0..sockets_per_game {
            let path = match k {
                0 => format!("/ws/games/{}?token={}", game.id, game.white),
                1 => format!("/ws/games/{}?token={}", game.id, game.black),
                _ => format!("/ws/games/{}", game.id),
            };
            let source = sources[(g * sockets_per_game + k) % sources.len()];
            let opening = opening.clone();
            let target = spectator_target(&args.node_targets, g, k).unwrap_or(target);
            opens.push(tokio::spawn(async move {
                let _permit = opening.acquire_owned().await;
                let mut last = None;
                for _ in 0..3 {
                    match open_socket(target, source, &path).await {
                        Ok(ws) => return Ok(ws),
                        Err(err) => last = Some(err),
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(last.unwrap_or_else(|| anyhow::anyhow!("no attempt")))
            }));
        }
    }
    let mut readers = Vec::with_capacity(total_sockets);
    let mut movers = Vec::with_capacity(args.games);
    let mut open_failures = 0usize;
    let mut opened = opens.into_iter();
    let every = Duration::from_millis(args.move_every_ms.max(1));
    for g in 0..args.games {
        let mut sinks = Vec::new();
        for k in 0..sockets_per_game {
            let ws = match opened.next() {
                Some(task) => task.await.context("open task")?,
                None => bail!("socket count"),
            };
            let ws = match ws {
                Ok(ws) => ws,
                Err(err) => {
                    if open_failures < 3 {
                        eprintln!("probe: socket failed to open: {err:#}");
                    }
                    open_failures += 1;
                    continue;
                }
            };
            let (sink, stream) = ws.split();
            if k < 2 {
                sinks.push(sink);
            }
            readers.push(tokio::spawn(subscriber(stream, g, shared.clone())));
        }
        if let Ok(sinks) = <[_; 2]>::try_from(sinks) {
            // Spread the games' moves evenly over the move period.
            let phase = every * g as u32 / args.games.max(1) as u32;
            movers.push(tokio::spawn(mover(
                g,
                sinks,
                line.clone(),
                every,
                plies - 1,
                phase + Duration::from_secs(2),
                shared.clone(),
            )));
        }
    }
    let opened_count = readers.len();
    // Wait until every open socket has its first state.
    let wait_until = now_ns() + 60_000_000_000;
    while shared.first_states.load(Ordering::Relaxed) < opened_count && now_ns() < wait_until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let all_open = now_ns();
    let open_seconds = (all_open - open_started) as f64 / 1e9;
    // No move is sent before `go` below: measure the idle RSS now.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let rss_idle = pid.and_then(rss_kib);
    let cpu_before = pid.map(cpu_seconds);
    let proxy_cpu_before: f64 = args.proxy_pids.iter().map(|&p| cpu_seconds(p)).sum();
    let load_during = load_average();
    step(&args, "open").await?;
    // The first moves follow 2 s from now (spread over the move period).
    let _ = go_tx.send(true);
    println!(
        "sockets: {opened_count} open ({open_failures} failed) in {open_seconds:.1} s from {} source addresses; {} had their first state",
        sources.len(),
        shared.first_states.load(Ordering::Relaxed)
    );

    // Play.
    let play_started = now_ns();
    let jitter = Jitter::start();
    tokio::time::sleep(Duration::from_secs(args.play_seconds + 2) + every).await;
    let play_seconds = (now_ns() - play_started) as f64 / 1e9;
    let oversleep = jitter.stop();
    let cpu_used = pid.map(|pid| cpu_seconds(pid) - cpu_before.unwrap_or(0.0));
    let proxy_cpu_used =
        args.proxy_pids.iter().map(|&p| cpu_seconds(p)).sum::<f64>() - proxy_cpu_before;
    let load_after_play = load_average();
    let rss_after_play = pid.and_then(rss_kib);
    step(&args, "played").await?;
    // Let the last states arrive, then stop.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = stop_tx.send(true);
    let mut failed_moves = 0;
    for mover in movers {
        failed_moves += mover.await.unwrap_or(1);
    }
    let mut deliveries = Vec::new();
    let (mut states, mut lost, mut out_of_order, mut errors, mut closed_early, mut other) =
        (0, 0, 0, 0, 0, 0);
    let mut presence = 0;
    let mut pings = 0;
    for reader in readers {
        let stats = reader.await.context("reader task")?;
        deliveries.extend(stats.latencies_us.iter().map(|&us| f64::from(us) / 1000.0));
        states += stats.states;
        lost += stats.lost;
        out_of_order += stats.out_of_order;
        errors += stats.errors;
        other += stats.other_messages;
        presence += stats.presence;
        pings += stats.pings;
        closed_early += u64::from(stats.closed_early);
    }
    // Per move: until the last subscriber had it.
    let mut per_move = Vec::new();
    // (sent, ms to every subscriber) of each move, for the timeline.
    let mut timed = Vec::new();
    let mut sent_moves = 0;
    let mut missing = 0u64;
    for g in 0..args.games {
        for ply in 1..=plies {
            let Some(slot) = shared.table.slot(g, ply) else {
                continue;
            };
            let sent = shared.table.sent[slot].load(Ordering::Relaxed);
            if sent == 0 {
                continue;
            }
            sent_moves += 1;
            let reached = u64::from(shared.table.reached[slot].load(Ordering::Relaxed));
            missing += (sockets_per_game as u64).saturating_sub(reached);
            let last = shared.table.last_arrival[slot].load(Ordering::Relaxed);
            if last > 0 {
                let ms = last.saturating_sub(sent) as f64 / 1e6;
                per_move.push(ms);
                timed.push((sent, ms));
            }
        }
    }
    if let Some(prefix) = &args.latencies_out {
        write_latencies(prefix, "every", &per_move)?;
        write_latencies(prefix, "one", &deliveries)?;
    }
    println!("moves sent: {sent_moves} ({failed_moves} failed to send) in {play_seconds:.1} s");
    let early = timed.iter().filter(|(sent, _)| *sent < all_open).count();
    if early > 0 {
        println!("moves sent before every socket had its first state: {early}");
    }
    println!("{}", summary("move to one subscriber", deliveries));
    println!(
        "{}",
        summary("move to every subscriber of its game", per_move)
    );
    if args.timeline {
        print_timeline(&timed, all_open);
    }
    println!(
        "states received: {states}; lost (gaps): {lost}; deliveries missing: {missing}; out of order: {out_of_order}; error messages: {errors}; presence messages: {presence}; pings: {pings}; other messages: {other}; sockets closed by the server: {closed_early}"
    );
    if let (Some(before), Some(idle)) = (rss_before, rss_idle) {
        let per_socket = (idle.saturating_sub(before)) as f64 / opened_count.max(1) as f64;
        println!(
            "server RSS: {:.1} MiB before sockets, {:.1} MiB with {opened_count} idle sockets, {:.1} MiB after play -> {per_socket:.1} KiB per idle socket",
            before as f64 / 1024.0,
            idle as f64 / 1024.0,
            rss_after_play.unwrap_or(0) as f64 / 1024.0
        );
    }
    if let Some(cpu) = cpu_used {
        println!(
            "server CPU during play: {:.2} cores on average",
            cpu / play_seconds
        );
    }
    if !args.proxy_pids.is_empty() {
        println!(
            "proxy CPU during play ({} processes): {:.2} cores on average",
            args.proxy_pids.len(),
            proxy_cpu_used / play_seconds
        );
    }
    println!("load average: {load_during} (sockets idle), {load_after_play} (end of play)");
    println!(
        "{}",
        summary(
            "machine wake-up delay (a 1 ms sleep's overshoot, during play)",
            oversleep
        )
    );

    if args.http_games > 0 {
        let moves = durable_moves(&creators, &line, args.http_games, args.http_seconds).await?;
        println!(
            "durable moves over HTTP: {moves} in {} s = {:.0} moves/s ({} games at once, one client each)",
            args.http_seconds,
            moves as f64 / args.http_seconds as f64,
            args.http_games
        );
    }
    drop(started);
    Ok(())
}

/// Moves answered 200 over HTTP in `seconds` by `games` clients, each
/// playing its own game move after move.
async fn durable_moves(
    bases: &[String],
    line: &Arc<Vec<String>>,
    games: usize,
    seconds: u64,
) -> anyhow::Result<u64> {
    let seated = create_games(bases, games).await?;
    let done = Arc::new(AtomicU64::new(0));
    let until = now_ns() + seconds * 1_000_000_000;
    let mut tasks = Vec::new();
    for (i, game) in seated.into_iter().enumerate() {
        let base = bases[i % bases.len()].clone();
        let (line, done) = (line.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut game = game;
            let mut ply = 0;
            while now_ns() < until {
                if ply == line.len() {
                    game = human_game(&http, &base).await?;
                    ply = 0;
                }
                let token = if ply % 2 == 0 {
                    &game.white
                } else {
                    &game.black
                };
                post(
                    &http,
                    format!("{base}/api/games/{}/move", game.id),
                    Some(token),
                    json!({"uci": line[ply]}),
                )
                .await?;
                done.fetch_add(1, Ordering::Relaxed);
                ply += 1;
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await.context("HTTP mover")??;
    }
    Ok(done.load(Ordering::Relaxed))
}

/// Where socket `k` of game `g` connects when the nodes are reached on
/// their own: players (k < 2) through the balancer (None), spectators
/// through the nodes other than the game's creator (its owner), in turn.
fn spectator_target(nodes: &[SocketAddr], g: usize, k: usize) -> Option<SocketAddr> {
    let n = nodes.len();
    if k < 2 || n < 2 {
        return None;
    }
    let owner = g % n;
    Some(nodes[(owner + 1 + (k - 2) % (n - 1)) % n])
}

/// A step of --sync-dir: says this probe reached `name`, then waits for
/// the word to go on.
async fn step(args: &Args, name: &str) -> anyhow::Result<()> {
    let Some(dir) = &args.sync_dir else {
        return Ok(());
    };
    let mine = dir.join(format!("{name}.{}", std::process::id()));
    std::fs::write(&mine, b"").with_context(|| format!("writing {}", mine.display()))?;
    let go = dir.join(format!("{name}.go"));
    while !go.exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// PREFIX.KIND: one value (ms) a line.
fn write_latencies(prefix: &std::path::Path, kind: &str, values: &[f64]) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(values.len() * 8);
    for value in values {
        let _ = writeln!(text, "{value:.3}");
    }
    let mut path = prefix.as_os_str().to_owned();
    path.push(format!(".{kind}"));
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.to_string_lossy()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_port_is_chosen_at_connect_not_at_bind() {
        let source: SocketAddr = "127.0.0.1:0".parse().unwrap();
        // Without the option, bind takes a port (searching for a free one).
        let plain = TcpSocket::new_v4().unwrap();
        plain.bind(source).unwrap();
        assert_ne!(plain.local_addr().unwrap().port(), 0);
        // With it, bind only fixes the address; connect picks the port.
        let late = TcpSocket::new_v4().unwrap();
        port_at_connect(&late).unwrap();
        late.bind(source).unwrap();
        assert_eq!(late.local_addr().unwrap().port(), 0);
    }

    #[test]
    fn spectators_go_to_the_nodes_that_do_not_own_their_game() {
        let nodes: Vec<SocketAddr> = ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        for g in 0..6 {
            let owner = nodes[g % 3];
            assert_eq!(spectator_target(&nodes, g, 0), None);
            assert_eq!(spectator_target(&nodes, g, 1), None);
            let spectators: Vec<_> = (2..10)
                .map(|k| spectator_target(&nodes, g, k).unwrap())
                .collect();
            assert!(!spectators.contains(&owner));
            // Both other nodes, four each.
            for node in &nodes {
                if *node != owner {
                    assert_eq!(spectators.iter().filter(|s| *s == node).count(), 4);
                }
            }
        }
        assert_eq!(spectator_target(&nodes[..1], 0, 5), None);
    }
}

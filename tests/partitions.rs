//! Network partitions, the way Jepsen tests databases (issue 42): three
//! `rookery-server` nodes, PostgreSQL and `nats-server`, each in a network
//! namespace of its own (tests/support/netns.rs), clients in the root
//! namespace playing many games at once (every move through a random node,
//! retried as docs/API.md says), spectators on sockets, a nemesis injecting
//! faults on a schedule, and a checker over what everybody was told and
//! what the database holds at the end (tests/support/history.rs).
//!
//! - `partitions_lose_and_fork_nothing`: the short run of the suite (one
//!   round of every fault).
//! - `partition_soak` (ignored): the same for `ROOKERY_SOAK_SECS` seconds
//!   (600 by default) with `ROOKERY_SOAK_GAMES` games (50), its table for
//!   docs/reliability.md:
//!   `ROOKERY_SOAK_SECS=900 cargo test -p rookery-server --test partitions -- --ignored partition_soak --nocapture`
//! - `the_checker_catches_what_fencing_prevents` (ignored): nodes with
//!   fencing switched off (`ROOKERY_TEST_UNFENCED=1`, a switch for this
//!   test only) under the faults that leave two nodes believing they own a
//!   game; the checker must find lost or forked moves.
//!
//! Skipped, saying so, when not root or without `ip netns`.

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::history::{Attempt, Outcome, Played, Records, Source, StoredMove, Verdict, Window};
use support::netns::{DelayRelay, Lab, LabNode, LabPostgres};
use tokio_tungstenite::tungstenite::Message;

/// The nodes' lease time (the default is 4 s).
const LEASE_MS: u64 = 2_000;
const NODES: [&str; 3] = ["n0", "n1", "n2"];
/// A game ends (and its players start another) after this many plies.
const MAX_PLIES: usize = 120;

/// The faults, in the order the nemesis makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// The owner's packets to and from PostgreSQL dropped (NATS and the
    /// clients kept).
    OwnerFromDatabase,
    /// The owner's packets to and from NATS dropped.
    OwnerFromBus,
    /// One node's link down: nobody reaches it, it reaches nobody.
    NodeIsolated,
    /// The nodes split: the owner alone on one side, the two others with
    /// PostgreSQL and NATS on the other (clients reach both sides).
    MinoritySplit,
    /// 300 ms of latency (the relay in front of PostgreSQL) and 10% of
    /// PostgreSQL's packets dropped.
    SlowLossyDatabase,
    /// The owner's links to PostgreSQL and NATS cut and mended every
    /// 700 ms.
    Flapping,
    /// The owner paused (SIGSTOP), then resumed (SIGCONT).
    Paused,
    /// The owner killed (SIGKILL), then started again.
    Killed,
}

const EVERY_FAULT: [Fault; 8] = [
    Fault::OwnerFromDatabase,
    Fault::OwnerFromBus,
    Fault::NodeIsolated,
    Fault::MinoritySplit,
    Fault::SlowLossyDatabase,
    Fault::Flapping,
    Fault::Paused,
    Fault::Killed,
];

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::OwnerFromDatabase => "owner cut from PostgreSQL",
            Fault::OwnerFromBus => "owner cut from NATS",
            Fault::NodeIsolated => "one node cut from everything",
            Fault::MinoritySplit => "nodes split 2 against 1 (owner alone)",
            Fault::SlowLossyDatabase => "database link: 300 ms, 10% loss",
            Fault::Flapping => "owner's links flapping (700 ms)",
            Fault::Paused => "owner paused (SIGSTOP)",
            Fault::Killed => "owner killed (SIGKILL), restarted",
        }
    }
}

/// What a run does.
struct Plan {
    games: usize,
    /// How long the nemesis runs (it finishes the fault it is in).
    duration: Duration,
    faults: Vec<Fault>,
    fault_time: Duration,
    quiet_time: Duration,
    unfenced: bool,
}

/// The cluster in its lab.
struct Lab3 {
    lab: Arc<Lab>,
    relay: DelayRelay,
    postgres: LabPostgres,
    _nats: support::cluster::Watched,
    nodes: Vec<LabNode>,
    database: String,
}

async fn start_cluster(unfenced: bool) -> Lab3 {
    let mut members = vec!["pg", "nats"];
    members.extend(NODES);
    let lab = Arc::new(Lab::new(&members));
    let postgres = lab.postgres("pg");
    let nats = lab.nats("nats");
    let database = "rookery".to_string();
    postgres
        .psql("postgres", &format!("CREATE DATABASE {database}"))
        .expect("create the database");
    // The nodes reach PostgreSQL through a relay that can slow its link.
    let relay = DelayRelay::start(&lab.host_ip(), format!("{}:5432", lab.ip("pg"))).await;
    let args: Vec<String> = vec![
        "--database".into(),
        format!(
            "postgres://rookery@{}:{}/{database}",
            lab.host_ip(),
            relay.port
        ),
        "--nats".into(),
        format!("nats://{}:4222", lab.ip("nats")),
        "--lease-ms".into(),
        LEASE_MS.to_string(),
    ];
    let envs: &[(&str, &str)] = if unfenced {
        &[("ROOKERY_TEST_UNFENCED", "1")]
    } else {
        &[]
    };
    let mut nodes = Vec::new();
    for name in NODES {
        // One at a time: the first runs the migrations.
        nodes.push(LabNode::start(&lab, name, &args, envs).await);
    }
    Lab3 {
        lab,
        relay,
        postgres,
        _nats: nats,
        nodes,
        database,
    }
}

/// A small random generator (xorshift), seeded per task.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// ------------------------------------------------------------- clients

/// What the clients share.
struct Clients {
    bases: Vec<String>,
    http: reqwest::Client,
    records: Arc<Records>,
    stop: AtomicBool,
    connections: AtomicU64,
}

/// A request's answer: status and body, or why there is none.
type Answer = Result<(u16, Value), String>;

impl Clients {
    async fn send(&self, request: reqwest::RequestBuilder) -> Answer {
        let response = request.send().await.map_err(|err| {
            if err.is_timeout() {
                "timeout".to_string()
            } else if err.is_connect() {
                "connect".to_string()
            } else {
                "reset".to_string()
            }
        })?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|_| "cut".to_string())?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    async fn post(&self, node: usize, path: &str, token: Option<&str>, body: Value) -> Answer {
        let mut request = self
            .http
            .post(format!("{}{path}", self.bases[node]))
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        self.send(request).await
    }

    /// Reads game `id` through `node`, recording what it showed.
    async fn read(&self, node: usize, id: &str) -> Option<Value> {
        let asked = self.records.now();
        let answer = self
            .send(
                self.http
                    .get(format!("{}/api/games/{id}", self.bases[node])),
            )
            .await;
        match answer {
            Ok((200, state)) => {
                self.records.shown(id, node, Source::Read, asked, &state);
                Some(state)
            }
            _ => None,
        }
    }

    /// A new timed game, created through one node and joined through
    /// another: (id, white's token, black's token). `None` when stopped.
    async fn new_game(&self, rng: &mut Rng) -> Option<(String, String, String)> {
        while !self.stop.load(Ordering::Relaxed) {
            let body = json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                              "clock": {"initial": 10800, "increment": 0}});
            let created = self.post(rng.below(3), "/api/games", None, body).await;
            let Ok((201, created)) = created else {
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            };
            let (Some(id), Some(white)) = (
                created["game"]["id"].as_str(),
                created["seat"]["token"].as_str(),
            ) else {
                continue;
            };
            // A join whose answer was lost cannot be told from one that
            // failed: that game is left to expire, and another made.
            for _ in 0..5 {
                let path = format!("/api/games/{id}/join");
                if let Ok((200, joined)) = self.post(rng.below(3), &path, None, json!({})).await {
                    if let Some(black) = joined["seat"]["token"].as_str() {
                        return Some((id.to_string(), white.to_string(), black.to_string()));
                    }
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
        None
    }

    /// Plays games until stopped: each move through a random node, until
    /// it is played.
    async fn player(self: Arc<Self>, seed: u64) {
        let mut rng = Rng::new(seed);
        while let Some((id, white, black)) = self.new_game(&mut rng).await {
            let watching = Arc::new(AtomicBool::new(true));
            let spectator =
                tokio::spawn(self.clone().spectator(id.clone(), seed, watching.clone()));
            self.play_game(&mut rng, &id, [&white, &black]).await;
            watching.store(false, Ordering::Relaxed);
            let _ = spectator.await;
        }
    }

    async fn play_game(&self, rng: &mut Rng, id: &str, tokens: [&str; 2]) {
        let mut game = rookery_engine::Game::new(rookery_engine::Position::startpos());
        let mut ply = 0;
        while ply < MAX_PLIES && !self.stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(150 + rng.below(250) as u64)).await;
            let legal: Vec<_> = game.position().legal_moves().iter().copied().collect();
            let start = rng.below(legal.len().max(1));
            let Some(mv) = (0..legal.len())
                .map(|i| legal[(start + i) % legal.len()])
                .find(|mv| {
                    let mut after = game.clone();
                    after.play(*mv).is_ok() && after.outcome().is_none()
                })
            else {
                return;
            };
            let uci = mv.to_uci();
            match self.play_move(rng, id, tokens[ply % 2], ply, &uci).await {
                Some(true) => {
                    game.play(mv).expect("a legal move");
                    ply += 1;
                }
                Some(false) => return,
                None => return,
            }
        }
    }

    /// Sends move `uci` at `ply` until it is played: `Some(true)`, or
    /// `Some(false)` when the game cannot go on, or `None` when stopped
    /// before it was. As docs/API.md says: a 503 or no answer may or may
    /// not have made the move, so the client reads the game and sends it
    /// again only if it is not there.
    async fn play_move(
        &self,
        rng: &mut Rng,
        id: &str,
        token: &str,
        ply: usize,
        uci: &str,
    ) -> Option<bool> {
        let first_sent = self.records.now();
        let path = format!("/api/games/{id}/move");
        let mut tries = 0;
        loop {
            tries += 1;
            if tries > 200 {
                self.records
                    .anomaly(format!("game {id} ply {ply}: not played after 200 tries"));
                return Some(false);
            }
            let node = rng.below(3);
            let sent = self.records.now();
            let answer = self
                .post(node, &path, Some(token), json!({ "uci": uci }))
                .await;
            let answered = self.records.now();
            let outcome = match &answer {
                Ok((200, _)) => Outcome::Status(200, String::new()),
                Ok((status, body)) => Outcome::Status(
                    *status,
                    body["error"]["code"].as_str().unwrap_or("?").to_string(),
                ),
                Err(why) => Outcome::Network(why.clone()),
            };
            self.records.attempt(Attempt {
                game: id.to_string(),
                ply,
                uci: uci.to_string(),
                node,
                sent,
                answered,
                outcome,
            });
            if let Ok((200, state)) = &answer {
                self.records.shown(id, node, Source::Answer, sent, state);
                let shown = state["moves"].as_array().map(Vec::len).unwrap_or(0);
                if state["moves"][ply].as_str() != Some(uci) || shown != ply + 1 {
                    self.records.anomaly(format!(
                        "game {id} ply {ply}: {uci} answered 200 by n{node} with moves {}",
                        state["moves"]
                    ));
                }
                self.records.played(Played {
                    game: id.to_string(),
                    ply,
                    uci: uci.to_string(),
                    first_sent,
                    done: answered,
                    acknowledged: true,
                    node,
                });
                return Some(true);
            }
            // Not told: find out whether it was played.
            let mut stale_told = false;
            loop {
                tries += 1;
                if tries > 200 {
                    self.records
                        .anomaly(format!("game {id} ply {ply}: not played after 200 tries"));
                    return Some(false);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                if self.stop.load(Ordering::Relaxed) {
                    return None;
                }
                let node = rng.below(3);
                let Some(state) = self.read(node, id).await else {
                    continue;
                };
                let moves = state["moves"].as_array().cloned().unwrap_or_default();
                if state["status"] != "active" {
                    self.records.anomaly(format!(
                        "game {id} ply {ply}: n{node} shows it {} ({})",
                        state["status"], state["termination"]
                    ));
                    return Some(false);
                }
                if moves.len() < ply {
                    if !stale_told {
                        self.records.anomaly(format!(
                            "STALE: game {id}: n{node} showed {} plies after {ply} were played \
                             ({:.2}s)",
                            moves.len(),
                            self.records.now()
                        ));
                        stale_told = true;
                    }
                    continue;
                }
                if moves.len() == ply {
                    break;
                }
                if moves[ply].as_str() == Some(uci) && moves.len() == ply + 1 {
                    self.records.played(Played {
                        game: id.to_string(),
                        ply,
                        uci: uci.to_string(),
                        first_sent,
                        done: self.records.now(),
                        acknowledged: false,
                        node,
                    });
                    return Some(true);
                }
                self.records.anomaly(format!(
                    "game {id} ply {ply}: sent {uci}, n{node} shows {}",
                    state["moves"]
                ));
                return Some(false);
            }
        }
    }

    /// Watches game `id` on a socket through a random node, reconnecting
    /// to another whenever it closes, recording every state.
    async fn spectator(self: Arc<Self>, id: String, seed: u64, watching: Arc<AtomicBool>) {
        let mut rng = Rng::new(seed ^ 0x5bd1_e995);
        while watching.load(Ordering::Relaxed) {
            let node = rng.below(3);
            let connection = self.connections.fetch_add(1, Ordering::Relaxed);
            let url = format!(
                "{}/ws/games/{id}",
                self.bases[node].replacen("http", "ws", 1)
            );
            let asked = self.records.now();
            let connected = tokio::time::timeout(
                Duration::from_secs(5),
                tokio_tungstenite::connect_async(url),
            )
            .await;
            if let Ok(Ok((mut socket, _))) = connected {
                while watching.load(Ordering::Relaxed) {
                    let next = tokio::time::timeout(Duration::from_secs(1), socket.next()).await;
                    match next {
                        Err(_) => continue,
                        Ok(Some(Ok(Message::Text(text)))) => {
                            let message: Value =
                                serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                            if message["type"] == "state" {
                                self.records.shown(
                                    &id,
                                    node,
                                    Source::Spectator(connection),
                                    asked,
                                    &message["game"],
                                );
                            }
                        }
                        Ok(Some(Ok(_))) => {}
                        Ok(Some(Err(_)) | None) => break,
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
}

// ------------------------------------------------------------- nemesis

/// The node holding the most live leases now (the owner of most games).
async fn busiest_owner(pool: &sqlx::PgPool, nodes: &[LabNode]) -> usize {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64);
    let owner: Option<String> = tokio::time::timeout(
        Duration::from_secs(5),
        sqlx::query_scalar(
            "SELECT owner FROM game_leases WHERE expires_at > $1
             GROUP BY owner ORDER BY COUNT(*) DESC LIMIT 1",
        )
        .bind(now)
        .fetch_optional(pool),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .flatten();
    owner
        .and_then(|owner| {
            nodes
                .iter()
                .position(|node| node.cluster_name().as_deref() == Some(owner.as_str()))
        })
        .unwrap_or(0)
}

/// Makes `fault` on node `target`, for `time`, then heals it.
async fn inflict(cluster: &mut Lab3, fault: Fault, target: usize, time: Duration) {
    let lab = cluster.lab.clone();
    let name = NODES[target];
    let others: Vec<&str> = NODES.iter().copied().filter(|n| *n != name).collect();
    match fault {
        Fault::OwnerFromDatabase => {
            lab.cut_from_relay(name, cluster.relay.port);
            tokio::time::sleep(time).await;
            lab.mend(name);
        }
        Fault::OwnerFromBus => {
            lab.cut(name, &["nats"]);
            tokio::time::sleep(time).await;
            lab.mend(name);
        }
        Fault::NodeIsolated => {
            lab.link(name, false);
            tokio::time::sleep(time).await;
            lab.link(name, true);
        }
        Fault::MinoritySplit => {
            let mut peers = vec!["nats"];
            peers.extend(&others);
            lab.cut(name, &peers);
            lab.cut_from_relay(name, cluster.relay.port);
            tokio::time::sleep(time).await;
            lab.mend(name);
        }
        Fault::SlowLossyDatabase => {
            cluster.relay.set_delay(Duration::from_millis(300));
            lab.lossy("pg", 0.1);
            tokio::time::sleep(time).await;
            cluster.relay.set_delay(Duration::ZERO);
            lab.mend("pg");
        }
        Fault::Flapping => {
            let until = tokio::time::Instant::now() + time;
            while tokio::time::Instant::now() < until {
                lab.cut(name, &["nats"]);
                lab.cut_from_relay(name, cluster.relay.port);
                tokio::time::sleep(Duration::from_millis(700)).await;
                lab.mend(name);
                tokio::time::sleep(Duration::from_millis(700)).await;
            }
        }
        Fault::Paused => {
            cluster.nodes[target].signal(libc::SIGSTOP);
            tokio::time::sleep(time).await;
            cluster.nodes[target].signal(libc::SIGCONT);
        }
        Fault::Killed => {
            cluster.nodes[target].kill().await;
            tokio::time::sleep(time).await;
            cluster.nodes[target].restart().await;
        }
    }
}

async fn nemesis(cluster: &mut Lab3, plan: &Plan, records: &Records, pool: &sqlx::PgPool) {
    let started = tokio::time::Instant::now();
    // Every fault once, then round again until the duration is over.
    for (made, fault) in plan.faults.iter().cycle().enumerate() {
        tokio::time::sleep(plan.quiet_time).await;
        if made >= plan.faults.len() && started.elapsed() >= plan.duration {
            break;
        }
        let target = busiest_owner(pool, &cluster.nodes).await;
        let start = records.now();
        eprintln!("nemesis {start:.1}s: {} on {}", fault.name(), NODES[target]);
        inflict(cluster, *fault, target, plan.fault_time).await;
        let end = records.now();
        eprintln!("nemesis {end:.1}s: healed");
        records.window(Window {
            fault: fault.name().to_string(),
            target: NODES[target].to_string(),
            start,
            end,
        });
    }
}

// ------------------------------------------------------------- the run

async fn stored_histories(pool: &sqlx::PgPool) -> HashMap<String, Vec<StoredMove>> {
    type Row = (
        String,
        i64,
        String,
        Option<i64>,
        Option<i64>,
        Option<String>,
        Option<i64>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT game_id, ply, uci, white_ms, black_ms, owner, epoch FROM moves ORDER BY game_id, ply",
    )
    .fetch_all(pool)
    .await
    .expect("read the moves");
    let mut games: HashMap<String, Vec<StoredMove>> = HashMap::new();
    for (game, ply, uci, white_ms, black_ms, owner, epoch) in rows {
        let moves = games.entry(game.clone()).or_default();
        assert_eq!(
            moves.len() as i64,
            ply,
            "game {game}: plies stored in a row"
        );
        moves.push(StoredMove {
            uci,
            white_ms,
            black_ms,
            owner,
            epoch,
        });
    }
    games
}

/// For each game read stale, who wrote its moves around the stale ply
/// (node and epoch), to tell which copy answered.
fn explain_stale_reads(
    verdict: &Verdict,
    stored: &HashMap<String, Vec<StoredMove>>,
    nodes: &[LabNode],
) {
    let names: Vec<(String, &str)> = nodes
        .iter()
        .flat_map(|node| {
            node.cluster_names()
                .into_iter()
                .map(move |name| (name, node.name.as_str()))
        })
        .collect();
    let node_of = |owner: &Option<String>| {
        owner.as_ref().map_or("-".to_string(), |owner| {
            names
                .iter()
                .find(|(name, _)| name == owner)
                .map_or(owner.clone(), |(name, node)| {
                    format!("{node}({})", &name[..6])
                })
        })
    };
    for violation in verdict.violations.iter().filter(|v| v.starts_with("STALE")) {
        let Some(game) = violation
            .split_whitespace()
            .nth(2)
            .map(|g| g.trim_end_matches(':'))
        else {
            continue;
        };
        let shown: usize = violation
            .split_whitespace()
            .nth(5)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let Some(moves) = stored.get(game) else {
            continue;
        };
        let around: Vec<String> = moves
            .iter()
            .enumerate()
            .skip(shown.saturating_sub(2))
            .take(8)
            .map(|(ply, mv)| format!("{ply}:{}@{}", node_of(&mv.owner), mv.epoch.unwrap_or(0)))
            .collect();
        eprintln!("  {game} around ply {shown}: {}", around.join(" "));
    }
}

/// Runs `plan` on a new cluster and checks what happened.
async fn run(plan: Plan) -> Verdict {
    support::raise_open_files_limit();
    let mut cluster = start_cluster(plan.unfenced).await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&cluster.postgres.url(&cluster.database))
        .await
        .expect("the checker's connection");
    let records = Arc::new(Records::new());
    let clients = Arc::new(Clients {
        bases: cluster.nodes.iter().map(|node| node.base.clone()).collect(),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(15))
            .connect_timeout(Duration::from_secs(2))
            .build()
            .expect("an HTTP client"),
        records: records.clone(),
        stop: AtomicBool::new(false),
        connections: AtomicU64::new(0),
    });
    let players: Vec<_> = (0..plan.games)
        .map(|seed| tokio::spawn(clients.clone().player(seed as u64 + 1)))
        .collect();
    nemesis(&mut cluster, &plan, &records, &pool).await;
    // Everything healed: the clients finish the moves they are sending.
    tokio::time::sleep(plan.quiet_time).await;
    clients.stop.store(true, Ordering::Relaxed);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    for player in players {
        let abort = player.abort_handle();
        if tokio::time::timeout_at(deadline, player).await.is_err() {
            abort.abort();
            records.anomaly("a player still busy a minute after the run".into());
        }
    }
    let (attempts, played, shown) = records.counts();
    eprintln!("{attempts} move requests, {played} moves played, {shown} histories shown");
    let stored = stored_histories(&pool).await;
    let verdict = records.check(&stored);
    eprintln!("\n{}\n\n{}", verdict.summary, verdict.table);
    let mut kinds: std::collections::BTreeMap<&str, Vec<&String>> = Default::default();
    for violation in &verdict.violations {
        let kind = violation
            .split_once(':')
            .filter(|(kind, _)| kind.chars().all(|c| c.is_ascii_uppercase()))
            .map_or("ODD ANSWER", |(kind, _)| kind);
        kinds.entry(kind).or_default().push(violation);
    }
    for (kind, found) in &kinds {
        eprintln!("{kind}: {} found; the first:", found.len());
        for violation in found.iter().take(4) {
            eprintln!("  {violation}");
        }
    }
    eprintln!("{} violations", verdict.violations.len());
    explain_stale_reads(&verdict, &stored, &cluster.nodes);
    for node in &cluster.nodes {
        let panics = node.log_lines("panicked");
        assert!(panics.is_empty(), "{} panicked: {panics:?}", node.name);
    }
    pool.close().await;
    for node in &mut cluster.nodes {
        node.kill().await;
    }
    cluster.postgres.stop();
    verdict
}

/// Whether this machine can run the lab (says why not otherwise).
fn lab_here() -> bool {
    match Lab::unavailable() {
        Some(why) => {
            eprintln!("SKIPPED: the partition tests need network namespaces: {why}");
            false
        }
        None => true,
    }
}

/// The soak's faults: `ROOKERY_SOAK_FAULTS`, numbers into the list of
/// every fault (`6,7`: the pauses and the kills), or every fault.
fn soak_faults() -> Vec<Fault> {
    let chosen: Vec<Fault> = std::env::var("ROOKERY_SOAK_FAULTS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|n| n.trim().parse::<usize>().ok())
        .filter_map(|n| EVERY_FAULT.get(n).copied())
        .collect();
    if chosen.is_empty() {
        EVERY_FAULT.to_vec()
    } else {
        chosen
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_lose_and_fork_nothing() {
    if !lab_here() {
        return;
    }
    let verdict = run(Plan {
        games: 50,
        duration: Duration::from_secs(1),
        faults: EVERY_FAULT.to_vec(),
        fault_time: Duration::from_secs(4),
        quiet_time: Duration::from_secs(4),
        unfenced: false,
    })
    .await;
    assert!(
        verdict.violations.is_empty(),
        "the checker found {} violations: {:#?}",
        verdict.violations.len(),
        verdict.violations
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a soak of ROOKERY_SOAK_SECS seconds (600): run by hand for docs/reliability.md"]
async fn partition_soak() {
    if !lab_here() {
        return;
    }
    let verdict = run(Plan {
        games: env_number("ROOKERY_SOAK_GAMES", 50) as usize,
        duration: Duration::from_secs(env_number("ROOKERY_SOAK_SECS", 600)),
        faults: soak_faults(),
        fault_time: Duration::from_secs(5),
        quiet_time: Duration::from_secs(5),
        unfenced: false,
    })
    .await;
    assert!(
        verdict.violations.is_empty(),
        "the checker found {} violations: {:#?}",
        verdict.violations.len(),
        verdict.violations
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "shows the checker catching lost and forked moves with fencing switched off"]
async fn the_checker_catches_what_fencing_prevents() {
    if !lab_here() {
        return;
    }
    let verdict = run(Plan {
        games: 50,
        duration: Duration::from_secs(1),
        faults: vec![Fault::Paused, Fault::OwnerFromBus, Fault::MinoritySplit],
        fault_time: Duration::from_secs(5),
        quiet_time: Duration::from_secs(5),
        unfenced: true,
    })
    .await;
    assert!(
        !verdict.violations.is_empty(),
        "with fencing off, two nodes wrote the same games and the checker saw nothing"
    );
}

//! AI workers over NATS (issue 13), with a real `nats-server` and real
//! `rookery-server` processes: a node (`--nats`) and workers (`--role
//! worker`, or the `worker` subcommand). What each process did is read from
//! its log (stderr).

mod support;

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::cluster::{Nats, Proc, SLOW};
use support::*;
use tokio::io::AsyncBufReadExt;

impl Proc {
    /// A worker (`--role worker`), once it says it is subscribed.
    async fn worker(name: &str, nats: &Nats) -> Proc {
        let url = nats.url();
        let worker = Proc::spawn(
            name,
            &["--role", "worker", "--nats", &url, "--ai-threads", "1"],
        );
        worker.ready().await
    }

    /// A worker started by the `worker` subcommand, once subscribed.
    async fn worker_subcommand(name: &str, nats: &Nats) -> Proc {
        let url = nats.url();
        let worker = Proc::spawn(name, &["worker", "--nats", &url, "--ai-threads", "1"]);
        worker.ready().await
    }

    /// The worker once it printed its ready line.
    async fn ready(mut self) -> Proc {
        let stdout = self.child.stdout.take().expect("piped stdout");
        let line = within(WAIT, "the worker's ready line", async {
            tokio::io::BufReader::new(stdout)
                .lines()
                .next_line()
                .await
                .expect("read stdout")
                .expect("a line")
        })
        .await;
        assert!(line.ends_with(" ready"), "{line:?}");
        self
    }

    /// A node on a fresh SQLite file, sending searches to `nats`.
    async fn node(db: &TestDb, nats: &Nats) -> (Proc, String) {
        let url = nats.url();
        let database = db.url();
        let mut node = Proc::spawn(
            "node",
            &[
                "--addr",
                "127.0.0.1:0",
                "--database",
                &database,
                "--nats",
                &url,
                "--ai-job-grace-ms",
                "1000",
            ],
        );
        let base = listening_base(&mut node.child).await;
        (node, base)
    }
}

/// The value of `field=` in a log line.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {name}="))? + name.len() + 2;
    line[start..].split_whitespace().next()
}

/// Creates a human (white) v AI game and plays e2e4: (id, state URL).
async fn game_vs_ai(http: &reqwest::Client, base: &str, level: u8) -> String {
    let (status, created) = read(
        http.post(format!("{base}/api/games"))
            .json(&json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": level}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["game"]["id"].as_str().unwrap().to_string();
    let token = created["seat"]["token"].as_str().unwrap().to_string();
    let (status, state) = read(
        http.post(format!("{base}/api/games/{id}/move"))
            .bearer_auth(token)
            .json(&json!({"uci": "e2e4"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{state}");
    id
}

/// Polls the game until it has at least `plies` moves; returns its state.
async fn state_with(http: &reqwest::Client, base: &str, id: &str, plies: usize) -> Value {
    within(SLOW, "the AI's answer", async {
        loop {
            let (_, state) = read(
                http.get(format!("{base}/api/games/{id}"))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            if moves(&state).len() >= plies {
                return state;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    })
    .await
}

/// Polls until the AI has answered the first move; returns its move.
async fn ai_reply(http: &reqwest::Client, base: &str, id: &str) -> String {
    let state = state_with(http, base, id, 2).await;
    assert_eq!(moves(&state).len(), 2, "exactly one AI move: {state}");
    moves(&state)[1].clone()
}

#[tokio::test]
async fn a_game_against_the_ai_is_served_by_a_worker() {
    let nats = Nats::start();
    let db = TestDb::new_sqlite();
    let worker = Proc::worker("worker", &nats).await;
    let (node, base) = Proc::node(&db, &nats).await;
    let http = reqwest::Client::new();
    let id = game_vs_ai(&http, &base, 1).await;
    let reply = ai_reply(&http, &base, &id).await;
    let answered = worker
        .wait_line("the worker's answer", "job answered")
        .await;
    assert_eq!(field(&answered, "ply"), Some("1"), "{answered}");
    assert_eq!(field(&answered, "uci"), Some(reply.as_str()), "{answered}");
    assert!(node.lines("runs on this node").is_empty());
    assert!(node.lines("stale AI answer dropped").is_empty());
}

/// A Chess960 castle searched by a worker is played as a castle (issue
/// 40). White's only mate is castling with the king on f1: the king to g1
/// and the h1 rook to f1, checking along the f-file. Its two-square
/// spelling `f1g1` is also a legal king step, so the worker must answer
/// king takes rook (`f1h1`).
#[tokio::test]
async fn a_workers_chess960_castle_is_not_read_as_a_king_step() {
    let nats = Nats::start();
    let db = TestDb::new_sqlite();
    let worker = Proc::worker("worker", &nats).await;
    let (node, base) = Proc::node(&db, &nats).await;
    let http = reqwest::Client::new();
    let (status, created) = read(
        http.post(format!("{base}/api/games"))
            .json(
                &json!({"white": {"kind": "ai", "level": 8}, "black": {"kind": "human"},
                          "variant": "chess960",
                          "fen": "4rkr1/4p1p1/8/8/8/8/8/5K1R w K - 0 1"}),
            )
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["game"]["id"].as_str().unwrap();
    let state = state_with(&http, &base, id, 1).await;
    assert_eq!(state["san"], json!(["O-O#"]), "{state}");
    assert_eq!(moves(&state), ["f1h1"]);
    let answered = worker
        .wait_line("the worker's answer", "job answered")
        .await;
    assert_eq!(field(&answered, "uci"), Some("f1h1"), "{answered}");
    assert!(node.lines("runs on this node").is_empty());
}

/// `rookery-server worker --nats URL` is the same worker as `--role worker`.
#[tokio::test]
async fn the_worker_subcommand_serves_a_game_too() {
    let nats = Nats::start();
    let db = TestDb::new_sqlite();
    let worker = Proc::worker_subcommand("worker", &nats).await;
    let (node, base) = Proc::node(&db, &nats).await;
    let http = reqwest::Client::new();
    let id = game_vs_ai(&http, &base, 1).await;
    let reply = ai_reply(&http, &base, &id).await;
    let answered = worker
        .wait_line("the worker's answer", "job answered")
        .await;
    assert_eq!(field(&answered, "uci"), Some(reply.as_str()), "{answered}");
    let ready = worker.lines("worker ready");
    assert!(
        ready.iter().any(|line| line.contains("threads=1")),
        "{ready:?}"
    );
    assert!(node.lines("runs on this node").is_empty());
}

#[tokio::test]
async fn a_worker_killed_mid_search_gets_its_job_retried_elsewhere() {
    let nats = Nats::start();
    let db = TestDb::new_sqlite();
    let mut workers = [
        Proc::worker("worker-a", &nats).await,
        Proc::worker("worker-b", &nats).await,
    ];
    let (node, base) = Proc::node(&db, &nats).await;
    let http = reqwest::Client::new();
    // Level 8 thinks up to 6 s: time to kill the worker mid-search.
    let id = game_vs_ai(&http, &base, 8).await;
    let taken = within(SLOW, "a worker to take the job", async {
        loop {
            if let Some(i) = (0..2).find(|&i| !workers[i].lines("job received").is_empty()) {
                return i;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    workers[taken].kill().await;
    assert!(
        workers[taken].lines("job answered").is_empty(),
        "killed before it answered"
    );
    let reply = ai_reply(&http, &base, &id).await;
    let other = &workers[1 - taken];
    let answered = other
        .wait_line("the other worker's answer", "job answered")
        .await;
    assert_eq!(field(&answered, "attempt"), Some("2"), "{answered}");
    assert_eq!(field(&answered, "uci"), Some(reply.as_str()), "{answered}");
    assert!(!node.lines("no AI answer in time").is_empty());
    assert!(node.lines("runs on this node").is_empty());
}

#[tokio::test]
async fn stale_answers_are_dropped() {
    let nats = Nats::start();
    let db = TestDb::new_sqlite();
    let worker = Proc::worker("worker", &nats).await;
    let (node, base) = Proc::node(&db, &nats).await;
    // A client of the test's own sees every job (a plain subscriber, not
    // in the workers' queue group) and answers first, wrongly.
    let forger = async_nats::connect(nats.url()).await.unwrap();
    let mut jobs = forger.subscribe("rookery.ai.search").await.unwrap();
    forger.flush().await.unwrap();
    let http = reqwest::Client::new();
    // Level 5 thinks up to 0.6 s: the forged answers arrive first.
    let id = game_vs_ai(&http, &base, 5).await;
    let job = within(WAIT, "the job", jobs.next()).await.unwrap();
    let reply = job.reply.clone().unwrap();
    let message: Value = serde_json::from_slice(&job.payload).unwrap();
    assert_eq!(message["ply"], 1);
    // "d7d5" is legal here; each answer is wrong in one way.
    let forge = |attempt: u64, ply: u64| {
        json!({"job": message["job"], "attempt": attempt, "ply": ply,
               "worker": "forger", "uci": "d7d5", "error": null})
        .to_string()
    };
    let attempt = message["attempt"].as_u64().unwrap();
    // An earlier ply (a game that moved on), and a later attempt, on the
    // job's own reply subject; then a right answer on another attempt's
    // subject (the late answer of an attempt given up).
    for (subject, payload) in [
        (reply.to_string(), forge(attempt, 0)),
        (reply.to_string(), forge(attempt + 1, 1)),
        (
            format!("{}.9", reply.rsplit_once('.').unwrap().0),
            forge(9, 1),
        ),
    ] {
        forger.publish(subject, payload.into()).await.unwrap();
    }
    forger.flush().await.unwrap();
    let reply_move = ai_reply(&http, &base, &id).await;
    let answered = worker
        .wait_line("the worker's answer", "job answered")
        .await;
    assert_eq!(
        field(&answered, "uci"),
        Some(reply_move.as_str()),
        "{answered}"
    );
    within(WAIT, "three drops logged", async {
        while node.lines("stale AI answer dropped").len() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(node.lines("runs on this node").is_empty());
}

#[tokio::test]
async fn without_workers_the_node_searches_itself() {
    let mut nats = Nats::start();
    let db = TestDb::new_sqlite();
    let (node, base) = Proc::node(&db, &nats).await;
    let http = reqwest::Client::new();
    // NATS is up but nobody takes jobs: "no responders", at once.
    let id = game_vs_ai(&http, &base, 1).await;
    ai_reply(&http, &base, &id).await;
    let line = node.wait_line("the fallback", "runs on this node").await;
    assert!(line.contains("no worker is subscribed"), "{line}");
    // NATS down: the node does not wait for it either.
    nats.stop();
    let id = game_vs_ai(&http, &base, 1).await;
    ai_reply(&http, &base, &id).await;
    within(WAIT, "the second fallback", async {
        while node.lines("runs on this node").len() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

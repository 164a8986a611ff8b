//! AI searches run on their own threads at a lowered OS priority, and never
//! on the threads that serve requests and sockets: a running server has
//! exactly `--ai-threads` search threads at nice `--ai-nice`, the searches'
//! CPU time is spent on them, and a state still reaches a thousand
//! subscribers while every search thread is busy.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use support::*;
use tokio::process::Command;

/// One thread of a process, from `/proc/PID/task/TID/stat`.
#[derive(Debug)]
struct Task {
    name: String,
    nice: i64,
    /// User plus system CPU time, in clock ticks.
    cpu_ticks: u64,
}

/// The threads of process `pid` (`"self"` for this one).
fn tasks(pid: &str) -> Vec<Task> {
    let dir = format!("/proc/{pid}/task");
    let mut tasks = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read /proc/PID/task") {
        let path = entry.expect("a task").path();
        // A thread may end between the listing and the read.
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        tasks.push(parse_stat(&stat));
    }
    tasks
}

/// `TID (NAME) STATE PPID ...`: the name may hold spaces and parentheses,
/// so fields are counted from the last `)`. After it, field 3 (state) is
/// index 0: utime (14) is 11, stime (15) is 12, nice (19) is 16.
fn parse_stat(stat: &str) -> Task {
    let open = stat.find('(').expect("(");
    let close = stat.rfind(')').expect(")");
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let number = |index: usize| -> i64 { fields[index].parse().expect("a number") };
    Task {
        name: stat[open + 1..close].to_string(),
        nice: number(16),
        cpu_ticks: (number(11) + number(12)) as u64,
    }
}

fn search_threads(tasks: &[Task]) -> Vec<&Task> {
    tasks
        .iter()
        .filter(|task| task.name.starts_with("ai-search-"))
        .collect()
}

async fn start_server(db: &Path, extra: &[&str]) -> (tokio::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rookery-server"))
        .args(["--addr", "127.0.0.1:0", "--database"])
        .arg(db)
        .args(extra)
        .env("RUST_LOG", "warn")
        .env("ROOKERY_AI_MOVE_DELAY_MS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start rookery-server");
    let base = listening_base(&mut child).await;
    (child, base)
}

#[tokio::test]
async fn searches_run_on_their_own_threads_at_the_lowered_priority() {
    let db = TestDb::new();
    let (mut child, base) =
        start_server(&db.path(), &["--ai-threads", "3", "--ai-nice", "13"]).await;
    let pid = child.id().expect("a pid").to_string();

    // A new thread names itself and then lowers itself: wait (boundedly)
    // for the three, each at nice 13.
    let threads = within(WAIT, "three search threads at nice 13", async {
        loop {
            let threads = tasks(&pid);
            let search = search_threads(&threads);
            if search.len() == 3 && search.iter().all(|task| task.nice == 13) {
                return threads;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let mut names: Vec<_> = search_threads(&threads)
        .iter()
        .map(|task| task.name.as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["ai-search-0", "ai-search-1", "ai-search-2"]);
    // Only the search threads are lowered: the runtime's are not.
    for task in threads.iter().filter(|t| !t.name.starts_with("ai-search-")) {
        assert_eq!(task.nice, 0, "{task:?}");
    }

    // An AI v AI game at a level that thinks for a while: its moves are
    // searched on the search threads (they, not the others, gain the CPU
    // time), and they stay at their priority. A 20 s clock: level 8 spends
    // about a twentieth of it a move (up to five times that on a hard
    // one), so four moves come well within `WAIT` (at 60 s they took 16 s).
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{base}/api/games"))
        .json(
            &json!({"white": {"kind": "ai", "level": 8}, "black": {"kind": "ai", "level": 8},
                      "clock": {"initial": 20, "increment": 0}}),
        )
        .send()
        .await
        .expect("POST")
        .json()
        .await
        .expect("JSON");
    let id = created["game"]["id"].as_str().expect("id").to_string();
    within(WAIT, "the AI v AI game to play four moves", async {
        loop {
            let state: Value = http
                .get(format!("{base}/api/games/{id}"))
                .send()
                .await
                .expect("GET")
                .json()
                .await
                .expect("JSON");
            if moves(&state).len() >= 4 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let threads = tasks(&pid);
    let search = search_threads(&threads);
    assert_eq!(search.len(), 3);
    let searched: u64 = search.iter().map(|task| task.cpu_ticks).sum();
    assert!(
        searched > 0,
        "no CPU time on the search threads: {search:?}"
    );
    assert!(search.iter().all(|task| task.nice == 13), "{search:?}");
    child.kill().await.expect("kill");
}

/// AI v AI games that keep both search threads searching: level 8 on a
/// clock, no delay between moves.
const SHOWS: usize = 4;

/// How long each show may take to make its first move. With twice as
/// many shows as threads, the last two start searching only when the first
/// two have moved: on a one-minute clock level 8 aims at about 3 s a move,
/// and may take up to 15 s on a hard one (its hard limit), so two moves in
/// a row can take longer than [`WAIT`].
const FIRST_MOVES: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_reaches_a_thousand_subscribers_while_every_search_thread_is_busy() {
    raise_open_files_limit();
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ai.ai_threads = Some(2);
    config.ai.max_ai_games = Some(SHOWS);
    config.ai.max_ai_games_per_client = SHOWS;
    let server = TestServer::start(config).await;
    let mut shows = Vec::new();
    for _ in 0..SHOWS {
        let (game, _) = server
            .create_game(
                json!({"white": {"kind": "ai", "level": 8}, "black": {"kind": "ai", "level": 8},
                       "clock": {"initial": 60, "increment": 0}}),
                None,
            )
            .await;
        shows.push(game["id"].as_str().expect("id").to_string());
    }
    // Every show has moved: with more shows than threads, a search is
    // queued or running for each from now on.
    for id in &shows {
        server
            .wait_state_for(FIRST_MOVES, id, "the show to move", |s| {
                !moves(s).is_empty()
            })
            .await;
    }

    let searching = || -> u64 {
        let threads = tasks("self");
        let search = search_threads(&threads);
        assert_eq!(search.len(), 2, "{search:?}");
        search.iter().map(|task| task.cpu_ticks).sum()
    };
    let before = searching();

    a_move_reaches_spectators(&server, 1000).await;
    // The searches went on meanwhile (on their own threads), and the shows
    // are still being played.
    assert!(searching() > before, "the search threads did not search");
    for id in &shows {
        assert_eq!(server.state(id).await["status"], "active", "show {id}");
    }
    server.stop().await;
}

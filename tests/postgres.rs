//! The service on PostgreSQL (issue 13), whatever `ROOKERY_TEST_DATABASE`
//! says: a throwaway PostgreSQL server started by the test binary
//! (tests/support/cluster.rs), one new database per test. A representative
//! subset: a game to checkmate with lists and the scoreboard, the same
//! game seen after a restart, every acknowledged move kept through SIGKILL
//! of the real binary, and the two schemas kept alike.
//!
//! The whole black-box suite also runs on PostgreSQL with
//! `ROOKERY_TEST_DATABASE=postgres cargo test -p rookery-server`.

mod support;

use std::process::Stdio;

use serde_json::{json, Value};
use support::cluster::shared_postgres;
use support::*;
use tokio::process::Command;

async fn register(server: &TestServer, name: &str) -> String {
    let (status, player) = server
        .post("/api/players", None, Some(json!({ "name": name })))
        .await;
    assert_eq!(status, 201, "{player}");
    player["token"].as_str().expect("token").to_string()
}

fn listed(list: &Value, id: &str) -> bool {
    list["games"]
        .as_array()
        .expect("games")
        .iter()
        .any(|g| g["id"] == id)
}

#[tokio::test]
async fn a_game_lists_and_the_scoreboard_on_postgres() {
    let db = TestDb::on_postgres(shared_postgres());
    let server = TestServer::start(test_config(&db)).await;
    let alice = register(&server, "alice").await;
    let bob = register(&server, "bob").await;
    // A name differing only in case is taken (the unique index refuses the
    // write: a refusal, not a failure).
    let (status, answer) = server
        .post("/api/players", None, Some(json!({"name": "ALICE"})))
        .await;
    assert_eq!(status, 409, "{answer}");

    let (game, white) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
            Some(&alice),
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    let white = white.unwrap();
    let (_, seeks) = server.get("/api/games?status=waiting").await;
    assert!(listed(&seeks, &id), "{seeks}");
    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), Some(&bob), None)
        .await;
    assert_eq!(status, 200, "{joined}");
    let black = joined["seat"]["token"].as_str().unwrap().to_string();

    let mut spectator = WsClient::connect(&server, &id, None).await;
    spectator.next_state().await;
    let fools_mate = ["f2f3", "e7e5", "g2g4", "d8h4"];
    for (i, uci) in fools_mate.iter().enumerate() {
        let token = if i % 2 == 0 { &white } else { &black };
        let state = server.play(&id, token, uci).await;
        assert_eq!(moves(&state).len(), i + 1);
        let seen = spectator
            .state_where("the move broadcast", |g| moves(g).len() == i + 1)
            .await;
        assert_eq!(moves(&seen), moves(&state));
    }
    let state = server.state(&id).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["result"], "0-1");
    assert_eq!(state["san"], json!(["f3", "e5", "g4", "Qh4#"]));

    let (_, finished) = server.get("/api/games?status=finished").await;
    assert!(listed(&finished, &id), "{finished}");
    let from_list = finished["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(from_list["san"], state["san"]);
    assert_eq!(from_list["fen"], state["fen"]);
    let (_, active) = server.get("/api/games?status=active").await;
    assert!(!listed(&active, &id));

    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"], json!({"white": 0, "black": 1, "draws": 0}));
    assert_eq!(
        board["players"][0],
        json!({"name": "bob", "games": 1, "wins": 1, "losses": 0, "draws": 0,
               "rating": 1662, "rating_deviation": 290, "provisional": true})
    );
    assert_eq!(
        board["players"][1],
        json!({"name": "alice", "games": 1, "wins": 0, "losses": 1, "draws": 0,
               "rating": 1338, "rating_deviation": 290, "provisional": true})
    );
    server.stop().await;
}

#[tokio::test]
async fn a_restarted_server_on_postgres_continues_the_game() {
    let db = TestDb::on_postgres(shared_postgres());
    let server = TestServer::start(test_config(&db)).await;
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1},
                   "clock": {"initial": 600, "increment": 2}}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    let token = token.unwrap();
    server.play(&id, &token, "e2e4").await;
    let answered = server
        .wait_state(&id, "the AI's answer", |s| moves(s).len() == 2)
        .await;
    server.stop().await;

    let server = TestServer::start(test_config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(moves(&state), moves(&answered));
    assert_eq!(state["clock"]["running"], "white");
    let uci = state["legal_moves"][0].as_str().unwrap().to_string();
    server.play(&id, &token, &uci).await;
    server
        .wait_state(&id, "the AI's answer after the restart", |s| {
            moves(s).len() == 4 || s["status"] == "finished"
        })
        .await;
    server.stop().await;
}

/// The real binary on PostgreSQL, SIGKILLed after each acknowledged move:
/// the restarted server shows every acknowledged move.
#[tokio::test]
async fn every_acknowledged_move_survives_sigkill_on_postgres() {
    let db = TestDb::on_postgres(shared_postgres());
    let start = || async {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rookery-server"))
            .args(["--addr", "127.0.0.1:0", "--database", &db.url()])
            .env("RUST_LOG", "error")
            .env("ROOKERY_RATE_LIMIT", "10000")
            .env("ROOKERY_RATE_BURST", "10000")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start rookery-server");
        let base = listening_base(&mut child).await;
        (child, base)
    };
    let http = reqwest::Client::new();
    let (mut child, base) = start().await;
    let (status, created) = read(
        http.post(format!("{base}/api/games"))
            .json(&json!({"white": {"kind": "human"}, "black": {"kind": "human"}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["game"]["id"].as_str().unwrap().to_string();
    let white = created["seat"]["token"].as_str().unwrap().to_string();
    let (_, joined) = read(
        http.post(format!("{base}/api/games/{id}/join"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let black = joined["seat"]["token"].as_str().unwrap().to_string();
    let line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"];
    let mut base = base;
    for (i, uci) in line.iter().enumerate() {
        let token = if i % 2 == 0 { &white } else { &black };
        let (status, state) = read(
            http.post(format!("{base}/api/games/{id}/move"))
                .bearer_auth(token)
                .json(&json!({ "uci": uci }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{state}");
        assert_eq!(moves(&state).len(), i + 1);
        // Killed right after the acknowledgement.
        child.start_kill().unwrap();
        within(WAIT, "the killed server to exit", child.wait())
            .await
            .unwrap();
        let (next, next_base) = start().await;
        child = next;
        base = next_base;
        let (_, stored) = read(
            http.get(format!("{base}/api/games/{id}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(moves(&stored), line[..=i].to_vec(), "after kill {i}");
    }
    child.start_kill().unwrap();
    let _ = child.wait().await;
}

/// Every SQLite migration has its PostgreSQL edition, and both schemas end
/// with the same columns in the same tables: a migration added for one
/// database only fails here.
#[tokio::test]
async fn both_schemas_have_the_same_tables_and_columns() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
    let versions = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|entry| {
                let path = entry.unwrap().path();
                path.is_file()
                    .then(|| path.file_name().unwrap().to_string_lossy().to_string())
            })
            .filter(|name| name.ends_with(".sql"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(versions(&root), versions(&root.join("postgres")));

    // Both schemas, migrated by a server start.
    let sqlite = TestDb::new_sqlite();
    TestServer::start(test_config(&sqlite)).await.stop().await;
    let pg = TestDb::on_postgres(shared_postgres());
    TestServer::start(test_config(&pg)).await.stop().await;

    let reader = sqlx::SqlitePool::connect(&sqlite.url()).await.unwrap();
    let mut sqlite_columns: Vec<String> = sqlx::query_scalar(
        "SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name NOT LIKE '\\_sqlx%' ESCAPE '\\'
           AND m.name NOT LIKE 'sqlite%'",
    )
    .fetch_all(&reader)
    .await
    .unwrap();
    reader.close().await;
    sqlite_columns.sort();
    let postgres = shared_postgres().query(
        pg.postgres_database().unwrap(),
        "SELECT table_name || '.' || column_name FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name NOT LIKE '\\_sqlx%'
           AND NOT (table_name = 'games' AND column_name = 'rowid')
         ORDER BY 1",
    );
    let mut postgres_columns: Vec<String> = postgres.lines().map(str::to_string).collect();
    postgres_columns.sort();
    assert_eq!(sqlite_columns, postgres_columns);
}

//! The AI is bounded: a search that keeps failing ends its game instead of
//! hanging it, and AI v AI games are capped (and can be stopped by an
//! operator), restarts included; and a few clients keeping long searches
//! on every thread do not hold up another client's AI (issue 23), in the
//! scheduler and against the real server from several loopback addresses.
//! That a human's opponent is not stuck behind AI v AI searches (the AI
//! flood) is in `adversarial.rs`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use rookery_server::ai::{AiScheduler, SearchFn};
use rookery_server::live::game::LiveGame;
use rookery_server::live::Registry;
use rookery_server::protocol::{SeatKind, Side};
use rookery_server::store::Store;
use rookery_server::token::TokenHash;
use serde_json::{json, Value};
use support::*;
use tokio::time::Instant;
use uuid::Uuid;

/// A search that always panics.
fn broken_search() -> SearchFn {
    Arc::new(|_request, _budget, _stop| panic!("injected search failure"))
}

#[tokio::test]
async fn a_search_that_keeps_failing_aborts_its_game() {
    let db = TestDb::new();
    let store = Store::open(&db.url()).await.expect("store");
    let scheduler = AiScheduler::with_search(1, Duration::ZERO, broken_search());
    let registry = Registry::new(store.clone(), scheduler, Default::default());
    // The AI has white, so it must move first; the human holds black.
    let mut live = LiveGame::new(
        Uuid::new_v4(),
        0,
        [SeatKind::Ai { level: 1 }, SeatKind::Human],
        None,
        rookery_server::protocol::Variant::Standard,
        None,
    )
    .expect("game");
    live.take_seat(Side::Black, TokenHash::of("black"), None, Instant::now())
        .expect("seat");
    store
        .insert_game(&live.record(), &live.history())
        .await
        .expect("stored");
    let id = live.id;
    registry.insert(live).await.expect("live");
    let state = within(WAIT, "the game to end", async {
        loop {
            let state = registry.state(id).await.expect("state");
            if state.is_finished() {
                return state;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let state = serde_json::to_value(&state).expect("JSON");
    assert_eq!(state["termination"], "aborted", "{state}");
    assert_eq!(state["result"], Value::Null, "{state}");
    assert_eq!(state["moves"], json!([]), "{state}");
    // It is recorded: the database says the same.
    let stored = rookery_server::live::load_game(&store, id, Instant::now())
        .await
        .expect("load")
        .expect("stored game");
    assert!(stored.is_finished());
    registry.shutdown().await;
    store.close().await;
}

const ADMIN: &str = "operator-secret-0123456789";

/// Creates an AI v AI game claiming, through the trusted proxy, to come
/// from `client`.
async fn create_show(server: &TestServer, client: &str) -> (u16, Value) {
    let response = server
        .http
        .post(server.url("/api/games"))
        .header("x-forwarded-for", client)
        .json(&json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}}))
        .send()
        .await
        .expect("POST");
    read(response).await
}

async fn delete_game(server: &TestServer, id: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = server.http.delete(server.url(&format!("/api/games/{id}")));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    read(request.send().await.expect("DELETE")).await
}

/// At most `total` AI v AI games, 2 per client (read from a trusted
/// proxy's header), an admin token, and AI moves too slow to end a game.
fn capped(db: &TestDb, total: usize) -> rookery_server::Config {
    let mut config = test_config(db);
    config.ai.max_ai_games = Some(total);
    config.ai.max_ai_games_per_client = 2;
    config.ops.admin_token = Some(ADMIN.parse().expect("token"));
    config.http.trusted_proxies = vec!["127.0.0.1".parse().expect("range")];
    // One move a minute: no game ends by itself during the test.
    config.ai.ai_move_delay_ms = 60_000;
    config
}

#[tokio::test]
async fn ai_v_ai_games_are_capped_and_operators_can_stop_one() {
    let db = TestDb::new();
    let server = TestServer::start(capped(&db, 3)).await;

    let first = create_show(&server, "198.51.100.1").await;
    assert_eq!(first.0, 201, "{}", first.1);
    assert_eq!(create_show(&server, "198.51.100.1").await.0, 201);
    // The client's cap.
    let answer = create_show(&server, "198.51.100.1").await;
    assert_error(&answer, 429, "rate_limited");
    assert!(answer.1["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("per client"));
    // Another client, until the server's cap.
    assert_eq!(create_show(&server, "198.51.100.2").await.0, 201);
    let answer = create_show(&server, "198.51.100.3").await;
    assert_error(&answer, 429, "rate_limited");
    // Games with a human seat are not capped.
    server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}}),
            None,
        )
        .await;

    // The operator's DELETE: refused without the right token...
    let id = first.1["game"]["id"].as_str().expect("id").to_string();
    assert_error(&delete_game(&server, &id, None).await, 401, "unauthorized");
    assert_error(
        &delete_game(&server, &id, Some("not-the-admin-token")).await,
        401,
        "unauthorized",
    );
    assert_error(
        &delete_game(&server, &Uuid::new_v4().to_string(), Some(ADMIN)).await,
        404,
        "not_found",
    );
    assert_eq!(server.state(&id).await["status"], "active");
    // ...and with it, the game ends as aborted, and its place is free.
    let (status, stopped) = delete_game(&server, &id, Some(ADMIN)).await;
    assert_eq!(status, 200, "{stopped}");
    assert_eq!(stopped["status"], "finished");
    assert_eq!(stopped["termination"], "aborted");
    assert_eq!(stopped["result"], Value::Null);
    assert_eq!(server.state(&id).await["termination"], "aborted");
    assert_error(
        &delete_game(&server, &id, Some(ADMIN)).await,
        409,
        "game_over",
    );
    assert_eq!(create_show(&server, "198.51.100.1").await.0, 201);
    server.stop().await;
}

#[tokio::test]
async fn without_an_admin_token_operator_actions_are_off() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (game, _) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
            None,
        )
        .await;
    let id = game["id"].as_str().expect("id");
    assert_error(
        &delete_game(&server, id, Some(ADMIN)).await,
        403,
        "forbidden",
    );
    assert_eq!(server.state(id).await["status"], "waiting");
    server.stop().await;
}

#[tokio::test]
async fn ai_v_ai_games_resumed_after_a_restart_still_count_in_the_cap() {
    let db = TestDb::new();
    let config = || capped(&db, 2);
    let server = TestServer::start(config()).await;
    let mut ids = Vec::new();
    for client in ["198.51.100.1", "198.51.100.2"] {
        let (status, created) = create_show(&server, client).await;
        assert_eq!(status, 201, "{created}");
        ids.push(created["game"]["id"].as_str().expect("id").to_string());
    }
    assert_error(
        &create_show(&server, "198.51.100.3").await,
        429,
        "rate_limited",
    );
    server.stop().await;

    // After the restart the two games run again and fill the server's cap.
    let server = TestServer::start(config()).await;
    for id in &ids {
        assert_eq!(server.state(id).await["status"], "active");
    }
    let answer = create_show(&server, "198.51.100.3").await;
    assert_error(&answer, 429, "rate_limited");
    println!("after a restart: {}", answer.1["error"]["message"]);
    // Their creators are not stored: they count for no client, so the
    // refusal is the server's cap.
    assert!(answer.1["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("server"));
    // One ends (an operator stops it): its place is free again.
    let (status, stopped) = delete_game(&server, &ids[0], Some(ADMIN)).await;
    assert_eq!(status, 200, "{stopped}");
    let (status, created) = create_show(&server, "198.51.100.3").await;
    assert_eq!(status, 201, "{created}");
    assert_error(
        &create_show(&server, "198.51.100.4").await,
        429,
        "rate_limited",
    );
    server.stop().await;
}

// ---------------------------------------------------------------------------
// Fairness across clients: two or three addresses holding long searches do
// not hold up a newcomer's short one (issue 23).

/// A scheduler test: `hostile` clients each ask for two searches that run
/// until stopped, on two threads; then a newcomer's search (which answers
/// at once) must get a thread within `bound`. Returns how long it took.
async fn newcomer_among(hostile: usize) -> Duration {
    use rookery_engine::Position;
    use rookery_server::ai::{Priority, SearchRequest};
    use std::net::IpAddr;
    use std::sync::atomic::Ordering;

    let newcomer: IpAddr = "192.0.2.100".parse().unwrap();
    let search: SearchFn = Arc::new(move |request, _budget, stop| {
        if request.client != Some(newcomer) {
            // A master's long think: it runs until stopped.
            while !stop.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let position = Position::startpos();
        Ok(position.legal_moves().into_iter().next())
    });
    let scheduler = AiScheduler::with_search(2, Duration::ZERO, search);
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let request = |ply: usize, client: IpAddr| SearchRequest {
        ply,
        position: Position::startpos(),
        history: Vec::new(),
        level: 8,
        clock: None,
        priority: Priority::Human,
        client: Some(client),
    };
    let mut held = Vec::new();
    for index in 0..hostile {
        let client: IpAddr = format!("192.0.2.{}", index + 1).parse().unwrap();
        for game in 0..2 {
            held.push(scheduler.start(request(100 + index * 10 + game, client), tx.clone()));
        }
    }
    // The hostile searches have held the threads for a while (as a flood
    // that started before the newcomer came would).
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(scheduler.stats().running, 2);
    let asked = Instant::now();
    let _newcomer = scheduler.start(request(1, newcomer), tx.clone());
    let answer = tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("the newcomer's search ran within 20 s")
        .expect("an answer");
    let took = asked.elapsed();
    assert_eq!(answer.ply, 1, "only the newcomer's search ends by itself");
    drop(held);
    took
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomers_search_runs_at_once_while_two_clients_hold_every_thread() {
    let took = newcomer_among(2).await;
    println!("newcomer among 2 hostile clients: {} ms", took.as_millis());
    assert!(took < Duration::from_millis(500), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomers_search_runs_at_once_while_three_clients_hold_every_thread() {
    let took = newcomer_among(3).await;
    println!("newcomer among 3 hostile clients: {} ms", took.as_millis());
    assert!(took < Duration::from_millis(500), "{took:?}");
}

/// An HTTP client whose connections come from `source` (any 127.x.y.z
/// address is this machine's loopback on Linux): the server sees each as
/// another client, with no proxy header.
fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(source.parse::<std::net::IpAddr>().expect("address"))
        .build()
        .expect("client")
}

async fn call(request: reqwest::RequestBuilder) -> (u16, Value) {
    read(request.send().await.expect("request")).await
}

/// How a client makes its games against the computer and moves in them:
/// Rookery's own API (a seat token per game), or lichess's (`POST
/// /api/challenge/ai` and the Board API, with an account's token).
#[derive(Clone)]
enum Route {
    Rookery,
    Lichess { account: String },
}

impl Route {
    /// Rookery's route, or lichess's for a new account `name`.
    async fn new(server: &TestServer, lichess: bool, name: &str) -> Route {
        if lichess {
            Route::Lichess {
                account: server.register(name).await,
            }
        } else {
            Route::Rookery
        }
    }

    /// A new untimed game with the player white against `level`: its id
    /// and the credential its moves take.
    async fn create(&self, http: &reqwest::Client, base: &str, level: u8) -> (String, String) {
        match self {
            Route::Rookery => {
                let (status, created) = call(http.post(format!("{base}/api/games")).json(
                    &json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": level}}),
                ))
                .await;
                assert_eq!(status, 201, "{created}");
                (
                    created["game"]["id"].as_str().expect("id").to_string(),
                    created["seat"]["token"]
                        .as_str()
                        .expect("token")
                        .to_string(),
                )
            }
            Route::Lichess { account } => {
                let (status, created) = call(
                    http.post(format!("{base}/api/challenge/ai"))
                        .bearer_auth(account)
                        .form(&[("level", level.to_string()), ("color", "white".into())]),
                )
                .await;
                assert_eq!(status, 200, "{created}");
                let id = created["id"].as_str().expect("id").to_string();
                (id, account.clone())
            }
        }
    }

    fn play(
        &self,
        http: &reqwest::Client,
        base: &str,
        id: &str,
        credential: &str,
        uci: &str,
    ) -> reqwest::RequestBuilder {
        match self {
            Route::Rookery => http
                .post(format!("{base}/api/games/{id}/move"))
                .bearer_auth(credential)
                .json(&json!({ "uci": uci })),
            Route::Lichess { .. } => http
                .post(format!("{base}/api/board/game/{id}/move/{uci}"))
                .bearer_auth(credential),
        }
    }
}

/// A hostile player: keeps `games` untimed games against a master (level
/// 8) searching, moving at once whenever it is their turn, until `stop`.
async fn keep_masters_thinking(
    base: String,
    http: reqwest::Client,
    route: Route,
    games: usize,
    stop: Arc<std::sync::atomic::AtomicBool>,
) {
    use std::sync::atomic::Ordering;
    let create = || route.create(&http, &base, 8);
    let mut held = Vec::new();
    for _ in 0..games {
        held.push(create().await);
    }
    let mut turn = 0usize;
    while !stop.load(Ordering::Acquire) {
        for slot in held.iter_mut() {
            let (status, state) = call(http.get(format!("{base}/api/games/{}", slot.0))).await;
            assert_eq!(status, 200, "{state}");
            if state["status"] == "finished" {
                *slot = create().await;
                continue;
            }
            if state["turn"] != "white" {
                continue;
            }
            let legal = state["legal_moves"].as_array().cloned().unwrap_or_default();
            if legal.is_empty() {
                continue;
            }
            turn += 1;
            let uci = legal[turn % legal.len()]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let (status, state) = call(route.play(&http, &base, &slot.0, &slot.1, &uci)).await;
            assert!(
                status == 200 || status == 409 || status == 400,
                "{status}: {state}"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Two threads (the 2-core machine), `hostile` loopback addresses each
/// keeping two untimed level-8 games searching; a player from another
/// address plays three moves against level 1. Returns each reply's time.
/// With `lichess`, every game is made and played through lichess's routes
/// (`POST /api/challenge/ai`, the Board API) by accounts.
async fn level_one_replies_among(hostile: usize, lichess: bool) -> Vec<Duration> {
    use std::sync::atomic::{AtomicBool, Ordering};
    // Each of these tests wants the machine's cores to itself.
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ai.ai_threads = Some(2);
    let server = TestServer::start(config).await;
    let base = format!("http://{}", server.addr);
    let stop = Arc::new(AtomicBool::new(false));
    let mut floods = Vec::new();
    for index in 0..hostile {
        let http = client_from(&format!("127.0.0.{}", index + 2));
        floods.push(tokio::spawn(keep_masters_thinking(
            base.clone(),
            http,
            Route::new(&server, lichess, &format!("hostile{index}")).await,
            2,
            stop.clone(),
        )));
    }
    // Let the masters think for a while: every thread busy, and more
    // searches queued than threads.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let player = client_from("127.0.0.20");
    let route = Route::new(&server, lichess, "player").await;
    let (id, token) = route.create(&player, &base, 1).await;
    let mut times = Vec::new();
    for (ply, uci) in ["e2e4", "g1f3", "f1c4"].into_iter().enumerate() {
        let asked = Instant::now();
        let (status, state) = call(route.play(&player, &base, &id, &token, uci)).await;
        assert_eq!(status, 200, "{uci}: {state}");
        let ply = 2 * ply + 1;
        within(WAIT, "the level-1 AI's reply", async {
            loop {
                let (_, state) = call(player.get(format!("{base}/api/games/{id}"))).await;
                if moves(&state).len() > ply || state["status"] == "finished" {
                    assert_eq!(state["status"], "active", "{state}");
                    return;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        times.push(asked.elapsed());
        // A human's pause before the next move.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stop.store(true, Ordering::Release);
    for flood in floods {
        flood.await.expect("the hostile client ran");
    }
    server.stop().await;
    times
}

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The bound on a level-1 reply (its think time is at most 200 ms, and
/// about 10 ms in practice) while hostile addresses hold every thread:
/// generous for a loaded CI machine, far below the 4-8 s of first come,
/// first served.
const LEVEL_ONE_BOUND: Duration = Duration::from_millis(1_500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_one_reply_is_prompt_while_two_addresses_hold_masters_thinking() {
    let times = level_one_replies_among(2, false).await;
    println!("level-1 replies with 2 hostile addresses: {times:?}");
    for took in &times {
        assert!(*took < LEVEL_ONE_BOUND, "{times:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_one_reply_is_prompt_while_three_addresses_hold_masters_thinking() {
    let times = level_one_replies_among(3, false).await;
    println!("level-1 replies with 3 hostile addresses: {times:?}");
    for took in &times {
        assert!(*took < LEVEL_ONE_BOUND, "{times:?}");
    }
}

/// Issue 35: games made through lichess's `POST /api/challenge/ai` take
/// turns with other clients' too (they were served first come, first
/// served: one account's masters left another's game without a reply).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_one_reply_is_prompt_while_lichess_ai_games_hold_masters_thinking() {
    let times = level_one_replies_among(2, true).await;
    println!("level-1 replies (lichess routes) with 2 hostile addresses: {times:?}");
    for took in &times {
        assert!(*took < LEVEL_ONE_BOUND, "{times:?}");
    }
}

//! Lists of games are read from the database in one query; they must still
//! show what each game's own read shows, presence included for games being
//! watched right now.

mod support;

use serde_json::{json, Value};
use support::*;

/// `state` without the running clock's reading (it moves between reads).
fn steady(mut state: Value) -> Value {
    if let Some(clock) = state["clock"].as_object_mut() {
        clock.remove("white_ms");
        clock.remove("black_ms");
    }
    state
}

#[tokio::test]
async fn a_list_shows_what_each_game_shows() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (played, white, black) = server
        .human_game(json!({"clock": {"initial": 300, "increment": 2}}))
        .await;
    for (token, uci) in [(&white, "e2e4"), (&black, "c7c5"), (&white, "g1f3")] {
        server.play(&played, token, uci).await;
    }
    let (waiting, _) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "black"}),
            None,
        )
        .await;
    let waiting = waiting["id"].as_str().unwrap().to_string();
    let (resigned, white2, _) = server.human_game(json!({})).await;
    server
        .post(
            &format!("/api/games/{resigned}/resign"),
            Some(&white2),
            None,
        )
        .await;
    let mut watcher = WsClient::connect(&server, &played, None).await;
    let mut player = WsClient::connect(&server, &played, Some(&black)).await;
    watcher.next_state().await;
    player
        .state_where("black connected", |s| s["black"]["connected"] == true)
        .await;

    let (status, list) = server.get("/api/games").await;
    assert_eq!(status, 200, "{list}");
    let ids: Vec<&str> = list["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [&resigned, &waiting, &played], "newest first");
    for listed in list["games"].as_array().unwrap() {
        let id = listed["id"].as_str().unwrap();
        let read = server.state(id).await;
        assert_eq!(steady(listed.clone()), steady(read), "game {id}");
    }
    let watched = &list["games"][2];
    assert_eq!(watched["spectators"], 1);
    assert_eq!(watched["black"]["connected"], true);
    assert_eq!(watched["white"]["connected"], false);
    assert_eq!(watched["san"], json!(["e4", "c5", "Nf3"]));

    let (_, active) = server.get("/api/games?status=active").await;
    let active: Vec<&str> = active["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(active, [&waiting, &played]);
    let (_, finished) = server.get("/api/games?status=finished&limit=1").await;
    assert_eq!(finished["games"][0]["termination"], "resignation");
    assert_eq!(finished["games"].as_array().unwrap().len(), 1);
    server.stop().await;
}

//! Tournaments across the nodes of a cluster (issues 38 and 39): real
//! `rookery-server` processes on one throwaway PostgreSQL and one
//! throwaway `nats-server`, players on every node. One node directs an
//! arena (a lease in its row) or a Swiss (a lease with an epoch) at a
//! time; the director is SIGKILLed in the middle, another node takes
//! direction over, no finished game's result or score is lost, and
//! pairing goes on.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use support::cluster::{shared_postgres, Nats, Proc};
use support::nodes::{get, lease, node_with, play_until_accepted, post};
use support::*;

/// The arena director's lease and wave, short for the test.
const ARENA_FLAGS: &[&str] = &["--arena-lease-ms", "2000", "--arena-wave-ms", "200"];

/// Long enough for a lease to run out and another node to take it on a
/// loaded machine.
const TAKEOVER: Duration = Duration::from_secs(40);

/// A person signed up on `base`, with a token of the `play` and
/// `challenge` scopes.
async fn member(base: &str, name: &str) -> String {
    signed_up(base, name).await.0
}

/// A person signed up on `base`: a token of the `play` and `challenge`
/// scopes, and the session's cookie (for the web's sockets).
async fn signed_up(base: &str, name: &str) -> (String, String) {
    let account = account_at(base, name, &["play", "challenge"]).await;
    (account.token, account.cookie)
}

/// The node's name in the leases (its log's `cluster member` line).
async fn node_name(node: &Proc) -> String {
    let line = node.wait_line("the node's name", "cluster member").await;
    let start = line.find(" node=").expect("node=") + " node=".len();
    line[start..]
        .split_whitespace()
        .next()
        .expect("a name")
        .to_string()
}

fn sql(db: &TestDb, query: &str) -> String {
    shared_postgres().query(db.postgres_database().expect("PostgreSQL"), query)
}

/// A person on their own node.
#[derive(Clone)]
struct Person {
    name: &'static str,
    token: String,
    base: String,
}

/// The person's active games: (id, colour).
async fn playing(person: &Person) -> Vec<(String, String)> {
    let (status, playing) = read(
        reqwest::Client::new()
            .get(format!("{}/api/account/playing", person.base))
            .bearer_auth(&person.token)
            .send()
            .await
            .expect("playing"),
    )
    .await;
    assert_eq!(status, 200, "{playing}");
    playing["nowPlaying"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| {
            (
                g["gameId"].as_str().unwrap_or_default().to_string(),
                g["color"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The person's game not in `old`, once paired: (id, colour).
async fn new_game(person: &Person, old: &[String]) -> (String, String) {
    within(
        TAKEOVER,
        &format!("a new game for {}", person.name),
        async {
            loop {
                if let Some(game) = playing(person)
                    .await
                    .into_iter()
                    .find(|(id, _)| !old.contains(id))
                {
                    return game;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        },
    )
    .await
}

/// Polls `path` on `base` until `done` holds.
async fn get_until(base: &str, path: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    within(TAKEOVER, what, async {
        loop {
            let (status, value) = get(base, path).await;
            if status == 200 && done(&value) {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
}

/// `person` moves `uci` in `game`, through their own node, waiting out a
/// takeover (503) if there is one.
async fn moves(person: &Person, game: &str, uci: &str) {
    play_until_accepted(&person.base, game, &person.token, uci).await;
}

async fn resign(person: &Person, game: &str) {
    within(WAIT, "the resignation", async {
        loop {
            let (status, answer) = post(
                &person.base,
                &format!("/api/games/{game}/resign"),
                Some(&person.token),
                json!({}),
            )
            .await;
            if status == 200 {
                return;
            }
            assert_eq!(status, 503, "resign: {answer}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}

type Page =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The arena's WebSocket on `base`, as the web page opens it for the
/// person of `cookie`.
async fn arena_page(base: &str, id: &str, cookie: &str) -> Page {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let url = format!("{}/ws/arenas/{id}", base.replacen("http://", "ws://", 1));
    let mut request = url.into_client_request().expect("a request");
    request
        .headers_mut()
        .insert("cookie", cookie.parse().expect("a header"));
    within(
        WAIT,
        "the arena's socket",
        tokio_tungstenite::connect_async(request),
    )
    .await
    .expect("the arena's socket")
    .0
}

/// The page's next `paired` message: (game, colour).
async fn paired_on(page: &mut Page) -> (String, String) {
    use futures_util::StreamExt;
    within(TAKEOVER, "the page told of the pairing", async {
        loop {
            let frame = page.next().await.expect("open").expect("a frame");
            let tokio_tungstenite::tungstenite::Message::Text(text) = frame else {
                continue;
            };
            let message: Value = serde_json::from_str(&text).expect("JSON");
            if message["type"] == "paired" {
                return (
                    message["game_id"].as_str().expect("game").to_string(),
                    message["color"].as_str().expect("colour").to_string(),
                );
            }
        }
    })
    .await
}

/// An arena's standing lines by name: (score, games).
fn arena_scores(arena: &Value) -> HashMap<String, (i64, i64)> {
    arena["standing"]["players"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default().to_string(),
                (
                    p["score"].as_i64().unwrap_or(-1),
                    p["nb"]["game"].as_i64().unwrap_or(-1),
                ),
            )
        })
        .collect()
}

#[tokio::test]
async fn an_arena_goes_on_when_its_director_is_killed() {
    let db = TestDb::on_postgres(shared_postgres());
    let nats = Nats::start();
    let (a, a_base) = node_with("a", &db, &nats.url(), ARENA_FLAGS).await;
    let (b, b_base) = node_with("b", &db, &nats.url(), ARENA_FLAGS).await;
    let names = HashMap::from([(node_name(&a).await, "a"), (node_name(&b).await, "b")]);
    let mut nodes = HashMap::from([("a", (a, a_base.clone())), ("b", (b, b_base.clone()))]);
    // In name order (the standings' order before any game), the nodes
    // alternate: close ranks are paired across nodes.
    let mut people = Vec::new();
    let mut cookies = HashMap::new();
    for (name, base) in [
        ("ann", &a_base),
        ("bob", &b_base),
        ("cat", &a_base),
        ("dan", &b_base),
    ] {
        let (token, cookie) = signed_up(base, name).await;
        cookies.insert(name, cookie);
        people.push(Person {
            name,
            token,
            base: base.clone(),
        });
    }
    let (status, arena) = post(
        &a_base,
        "/api/tournament",
        Some(&people[0].token),
        json!({"name": "Cluster night", "clockTime": 5, "clockIncrement": 0, "minutes": 60,
               "waitMinutes": 0, "rated": true}),
    )
    .await;
    assert_eq!(status, 200, "{arena}");
    let id = arena["id"].as_str().expect("id").to_string();
    // The arena's web page of a player of each node: each is told of its
    // pairing, whichever node directs.
    let mut pages = Vec::new();
    for person in &people[..2] {
        pages.push(arena_page(&person.base, &id, &cookies[person.name]).await);
    }
    for person in &people {
        let (status, joined) = post(
            &person.base,
            &format!("/api/tournament/{id}/join"),
            Some(&person.token),
            json!({}),
        )
        .await;
        assert_eq!(status, 200, "{} joins: {joined}", person.name);
    }

    // Everyone is paired, whichever node they are on.
    let mut games: HashMap<&str, (String, String)> = HashMap::new();
    for person in &people {
        games.insert(person.name, new_game(person, &[]).await);
    }
    let director = sql(
        &db,
        &format!("SELECT director FROM arenas WHERE id = '{id}'"),
    );
    let director = names[director.as_str()];
    let survivor = if director == "a" { "b" } else { "a" };
    for (person, page) in people.iter().zip(&mut pages) {
        let told = paired_on(page).await;
        assert_eq!(
            told, games[person.name],
            "{} on {} told of the pairing ({director} directs)",
            person.name, person.base
        );
    }
    drop(pages);
    let by_game = |game: &str, colour: &str| -> Person {
        people
            .iter()
            .find(|p| games[p.name].0 == game && games[p.name].1 == colour)
            .cloned()
            .unwrap_or_else(|| panic!("the {colour} player of {game}"))
    };
    let mut pairs: Vec<String> = games.values().map(|(game, _)| game.clone()).collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 2, "two games for four players: {games:?}");
    for game in &pairs {
        let (white, black) = (by_game(game, "white"), by_game(game, "black"));
        assert_ne!(
            white.base, black.base,
            "{} and {} are on different nodes",
            white.name, black.name
        );
    }

    // The second game is going on when the director dies...
    let (first, second) = (&pairs[0], &pairs[1]);
    let (w2, b2) = (by_game(second, "white"), by_game(second, "black"));
    moves(&w2, second, "d2d4").await;
    moves(&b2, second, "d7d5").await;
    // ... and the first has just ended (white wins), perhaps not yet
    // scored by the director.
    let (w1, b1) = (by_game(first, "white"), by_game(first, "black"));
    moves(&w1, first, "e2e4").await;
    moves(&b1, first, "e7e5").await;
    resign(&b1, first).await;

    nodes.get_mut(director).expect("director").0.kill().await;
    let survivor_base = nodes[survivor].1.clone();
    let survivor_name = names
        .iter()
        .find(|(_, n)| **n == survivor)
        .map(|(name, _)| name.clone())
        .expect("the survivor's name");
    // Its players come back through the survivor, as clients reconnect.
    let on_survivor = |p: &Person| Person {
        base: survivor_base.clone(),
        ..p.clone()
    };
    let (w2, b2) = (on_survivor(&w2), on_survivor(&b2));
    moves(&w2, second, "c2c4").await;
    resign(&b2, second).await;

    // The survivor directs now; both results count, once each.
    let arena = get_until(
        &survivor_base,
        &format!("/api/tournament/{id}"),
        "game 2 scored by the new director",
        |a| arena_scores(a).get(w2.name) == Some(&(2, 1)),
    )
    .await;
    let scores = arena_scores(&arena);
    assert_eq!(scores[w1.name], (2, 1), "{arena}");
    assert_eq!(scores[b1.name], (0, 1), "{arena}");
    assert_eq!(scores[b2.name], (0, 1), "{arena}");
    assert_eq!(
        sql(
            &db,
            &format!("SELECT director FROM arenas WHERE id = '{id}'")
        ),
        survivor_name
    );
    assert_eq!(
        sql(
            &db,
            &format!("SELECT COUNT(*) FROM arena_pairings WHERE arena_id = '{id}' AND settled")
        ),
        "2"
    );

    // And pairing goes on: everyone gets a new game, made by the
    // survivor (which holds its lease), no immediate rematch.
    let old = pairs.clone();
    let mut next = HashMap::new();
    for person in &people {
        let person = on_survivor(person);
        let (game, colour) = new_game(&person, &old).await;
        assert_eq!(lease(&db, &game).0, survivor_name, "{game}");
        next.insert(person.name, (game, colour));
    }
    for (first, second) in [(&w1, &b1), (&w2, &b2)] {
        assert_ne!(
            next[first.name].0, next[second.name].0,
            "{} and {} paired again at once",
            first.name, second.name
        );
    }
    // A game of the new director's ends and counts.
    let (game, colour) = next[w1.name].clone();
    let opponent = people
        .iter()
        .find(|p| p.name != w1.name && next[p.name].0 == game)
        .map(on_survivor)
        .expect("the opponent");
    let me = on_survivor(&w1);
    let (white, black) = if colour == "white" {
        (&me, &opponent)
    } else {
        (&opponent, &me)
    };
    moves(white, &game, "g1f3").await;
    moves(black, &game, "g8f6").await;
    resign(&opponent, &game).await;
    get_until(
        &survivor_base,
        &format!("/api/tournament/{id}"),
        "a result of the new director's",
        |a| arena_scores(a).get(w1.name) == Some(&(4, 2)),
    )
    .await;
}

/// A Swiss's pairings of `round`: (white, black, game, result) by names.
fn round_games(swiss: &Value, round: usize) -> Vec<(String, String, String, Value)> {
    swiss["rounds"][round - 1]["pairings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            Some((
                p["white"].as_str()?.to_string(),
                p["black"].as_str()?.to_string(),
                p["gameId"].as_str()?.to_string(),
                p["result"].clone(),
            ))
        })
        .collect()
}

/// The standings by name: points.
fn swiss_points(swiss: &Value) -> HashMap<String, f64> {
    swiss["standings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|line| {
            (
                line["username"].as_str().unwrap_or_default().to_string(),
                line["points"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_swiss_goes_on_when_its_director_is_killed_between_and_during_rounds() {
    let db = TestDb::on_postgres(shared_postgres());
    let nats = Nats::start();
    let (a, a_base) = node_with("a", &db, &nats.url(), &[]).await;
    let (b, b_base) = node_with("b", &db, &nats.url(), &[]).await;
    let mut names = HashMap::from([
        (node_name(&a).await, "a".to_string()),
        (node_name(&b).await, "b".to_string()),
    ]);
    let mut nodes: HashMap<String, (Proc, String)> = HashMap::from([
        ("a".to_string(), (a, a_base.clone())),
        ("b".to_string(), (b, b_base.clone())),
    ]);
    let leader = Person {
        name: "lea",
        token: member(&a_base, "lea").await,
        base: a_base.clone(),
    };
    let (status, team) = post(
        &a_base,
        "/api/team",
        Some(&leader.token),
        json!({"name": "Cluster Club"}),
    )
    .await;
    assert_eq!(status, 200, "{team}");
    let mut people: HashMap<&str, Person> = HashMap::new();
    for (name, base) in [
        ("ann", &a_base),
        ("bob", &b_base),
        ("cat", &a_base),
        ("dan", &b_base),
    ] {
        let person = Person {
            name,
            token: member(base, name).await,
            base: base.clone(),
        };
        let (status, joined) = post(
            base,
            "/team/cluster-club/join",
            Some(&person.token),
            json!({}),
        )
        .await;
        assert_eq!(status, 200, "{joined}");
        people.insert(name, person);
    }
    let (status, created) = post(
        &a_base,
        "/api/swiss/new/cluster-club",
        Some(&leader.token),
        json!({"name": "Cluster Swiss", "clock.limit": 300, "clock.increment": 0,
               "nbRounds": 3, "roundInterval": 99_999_999,
               "startsAt": 4_102_444_800_000i64, "rated": false}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let id = created["id"].as_str().expect("id").to_string();
    for person in people.values() {
        let (status, joined) = post(
            &person.base,
            &format!("/api/swiss/{id}/join"),
            Some(&person.token),
            json!({}),
        )
        .await;
        assert_eq!(status, 200, "{joined}");
    }
    let path = format!("/api/swiss/{id}");
    let schedule = |base: String| {
        let token = leader.token.clone();
        let id = id.clone();
        async move {
            let (status, answer) = post(
                &base,
                &format!("/api/swiss/{id}/schedule-next-round"),
                Some(&token),
                json!({"date": 0}),
            )
            .await;
            assert_eq!(status, 200, "schedule: {answer}");
        }
    };
    let director_of =
        |db: &TestDb| sql(db, &format!("SELECT director FROM swiss WHERE id = '{id}'"));

    // Round 1, played to its end.
    schedule(a_base.clone()).await;
    let state = get_until(&a_base, &path, "round 1 paired", |s| s["round"] == 1).await;
    let round1 = round_games(&state, 1);
    assert_eq!(round1.len(), 2, "{state}");
    for (white, black, game, _) in &round1 {
        moves(&people[white.as_str()], game, "e2e4").await;
        moves(&people[black.as_str()], game, "e7e5").await;
        resign(&people[black.as_str()], game).await;
    }
    let after1 = get_until(&a_base, &path, "round 1 over", |s| {
        s["nbOngoing"] == 0 && round_games(s, 1).iter().all(|g| g.3 == "1-0")
    })
    .await;
    let points1 = swiss_points(&after1);

    // The director dies between rounds; the survivor pairs round 2.
    let director = names[&director_of(&db)].clone();
    let survivor = if director == "a" { "b" } else { "a" }.to_string();
    nodes.get_mut(&director).expect("director").0.kill().await;
    let survivor_base = nodes[&survivor].1.clone();
    for person in people.values_mut() {
        if person.base == nodes[&director].1 {
            person.base = survivor_base.clone();
        }
    }
    schedule(survivor_base.clone()).await;
    let state = get_until(
        &survivor_base,
        &path,
        "round 2 paired by the survivor",
        |s| s["round"] == 2,
    )
    .await;
    assert_eq!(names[&director_of(&db)], survivor, "the survivor directs");
    assert_eq!(swiss_points(&state), points1, "round 1 as it was: {state}");
    assert_eq!(round_games(&state, 1), round_games(&after1, 1));
    let round2 = round_games(&state, 2);
    assert_eq!(round2.len(), 2, "{state}");
    for (white, black, _, _) in &round2 {
        assert!(
            !round1
                .iter()
                .any(|(w, b, _, _)| (w, b) == (white, black) || (w, b) == (black, white)),
            "{white} and {black} meet twice"
        );
    }

    // A new node joins; the director dies again in the middle of round 2,
    // with one game over and one going on.
    let (c, c_base) = node_with("c", &db, &nats.url(), &[]).await;
    names.insert(node_name(&c).await, "c".to_string());
    nodes.insert("c".to_string(), (c, c_base.clone()));
    let (white, black, done, _) = &round2[0];
    moves(&people[white.as_str()], done, "d2d4").await;
    moves(&people[black.as_str()], done, "d7d5").await;
    resign(&people[white.as_str()], done).await;
    get_until(&survivor_base, &path, "board 1's result", |s| {
        round_games(s, 2)[0].3 == "0-1"
    })
    .await;
    let (white, black, going, _) = round2[1].clone();
    moves(&people[white.as_str()], &going, "c2c4").await;
    moves(&people[black.as_str()], &going, "c7c5").await;
    let director = names[&director_of(&db)].clone();
    assert_eq!(director, survivor, "still the survivor's");
    nodes.get_mut(&director).expect("director").0.kill().await;
    for person in people.values_mut() {
        person.base = c_base.clone();
    }
    moves(&people[white.as_str()], &going, "g1f3").await;
    resign(&people[black.as_str()], &going).await;
    let after2 = get_until(&c_base, &path, "round 2 over on the last node", |s| {
        s["nbOngoing"] == 0 && round_games(s, 2)[1].3 == "1-0"
    })
    .await;
    assert_eq!(round_games(&after2, 2)[0].3, "0-1", "board 1's result kept");
    assert_eq!(round_games(&after2, 1), round_games(&after1, 1));
    let points2 = swiss_points(&after2);
    let winners2 = [round2[0].1.clone(), round2[1].0.clone()];
    for (name, points) in &points1 {
        let won = f64::from(u8::from(winners2.contains(name)));
        assert_eq!(points2[name], points + won, "{name}: {after2}");
    }

    // Round 3, paired by the last node standing.
    schedule(c_base.clone()).await;
    let state = get_until(&c_base, &path, "round 3 paired", |s| s["round"] == 3).await;
    assert_eq!(round_games(&state, 3).len(), 2, "{state}");
    assert_eq!(names[&director_of(&db)], "c");
    assert_eq!(swiss_points(&state), points2);
}

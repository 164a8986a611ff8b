//! Accounts (issue 21): sign up, log in on several devices, sessions that
//! can be listed and ended, passwords that are checked, hashed and
//! throttled, personal API tokens with scopes, seats that follow the person,
//! and the refusals of each.

mod support;

use reqwest::header::{COOKIE, SET_COOKIE, USER_AGENT};
use serde_json::{json, Value};
use support::*;

const PASSWORD: &str = "a long and rare phrase";

/// One device: a cookie jar of one cookie.
struct Device {
    cookie: Option<String>,
    agent: &'static str,
}

impl Device {
    fn new(agent: &'static str) -> Device {
        Device {
            cookie: None,
            agent,
        }
    }

    async fn send(
        &mut self,
        server: &TestServer,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = server
            .http
            .request(method, server.url(path))
            .header(USER_AGENT, self.agent);
        if let Some(cookie) = &self.cookie {
            request = request.header(COOKIE, format!("rookery_session={cookie}"));
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        if let Some(set) = response.headers().get(SET_COOKIE) {
            let set = set.to_str().expect("ascii").to_string();
            assert!(set.contains("HttpOnly"), "{set}");
            assert!(set.contains("SameSite=Lax"), "{set}");
            assert!(set.contains("Path=/"), "{set}");
            let value = set
                .split(';')
                .next()
                .and_then(|pair| pair.strip_prefix("rookery_session="))
                .expect("the session cookie")
                .to_string();
            self.cookie = (!value.is_empty()).then_some(value);
        }
        read(response).await
    }

    /// Signs `name` up from this device (201, a session cookie).
    async fn sign_up(&mut self, server: &TestServer, name: &str) -> Value {
        let (status, account) = self
            .post(
                server,
                "/api/accounts",
                json!({"name": name, "password": PASSWORD}),
            )
            .await;
        assert_eq!(status, 201, "sign up {name}: {account}");
        account
    }

    async fn get(&mut self, server: &TestServer, path: &str) -> (u16, Value) {
        self.send(server, reqwest::Method::GET, path, None).await
    }

    async fn post(&mut self, server: &TestServer, path: &str, body: Value) -> (u16, Value) {
        self.send(server, reqwest::Method::POST, path, Some(body))
            .await
    }

    async fn delete(&mut self, server: &TestServer, path: &str) -> (u16, Value) {
        self.send(server, reqwest::Method::DELETE, path, None).await
    }
}

async fn bearer_get(server: &TestServer, path: &str, token: &str) -> (u16, Value) {
    let response = server
        .http
        .get(server.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("GET");
    read(response).await
}

#[tokio::test]
async fn a_person_signs_up_and_logs_in_on_another_device() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let mut laptop = Device::new("Laptop browser");
    let (status, account) = laptop
        .post(
            &server,
            "/api/accounts",
            json!({"name": "Carol", "password": PASSWORD}),
        )
        .await;
    assert_eq!(status, 201, "{account}");
    assert_eq!(account["id"], "carol");
    assert_eq!(account["username"], "Carol");
    assert_eq!(account["name"], "Carol");
    assert_eq!(account["has_password"], true);
    assert!(laptop.cookie.is_some(), "a session cookie");
    let (status, me) = laptop.get(&server, "/api/account").await;
    assert_eq!(status, 200);
    assert_eq!(me["player_id"], account["player_id"]);
    assert_eq!(me["session"], account["session"]);

    // The same person on a phone: the same player, another session.
    let mut phone = Device::new("Phone browser");
    let (status, on_phone) = phone
        .post(
            &server,
            "/api/session",
            json!({"name": "carol", "password": PASSWORD}),
        )
        .await;
    assert_eq!(status, 200, "{on_phone}");
    assert_eq!(on_phone["player_id"], account["player_id"]);
    assert_ne!(on_phone["session"], account["session"]);
    let (_, sessions) = phone.get(&server, "/api/account/sessions").await;
    let sessions = sessions["sessions"].as_array().expect("sessions").clone();
    assert_eq!(sessions.len(), 2);
    let devices: Vec<&str> = sessions
        .iter()
        .map(|s| s["device"].as_str().unwrap())
        .collect();
    assert!(devices.contains(&"Laptop browser") && devices.contains(&"Phone browser"));
    assert_eq!(
        sessions.iter().filter(|s| s["current"] == true).count(),
        1,
        "the phone's own session is marked"
    );
    // The player page is the same from both.
    let (status, page) = server.get("/api/players/Carol").await;
    assert_eq!(status, 200);
    assert_eq!(page["name"], "Carol");

    // The phone logs the laptop out; then logs out everywhere.
    let laptop_session = account["session"].as_str().unwrap().to_string();
    let (status, _) = phone
        .delete(&server, &format!("/api/account/sessions/{laptop_session}"))
        .await;
    assert_eq!(status, 204);
    assert_error(
        &laptop.get(&server, "/api/account").await,
        401,
        "unauthorized",
    );
    let (status, _) = laptop
        .post(
            &server,
            "/api/session",
            json!({"name": "Carol", "password": PASSWORD}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = phone.delete(&server, "/api/account/sessions").await;
    assert_eq!(status, 204);
    assert!(phone.cookie.is_none(), "the cookie is cleared");
    assert_error(
        &laptop.get(&server, "/api/account").await,
        401,
        "unauthorized",
    );

    // Logging out ends just this session.
    laptop
        .post(
            &server,
            "/api/session",
            json!({"name": "Carol", "password": PASSWORD}),
        )
        .await;
    let kept = laptop.cookie.clone();
    phone
        .post(
            &server,
            "/api/session",
            json!({"name": "Carol", "password": PASSWORD}),
        )
        .await;
    let (status, _) = phone.delete(&server, "/api/session").await;
    assert_eq!(status, 204);
    assert_error(
        &phone.get(&server, "/api/account").await,
        401,
        "unauthorized",
    );
    assert_eq!(laptop.cookie, kept);
    assert_eq!(laptop.get(&server, "/api/account").await.0, 200);
    server.stop().await;
}

#[tokio::test]
async fn wrong_names_and_passwords_get_one_answer_and_are_throttled() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let mut device = Device::new("test");
    device.sign_up(&server, "dave").await;
    let wrong_password = device
        .post(
            &server,
            "/api/session",
            json!({"name": "dave", "password": "not the password"}),
        )
        .await;
    let nobody = device
        .post(
            &server,
            "/api/session",
            json!({"name": "nobody_here", "password": "not the password"}),
        )
        .await;
    assert_error(&wrong_password, 401, "unauthorized");
    assert_eq!(wrong_password, nobody, "the same answer for both");

    // Weak passwords, taken names, bad bodies.
    let weak = json!({"name": "erin", "password": "short"});
    assert_error(
        &device.post(&server, "/api/accounts", weak).await,
        400,
        "weak_password",
    );
    let common = json!({"name": "erin", "password": "Password123"});
    assert_error(
        &device.post(&server, "/api/accounts", common).await,
        400,
        "weak_password",
    );
    let taken = json!({"name": "DAVE", "password": PASSWORD});
    assert_error(
        &device.post(&server, "/api/accounts", taken).await,
        409,
        "name_taken",
    );
    let bad = json!({"name": "erin"});
    assert_error(
        &device.post(&server, "/api/accounts", bad).await,
        400,
        "bad_request",
    );

    // Four more failures make five for dave: the next try must wait.
    for _ in 0..4 {
        let answer = device
            .post(
                &server,
                "/api/session",
                json!({"name": "dave", "password": "still wrong"}),
            )
            .await;
        assert_error(&answer, 401, "unauthorized");
    }
    let response = server
        .http
        .post(server.url("/api/session"))
        .json(&json!({"name": "dave", "password": PASSWORD}))
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 429);
    assert!(response.headers().get("retry-after").is_some());
    let answer = read(response).await;
    assert_error(&answer, 429, "rate_limited");
    // After the wait the right password works (a person is not locked out).
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let (status, _) = device
        .post(
            &server,
            "/api/session",
            json!({"name": "dave", "password": PASSWORD}),
        )
        .await;
    assert_eq!(status, 200);
    server.stop().await;
}

#[tokio::test]
async fn token_only_players_claim_their_name_and_passwords_change() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let token = server.register("frank").await;
    let put = |body: Value, token: Option<String>, cookie: Option<String>| {
        let mut request = server
            .http
            .put(server.url("/api/account/password"))
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, format!("rookery_session={cookie}"));
        }
        async move { read(request.send().await.expect("PUT")).await }
    };
    let (_, before) = bearer_get(&server, "/api/account", &token).await;
    assert_eq!(before["has_password"], false);
    assert_eq!(
        put(json!({"password": PASSWORD}), Some(token.clone()), None)
            .await
            .0,
        204
    );
    let mut device = Device::new("test");
    let (status, account) = device
        .post(
            &server,
            "/api/session",
            json!({"name": "frank", "password": PASSWORD}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(account["player_id"], before["player_id"]);
    // The player token keeps working.
    assert_eq!(bearer_get(&server, "/api/account", &token).await.0, 200);

    // Changing it needs the current one; other sessions end.
    let mut other = Device::new("other");
    other
        .post(
            &server,
            "/api/session",
            json!({"name": "frank", "password": PASSWORD}),
        )
        .await;
    let wrong = put(
        json!({"current": "nope nope nope", "password": "another rare phrase"}),
        None,
        device.cookie.clone(),
    )
    .await;
    assert_error(&wrong, 401, "unauthorized");
    let changed = put(
        json!({"current": PASSWORD, "password": "another rare phrase"}),
        None,
        device.cookie.clone(),
    )
    .await;
    assert_eq!(changed.0, 204, "{}", changed.1);
    assert_eq!(device.get(&server, "/api/account").await.0, 200);
    assert_error(
        &other.get(&server, "/api/account").await,
        401,
        "unauthorized",
    );
    let old = device
        .post(
            &server,
            "/api/session",
            json!({"name": "frank", "password": PASSWORD}),
        )
        .await;
    assert_error(&old, 401, "unauthorized");
    server.stop().await;
}

#[tokio::test]
async fn api_tokens_have_scopes_and_can_be_revoked() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let mut device = Device::new("test");
    device.sign_up(&server, "grace").await;
    let (status, created) = device
        .post(
            &server,
            "/api/account/tokens",
            json!({"description": "terminal", "scopes": ["challenge"]}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let token = created["token"].as_str().expect("shown once").to_string();
    assert!(token.starts_with("rky_"));
    let (_, listed) = device.get(&server, "/api/account/tokens").await;
    assert_eq!(listed["tokens"][0]["description"], "terminal");
    assert_eq!(listed["tokens"][0]["scopes"], json!(["challenge"]));
    assert!(
        listed["tokens"][0].get("token").is_none(),
        "never shown again"
    );
    let (status, me) = bearer_get(&server, "/api/account", &token).await;
    assert_eq!(status, 200);
    assert_eq!(me["scopes"], json!(["challenge"]));

    // Without the play scope it cannot create games as the player.
    let refused = server
        .post(
            "/api/games",
            Some(&token),
            Some(json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}})),
        )
        .await;
    assert_error(&refused, 403, "missing_scope");
    // A token cannot mint tokens.
    let minted = server
        .post("/api/account/tokens", Some(&token), Some(json!({})))
        .await;
    assert_error(&minted, 403, "forbidden");
    let unknown_scope = device
        .post(&server, "/api/account/tokens", json!({"scopes": ["admin"]}))
        .await;
    assert_error(&unknown_scope, 400, "bad_request");

    // A token revokes itself, as lichess's DELETE /api/token.
    let (_, second) = device
        .post(&server, "/api/account/tokens", json!({"scopes": ["play"]}))
        .await;
    let second = second["token"].as_str().unwrap().to_string();
    let own = server
        .http
        .delete(server.url("/api/token"))
        .bearer_auth(&second)
        .send()
        .await
        .unwrap();
    assert_eq!(own.status().as_u16(), 204);
    assert_error(
        &bearer_get(&server, "/api/account", &second).await,
        401,
        "unauthorized",
    );

    // Revoked: the token is unknown at once.
    let id = created["id"].as_str().unwrap();
    let (status, _) = device
        .delete(&server, &format!("/api/account/tokens/{id}"))
        .await;
    assert_eq!(status, 204);
    assert_error(
        &bearer_get(&server, "/api/account", &token).await,
        401,
        "unauthorized",
    );
    assert_error(
        &device
            .delete(&server, &format!("/api/account/tokens/{id}"))
            .await,
        404,
        "not_found",
    );
    server.stop().await;
}

#[tokio::test]
async fn a_persons_seat_follows_them_and_idle_sessions_expire() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let mut laptop = Device::new("laptop");
    laptop.sign_up(&server, "heidi").await;
    // Created from the laptop's session: the seat is heidi's.
    let (status, created) = laptop
        .post(
            &server,
            "/api/games",
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "white"}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["game"]["white"]["name"], "heidi");
    let id = created["game"]["id"].as_str().unwrap().to_string();
    let (_, joined) = server
        .post(&format!("/api/games/{id}/join"), None, None)
        .await;
    let black = joined["seat"]["token"].as_str().unwrap().to_string();

    // On the phone, with no seat token: the account's session moves.
    let mut phone = Device::new("phone");
    phone
        .post(
            &server,
            "/api/session",
            json!({"name": "heidi", "password": PASSWORD}),
        )
        .await;
    let (status, moved) = phone
        .post(
            &server,
            &format!("/api/games/{id}/move"),
            json!({"uci": "e2e4"}),
        )
        .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moves(&moved), ["e2e4"]);
    // Its WebSocket gets the seat too, and is told so.
    let url = server.ws_url(&format!("/ws/games/{id}"));
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
            .expect("request");
    request.headers_mut().insert(
        "cookie",
        format!("rookery_session={}", phone.cookie.clone().unwrap())
            .parse()
            .unwrap(),
    );
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("connect");
    let mut ws = WsClient { socket };
    ws.next_state().await;
    let told = ws.next().await;
    assert_eq!(told, json!({"type": "authenticated", "color": "white"}));
    server.play(&id, &black, "e7e5").await;
    ws.send(json!({"type": "move", "uci": "g1f3"})).await;
    let state = ws
        .state_where("the move over the account's socket", |s| {
            moves(s).len() == 3
        })
        .await;
    assert_eq!(moves(&state)[2], "g1f3");

    // Someone else's session holds no seat here.
    let mut stranger = Device::new("stranger");
    stranger.sign_up(&server, "ivan").await;
    let refused = stranger
        .post(
            &server,
            &format!("/api/games/{id}/move"),
            json!({"uci": "b8c6"}),
        )
        .await;
    assert_error(&refused, 403, "forbidden");

    // My games: this one, live.
    let (_, mine) = phone.get(&server, "/api/account/games").await;
    assert_eq!(mine["games"][0]["id"], id.as_str());

    // A session idle past its time is over.
    let pool = sqlx::SqlitePool::connect(&db.url()).await.expect("db");
    sqlx::query("UPDATE sessions SET last_seen_at = 0")
        .execute(&pool)
        .await
        .expect("age the sessions");
    pool.close().await;
    assert_error(
        &phone.get(&server, "/api/account").await,
        401,
        "unauthorized",
    );
    server.stop().await;
}

#[tokio::test]
async fn private_games_stay_off_the_public_lists() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (status, created) = server
        .post(
            "/api/games",
            None,
            Some(
                json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                        "as": "white", "visibility": "private"}),
            ),
        )
        .await;
    assert_eq!(status, 201);
    let private = created["game"]["id"].as_str().unwrap().to_string();
    let (open, _, _) = server.human_game(json!({})).await;
    for path in [
        "/api/games",
        "/api/games?status=active",
        "/api/games?status=waiting",
    ] {
        let (_, listed) = server.get(path).await;
        let ids: Vec<&str> = listed["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap())
            .collect();
        assert!(!ids.contains(&private.as_str()), "{path}: {listed}");
        if path != "/api/games?status=waiting" {
            assert!(ids.contains(&open.as_str()), "{path}");
        }
    }
    // Still readable by its link.
    assert_eq!(server.get(&format!("/api/games/{private}")).await.0, 200);
    server.stop().await;
}

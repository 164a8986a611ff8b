//! Helpers for the black-box tests of `rookery-server`: start the real
//! service in-process on port 0 with a temporary SQLite file, talk to it over
//! HTTP and WebSocket, and wait for things with timeouts (never forever).

#![allow(dead_code)]

pub mod cluster;
pub mod history;
pub mod netns;
pub mod nodes;
pub mod smtp;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rookery_server::Config;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The longest any single wait in these tests may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// Runs `future` or fails the test after `limit`.
pub async fn within<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(limit, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {limit:?} waiting for {what}"),
    }
}

/// A temporary directory holding the test's database: a SQLite file in
/// it, or, with `ROOKERY_TEST_DATABASE=postgres` in the environment, a new
/// database on a throwaway PostgreSQL that the test binary shares
/// ([`cluster::shared_postgres`]). Tests that reach into the SQLite file
/// itself ([`TestDb::path`]) stay SQLite tests either way.
pub struct TestDb {
    pub dir: tempfile::TempDir,
    /// (database name, URL) on PostgreSQL.
    postgres: Option<(String, String)>,
}

impl TestDb {
    pub fn new() -> TestDb {
        let postgres = std::env::var("ROOKERY_TEST_DATABASE")
            .is_ok_and(|backend| backend == "postgres")
            .then(|| {
                let server = cluster::shared_postgres();
                let name = server.create_database();
                let url = server.url(&name);
                (name, url)
            });
        TestDb {
            dir: tempfile::tempdir().expect("temporary directory"),
            postgres,
        }
    }

    /// A SQLite file, whatever the environment says.
    pub fn new_sqlite() -> TestDb {
        TestDb {
            dir: tempfile::tempdir().expect("temporary directory"),
            postgres: None,
        }
    }

    /// A new database on `postgres` (whatever the environment says).
    pub fn on_postgres(postgres: &cluster::Postgres) -> TestDb {
        TestDb {
            dir: tempfile::tempdir().expect("temporary directory"),
            postgres: Some({
                let name = postgres.create_database();
                let url = postgres.url(&name);
                (name, url)
            }),
        }
    }

    /// The PostgreSQL database's name, if the test runs on PostgreSQL.
    pub fn postgres_database(&self) -> Option<&str> {
        self.postgres.as_ref().map(|(name, _)| name.as_str())
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("rookery.db")
    }

    pub fn url(&self) -> String {
        match &self.postgres {
            Some((_, url)) => url.clone(),
            None => format!("sqlite://{}", self.path().display()),
        }
    }
}

/// Test settings: fast AI pacing and a generous rate limit, unless a test
/// asks otherwise.
pub fn test_config(db: &TestDb) -> Config {
    let mut config = Config::defaults();
    config.addr = "127.0.0.1:0".into();
    config.storage.database = db.url();
    config.ai.ai_move_delay_ms = 0;
    config.http.rate_limit = 1000.0;
    config.http.rate_burst = 1000;
    config.http.signup_burst = 1000;
    config.ws.ws_rate_limit = 1000.0;
    config.ws.ws_rate_burst = 1000;
    config.web_dir = db.dir.path().join("web");
    // Every test client is 127.0.0.1: room for the tests that open
    // hundreds of sockets from it (the connection caps have their own
    // tests, which set them low).
    config.http.max_connections = 10_000;
    config.http.max_connections_per_ip = 10_000;
    // Likewise for the tests that leave many games waiting (the cap has
    // its own test, tests/retention.rs).
    config.games.max_waiting_games_per_client = 10_000;
    config
}

/// A server running in this process.
pub struct TestServer {
    pub addr: SocketAddr,
    pub http: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

impl TestServer {
    pub async fn start(config: Config) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        TestServer::start_on(listener, config).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn ws_url(&self, path: &str) -> String {
        format!("ws://{}{}", self.addr, path)
    }

    /// Stops the server gracefully and waits for it (it must stop cleanly).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            within(WAIT, "the server to shut down", task)
                .await
                .expect("server task")
                .expect("server result");
        }
    }

    // ------------------------------------------------------------ requests

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.http.get(self.url(path)).send().await.expect("GET");
        read(response).await
    }

    /// `GET` with a Bearer token.
    pub async fn get_with(&self, path: &str, token: &str) -> (u16, Value) {
        let response = self
            .http
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .expect("GET");
        read(response).await
    }

    pub async fn get_text(&self, path: &str) -> (u16, String, String) {
        let response = self.http.get(self.url(path)).send().await.expect("GET");
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        (status, content_type, response.text().await.expect("body"))
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
        let mut request = self.http.post(self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        read(request.send().await.expect("POST")).await
    }

    /// Registers a player; returns their token.
    pub async fn register(&self, name: &str) -> String {
        let (status, player) = self
            .post("/api/players", None, Some(json!({ "name": name })))
            .await;
        assert_eq!(status, 201, "register {name}: {player}");
        player["token"].as_str().expect("token").to_string()
    }

    /// Creates a game; returns (GameState, seat token if any).
    pub async fn create_game(&self, body: Value, player: Option<&str>) -> (Value, Option<String>) {
        let (status, answer) = self.post("/api/games", player, Some(body)).await;
        assert_eq!(status, 201, "create game: {answer}");
        let token = answer["seat"]["token"].as_str().map(str::to_string);
        (answer["game"].clone(), token)
    }

    /// Creates a human v human game and joins it: (game id, white, black).
    pub async fn human_game(&self, extra: Value) -> (String, String, String) {
        let mut body = json!({"white": {"kind": "human"}, "black": {"kind": "human"}});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let (game, white) = self.create_game(body, None).await;
        let id = game["id"].as_str().expect("id").to_string();
        let (status, joined) = self
            .post(&format!("/api/games/{id}/join"), None, None)
            .await;
        assert_eq!(status, 200, "join: {joined}");
        assert_eq!(joined["seat"]["color"], "black");
        let black = joined["seat"]["token"].as_str().expect("token").to_string();
        (id, white.expect("white token"), black)
    }

    pub async fn play(&self, id: &str, token: &str, uci: &str) -> Value {
        let (status, state) = self
            .post(
                &format!("/api/games/{id}/move"),
                Some(token),
                Some(json!({"uci": uci})),
            )
            .await;
        assert_eq!(status, 200, "move {uci}: {state}");
        state
    }

    pub async fn state(&self, id: &str) -> Value {
        let (status, state) = self.get(&format!("/api/games/{id}")).await;
        assert_eq!(status, 200, "state: {state}");
        state
    }

    /// Polls the game until `done` holds for its state.
    pub async fn wait_state(&self, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        self.wait_state_for(WAIT, id, what, done).await
    }

    /// [`TestServer::wait_state`] with its own time limit, for states that
    /// may take longer than [`WAIT`] to come.
    pub async fn wait_state_for(
        &self,
        limit: Duration,
        id: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        within(limit, what, async {
            loop {
                let state = self.state(id).await;
                if done(&state) {
                    return state;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

pub async fn read(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, value)
}

/// Asserts an error answer: status, code, and the contract's shape.
pub fn assert_error(answer: &(u16, Value), status: u16, code: &str) {
    assert_eq!(
        answer.0, status,
        "expected {status} {code}, got {}",
        answer.1
    );
    assert_eq!(answer.1["error"]["code"], code, "{}", answer.1);
    assert!(
        answer.1["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "error message: {}",
        answer.1
    );
}

// ---------------------------------------------------------------- WebSocket

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct WsClient {
    pub socket: Socket,
}

impl WsClient {
    pub async fn connect(server: &TestServer, id: &str, token: Option<&str>) -> WsClient {
        WsClient::connect_to(&server.ws_url(&format!("/ws/games/{id}")), token).await
    }

    /// Connects to game `id` on the server at `base` (`http://host:port`).
    pub async fn connect_base(base: &str, id: &str, token: Option<&str>) -> WsClient {
        let url = format!("{}/ws/games/{id}", base.replacen("http", "ws", 1));
        WsClient::connect_to(&url, token).await
    }

    async fn connect_to(url: &str, token: Option<&str>) -> WsClient {
        let mut url = url.to_string();
        if let Some(token) = token {
            url.push_str(&format!("?token={token}"));
        }
        let (socket, _) = within(
            WAIT,
            "WebSocket connect",
            tokio_tungstenite::connect_async(url),
        )
        .await
        .expect("WebSocket connect");
        WsClient { socket }
    }

    pub async fn send(&mut self, message: Value) {
        self.socket
            .send(Message::text(message.to_string()))
            .await
            .expect("WebSocket send");
    }

    pub async fn send_raw(&mut self, message: Message) {
        self.socket.send(message).await.expect("WebSocket send");
    }

    /// The next JSON message (pings, pongs and `presence` messages
    /// skipped: those come whenever a connection opens or closes).
    pub async fn next(&mut self) -> Value {
        within(WAIT, "a WebSocket message", async {
            loop {
                match self.socket.next().await {
                    Some(Ok(Message::Text(text))) => {
                        let message: Value =
                            serde_json::from_str(text.as_str()).expect("JSON message");
                        if message["type"] != "presence" {
                            return message;
                        }
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    other => panic!("unexpected WebSocket event: {other:?}"),
                }
            }
        })
        .await
    }

    /// The next `state` message's game.
    pub async fn next_state(&mut self) -> Value {
        let message = self.next().await;
        assert_eq!(message["type"], "state", "{message}");
        message["game"].clone()
    }

    /// Skips states until `done` holds.
    pub async fn state_where(&mut self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        within(WAIT, what, async {
            loop {
                let message = self.next().await;
                if message["type"] == "state" && done(&message["game"]) {
                    return message["game"].clone();
                }
            }
        })
        .await
    }

    /// The next message, which must be an error with `code`.
    pub async fn expect_error(&mut self, code: &str) {
        let message = self.next().await;
        assert_eq!(message["type"], "error", "expected error {code}: {message}");
        assert_eq!(message["code"], code, "{message}");
        assert!(message["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

/// The moves of a state as strings.
pub fn moves(state: &Value) -> Vec<String> {
    state["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m.as_str().expect("move").to_string())
        .collect()
}

// ------------------------------------------------- WebSocket (sockets work)

impl WsClient {
    /// The next JSON message of any type (pings and pongs skipped).
    pub async fn next_message(&mut self) -> Value {
        within(WAIT, "a WebSocket message", async {
            loop {
                match self.socket.next().await {
                    Some(Ok(Message::Text(text))) => {
                        return serde_json::from_str(text.as_str()).expect("JSON message")
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    other => panic!("unexpected WebSocket event: {other:?}"),
                }
            }
        })
        .await
    }

    /// Skips messages until a `presence` message for which `done` holds.
    pub async fn presence_where(&mut self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        within(WAIT, what, async {
            loop {
                let message = self.next_message().await;
                if message["type"] == "presence" && done(&message) {
                    return message;
                }
            }
        })
        .await
    }
}

impl TestServer {
    /// Starts a server on a listener the test prepared (say, with small
    /// socket buffers, which accepted connections inherit).
    pub async fn start_on(listener: TcpListener, config: Config) -> TestServer {
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(rookery_server::run(listener, config, async move {
            // A dropped sender also stops the server.
            let _ = stopped.await;
        }));
        let server = TestServer {
            addr,
            http: reqwest::Client::new(),
            stop: Some(stop),
            task: Some(task),
        };
        within(WAIT, "the server to answer /healthz", async {
            loop {
                if let Ok(response) = server.http.get(server.url("/healthz")).send().await {
                    if response.status().is_success() {
                        break;
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        server
    }
}

/// Waits for a spawned `rookery-server`'s first stdout line, `listening on
/// http://HOST:PORT`, and returns the base URL `http://HOST:PORT`.
pub async fn listening_base(child: &mut tokio::process::Child) -> String {
    let stdout = child.stdout.take().expect("the server's stdout is piped");
    let line = within(WAIT, "the `listening on` line", async {
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout))
            .next_line()
            .await
            .expect("read stdout")
            .expect("a line on stdout")
    })
    .await;
    line.strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}

// ------------------------------------------------ reading the database

/// A connection of the test's own to its database (SQLite or PostgreSQL,
/// whichever [`TestDb`] runs on), to see what is committed. Queries use
/// `$1` placeholders, which both read.
pub enum DbReader {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl DbReader {
    pub async fn connect(db: &TestDb) -> DbReader {
        if db.postgres_database().is_some() {
            DbReader::Postgres(sqlx::PgPool::connect(&db.url()).await.expect("connect"))
        } else {
            DbReader::Sqlite(sqlx::SqlitePool::connect(&db.url()).await.expect("connect"))
        }
    }

    /// The one integer `sql` (with `arg` as `$1`) yields.
    pub async fn integer(&self, sql: &str, arg: &str) -> i64 {
        match self {
            DbReader::Sqlite(pool) => sqlx::query_scalar(sql).bind(arg).fetch_one(pool).await,
            DbReader::Postgres(pool) => sqlx::query_scalar(sql).bind(arg).fetch_one(pool).await,
        }
        .expect("query")
    }

    /// The first row of `sql` (with `arg` as `$1`), each column as text.
    pub async fn texts(&self, sql: &str, arg: &str) -> Vec<Option<String>> {
        use sqlx::Row;
        fn texts<R: Row>(row: R) -> Vec<Option<String>>
        where
            for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
            usize: sqlx::ColumnIndex<R>,
        {
            (0..row.len())
                .map(|i| row.try_get::<Option<String>, _>(i).expect("a text column"))
                .collect()
        }
        match self {
            DbReader::Sqlite(pool) => texts(
                sqlx::query(sql)
                    .bind(arg)
                    .fetch_one(pool)
                    .await
                    .expect("query"),
            ),
            DbReader::Postgres(pool) => texts(
                sqlx::query(sql)
                    .bind(arg)
                    .fetch_one(pool)
                    .await
                    .expect("query"),
            ),
        }
    }

    pub async fn close(self) {
        match self {
            DbReader::Sqlite(pool) => pool.close().await,
            DbReader::Postgres(pool) => pool.close().await,
        }
    }
}

// ------------------------------------------------ players and seats (harden)

impl TestServer {
    /// A human v human game with `extra` fields, created by `player` (or
    /// anonymously): (the whole answer, the game's id).
    pub async fn create_human(&self, extra: Value, player: Option<&str>) -> (Value, String) {
        let mut body = json!({"white": {"kind": "human"}, "black": {"kind": "human"}});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let (status, answer) = self.post("/api/games", player, Some(body)).await;
        assert_eq!(status, 201, "create: {answer}");
        let id = answer["game"]["id"].as_str().expect("id").to_string();
        (answer, id)
    }
}

/// A legal line of `plies` moves that never ends the game.
pub fn long_line(plies: usize) -> Vec<String> {
    let mut game = rookery_engine::Game::new(rookery_engine::Position::startpos());
    let mut line = Vec::new();
    let mut seed: u64 = 7;
    while line.len() < plies {
        let moves: Vec<_> = game.position().legal_moves().iter().copied().collect();
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let start = (seed >> 33) as usize % moves.len();
        let mv = (0..moves.len())
            .map(|i| moves[(start + i) % moves.len()])
            .find(|mv| {
                let mut after = game.clone();
                after.play(*mv).is_ok() && after.outcome().is_none()
            })
            .expect("a move that does not end the game");
        game.play(mv).expect("legal");
        line.push(mv.to_uci());
    }
    line
}

/// A listener whose accepted sockets (they inherit it) have a small send
/// buffer, so a peer that stops reading blocks the server's writes after a
/// few states rather than a few megabytes.
pub fn small_buffer_listener() -> TcpListener {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_send_buffer_size(4096).expect("SO_SNDBUF");
    socket
        .bind("127.0.0.1:0".parse().expect("address"))
        .expect("bind");
    socket.listen(1024).expect("listen")
}

/// A spectator WebSocket of game `id` with a small receive buffer (see
/// [`small_buffer_listener`]).
pub async fn small_buffer_spectator(
    server: &TestServer,
    id: &str,
) -> WebSocketStream<MaybeTlsStream<TcpStream>> {
    let client = tokio::net::TcpSocket::new_v4().expect("socket");
    client.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let stream = client.connect(server.addr).await.expect("connect");
    let (socket, _) = tokio_tungstenite::client_async(
        server.ws_url(&format!("/ws/games/{id}")),
        MaybeTlsStream::Plain(stream),
    )
    .await
    .expect("upgrade");
    socket
}

/// A second connection to the test's database file, holding the write lock
/// until released (another process, or a backup tool, doing the same).
pub struct Lock {
    connection: sqlx::SqliteConnection,
}

impl Lock {
    pub async fn take(db: &TestDb) -> Lock {
        let mut connection = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url())
            .await
            .unwrap();
        sqlx::query("BEGIN EXCLUSIVE")
            .execute(&mut connection)
            .await
            .unwrap();
        Lock { connection }
    }

    pub async fn release(mut self) {
        sqlx::query("ROLLBACK")
            .execute(&mut self.connection)
            .await
            .unwrap();
        sqlx::Connection::close(self.connection).await.unwrap();
    }
}

// ---------------------------------------------- spawned processes (harden)

/// A `rookery-server` process (see [`server_command`]).
pub struct SpawnedServer {
    pub child: tokio::process::Child,
    pub base: String,
}

/// The server binary on port 0 with database `db`, quiet logs, no AI
/// pacing and a generous rate limit, plus `extra` flags.
pub fn server_command(db: &std::path::Path, extra: &[&str]) -> tokio::process::Command {
    let mut command = server_binary(&["--addr", "127.0.0.1:0", "--database"]);
    command.arg(db).args(extra);
    command
}

/// The server binary with `args`: errors-only logs on inherited stderr, no
/// AI pacing, a generous rate limit, killed when dropped.
pub fn server_binary(args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rookery-server"));
    command
        .args(args)
        .env("RUST_LOG", "error")
        .env("ROOKERY_AI_MOVE_DELAY_MS", "0")
        .env("ROOKERY_RATE_LIMIT", "10000")
        .env("ROOKERY_RATE_BURST", "10000")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true);
    command
}

impl SpawnedServer {
    pub async fn start(db: &std::path::Path, extra: &[&str]) -> SpawnedServer {
        let mut child = server_command(db, extra)
            .spawn()
            .expect("start rookery-server");
        let base = listening_base(&mut child).await;
        SpawnedServer { child, base }
    }
}

pub fn sigterm(child: &tokio::process::Child) {
    let pid = child.id().expect("running") as i32;
    // SAFETY: kill(2) on our own child's pid with a valid signal.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
}

/// Waits (at most [`WAIT`]) for `child` to exit, which must be with 0.
pub async fn exits_zero(mut child: tokio::process::Child, what: &str) {
    let status = within(WAIT, what, child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(0), "{what}: {status:?}");
}

/// Starts the real `rookery-server` binary on port 0 with its database at
/// `db` (errors only on stderr): the child, killed when dropped, and its
/// base URL `http://HOST:PORT`.
pub async fn spawn_server_binary(db: &std::path::Path) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rookery-server"))
        .args(["--addr", "127.0.0.1:0", "--database"])
        .arg(db)
        .env("RUST_LOG", "error")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start rookery-server");
    let base = listening_base(&mut child).await;
    (child, base)
}

/// Raises this process's soft open-files limit to the hard one: the server
/// and 1,000 clients in one process need about 2,000 descriptors, more than
/// a common soft default (1024).
pub fn raise_open_files_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// Opens `count` spectator sockets on a new human game, plays a move, and
/// checks that every one of them receives it as a state (presence messages
/// about the crowd arriving may come first).
pub async fn a_move_reaches_spectators(server: &TestServer, count: usize) {
    let (id, white, _) = server.human_game(json!({})).await;
    let mut watchers = Vec::new();
    for _ in 0..count {
        let mut ws = WsClient::connect(server, &id, None).await;
        ws.next_state().await;
        watchers.push(ws);
    }
    server
        .wait_state(&id, "every spectator counted", |s| s["spectators"] == count)
        .await;
    server.play(&id, &white, "e2e4").await;
    let readers = watchers.into_iter().map(|mut ws| {
        tokio::spawn(async move {
            let seen = ws.state_where("the move", |s| !moves(s).is_empty()).await;
            assert_eq!(moves(&seen), ["e2e4"]);
        })
    });
    for reader in readers.collect::<Vec<_>>() {
        reader.await.expect("reader");
    }
}

// ------------------------------------------------------- accounts, forms

/// The password of the accounts the tests sign up.
pub const PASSWORD: &str = "a long and rare phrase";

/// A signed-up account: its name, session cookie and an API token.
pub struct Account {
    pub name: String,
    pub cookie: String,
    pub token: String,
}

/// Signs a person up and makes them a token with `scopes`.
pub async fn person(server: &TestServer, name: &str, scopes: &[&str]) -> String {
    account(server, name, scopes).await.token
}

/// Signs a person up (password [`PASSWORD`]) and makes them a token with
/// `scopes`: the account's session cookie and token.
pub async fn account(server: &TestServer, name: &str, scopes: &[&str]) -> Account {
    account_at(&server.url(""), name, scopes).await
}

/// [`account`] on the server at `base` (a node of a cluster, say).
pub async fn account_at(base: &str, name: &str, scopes: &[&str]) -> Account {
    let http = reqwest::Client::new();
    let response = http
        .post(format!("{base}/api/accounts"))
        .json(&json!({"name": name, "password": PASSWORD}))
        .send()
        .await
        .expect("sign up");
    assert_eq!(response.status().as_u16(), 201, "sign up {name}");
    let cookie = response
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("cookie")
        .to_string();
    let (status, token) = read(
        http.post(format!("{base}/api/account/tokens"))
            .header("cookie", &cookie)
            .json(&json!({"scopes": scopes}))
            .send()
            .await
            .expect("token"),
    )
    .await;
    assert_eq!(status, 201, "{token}");
    Account {
        name: name.to_string(),
        cookie,
        token: token["token"].as_str().expect("token").to_string(),
    }
}

/// A form-encoded POST (lichess's clients send their bodies so).
pub async fn form(server: &TestServer, path: &str, token: &str, body: &str) -> (u16, Value) {
    read(
        server
            .http
            .post(server.url(path))
            .bearer_auth(token)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_string())
            .send()
            .await
            .expect("POST"),
    )
    .await
}

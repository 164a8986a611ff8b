//! Online play through a `rookery-server`'s public contract (docs/API.md):
//! HTTP to create, join and list games and fetch PGN; the game's WebSocket
//! for live states and for moves, resignations and draw offers.
//!
//! The session is one async loop that waits on two things at once: frames
//! from the server and lines from the player. Lines are read on their own
//! thread (rustyline blocks), one at a time: the loop asks for the next line
//! only after it has handled the last, so the terminal is never left in the
//! editor's raw mode by a line nobody waited for. On a terminal, text from
//! the server is printed above the prompt through rustyline's external
//! printer.
//!
//! Piped input is a script of the player's own moves: in `play`, each line is
//! taken only when it is the player's turn (or the game is over), so
//! `printf 'e4\nNf3\n'` plays two moves whatever the opponent takes to
//! answer, and the end of the script is reached only after the opponent's
//! reply to the last move has arrived.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::Url;
use rookery_engine::{Color, Game};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use crate::command::{self, Command, HELP};
use crate::console::{Lines, Screen};
use crate::table::Table;

/// How long one HTTP request or WebSocket connection attempt may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Reconnection attempts after the WebSocket drops, a second apart.
const RECONNECT_ATTEMPTS: u32 = 10;

#[derive(Debug, Clone, Deserialize)]
pub struct GameState {
    pub id: String,
    pub status: String,
    pub white: SeatInfo,
    pub black: SeatInfo,
    pub initial_fen: String,
    pub moves: Vec<String>,
    pub turn: String,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub termination: Option<String>,
    #[serde(default)]
    pub clock: Option<ClockState>,
    #[serde(default)]
    pub draw_offer: Option<String>,
    #[serde(default)]
    pub spectators: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SeatInfo {
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub level: Option<u8>,
    #[serde(default)]
    pub taken: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ClockState {
    pub white_ms: i64,
    pub black_ms: i64,
    #[serde(default)]
    pub running: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Seat {
    pub color: String,
    pub token: String,
}

#[derive(Debug, Deserialize)]
struct GameWithSeat {
    game: GameState,
    seat: Option<Seat>,
}

#[derive(Debug, Deserialize)]
struct GameList {
    games: Vec<GameState>,
}

/// A server error in the contract's shape.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
struct ErrorDetail {
    code: String,
    message: String,
}

/// What went wrong talking to the server.
#[derive(Debug)]
pub struct RemoteError {
    /// The contract's error code, when the server answered with one.
    pub code: Option<String>,
    pub message: String,
}

impl RemoteError {
    fn plain(message: impl Into<String>) -> RemoteError {
        RemoteError {
            code: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "server says: {} ({code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A game named on the command line: its server, id and invite secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRef {
    pub server: Option<String>,
    pub id: String,
    pub invite: Option<String>,
}

/// Reads `GAME_URL_OR_ID`: a bare id, or a game page URL such as
/// `http://host:8080/games/ID?invite=SECRET` (the link the web client
/// shares), whose origin names the server.
pub fn parse_game_ref(text: &str) -> Result<GameRef, String> {
    let text = text.trim();
    if !text.contains('/') {
        if text.is_empty() {
            return Err("empty game id".into());
        }
        return Ok(GameRef {
            server: None,
            id: text.to_string(),
            invite: None,
        });
    }
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not a game URL: {e}"))?;
    let segments: Vec<&str> = url.path_segments().map(|s| s.collect()).unwrap_or_default();
    let id = segments
        .iter()
        .position(|s| *s == "games")
        .and_then(|i| segments.get(i + 1))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| format!("{text:?} is not a game URL (expected .../games/ID)"))?;
    let invite = url
        .query_pairs()
        .find(|(name, _)| name == "invite")
        .map(|(_, value)| value.into_owned());
    Ok(GameRef {
        server: Some(origin(&url)),
        id: id.to_string(),
        invite,
    })
}

fn origin(url: &Url) -> String {
    match url.port() {
        Some(port) => format!("{}://{}:{port}", url.scheme(), url.host_str().unwrap_or("")),
        None => format!("{}://{}", url.scheme(), url.host_str().unwrap_or("")),
    }
}

/// A rookery-server reached over HTTP.
pub struct Server {
    /// `http://host:port`, no trailing slash.
    pub base: String,
    http: reqwest::Client,
    player_token: Option<String>,
}

impl Server {
    pub fn new(url: &str, player_token: Option<String>) -> Result<Server, String> {
        let with_scheme = if url.contains("://") {
            url.to_string()
        } else {
            format!("http://{url}")
        };
        let parsed =
            Url::parse(&with_scheme).map_err(|e| format!("{url:?} is not a server URL: {e}"))?;
        match parsed.scheme() {
            "http" => {}
            // Built without TLS to keep the client small; a TLS-terminating
            // proxy in front of the server needs a TLS-enabled build.
            "https" => {
                return Err("https servers are not supported by this build: use http://".into())
            }
            other => return Err(format!("{url:?}: unsupported scheme {other}")),
        }
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Server {
            base: origin(&parsed),
            http,
            player_token,
        })
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.player_token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, RemoteError> {
        let response = request
            .send()
            .await
            .map_err(|e| RemoteError::plain(format!("cannot reach {}: {e}", self.base)))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        Err(match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => RemoteError {
                code: Some(body.error.code),
                message: body.error.message,
            },
            Err(_) => RemoteError::plain(format!("{} answered {status}", self.base)),
        })
    }

    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, RemoteError> {
        let response = self.send(request).await?;
        let value: Value = response.json().await.map_err(|e| {
            RemoteError::plain(format!("unreadable answer from {}: {e}", self.base))
        })?;
        serde_json::from_value(value)
            .map_err(|e| RemoteError::plain(format!("unexpected answer from {}: {e}", self.base)))
    }

    /// Creates a game; returns it, the creator's seat and the invite link.
    pub async fn create(
        &self,
        body: Value,
    ) -> Result<(GameState, Option<Seat>, String), RemoteError> {
        let request = self.authorized(
            self.http
                .post(format!("{}/api/games", self.base))
                .json(&body),
        );
        let raw: Value = self.json(request).await?;
        let created: GameWithSeat = serde_json::from_value(raw.clone()).map_err(|e| {
            RemoteError::plain(format!("unexpected answer from {}: {e}", self.base))
        })?;
        let mut link = format!("{}/games/{}", self.base, created.game.id);
        // Servers that protect friend games with an invite secret return it
        // with the creation; the link must carry it for the friend to join.
        if let Some(invite) = raw.get("invite").and_then(Value::as_str) {
            if let Ok(mut url) = Url::parse(&link) {
                url.query_pairs_mut().append_pair("invite", invite);
                link = url.to_string();
            }
        }
        Ok((created.game, created.seat, link))
    }

    pub async fn join(
        &self,
        id: &str,
        invite: Option<&str>,
    ) -> Result<(GameState, Seat), RemoteError> {
        let body = match invite {
            Some(invite) => json!({ "invite": invite }),
            None => json!({}),
        };
        let request = self.authorized(
            self.http
                .post(format!("{}/api/games/{}/join", self.base, encode(id)))
                .json(&body),
        );
        let joined: GameWithSeat = self.json(request).await?;
        let seat = joined
            .seat
            .ok_or_else(|| RemoteError::plain("the server gave no seat"))?;
        Ok((joined.game, seat))
    }

    pub async fn game(&self, id: &str) -> Result<GameState, RemoteError> {
        self.json(
            self.http
                .get(format!("{}/api/games/{}", self.base, encode(id))),
        )
        .await
    }

    pub async fn live_games(&self) -> Result<Vec<GameState>, RemoteError> {
        let list: GameList = self
            .json(
                self.http
                    .get(format!("{}/api/games?status=active&limit=100", self.base)),
            )
            .await?;
        Ok(list.games)
    }

    pub async fn pgn(&self, id: &str) -> Result<String, RemoteError> {
        let response = self
            .send(
                self.http
                    .get(format!("{}/api/games/{}/pgn", self.base, encode(id))),
            )
            .await?;
        response
            .text()
            .await
            .map_err(|e| RemoteError::plain(format!("cannot read the PGN: {e}")))
    }

    fn ws_url(&self, id: &str, token: Option<&str>) -> String {
        let base = self.base.replacen("http://", "ws://", 1);
        match token {
            Some(token) => format!("{base}/ws/games/{}?token={}", encode(id), encode(token)),
            None => format!("{base}/ws/games/{}", encode(id)),
        }
    }
}

/// Percent-encodes a path or query component.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn describe_seat(seat: &SeatInfo) -> String {
    match seat.kind.as_str() {
        "ai" => match seat.level {
            Some(level) => format!("computer (level {level})"),
            None => "computer".into(),
        },
        _ => match (&seat.name, seat.taken) {
            (Some(name), _) => name.clone(),
            (None, Some(false)) => "(free seat)".into(),
            (None, _) => "anonymous".into(),
        },
    }
}

fn format_ms(ms: i64) -> String {
    let ms = ms.max(0);
    let tenths = ms / 100;
    format!("{}:{:02}.{}", tenths / 600, tenths / 10 % 60, tenths % 10)
}

/// `rookery games`: one line per live game.
pub async fn list_games(server: &Server) -> Result<String, RemoteError> {
    let games = server.live_games().await?;
    if games.is_empty() {
        return Ok("no live games\n".into());
    }
    let mut out = String::new();
    for game in games {
        let clock = match &game.clock {
            Some(clock) => format!(
                "  {} / {}",
                format_ms(clock.white_ms),
                format_ms(clock.black_ms)
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "{}  {}  {} v {}  {} moves{clock}\n",
            game.id,
            game.status,
            describe_seat(&game.white),
            describe_seat(&game.black),
            game.moves.len(),
        ));
    }
    Ok(out)
}

/// Who is at the keyboard in an online session.
pub enum Role {
    Player(Seat),
    Spectator,
}

/// A live game followed (and, with a seat, played) over the WebSocket.
pub struct RemoteSession {
    server: Server,
    id: String,
    role: Role,
    table: Table,
    state: Option<GameState>,
    screen: Screen,
    /// Moves already reported to the player.
    reported: usize,
    reported_status: String,
    reported_offer: Option<String>,
    /// A move or action was sent and the server has not answered yet: a
    /// script must not read on, or it would judge its next line by the
    /// position before its own move.
    awaiting_answer: Option<Snapshot>,
}

/// What a state must differ in to answer an action: its moves, its status
/// or its draw offer. (Other states, such as a spectator arriving, are
/// not answers.)
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    moves: usize,
    status: String,
    draw_offer: Option<String>,
}

impl Snapshot {
    fn of(state: &GameState) -> Snapshot {
        Snapshot {
            moves: state.moves.len(),
            status: state.status.clone(),
            draw_offer: state.draw_offer.clone(),
        }
    }
}

/// Messages from the line-reading thread.
enum Input {
    Line(String),
    End,
}

impl RemoteSession {
    pub fn new(server: Server, id: String, role: Role, screen: Screen) -> RemoteSession {
        let mut table = Table::new(Game::default());
        if let Role::Player(seat) = &role {
            table.flipped = seat.color == "black";
        }
        RemoteSession {
            server,
            id,
            role,
            table,
            state: None,
            screen,
            reported: 0,
            reported_status: String::new(),
            reported_offer: None,
            awaiting_answer: None,
        }
    }

    fn my_color(&self) -> Option<Color> {
        match &self.role {
            Role::Player(seat) if seat.color == "black" => Some(Color::Black),
            Role::Player(_) => Some(Color::White),
            Role::Spectator => None,
        }
    }

    fn finished(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.status == "finished")
    }

    fn my_turn(&self) -> bool {
        match (&self.state, self.my_color()) {
            (Some(state), Some(color)) => state.status == "active" && state.turn == color.name(),
            _ => false,
        }
    }

    /// Runs until `quit`, the end of input, or (for a piped spectator) the
    /// end of the game. Returns an error when the server is lost for good.
    pub async fn run(&mut self, mut lines: Lines, first: Option<GameState>) -> Result<(), String> {
        if let Some(state) = first {
            self.apply_state(state);
        }
        let interactive = self.screen.interactive;
        let spectator = matches!(self.role, Role::Spectator);
        // One line at a time: the reader waits for `more` before reading on.
        let (line_tx, mut line_rx) = mpsc::unbounded_channel::<Input>();
        let (more_tx, more_rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            while more_rx.recv().is_ok() {
                let input = match lines.next() {
                    Some(line) => Input::Line(line),
                    None => Input::End,
                };
                let end = matches!(input, Input::End);
                if line_tx.send(input).is_err() || end {
                    break;
                }
            }
        });
        let mut waiting_for_line = false;
        let mut input_done = false;
        let mut socket = self.connect().await?;
        loop {
            if !input_done && !waiting_for_line {
                // A script's lines wait for the player's turn; a person at a
                // terminal may type at any time.
                let may_read = interactive
                    || spectator
                    || (self.awaiting_answer.is_none() && (self.my_turn() || self.finished()));
                if may_read {
                    // The reader ends only after `End`, so this cannot fail
                    // while input is still open.
                    let _ = more_tx.send(());
                    waiting_for_line = true;
                }
            }
            if spectator && input_done && self.finished() {
                return Ok(());
            }
            tokio::select! {
                frame = socket.next() => match frame {
                    Some(Ok(Message::Text(text))) => self.on_server_text(text.as_str()),
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => {
                        if self.finished() && !interactive {
                            // Nothing more will happen in a finished game.
                            if input_done || spectator {
                                return Ok(());
                            }
                        }
                        socket = self.reconnect().await?;
                    }
                },
                input = line_rx.recv(), if waiting_for_line => {
                    waiting_for_line = false;
                    match input {
                        Some(Input::Line(line)) => {
                            match self.handle_line(&line).await {
                                Ok(Flow::Continue) => {}
                                Ok(Flow::Send(message)) => {
                                    match socket.send(Message::text(message.to_string())).await {
                                        Ok(()) => self.awaiting_answer = self.state.as_ref().map(Snapshot::of),
                                        Err(e) => self.screen.complain(&format!("could not send to the server: {e}")),
                                    }
                                }
                                Ok(Flow::Quit) => return Ok(()),
                                Err(why) => self.screen.complain(&why),
                            }
                        }
                        Some(Input::End) | None => {
                            input_done = true;
                            if !spectator {
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
    }

    async fn connect(&mut self) -> Result<Socket, String> {
        let token = match &self.role {
            Role::Player(seat) => Some(seat.token.as_str()),
            Role::Spectator => None,
        };
        let url = self.server.ws_url(&self.id, token);
        match tokio::time::timeout(REQUEST_TIMEOUT, tokio_tungstenite::connect_async(url)).await {
            Ok(Ok((socket, _))) => Ok(socket),
            Ok(Err(e)) => Err(format!("cannot open the game's WebSocket: {e}")),
            Err(_) => Err("timed out opening the game's WebSocket".into()),
        }
    }

    /// The server went away (a restart, a network blip): the seat token
    /// still holds, so connect again, and the first frame brings the state.
    async fn reconnect(&mut self) -> Result<Socket, String> {
        self.screen
            .complain("connection to the server lost; reconnecting");
        let mut last = String::new();
        for _ in 0..RECONNECT_ATTEMPTS {
            tokio::time::sleep(Duration::from_secs(1)).await;
            match self.connect().await {
                Ok(socket) => {
                    self.screen.say("reconnected");
                    // The state that arrives now is the truth; an action
                    // whose answer was lost with the connection may or may
                    // not have been taken, so don't wait for that answer.
                    if self.awaiting_answer.take().is_some() {
                        self.screen.complain(
                            "your last action was not confirmed before the connection dropped: check the board",
                        );
                    }
                    return Ok(socket);
                }
                Err(why) => last = why,
            }
        }
        Err(format!("gave up reconnecting: {last}"))
    }

    fn on_server_text(&mut self, text: &str) {
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            return;
        };
        match message.get("type").and_then(Value::as_str) {
            Some("state") => {
                if let Some(game) = message.get("game") {
                    match serde_json::from_value::<GameState>(game.clone()) {
                        Ok(state) => self.apply_state(state),
                        Err(e) => self.screen.complain(&format!("unreadable game state: {e}")),
                    }
                }
            }
            Some("error") => {
                self.awaiting_answer = None;
                let code = message
                    .get("code")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let text = message.get("message").and_then(Value::as_str).unwrap_or("");
                self.screen
                    .complain(&format!("server says: {text} ({code})"));
            }
            // Message types this client does not know are for newer clients.
            _ => {}
        }
    }

    /// Takes in a state from the server: rebuilds the game and reports what
    /// changed.
    fn apply_state(&mut self, state: GameState) {
        let mut game = match Game::from_fen(&state.initial_fen) {
            Ok(game) => game,
            Err(e) => {
                self.screen
                    .complain(&format!("the server's start position is unreadable: {e}"));
                return;
            }
        };
        for uci in &state.moves {
            if game.play_uci(uci).is_err() {
                self.screen.complain(&format!(
                    "the server's move {uci} is not legal here; ignoring the state"
                ));
                return;
            }
        }
        if game.moves().len() < self.reported {
            self.reported = 0;
        }
        self.table.game = game;
        self.table.forget_stale_pick();
        let first = self.state.is_none();
        let status_changed = self.reported_status != state.status;
        let offer_changed = self.reported_offer != state.draw_offer;
        let new_moves = self.table.game.moves().len() > self.reported;
        if self
            .awaiting_answer
            .as_ref()
            .is_some_and(|before| *before != Snapshot::of(&state))
        {
            self.awaiting_answer = None;
        }
        self.state = Some(state.clone());

        if first {
            self.screen.say(&format!(
                "game {}: {} (white) v {} (black)",
                state.id,
                describe_seat(&state.white),
                describe_seat(&state.black)
            ));
            match self.my_color() {
                Some(color) => self.screen.say(&format!("you play {color}")),
                None => self.screen.say("watching"),
            }
        }
        for index in self.reported..self.table.game.moves().len() {
            if let Some(line) = self.table.numbered_san(index) {
                self.screen.say(&line);
            }
        }
        self.reported = self.table.game.moves().len();
        if status_changed {
            match state.status.as_str() {
                "waiting" => self.screen.say("waiting for an opponent to join"),
                "active" if !first => self.screen.say("both players are here: the game is on"),
                "finished" => {
                    let result = state.result.clone().unwrap_or_else(|| "*".into());
                    let why = state
                        .termination
                        .clone()
                        .unwrap_or_default()
                        .replace('_', " ");
                    self.screen
                        .announce(&format!("game over: {result} ({why})"));
                }
                _ => {}
            }
            self.reported_status = state.status.clone();
        }
        if offer_changed {
            match &state.draw_offer {
                Some(offerer) if Some(offerer.as_str()) == self.my_color().map(|c| c.name()) => {
                    self.screen.say("your draw offer stands")
                }
                Some(offerer) => self.screen.say(&format!(
                    "{offerer} offers a draw{}",
                    if self.my_color().is_some() {
                        ": type draw to accept, or move to decline"
                    } else {
                        ""
                    }
                )),
                None if self.reported_offer.is_some() && state.status != "finished" => {
                    self.screen.say("the draw offer is gone")
                }
                None => {}
            }
            self.reported_offer = state.draw_offer.clone();
        }
        if self.screen.interactive && (first || new_moves || status_changed) {
            self.show();
        }
    }

    fn status_lines(&self) -> String {
        let Some(state) = &self.state else {
            return String::new();
        };
        let mut out = String::new();
        if let Some(clock) = &state.clock {
            let mark = |color: &str| {
                if clock.running.as_deref() == Some(color) {
                    " (running)"
                } else {
                    ""
                }
            };
            out.push_str(&format!(
                "clock: white {}{}, black {}{}\n",
                format_ms(clock.white_ms),
                mark("white"),
                format_ms(clock.black_ms),
                mark("black")
            ));
        }
        if let Some(spectators) = state.spectators {
            if spectators > 0 {
                out.push_str(&format!("spectators: {spectators}\n"));
            }
        }
        out
    }

    fn show(&mut self) {
        let extra = self.status_lines();
        let text = self.table.render(self.screen.look, &extra);
        self.screen.say(&text);
        let status = match &self.state {
            Some(state) if state.status == "finished" => None,
            Some(state) if state.status == "waiting" => Some("waiting for an opponent".to_string()),
            Some(_) if self.my_turn() => Some("your move".to_string()),
            Some(state) => Some(format!("{} to move", state.turn)),
            None => None,
        };
        if let Some(status) = status {
            self.screen.announce(&status);
        }
    }

    fn check_can_move(&self) -> Result<Color, String> {
        let Some(color) = self.my_color() else {
            return Err("spectators cannot move".into());
        };
        match &self.state {
            Some(state) if state.status == "finished" => Err("the game is over".into()),
            Some(state) if state.status == "waiting" => {
                Err("waiting for an opponent to join".into())
            }
            Some(_) if !self.my_turn() => Err("it is not your turn".into()),
            Some(_) => Ok(color),
            None => Err("the game has not arrived yet".into()),
        }
    }

    async fn handle_line(&mut self, line: &str) -> Result<Flow, String> {
        let Some(command) = command::parse(line)? else {
            return Ok(Flow::Continue);
        };
        match command {
            Command::Move(text) => {
                self.check_can_move()?;
                let mv = self.table.parse_move(&text)?;
                self.table.picked = None;
                Ok(Flow::Send(json!({"type": "move", "uci": mv.to_uci()})))
            }
            Command::Pick(sq) => {
                let color = self.check_can_move()?;
                let said = self.table.pick(sq, color)?;
                self.screen.say(&said);
                let extra = self.status_lines();
                let text = self.table.render(self.screen.look, &extra);
                self.screen.say(&text);
                Ok(Flow::Continue)
            }
            Command::Place(sq, promotion) => {
                self.check_can_move()?;
                match self.table.place(sq, promotion)? {
                    Some(mv) => Ok(Flow::Send(json!({"type": "move", "uci": mv.to_uci()}))),
                    None => {
                        self.screen.say(&format!("put back on {sq}"));
                        Ok(Flow::Continue)
                    }
                }
            }
            Command::Info(sq) => {
                let text = self.table.info(sq);
                self.screen.say(&text);
                Ok(Flow::Continue)
            }
            Command::Board => {
                self.show();
                Ok(Flow::Continue)
            }
            Command::Flip => {
                self.table.flipped = !self.table.flipped;
                self.show();
                Ok(Flow::Continue)
            }
            Command::Undo => Err("undo is for local games: online moves are final".into()),
            Command::Load(_) => Err("load is for local games (rookery play --pgn FILE)".into()),
            Command::Save(path) => {
                let pgn = self.server.pgn(&self.id).await.map_err(|e| e.to_string())?;
                std::fs::write(&path, pgn)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                self.screen.say(&format!("saved {}", path.display()));
                Ok(Flow::Continue)
            }
            Command::Resign => {
                self.check_seat()?;
                Ok(Flow::Send(json!({"type": "resign"})))
            }
            Command::Draw => {
                self.check_seat()?;
                Ok(Flow::Send(json!({"type": "draw"})))
            }
            Command::Help => {
                self.screen.say(HELP);
                Ok(Flow::Continue)
            }
            Command::Quit => Ok(Flow::Quit),
        }
    }

    fn check_seat(&self) -> Result<(), String> {
        if self.my_color().is_none() {
            return Err("spectators cannot do that".into());
        }
        if self.finished() {
            return Err("the game is over".into());
        }
        Ok(())
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// What the loop does after a line.
enum Flow {
    Continue,
    Send(Value),
    Quit,
}

/// True for the contract's "no free seat" answer.
pub fn is_seat_taken(error: &RemoteError) -> bool {
    error.code.as_deref() == Some("seat_taken")
}

/// True when the server answered 404 for the game.
pub fn is_not_found(error: &RemoteError) -> bool {
    error.code.as_deref() == Some("not_found")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_refs() {
        let cases = [
            ("abc-123", Some((None, "abc-123", None))),
            (
                "http://127.0.0.1:8080/games/abc?invite=s3cret",
                Some((Some("http://127.0.0.1:8080"), "abc", Some("s3cret"))),
            ),
            (
                "http://chess.example/games/abc/",
                Some((Some("http://chess.example"), "abc", None)),
            ),
            ("http://chess.example/watch", None),
            ("not a url/games/x", None),
        ];
        for (text, expected) in cases {
            let got = parse_game_ref(text)
                .ok()
                .map(|r| (r.server, r.id, r.invite));
            let expected = expected
                .map(|(s, id, inv)| (s.map(String::from), id.to_string(), inv.map(String::from)));
            assert_eq!(got, expected, "{text}");
        }
    }

    #[test]
    fn clock_format() {
        assert_eq!(format_ms(300_000), "5:00.0");
        assert_eq!(format_ms(61_234), "1:01.2");
        assert_eq!(format_ms(-5), "0:00.0");
    }
}

//! The game's WebSocket: opening it (`ws://`, or `wss://` through the
//! client's TLS), connecting again after a drop (the seat token still
//! holds, and the first frame brings the state), moving to an agreed
//! rematch's game, and reading the server's messages.

use std::time::Duration;

use rookery_engine::Game;
use serde_json::Value;

use super::offers::Offers;
use super::{Participant, RemoteSession};
use crate::command::{self, Command};
use crate::remote::client::{self, GameState, Seat, REQUEST_TIMEOUT};
use crate::remote::inbox::Inbox;
use crate::table::Table;

/// Reconnection attempts after the WebSocket drops, a second apart.
const RECONNECT_ATTEMPTS: u32 = 10;

/// How a reconnection ended.
pub(super) enum Reconnected {
    Socket(Box<Socket>),
    /// The player quit while waiting.
    Quit,
}

impl RemoteSession {
    /// Leaves the finished game for the agreed rematch, seated as the server
    /// said, and opens the new game's WebSocket (its first frame brings the
    /// state).
    pub(super) async fn move_to_rematch(
        &mut self,
        game: String,
        seat: Seat,
    ) -> Result<Socket, String> {
        self.screen
            .announce(&format!("rematch: game {game}, you play {}", seat.color));
        let mut table = Table::new(Game::default());
        table.flipped = seat.color == "black";
        self.table = table;
        self.id = game;
        self.participant = Participant::Player(seat);
        self.state = None;
        self.reported = 0;
        self.reported_status.clear();
        self.reported_offers = Offers::default();
        self.reported_rematch = None;
        self.awaiting_answer = None;
        open_socket(&self.socket_url(), self.server.ws_connector()).await
    }

    /// The game's WebSocket URL, with the seat token for a player.
    pub(super) fn socket_url(&self) -> String {
        let token = match &self.participant {
            Participant::Player(seat) => Some(seat.token.as_str()),
            Participant::Account(_) | Participant::Spectator => None,
        };
        self.server.ws_url(&self.id, token)
    }

    /// The server went away (a restart, a network blip): the seat token
    /// still holds, so connect again, and the first frame brings the state.
    /// At a terminal the player can quit meanwhile; a script's lines wait.
    pub(super) async fn reconnect(&mut self, inbox: &mut Inbox) -> Result<Reconnected, String> {
        self.screen
            .complain("connection to the server lost; reconnecting (type quit to leave)");
        let interactive = self.screen.interactive;
        let url = self.socket_url();
        let mut last = String::new();
        for _ in 0..RECONNECT_ATTEMPTS {
            let connector = self.server.ws_connector();
            let attempt = async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                open_socket(&url, connector).await
            };
            tokio::pin!(attempt);
            let connected = loop {
                if interactive {
                    inbox.request();
                }
                tokio::select! {
                    connected = &mut attempt => break connected,
                    line = inbox.recv(), if interactive && inbox.waiting => match line {
                        None => return Ok(Reconnected::Quit),
                        Some(line) if matches!(command::parse(&line), Ok(Some(Command::Quit))) => {
                            return Ok(Reconnected::Quit)
                        }
                        Some(_) => self.screen.complain("not connected to the server yet"),
                    },
                }
            };
            match connected {
                Ok(socket) => {
                    self.screen.say("reconnected");
                    // Its first frame brings the state as it is now.
                    self.stale_state = true;
                    // The state that arrives now is the truth; an action
                    // whose answer was lost with the connection may or may
                    // not have been taken, so don't wait for that answer.
                    if self.awaiting_answer.take().is_some() {
                        self.screen.complain(
                            "your last action was not confirmed before the connection dropped: check the board",
                        );
                    }
                    return Ok(Reconnected::Socket(Box::new(socket)));
                }
                Err(why) => last = why,
            }
        }
        Err(format!("gave up reconnecting: {last}"))
    }

    pub(super) fn on_server_text(&mut self, text: &str) {
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            return;
        };
        match message.get("type").and_then(Value::as_str) {
            Some("state") => {
                self.stale_state = false;
                if let Some(game) = message.get("game") {
                    match serde_json::from_value::<GameState>(game.clone()) {
                        Ok(state) => self.apply_state(state),
                        Err(e) => self.screen.complain(&format!("unreadable game state: {e}")),
                    }
                }
            }
            // Our seat in the agreed rematch (sent to seats only).
            Some("rematch") if self.my_color().is_some() => {
                let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_string);
                match (text("game"), text("color"), text("token")) {
                    (Some(game), Some(color), Some(token)) => {
                        self.rematch_seat = Some((game, Seat { color, token }));
                    }
                    _ => self
                        .screen
                        .complain("unreadable rematch seat from the server"),
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
}

/// Opens a game's WebSocket (`ws://`, or `wss://` through `connector`'s
/// TLS), within the request time limit.
pub(super) async fn open_socket(
    url: &str,
    connector: tokio_tungstenite::Connector,
) -> Result<Socket, String> {
    let connect =
        tokio_tungstenite::connect_async_tls_with_config(url, None, false, Some(connector));
    match tokio::time::timeout(REQUEST_TIMEOUT, connect).await {
        Ok(Ok((socket, _))) => Ok(socket),
        Ok(Err(e)) => Err(format!(
            "cannot open the game's WebSocket: {}",
            client::describe(&e)
        )),
        Err(_) => Err("timed out opening the game's WebSocket".into()),
    }
}

pub(super) type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

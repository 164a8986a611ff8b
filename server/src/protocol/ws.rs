//! The WebSocket contract (`/ws/games/{id}`): the query string, the
//! client's messages, the server's messages, and the shared, serialised-once
//! broadcasts (state and presence) that a game's subscribers receive.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::Utf8Bytes;
use serde::{Deserialize, Serialize};

use super::state::{GameState, SeatView};
use super::Side;

/// `GET /ws/games/{id}?token=`.
#[derive(Debug, Deserialize)]
pub struct WsQuery {
    #[serde(default)]
    pub token: Option<String>,
}

/// A client's WebSocket message.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClientMessage {
    Move {
        uci: String,
    },
    Resign,
    Draw,
    /// Added (offers): decline the opponent's draw offer.
    #[serde(rename = "draw_decline")]
    DrawDecline,
    /// Added: withdraw one's own draw offer.
    #[serde(rename = "draw_withdraw")]
    DrawWithdraw,
    /// Added: ask to take back one's last move, or accept the opponent's
    /// request.
    Takeback,
    #[serde(rename = "takeback_decline")]
    TakebackDecline,
    #[serde(rename = "takeback_withdraw")]
    TakebackWithdraw,
    /// Added: offer or accept a rematch of the finished game.
    Rematch,
    #[serde(rename = "rematch_decline")]
    RematchDecline,
    #[serde(rename = "rematch_withdraw")]
    RematchWithdraw,
    /// Added: end the game without a result before each side has moved.
    Abort,
    /// Added: take a seat on an open connection, so the token need not be
    /// in the URL.
    Auth {
        token: String,
    },
    /// Added: an application-level heartbeat, answered with `pong`
    /// (browsers cannot see WebSocket pings, so they cannot tell a
    /// half-open socket from a quiet game without it).
    Ping,
    /// Added (issue 37): a line in the connection's chat room (a seat's
    /// connection: the players' room; any other: the spectators').
    Chat {
        text: String,
    },
}

/// A server's WebSocket message.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ServerMessage<'a> {
    State {
        game: &'a GameState,
    },
    Error {
        code: &'static str,
        message: String,
    },
    /// Added: who is connected changed (and nothing else did).
    Presence(Presence),
    /// Added: an `auth` message was accepted; the connection plays `color`.
    Authenticated {
        color: Side,
    },
    /// Added: the rematch was agreed; sent only to a seat's own
    /// connections, with that seat's token in the new game.
    Rematch {
        game: &'a str,
        color: Side,
        token: &'a str,
    },
    /// Added: the answer to a client's `ping`.
    Pong,
    /// Added (issue 37): a new line in the connection's chat room.
    Chat {
        room: &'a str,
        user: &'a str,
        text: &'a str,
    },
    /// Added (issue 37): the room's recent lines, oldest first, sent after
    /// the first state and whenever the connection's room changes, when
    /// the room has any.
    #[serde(rename = "chat_history")]
    ChatHistory {
        room: &'a str,
        lines: Vec<ChatEntry>,
    },
}

/// One line of a `chat_history` message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatEntry {
    pub user: String,
    pub text: String,
}

/// The connection counts of a game, as `presence` messages carry them:
/// whether each human seat has a connection, and how many spectators watch.
/// An AI seat is never `connected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presence {
    pub white: bool,
    pub black: bool,
    pub spectators: u32,
}

impl Presence {
    pub fn of(game: &GameState) -> Presence {
        let connected = |seat: &SeatView| {
            matches!(
                seat,
                SeatView::Human {
                    connected: true,
                    ..
                }
            )
        };
        Presence {
            white: connected(&game.white),
            black: connected(&game.black),
            spectators: game.spectators,
        }
    }

    /// Puts these counts into `game` (a copy of a state kept elsewhere).
    pub fn show_in(&self, game: &mut GameState) {
        game.spectators = self.spectators;
        for (seat, now) in [(&mut game.white, self.white), (&mut game.black, self.black)] {
            if let SeatView::Human { connected, .. } = seat {
                *connected = now;
            }
        }
    }
}

/// What a game's subscribers receive, serialised once and shared by all of
/// them: cloning one is a reference count, not a copy. With tens of
/// thousands of sockets on a node, serialising a state per subscriber would
/// cost more than everything else a move does.
#[derive(Debug, Clone)]
pub enum Broadcast {
    /// The game changed: its new state.
    State(Arc<SharedState>),
    /// Only who is connected changed: a `presence` message.
    Presence(Utf8Bytes),
}

/// One GameState, serialised for each kind of subscriber.
#[derive(Debug)]
pub struct SharedState {
    pub finished: bool,
    /// The agreed rematch's game id, if any (a seat's connection then sends
    /// its own player the new seat token).
    pub rematch: Option<String>,
    /// `{"type":"state","game":...}`, a WebSocket text frame's payload.
    pub message: Utf8Bytes,
    /// The GameState and a newline: one NDJSON line.
    pub line: Bytes,
}

impl SharedState {
    pub fn of(game: &GameState) -> Arc<SharedState> {
        // Serialising our own plain structs cannot fail.
        let json = serde_json::to_string(game).unwrap_or_default();
        let message = format!("{{\"type\":\"state\",\"game\":{json}}}");
        let mut line = json.into_bytes();
        line.push(b'\n');
        Arc::new(SharedState {
            finished: game.is_finished(),
            rematch: game.rematch.clone(),
            message: Utf8Bytes::from(message),
            line: Bytes::from(line),
        })
    }
}

impl Broadcast {
    pub fn presence(presence: Presence) -> Broadcast {
        Broadcast::Presence(server_text(&ServerMessage::Presence(presence)))
    }
}

/// A server message as the text of a WebSocket frame.
pub fn server_text(message: &ServerMessage<'_>) -> Utf8Bytes {
    // Serialising our own plain structs cannot fail.
    Utf8Bytes::from(serde_json::to_string(message).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{SeatRating, Status, Visibility};

    fn game() -> GameState {
        GameState {
            id: "00000000-0000-0000-0000-000000000000".into(),
            status: Status::Active,
            white: SeatView::Human {
                name: Some("alice".into()),
                connected: true,
                taken: true,
                rating: Some(SeatRating {
                    rating: 1500,
                    provisional: true,
                }),
            },
            black: SeatView::Ai { level: 3 },
            initial_fen: "startpos".into(),
            fen: "startpos".into(),
            turn: Side::Black,
            moves: vec!["e2e4".into()],
            san: vec!["e4".into()],
            legal_moves: vec!["e7e5".into()],
            check: false,
            result: None,
            termination: None,
            clock: None,
            draw_offer: None,
            takeback_offer: None,
            takebacks: 0,
            rematch_offer: None,
            rematch: None,
            variant: crate::protocol::Variant::Standard,
            spectators: 7,
            created_at: 1,
            rated: true,
            visibility: Visibility::Open,
            joinable: false,
            first_move_ms: None,
            offer_answer: None,
            berserk: Vec::new(),
        }
    }

    #[test]
    fn a_shared_state_is_the_state_message_and_the_ndjson_line() {
        let game = game();
        let shared = SharedState::of(&game);
        let message: serde_json::Value =
            serde_json::from_str(shared.message.as_str()).expect("JSON");
        let expected = serde_json::to_value(ServerMessage::State { game: &game }).expect("JSON");
        assert_eq!(message, expected);
        assert!(shared.line.ends_with(b"\n"));
        let line: GameState = serde_json::from_slice(&shared.line).expect("JSON line");
        assert_eq!(line, game);
        assert!(!shared.finished);
    }

    #[test]
    fn presence_counts_human_connections_only() {
        let presence = Presence::of(&game());
        assert_eq!(
            presence,
            Presence {
                white: true,
                black: false,
                spectators: 7
            }
        );
        let Broadcast::Presence(text) = Broadcast::presence(presence) else {
            panic!("a presence broadcast");
        };
        assert_eq!(
            text.as_str(),
            r#"{"type":"presence","white":true,"black":false,"spectators":7}"#
        );
    }
}

//! The lobby's WebSocket, `GET /ws/lobby` (issue 38): the pools' counts,
//! live, and quick pairing.
//!
//! The server sends `{"type": "pools", "pools": [{"id": "5+3", "minutes",
//! "increment", "waiting", "playing"}...]}` at once and whenever a count
//! changes. The client sends `{"type": "enter", "pool": "5+3"}` (answered
//! `{"type": "entered", "pool", "ticket"}`), `{"type": "leave"}`
//! (`{"type": "left"}`), or `{"type": "resume", "ticket"}` after a reload
//! (within `--pool-grace-ms`); when paired it gets `{"type": "paired",
//! "game_id", "color", "token"}` (the seat's token: an anonymous person
//! plays with it). Closing the socket leaves the pool after the grace.
//! Who enters is the session's account (rated games), or an anonymous
//! person (casual games).

use std::sync::Arc;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use crate::http::error::ApiError;
use crate::identity;
use crate::pools::{Entrant, PoolKey, Ticket};
use crate::AppState;

/// The largest message a lobby client sends.
const MAX_MESSAGE: usize = 1024;

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum LobbyMessage {
    /// `rated` (added, issue 36): `false` waits for a casual game; an
    /// account waits for a rated one unless it says so, an anonymous
    /// person always for a casual one.
    Enter {
        pool: String,
        #[serde(default)]
        rated: Option<bool>,
    },
    Leave,
    Resume {
        ticket: String,
    },
}

pub async fn upgrade(
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let ws = ws.map_err(|rejection| {
        ApiError::BadRequest(format!(
            "this endpoint is a WebSocket: {}",
            rejection.body_text()
        ))
    })?;
    let person = identity::identify(state.store(), &headers).await?;
    let player = person.map(|person| person.player);
    Ok(ws
        .max_message_size(MAX_MESSAGE)
        .on_upgrade(move |socket| session(socket, state, player)))
}

async fn send(socket: &mut WebSocket, message: &str) -> bool {
    socket.send(Message::Text(message.into())).await.is_ok()
}

async fn session(mut socket: WebSocket, state: AppState, player: Option<crate::domain::PlayerRef>) {
    let pools = state.pools.clone();
    let mut counts = pools.counts();
    let mut shutdown = state.registry.shutdown_signal();
    let mut ticket: Option<Ticket> = None;
    let first: Arc<str> = counts.borrow_and_update().clone();
    if !send(&mut socket, &first).await {
        return;
    }
    loop {
        let paired = async {
            match ticket.as_mut() {
                Some(ticket) => ticket.paired.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shutdown.changed() => break,
            changed = counts.changed() => {
                if changed.is_err() {
                    break;
                }
                let message: Arc<str> = counts.borrow_and_update().clone();
                if !send(&mut socket, &message).await {
                    break;
                }
            }
            told = paired => {
                let Some(told) = told else {
                    // The place was taken by another connection of the
                    // same account (or dropped): this one waits no more.
                    ticket = None;
                    if !send(&mut socket, &json!({"type": "left"}).to_string()).await {
                        break;
                    }
                    continue;
                };
                ticket = None;
                let message = json!({
                    "type": "paired",
                    "game_id": told.game_id,
                    "color": told.colour.as_str(),
                    "token": told.token,
                });
                if !send(&mut socket, &message.to_string()).await {
                    break;
                }
            }
            incoming = socket.recv() => {
                let Some(Ok(incoming)) = incoming else {
                    break;
                };
                let text = match incoming {
                    Message::Text(text) => text,
                    Message::Close(_) => break,
                    _ => continue,
                };
                let reply = match serde_json::from_str::<LobbyMessage>(&text) {
                    Err(_) => json!({"type": "error", "code": "bad_request",
                        "message": "send {\"type\": \"enter\", \"pool\": \"5+3\"}, leave or resume"}),
                    Ok(LobbyMessage::Leave) => {
                        if let Some(old) = ticket.take() {
                            pools.leave(&old.id);
                        }
                        json!({"type": "left"})
                    }
                    Ok(LobbyMessage::Resume { ticket: id }) => match pools.resume(&id) {
                        Some(resumed) => {
                            let pool = resumed.pool.name();
                            ticket = Some(resumed);
                            json!({"type": "entered", "pool": pool, "ticket": id})
                        }
                        None => json!({"type": "left"}),
                    },
                    Ok(LobbyMessage::Enter { pool, rated }) => match PoolKey::parse(&pool) {
                        None => json!({"type": "error", "code": "bad_request",
                            "message": format!("no pool {pool:?}: one of 1+0, 2+1, 3+0, 3+2, 5+0, 5+3, 10+0, 10+5, 15+10, 30+0, 30+20")}),
                        Some(key) => {
                            if let Some(old) = ticket.take() {
                                pools.leave(&old.id);
                            }
                            let entrant = Entrant {
                                rated: player.is_some() && rated != Some(false),
                                player: player.clone(),
                                colour: None,
                                range: None,
                            };
                            match pools.enter(key, entrant).await {
                                Ok(entered) => {
                                    let message = json!({"type": "entered", "pool": key.name(), "ticket": entered.id});
                                    ticket = Some(entered);
                                    message
                                }
                                Err(err) => {
                                    let err = ApiError::from(err);
                                    json!({"type": "error", "code": err.code(), "message": err.message()})
                                }
                            }
                        }
                    },
                };
                if !send(&mut socket, &reply.to_string()).await {
                    break;
                }
            }
        }
    }
    if let Some(ticket) = ticket {
        pools.dropped(&ticket.id);
    }
}

//! An arena's WebSocket, `GET /ws/arenas/{id}` (issue 38): the arena with
//! a page of its standings (the shape of `GET /api/tournament/{id}`, with
//! `"type": "arena"` and `"me"`: the person's own line, if they play),
//! sent at once and again after every change (a join, a pairing, a
//! result, the start, the end); and, to a player, `{"type": "paired",
//! "game_id", "color"}` the moment the director pairs them (the page goes
//! to the game). The client picks a page with `{"type": "page", "page":
//! N}`. Who is asking is the session's account.
//!
//! In a cluster the arena's director may be another node than the
//! socket's: a player's pairings and results then reach the socket through
//! the person's event stream (its `gameStart` naming the arena, and
//! `gameFinish`), which crosses nodes, rather than the local director's
//! channels.

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use crate::http::error::ApiError;
use crate::http::lichess::arena::{full, load, standing_json};
use crate::identity;
use crate::tournaments::arena::standings_of;
use crate::AppState;

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ArenaMessage {
    Page { page: usize },
}

pub async fn upgrade(
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let row = load(&state, &id).await?;
    let ws = ws.map_err(|rejection| {
        ApiError::BadRequest(format!(
            "this endpoint is a WebSocket: {}",
            rejection.body_text()
        ))
    })?;
    let me = identity::identify(state.store(), &headers)
        .await?
        .map(|person| person.player.id);
    Ok(ws
        .max_message_size(1024)
        .on_upgrade(move |socket| session(socket, state, row.id, me)))
}

/// The arena as its sockets see it.
async fn view(
    state: &AppState,
    id: &str,
    page: usize,
    me: Option<&str>,
) -> Result<Value, ApiError> {
    let row = load(state, id).await?;
    let mut arena = full(state, &row, page).await?;
    arena["type"] = json!("arena");
    if let Some(me) = me {
        let players = state.store().arena_players(id).await?;
        let pairings = state.store().arena_pairings(id).await?;
        let lines = standings_of(&players, &pairings, row.streakable);
        if let Some(line) = lines.iter().find(|line| line.player.id == me) {
            let mut mine = standing_json(line);
            mine["games"] = json!(pairings
                .iter()
                .filter(|p| p.white_id == me || p.black_id == me)
                .map(|p| {
                    let colour = if p.white_id == me { "white" } else { "black" };
                    json!({"id": p.game_id, "color": colour, "settled": p.settled,
                           "winner": p.winner, "aborted": p.aborted})
                })
                .collect::<Vec<_>>());
            arena["me"] = mine;
        }
    }
    Ok(arena)
}

/// The game and the reader's colour of an event line that says a game of
/// arena `id` started (a `gameStart` with its `tournamentId`).
fn arena_start(line: &str, id: &str) -> Option<(String, String)> {
    let event: Value = serde_json::from_str(line).ok()?;
    if event["type"] != "gameStart" || event["game"]["tournamentId"] != id {
        return None;
    }
    let game = &event["game"];
    Some((
        game["gameId"].as_str()?.to_string(),
        game["color"].as_str()?.to_string(),
    ))
}

/// Tells the socket's player they are paired in `game`, once per game
/// (both the local director and the event stream may say it).
async fn tell_paired(
    socket: &mut WebSocket,
    told: &mut Option<String>,
    game: String,
    colour: &str,
) -> bool {
    if told.as_deref() == Some(game.as_str()) {
        return true;
    }
    let message = json!({"type": "paired", "game_id": game, "color": colour});
    *told = Some(game);
    socket
        .send(Message::Text(message.to_string().into()))
        .await
        .is_ok()
}

async fn session(mut socket: WebSocket, state: AppState, id: String, me: Option<String>) {
    let mut versions = state.arenas.watch(&id);
    let mut pairings = state.arenas.pairings();
    // The person's events: their pairings and results wherever the
    // director runs (see the module's header).
    let mut events = me
        .as_deref()
        .map(|me| state.registry.events().subscribe(me));
    let mut told: Option<String> = None;
    let mut shutdown = state.registry.shutdown_signal();
    let mut page = 1;
    let mut dirty = true;
    loop {
        if dirty {
            dirty = false;
            let message = match view(&state, &id, page, me.as_deref()).await {
                Ok(view) => view,
                Err(err) => json!({"type": "error", "code": err.code(), "message": err.message()}),
            };
            if socket
                .send(Message::Text(message.to_string().into()))
                .await
                .is_err()
            {
                return;
            }
        }
        tokio::select! {
            _ = shutdown.changed() => return,
            changed = versions.changed() => {
                if changed.is_err() {
                    return;
                }
                versions.borrow_and_update();
                dirty = true;
            }
            paired = pairings.recv() => match paired {
                Ok(paired) if paired.arena == id && Some(&paired.player) == me.as_ref() => {
                    let game = paired.game.to_string();
                    if !tell_paired(&mut socket, &mut told, game, paired.colour.as_str()).await {
                        return;
                    }
                    dirty = true;
                }
                Ok(_) => {}
                // Missed pairings are in the next view's "me.games".
                Err(RecvError::Lagged(_)) => dirty = true,
                Err(RecvError::Closed) => return,
            },
            line = async {
                match events.as_mut() {
                    Some(events) => events.recv().await,
                    None => std::future::pending().await,
                }
            } => match line {
                Ok(line) => {
                    if let Some((game, colour)) = arena_start(&line, &id) {
                        if !tell_paired(&mut socket, &mut told, game, &colour).await {
                            return;
                        }
                    }
                    // A pairing or a result of the person's: the view again.
                    dirty = true;
                }
                Err(RecvError::Lagged(_)) => dirty = true,
                Err(RecvError::Closed) => events = None,
            },
            incoming = socket.recv() => {
                let Some(Ok(incoming)) = incoming else {
                    return;
                };
                match incoming {
                    Message::Text(text) => match serde_json::from_str::<ArenaMessage>(&text) {
                        Ok(ArenaMessage::Page { page: asked }) => {
                            page = asked.clamp(1, 10_000);
                            dirty = true;
                        }
                        Err(_) => {
                            let error = json!({"type": "error", "code": "bad_request",
                                "message": "send {\"type\": \"page\", \"page\": N}"});
                            if socket.send(Message::Text(error.to_string().into())).await.is_err() {
                                return;
                            }
                        }
                    },
                    Message::Close(_) => return,
                    _ => {}
                }
            }
        }
    }
}

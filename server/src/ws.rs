//! `GET /ws/games/{id}`: a game's live WebSocket.
//!
//! With `?token=SEAT_TOKEN` the connection plays for that seat (and marks it
//! `connected`); without, it is a read-only spectator. The token is checked
//! before the upgrade, so a bad one gets a plain HTTP error in our shape.
//!
//! Each connection is split: a send task forwards every broadcast state (and
//! this connection's own error answers, and pings) to the socket; the
//! receive loop parses the client's messages and hands actions to the game's
//! actor. A move's result reaches the mover through the broadcast like
//! everyone else's, so all clients see one order of states.
//!
//! Limits: the WebSocket layer refuses messages over a hard cap (closing
//! the connection, as the protocol prescribes); below it, a message over the
//! configured size gets `too_large` and the connection stays open. Messages
//! share a token bucket per connection (`rate_limited`).

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio::time::Instant;
use uuid::Uuid;

use crate::api::game_id;
use crate::api::games::act;
use crate::auth::TokenHash;
use crate::error::{ApiError, ApiQuery};
use crate::live::actor::{Action, Command, GameHandle, StateReceiver};
use crate::protocol::{ClientMessage, GameState, ServerMessage, Side, WsQuery};
use crate::rate_limit::{limit_requests, TokenBucket};
use crate::AppState;

/// Hard cap on a message or frame: beyond it the WebSocket layer closes
/// the connection (1009). Below it, the configured limit answers with an
/// error and keeps the connection.
const HARD_MESSAGE_CAP: usize = 64 * 1024;

/// A ping this often notices dead connections (so `connected` flags drop).
const PING_EVERY: Duration = Duration::from_secs(30);

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/ws/games/{id}", get(upgrade))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limit_requests,
        ))
        .with_state(state)
}

async fn upgrade(
    ws: WebSocketUpgrade,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WsQuery>,
) -> Result<Response, ApiError> {
    let id = game_id(&id)?;
    let handle = state.registry.get(id).await?;
    let seat = match query.token {
        None => None,
        Some(token) => {
            let token = TokenHash::of(&token);
            let side = state
                .registry
                .call(id, |reply| Command::Authorize {
                    token: token.clone(),
                    reply,
                })
                .await?;
            match side {
                Some(side) => Some((side, token)),
                None if state.store().is_seat_token(&token).await? => {
                    return Err(ApiError::Forbidden(
                        "this token holds a seat in another game".into(),
                    ))
                }
                None => return Err(ApiError::Unauthorized),
            }
        }
    };
    let cap = HARD_MESSAGE_CAP.max(state.config.max_ws_message_bytes);
    Ok(ws
        .max_message_size(cap)
        .max_frame_size(cap)
        .on_upgrade(move |socket| session(socket, state, id, handle, seat)))
}

async fn session(
    socket: WebSocket,
    state: AppState,
    id: Uuid,
    handle: GameHandle,
    seat: Option<(Side, TokenHash)>,
) {
    let side = seat.as_ref().map(|(side, _)| *side);
    // Count this connection before subscribing, so the first state it gets
    // already shows it.
    if handle
        .send(Command::Presence { side, delta: 1 })
        .await
        .is_err()
    {
        tracing::debug!(game = %id, "presence before subscribe: actor gone");
    }
    let subscribed = state
        .registry
        .call(id, |reply| Command::Subscribe { reply })
        .await;
    let (first, states) = match subscribed {
        Ok(subscription) => subscription,
        Err(err) => {
            err.log();
            // Undo the count; if the actor is gone there is none to undo.
            let _ = handle.send(Command::Presence { side, delta: -1 }).await;
            return;
        }
    };

    let (sink, stream) = socket.split();
    let (errors_tx, errors_rx) = mpsc::channel::<ApiError>(16);
    let mut send_task = tokio::spawn(send_loop(sink, first, states, errors_rx));
    let receive = receive_loop(stream, &state, id, seat.as_ref(), errors_tx);
    tokio::select! {
        _ = &mut send_task => {}
        _ = receive => send_task.abort(),
    }
    if handle
        .send(Command::Presence { side, delta: -1 })
        .await
        .is_err()
    {
        // The game left memory (shutdown): there is no count to correct.
        tracing::debug!(game = %id, "presence after close: actor gone");
    }
}

async fn send_loop(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    first: GameState,
    mut states: StateReceiver,
    mut errors: mpsc::Receiver<ApiError>,
) {
    if sink.send(state_message(&first)).await.is_err() {
        return;
    }
    let mut ping = tokio::time::interval_at(Instant::now() + PING_EVERY, PING_EVERY);
    loop {
        let message = tokio::select! {
            state = states.recv() => match state {
                Ok(game) => state_message(&game),
                // States are complete snapshots: skipping stale ones is safe.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => {
                    // The game left memory (the server is shutting down). A
                    // client already gone cannot be told; nothing to do.
                    let _ = sink
                        .send(Message::Close(Some(CloseFrame {
                            code: 1001,
                            reason: Utf8Bytes::from_static("going away"),
                        })))
                        .await;
                    return;
                }
            },
            error = errors.recv() => match error {
                Some(error) => error_message(&error),
                None => return,
            },
            _ = ping.tick() => Message::Ping(Default::default()),
        };
        if sink.send(message).await.is_err() {
            return;
        }
    }
}

async fn receive_loop(
    mut stream: futures_util::stream::SplitStream<WebSocket>,
    state: &AppState,
    id: Uuid,
    seat: Option<&(Side, TokenHash)>,
    errors: mpsc::Sender<ApiError>,
) {
    let mut bucket = TokenBucket::default();
    while let Some(Ok(message)) = stream.next().await {
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(_) => {
                if !send_error(
                    &errors,
                    ApiError::BadRequest("send JSON text messages".into()),
                )
                .await
                {
                    return;
                }
                continue;
            }
            Message::Close(_) => return,
            // Pings are answered by the WebSocket layer; pongs need nothing.
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        let outcome = handle_text(state, id, seat, &mut bucket, text.as_str()).await;
        if let Err(error) = outcome {
            if !send_error(&errors, error).await {
                return;
            }
        }
    }
}

/// Queues an error answer; `false` when the send task is gone.
async fn send_error(errors: &mpsc::Sender<ApiError>, error: ApiError) -> bool {
    error.log();
    errors.send(error).await.is_ok()
}

async fn handle_text(
    state: &AppState,
    id: Uuid,
    seat: Option<&(Side, TokenHash)>,
    bucket: &mut TokenBucket,
    text: &str,
) -> Result<(), ApiError> {
    if !bucket.try_take(state.config.ws_rate(), Instant::now()) {
        return Err(ApiError::RateLimited);
    }
    if text.len() > state.config.max_ws_message_bytes {
        return Err(ApiError::TooLarge(format!(
            "messages are limited to {} bytes",
            state.config.max_ws_message_bytes
        )));
    }
    let message: ClientMessage = serde_json::from_str(text)
        .map_err(|err| ApiError::BadRequest(format!("bad message: {err}")))?;
    let Some((_, token)) = seat else {
        return Err(ApiError::Forbidden("spectators cannot act".into()));
    };
    let action = match message {
        ClientMessage::Move { uci } => Action::Move(uci),
        ClientMessage::Resign => Action::Resign,
        ClientMessage::Draw => Action::Draw,
    };
    act(state, id, token, action).await.map(|_| ())
}

fn state_message(game: &GameState) -> Message {
    to_text(&ServerMessage::State { game })
}

fn error_message(error: &ApiError) -> Message {
    to_text(&ServerMessage::Error {
        code: error.code(),
        message: error.message(),
    })
}

fn to_text(message: &ServerMessage<'_>) -> Message {
    // Serialising our own plain structs cannot fail.
    let text = serde_json::to_string(message).unwrap_or_default();
    Message::Text(Utf8Bytes::from(text))
}

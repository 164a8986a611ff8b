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
//! share a token bucket per client address (`rate_limited`).

use std::net::IpAddr;
use std::time::Duration;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Extension, Router};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio::time::Instant;
use uuid::Uuid;

use crate::api::game_id;
use crate::api::games::act;
use crate::auth::TokenHash;
use crate::client_ip::ClientIp;
use crate::error::{ApiError, ApiQuery};
use crate::live::actor::{Action, Command, GameHandle, StateReceiver};
use crate::protocol::{ClientMessage, GameState, ServerMessage, Side, WsQuery};
use crate::rate_limit::limit_requests;
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
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WsQuery>,
) -> Result<Response, ApiError> {
    let id = game_id(&id)?;
    let handle = state.registry.get(id).await?;
    // A plain GET (no upgrade headers) of a real game: our error shape, not
    // axum's text.
    let ws = ws.map_err(|rejection| {
        ApiError::BadRequest(format!(
            "this endpoint is a WebSocket: {}",
            rejection.body_text()
        ))
    })?;
    // `?token=` with nothing after it is no token: a spectator.
    let token = query.token.filter(|token| !token.is_empty());
    let seat = match token {
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
        .on_upgrade(move |socket| session(socket, state, id, handle, seat, client)))
}

async fn session(
    socket: WebSocket,
    state: AppState,
    id: Uuid,
    handle: GameHandle,
    seat: Option<(Side, TokenHash)>,
    client: IpAddr,
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
    let (replies_tx, replies_rx) = mpsc::channel::<Reply>(16);
    let mut send_task = tokio::spawn(send_loop(sink, first, states, replies_rx));
    let receive = receive_loop(stream, &state, id, seat.as_ref(), client, replies_tx);
    tokio::select! {
        _ = &mut send_task => {}
        ended = receive => match ended {
            // The send task owns the socket's sending half: let it send the
            // close frame, but do not wait long for a client that reads
            // nothing.
            ReceiveEnd::Closing => {
                if tokio::time::timeout(CLOSE_GRACE, &mut send_task).await.is_err() {
                    send_task.abort();
                }
            }
            ReceiveEnd::Gone => send_task.abort(),
        },
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

/// What the receive loop asks the send task to send.
enum Reply {
    /// An `error` message answering a bad client message.
    Error(ApiError),
    /// A close frame, after which the connection ends.
    Close(CloseFrame),
}

/// How the receive loop ended.
enum ReceiveEnd {
    /// The client closed, vanished or broke the connection.
    Gone,
    /// The server is closing the connection (a close frame is queued).
    Closing,
}

/// How long a closing connection may take to send its close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

async fn send_loop(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    first: GameState,
    mut states: StateReceiver,
    mut replies: mpsc::Receiver<Reply>,
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
            reply = replies.recv() => match reply {
                Some(Reply::Error(error)) => error_message(&error),
                Some(Reply::Close(frame)) => {
                    // The connection ends either way; a client already gone
                    // cannot be told.
                    let _ = sink.send(Message::Close(Some(frame))).await;
                    return;
                }
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
    client: IpAddr,
    errors: mpsc::Sender<Reply>,
) -> ReceiveEnd {
    while let Some(received) = stream.next().await {
        let message = match received {
            Ok(message) => message,
            Err(err) if is_too_big(&err) => {
                // Over the hard cap: the protocol's answer is to close with
                // 1009 (message too big).
                let frame = CloseFrame {
                    code: 1009,
                    reason: Utf8Bytes::from(format!(
                        "messages are limited to {} bytes",
                        state.config.max_ws_message_bytes
                    )),
                };
                return if errors.send(Reply::Close(frame)).await.is_ok() {
                    ReceiveEnd::Closing
                } else {
                    ReceiveEnd::Gone
                };
            }
            Err(_) => return ReceiveEnd::Gone,
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Binary(_) => {
                if !send_error(
                    &errors,
                    ApiError::BadRequest("send JSON text messages".into()),
                )
                .await
                {
                    return ReceiveEnd::Gone;
                }
                continue;
            }
            Message::Close(_) => return ReceiveEnd::Gone,
            // Pings are answered by the WebSocket layer; pongs need nothing.
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        let outcome = handle_text(state, id, seat, client, text.as_str()).await;
        if let Err(error) = outcome {
            if !send_error(&errors, error).await {
                return ReceiveEnd::Gone;
            }
        }
    }
    ReceiveEnd::Gone
}

/// Whether a receive error is a message or frame over the hard cap.
fn is_too_big(err: &axum::Error) -> bool {
    std::error::Error::source(err)
        .and_then(|cause| cause.downcast_ref::<tungstenite::Error>())
        .is_some_and(|cause| matches!(cause, tungstenite::Error::Capacity(_)))
}

/// Queues an error answer; `false` when the send task is gone.
async fn send_error(errors: &mpsc::Sender<Reply>, error: ApiError) -> bool {
    error.log();
    errors.send(Reply::Error(error)).await.is_ok()
}

async fn handle_text(
    state: &AppState,
    id: Uuid,
    seat: Option<&(Side, TokenHash)>,
    client: IpAddr,
    text: &str,
) -> Result<(), ApiError> {
    // Per client address, shared by all its sockets (issue 8): opening
    // more sockets does not buy more messages.
    if !state.limits.ws.try_take(client, Instant::now()) {
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

//! `GET /ws/games/{id}`: a game's live WebSocket.
//!
//! A connection plays for a seat when it brings the seat's token: in
//! `?token=`, in the `Sec-WebSocket-Protocol` header (`rookery.token.TOKEN`
//! next to `rookery`), or later in an `auth` message. The first two are
//! checked before the upgrade, so a bad token gets a plain HTTP error in our
//! shape. Without a token the connection is a read-only spectator.
//!
//! One task serves each connection: it waits at once on the client's
//! frames, the game's broadcast, the ping timer and the pong deadline. With
//! tens of thousands of mostly idle spectators on a node, a second task and
//! a channel per connection would be memory for nothing, and so would the
//! WebSocket library's default 128 KiB read buffer: the buffers here are
//! sized for our small messages.
//!
//! Chat (issue 37) rides on the same socket: a seat's connection reads
//! and writes the players' room, any other connection the spectators'
//! room (writing needs a person: the session cookie's account, or the
//! named player of the seat). The room's recent lines, if any, come after
//! the first state (`chat_history`), each new one as it is posted (`chat`), without
//! the lines of people the reader blocks (`http::chat`).
//!
//! Every subscriber of a game receives the same serialised bytes (see
//! [`Broadcast`]). A move's result reaches the mover through the broadcast
//! like everyone else's, so all clients see one order of states.
//!
//! Limits:
//! - the WebSocket layer refuses messages over a hard cap (closing the
//!   connection, as the protocol prescribes); below it, a message over the
//!   configured size gets `too_large` and the connection stays open;
//! - text, binary and ping frames share a token bucket per client address
//!   (`rate_limited`): opening more sockets does not buy more messages;
//! - a peer that does not answer a ping in time is closed (4000), one that
//!   does not take a frame in time is dropped, and one that falls too many
//!   messages behind its game is closed (4008): it reconnects and gets a
//!   fresh state, which is all it needs, since every state is complete.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Extension, Router};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use uuid::Uuid;

use crate::domain::PlayerRef;
use crate::http::chat;
use crate::http::client_ip::ClientIp;
use crate::http::error::ApiError;
use crate::http::extract::{game_id, ApiQuery};
use crate::http::rate_limit::limit_requests;
use crate::live::actor::{Action, Ask, Command, GameHandle, SeatSecret, StateReceiver};
use crate::live::game::Answer;
use crate::protocol::{
    server_text, Broadcast, ChatEntry, ClientMessage, ServerMessage, SharedState, Side, WsQuery,
};
use crate::social::chat::Room;
use crate::token::TokenHash;
use crate::util::sleep_until_opt;
use crate::AppState;

/// Hard cap on a message or frame: beyond it the WebSocket layer closes
/// the connection (1009). Below it, the configured limit answers with an
/// error and keeps the connection.
const HARD_MESSAGE_CAP: usize = 64 * 1024;

/// The subprotocol the server speaks; a client that sends its token as a
/// subprotocol offers this one too, and the server selects it (browsers
/// refuse an upgrade that selects none of several offered).
pub const PROTOCOL: &str = "rookery";

/// A subprotocol `rookery.token.TOKEN` carries a seat token.
pub const TOKEN_PROTOCOL_PREFIX: &str = "rookery.token.";

/// Close code: the peer did not answer a ping in time.
pub const CLOSE_NO_PONG: u16 = 4000;

/// Close code: the peer fell too far behind its game's messages; it should
/// reconnect, and the first state then brings it up to date.
pub const CLOSE_TOO_SLOW: u16 = 4008;

/// Close code: the session this connection's seat was found through has
/// ended (logged out, from this device or another, or the password changed).
pub const CLOSE_SESSION_ENDED: u16 = 4001;

/// How long a closing connection may take to send its close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The read buffer of a connection. Client messages are a few dozen bytes;
/// a larger one (up to the message cap) still arrives, in several reads.
/// The library's default, 128 KiB, is filled with zeros on the first read,
/// so it is resident memory for every idle socket.
const READ_BUFFER: usize = 4 * 1024;

/// The most a connection may buffer unsent (a little over one message).
const MAX_WRITE_BUFFER: usize = HARD_MESSAGE_CAP + 16 * 1024;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/ws/games/{id}", get(upgrade))
        .layer(axum::middleware::from_fn(
            crate::http::extract::require_decodable_path,
        ))
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
    headers: axum::http::HeaderMap,
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
    // `?token=` with nothing after it is no token: a spectator. The query
    // (the contract's way) wins over the subprotocol.
    let token = query
        .token
        .filter(|token| !token.is_empty())
        .or_else(|| protocol_token(&ws));
    let (seat, by_account) = match token {
        None => (account_seat(&state, id, &headers).await?, true),
        Some(token) => {
            let (side, hash) = authorize(&state, id, &token).await?;
            (Some((side, hash, SeatSecret(token), None)), false)
        }
    };
    // A seat found through the account is announced, since the client did
    // not ask for one.
    let announce = by_account && seat.is_some();
    // Who writes in the chat: the request's person (session cookie or
    // Bearer), if any; a bad credential only means no chat.
    let person = crate::identity::identify(state.store(), &headers)
        .await
        .ok()
        .flatten()
        .map(|person| person.player);
    let cap = HARD_MESSAGE_CAP.max(state.config.ws.max_ws_message_bytes);
    Ok(ws
        .protocols([PROTOCOL])
        .read_buffer_size(READ_BUFFER)
        // Write each frame at once: states go out as they come, and nothing
        // sits in a buffer per connection.
        .write_buffer_size(0)
        .max_write_buffer_size(MAX_WRITE_BUFFER.max(cap))
        .max_message_size(cap)
        .max_frame_size(cap)
        .on_upgrade(move |socket| {
            session(socket, state, id, handle, seat, announce, client, person)
        }))
}

/// Without a seat token, the seat of the account the request's session
/// names (issue 21: a person's seat follows them to any device where they
/// are logged in), if it holds one in this game. The connection then has
/// no seat secret of its own: a fresh random one stands in, so a rematch
/// seat derived from it is reachable only through the account too. The
/// session's hash comes with it: the seat is played only while that
/// session lasts.
async fn account_seat(
    state: &AppState,
    id: Uuid,
    headers: &axum::http::HeaderMap,
) -> Result<Option<Seat>, ApiError> {
    let Some(cookie) = crate::identity::session_cookie(headers) else {
        return Ok(None);
    };
    let Some(grant) = state.store().session(&TokenHash::of(&cookie)).await? else {
        return Ok(None);
    };
    let Some((side, hash)) = state.registry.seat_of_player(id, &grant.player.id).await? else {
        return Ok(None);
    };
    let secret = SeatSecret(crate::token::mint()?.secret);
    Ok(Some((side, hash, secret, Some(TokenHash::of(&cookie)))))
}

/// The seat token offered as a `rookery.token.TOKEN` subprotocol, if any.
fn protocol_token(ws: &WebSocketUpgrade) -> Option<String> {
    ws.requested_protocols()
        .filter_map(|protocol| protocol.to_str().ok())
        .find_map(|protocol| protocol.strip_prefix(TOKEN_PROTOCOL_PREFIX))
        .filter(|token| !token.is_empty())
        .map(str::to_string)
}

/// The seat `token` holds in game `id`: `unauthorized` for an unknown
/// token, `forbidden` for another game's seat.
async fn authorize(state: &AppState, id: Uuid, token: &str) -> Result<(Side, TokenHash), ApiError> {
    let token = TokenHash::of(token);
    let side = state.registry.seat_of(id, &token).await?;
    match side {
        Some(side) => Ok((side, token)),
        None if state.store().is_seat_token(&token).await? => Err(ApiError::Forbidden(
            "this token holds a seat in another game".into(),
        )),
        None => Err(ApiError::Unauthorized),
    }
}

#[allow(clippy::too_many_arguments)]
async fn session(
    socket: WebSocket,
    state: AppState,
    id: Uuid,
    handle: GameHandle,
    seat: Option<Seat>,
    announce: bool,
    client: IpAddr,
    person: Option<PlayerRef>,
) {
    let side = seat.as_ref().map(|(side, ..)| *side);
    let kind = if side.is_some() { "seat" } else { "spectator" };
    let sockets = metrics::gauge!("rookery_websockets", "kind" => kind);
    sockets.increment(1.0);
    // Count this connection before subscribing, so the first state it gets
    // already shows it.
    if handle.tell(Ask::Presence { side, delta: 1 }).await.is_err() {
        tracing::debug!(game = %id, "presence before subscribe: actor gone");
    }
    let subscribed = state
        .registry
        .call(id, |reply| Command::Subscribe { reply })
        .await;
    let (first, updates) = match subscribed {
        Ok(subscription) => subscription,
        Err(err) => {
            err.log();
            // Undo the count; if the actor is gone there is none to undo.
            let _ = handle.tell(Ask::Presence { side, delta: -1 }).await;
            return;
        }
    };
    // Subscribed before the history is read, so no line falls between.
    let chat = state.registry.events().subscribe(&chat::chat_key(id));
    let muted = match chat::muted_by(&state, person.as_ref().map(|p| p.id.as_str())).await {
        Ok(muted) => muted,
        Err(err) => {
            err.log();
            HashSet::new()
        }
    };
    let mut connection = Connection {
        socket,
        state: &state,
        handle: &handle,
        id,
        seat,
        client,
        rematch_told: None,
        person,
        muted,
    };
    let mut open = connection.write_state(&first).await.is_ok();
    if open && announce {
        if let Some(side) = side {
            let text = server_text(&ServerMessage::Authenticated { color: side });
            open = connection.write(Message::Text(text)).await.is_ok();
        }
    }
    if open {
        open = connection.write_chat_history().await.is_ok();
    }
    if open {
        connection.serve(updates, chat).await;
    }
    let side = connection.seat.as_ref().map(|(side, ..)| *side);
    if handle
        .tell(Ask::Presence { side, delta: -1 })
        .await
        .is_err()
    {
        // The game left memory (shutdown): there is no count to correct.
        tracing::debug!(game = %id, "presence after close: actor gone");
    }
    sockets.decrement(1.0);
}

/// A seat a connection plays: its colour, token hash, the token itself
/// (kept in this task's memory only, to derive the player's seat token in a
/// rematch), and the hash of the session it was found through, if it was
/// (the connection then plays it only while that session lasts).
type Seat = (Side, TokenHash, SeatSecret, Option<TokenHash>);

/// One open WebSocket.
struct Connection<'a> {
    socket: WebSocket,
    state: &'a AppState,
    handle: &'a GameHandle,
    id: Uuid,
    /// The seat this connection plays, if it has one (see [`Seat`]).
    seat: Option<Seat>,
    /// The client's address: its sockets share one message budget.
    client: IpAddr,
    /// The rematch game whose seat token this connection already sent.
    rematch_told: Option<String>,
    /// Who writes this connection's chat lines, once known (the request's
    /// person, or the named player of its seat).
    person: Option<PlayerRef>,
    /// The names (lower case) whose chat lines this reader does not see.
    muted: HashSet<String>,
}

/// A game's chat channel on the event hub.
type ChatReceiver = tokio::sync::broadcast::Receiver<Arc<str>>;

/// The connection cannot go on (the peer is gone or too slow to write to).
struct Gone;

impl Connection<'_> {
    async fn serve(&mut self, mut updates: StateReceiver, mut chat: ChatReceiver) {
        let config = &self.state.config;
        let every = config.ws_ping_interval();
        let mut ping = tokio::time::interval_at(Instant::now() + every, every);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // When the ping in flight must have been answered.
        let mut pong_due: Option<Instant> = None;
        loop {
            let outcome = tokio::select! {
                frame = self.socket.recv() => self.on_frame(frame).await,
                update = updates.recv() => match update {
                    Ok(Broadcast::State(game)) => self.write_state(&game).await,
                    Ok(Broadcast::Presence(text)) => self.write(Message::Text(text)).await,
                    // The slow-reader policy: a peer this far behind gets
                    // no partial catch-up; it reconnects for a fresh state.
                    Err(RecvError::Lagged(missed)) => {
                        tracing::debug!(game = %self.id, missed, "slow WebSocket closed");
                        self.close(CLOSE_TOO_SLOW, "too slow: reconnect for a fresh state").await;
                        Err(Gone)
                    }
                    // The game left memory (the server is shutting down).
                    Err(RecvError::Closed) => {
                        self.close(1001, "going away").await;
                        Err(Gone)
                    }
                },
                line = chat.recv() => match line {
                    Ok(line) => self.write_chat_line(&line).await,
                    // Chat is not state: a reader that fell behind skips
                    // the lines it missed.
                    Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => Ok(Frame::Other),
                },
                _ = ping.tick() => {
                    if !self.session_lasts().await {
                        self.close(CLOSE_SESSION_ENDED, "the session has ended: log in again").await;
                        return;
                    }
                    pong_due.get_or_insert(Instant::now() + config.ws_pong_timeout());
                    self.write(Message::Ping(Default::default())).await
                }
                _ = sleep_until_opt(pong_due) => {
                    tracing::debug!(game = %self.id, "WebSocket without pong closed");
                    self.close(CLOSE_NO_PONG, "no pong").await;
                    Err(Gone)
                }
            };
            match outcome {
                Ok(Frame::Pong) => pong_due = None,
                Ok(Frame::Other) => {}
                Err(Gone) => return,
            }
        }
    }

    /// Handles what the client sent.
    async fn on_frame(
        &mut self,
        frame: Option<Result<Message, axum::Error>>,
    ) -> Result<Frame, Gone> {
        let message = match frame {
            Some(Ok(message)) => message,
            Some(Err(err)) if is_too_big(&err) => {
                // Over the hard cap: the protocol's answer is to close with
                // 1009 (message too big).
                let reason = format!(
                    "messages are limited to {} bytes",
                    self.state.config.ws.max_ws_message_bytes
                );
                self.close(1009, &reason).await;
                return Err(Gone);
            }
            Some(Err(_)) | None => return Err(Gone),
        };
        let text = match message {
            Message::Close(_) => return Err(Gone),
            // The answer to our ping; it costs nothing from the budget, as
            // the server asked for it.
            Message::Pong(_) => return Ok(Frame::Pong),
            Message::Text(text) => text,
            // Pings are answered by the WebSocket layer; like binary frames
            // they cost a token, so neither is a free way to make the server
            // work.
            Message::Ping(_) => {
                if !self.take_token() {
                    metrics::counter!("rookery_rate_limited_total", "what" => "websocket")
                        .increment(1);
                    self.send_error(ApiError::RateLimited).await?;
                }
                return Ok(Frame::Other);
            }
            Message::Binary(_) => {
                let error = if self.take_token() {
                    ApiError::BadRequest("send JSON text messages".into())
                } else {
                    ApiError::RateLimited
                };
                self.send_error(error).await?;
                return Ok(Frame::Other);
            }
        };
        if let Err(error) = self.handle_text(text.as_str()).await {
            if matches!(error, ApiError::Unauthorized) && !self.session_lasts().await {
                self.close(CLOSE_SESSION_ENDED, "the session has ended: log in again")
                    .await;
                return Err(Gone);
            }
            self.send_error(error).await?;
        }
        Ok(Frame::Other)
    }

    /// Whether the session this connection's seat was found through (if
    /// any) is still open. A database that cannot answer keeps the
    /// connection: the next check decides.
    fn session_lasts(&self) -> impl std::future::Future<Output = bool> + Send + 'static {
        let session = match &self.seat {
            Some((_, _, _, Some(session))) => Some(session.clone()),
            _ => None,
        };
        let store = self.state.store().clone();
        async move {
            match session {
                None => true,
                Some(session) => !matches!(store.session(&session).await, Ok(None)),
            }
        }
    }

    fn take_token(&mut self) -> bool {
        self.state.limits.ws.try_take(self.client, Instant::now())
    }

    async fn handle_text(&mut self, text: &str) -> Result<(), ApiError> {
        if !self.take_token() {
            return Err(ApiError::RateLimited);
        }
        let limit = self.state.config.ws.max_ws_message_bytes;
        if text.len() > limit {
            return Err(ApiError::TooLarge(format!(
                "messages are limited to {limit} bytes"
            )));
        }
        let message: ClientMessage = serde_json::from_str(text)
            .map_err(|err| ApiError::BadRequest(format!("bad message: {err}")))?;
        // The heartbeat, for players and spectators alike: it changes nothing.
        if let ClientMessage::Ping = message {
            let text = server_text(&ServerMessage::Pong);
            return self
                .write(Message::Text(text))
                .await
                .map(|_| ())
                .map_err(|Gone| ApiError::Unavailable);
        }
        // A seat found through a session acts only while the session lasts
        // (logging out elsewhere, or a new password, ends it).
        if self.seat.is_some()
            && !matches!(message, ClientMessage::Auth { .. })
            && !self.session_lasts().await
        {
            return Err(ApiError::Unauthorized);
        }
        if let ClientMessage::Chat { text } = &message {
            return self.post_chat(text).await;
        }
        let Some((_, token, secret, _)) = &self.seat else {
            return match message {
                ClientMessage::Auth { token } => self.authenticate(&token).await,
                _ => Err(ApiError::Forbidden("spectators cannot act".into())),
            };
        };
        let action = match message {
            ClientMessage::Auth { token } => return self.authenticate(&token).await,
            // Answered above.
            ClientMessage::Ping | ClientMessage::Chat { .. } => return Ok(()),
            ClientMessage::Move { uci } => Action::Move(uci),
            ClientMessage::Resign => Action::Resign,
            ClientMessage::Draw => Action::Draw,
            ClientMessage::DrawDecline => Action::DropDrawOffer(Answer::Decline),
            ClientMessage::DrawWithdraw => Action::DropDrawOffer(Answer::Withdraw),
            ClientMessage::Takeback => Action::Takeback,
            ClientMessage::TakebackDecline => Action::DropTakeback(Answer::Decline),
            ClientMessage::TakebackWithdraw => Action::DropTakeback(Answer::Withdraw),
            ClientMessage::Rematch => Action::Rematch(secret.clone()),
            ClientMessage::RematchDecline => Action::DropRematch(Answer::Decline),
            ClientMessage::RematchWithdraw => Action::DropRematch(Answer::Withdraw),
            ClientMessage::Abort => Action::Abort,
        };
        self.state
            .registry
            .act(self.id, token, action)
            .await
            .map(|_| ())
            .map_err(ApiError::from)
    }

    /// Sends a state and, when it shows an agreed rematch this seat has
    /// not been told about, the seat's token in the new game (to this
    /// connection only: spectators hold no token to derive one from).
    async fn write_state(&mut self, game: &SharedState) -> Result<Frame, Gone> {
        let frame = self.write(Message::Text(game.message.clone())).await?;
        match &game.rematch {
            Some(rematch) => self.tell_rematch(rematch).await,
            None => Ok(frame),
        }
    }

    /// Sends this seat its token in the agreed rematch game `rematch`,
    /// once per connection.
    async fn tell_rematch(&mut self, rematch: &str) -> Result<Frame, Gone> {
        let Some((side, _, secret, _)) = &self.seat else {
            return Ok(Frame::Other);
        };
        if self.rematch_told.as_deref() == Some(rematch) {
            return Ok(Frame::Other);
        }
        let Ok(id) = Uuid::parse_str(rematch) else {
            return Ok(Frame::Other);
        };
        let token = crate::token::rematch_token(&secret.0, id);
        let text = server_text(&ServerMessage::Rematch {
            game: rematch,
            color: side.other(),
            token: &token,
        });
        self.rematch_told = Some(rematch.to_string());
        self.write(Message::Text(text)).await
    }

    /// An `auth` message: a spectator connection takes the token's seat.
    async fn authenticate(&mut self, token: &str) -> Result<(), ApiError> {
        if self.seat.is_some() {
            return Err(ApiError::BadRequest(
                "this connection already plays a seat".into(),
            ));
        }
        if token.is_empty() {
            return Err(ApiError::Unauthorized);
        }
        let secret = SeatSecret(token.to_string());
        let (side, token) = authorize(self.state, self.id, token).await?;
        // From spectator to player: one presence change each way (the
        // actor sends them together).
        for (side, delta) in [(None, -1), (Some(side), 1)] {
            if self
                .handle
                .tell(Ask::Presence { side, delta })
                .await
                .is_err()
            {
                return Err(ApiError::Unavailable);
            }
        }
        self.seat = Some((side, token, secret, None));
        let text = server_text(&ServerMessage::Authenticated { color: side });
        self.write(Message::Text(text))
            .await
            .map_err(|Gone| ApiError::Unavailable)?;
        // Now a player: the players' room.
        self.write_chat_history()
            .await
            .map_err(|Gone| ApiError::Unavailable)?;
        // A rematch agreed before this connection took its seat.
        let rematch = self.state.registry.state(self.id).await?.rematch;
        if let Some(rematch) = rematch {
            self.tell_rematch(&rematch)
                .await
                .map_err(|Gone| ApiError::Unavailable)?;
        }
        Ok(())
    }

    /// The chat room this connection reads and writes.
    fn room(&self) -> Room {
        if self.seat.is_some() {
            Room::Player
        } else {
            Room::Spectator
        }
    }

    /// Sends the room's recent lines (`chat_history`), if it has any: an
    /// empty room sends nothing, so a client that never chats sees the
    /// messages it always did.
    async fn write_chat_history(&mut self) -> Result<Frame, Gone> {
        let room = self.room();
        let lines = match chat::history(self.state, self.id, room, &self.muted).await {
            Ok(lines) => lines,
            Err(err) => {
                // The game goes on without its chat's past.
                err.log();
                return Ok(Frame::Other);
            }
        };
        if lines.is_empty() {
            return Ok(Frame::Other);
        }
        let lines = lines
            .into_iter()
            .map(|(user, text)| ChatEntry { user, text })
            .collect();
        let text = server_text(&ServerMessage::ChatHistory {
            room: room.as_str(),
            lines,
        });
        self.write(Message::Text(text)).await
    }

    /// Sends a line from the game's chat channel, if it is for this
    /// connection's room and its writer is not muted by the reader.
    async fn write_chat_line(&mut self, line: &str) -> Result<Frame, Gone> {
        let Some(line) = chat::readable(line, Some(self.room()), &self.muted) else {
            return Ok(Frame::Other);
        };
        let text = server_text(&ServerMessage::Chat {
            room: &line.room,
            user: &line.username,
            text: &line.text,
        });
        self.write(Message::Text(text)).await
    }

    /// A `chat` message: the line goes to this connection's room as its
    /// person's (the request's, else the named player of the seat).
    async fn post_chat(&mut self, text: &str) -> Result<(), ApiError> {
        if self.person.is_none() {
            if let Some((side, ..)) = &self.seat {
                let live = self.state.registry.snapshot(self.id).await?;
                self.person = live.seat(*side).player().cloned();
            }
        }
        let Some(person) = self.person.clone() else {
            return Err(ApiError::Forbidden(
                "log in (or play with a name) to chat".into(),
            ));
        };
        match chat::post(self.state, &person, self.id, self.room(), text).await? {
            chat::Posted::Sent(_) => Ok(()),
            chat::Posted::Dropped => Err(ApiError::Limited(format!(
                "at most {} chat lines a minute in a game, {} in all",
                crate::social::chat::PER_ROOM_PER_MINUTE,
                crate::social::chat::PER_MINUTE
            ))),
        }
    }

    /// Sends an `error` message answering the client.
    async fn send_error(&mut self, error: ApiError) -> Result<(), Gone> {
        error.log();
        let text = server_text(&ServerMessage::Error {
            code: error.code(),
            message: error.message(),
        });
        self.write(Message::Text(text)).await.map(|_| ())
    }

    /// Writes one frame; a peer that does not take it in time is gone.
    async fn write(&mut self, message: Message) -> Result<Frame, Gone> {
        let timeout = self.state.config.ws_write_timeout();
        match tokio::time::timeout(timeout, self.socket.send(message)).await {
            Ok(Ok(())) => Ok(Frame::Other),
            Ok(Err(_)) => Err(Gone),
            Err(_) => {
                tracing::debug!(game = %self.id, "WebSocket write timed out");
                Err(Gone)
            }
        }
    }

    /// Sends a close frame, giving a peer that reads nothing little time.
    async fn close(&mut self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from(reason),
        };
        // The connection ends either way; a peer already gone cannot be told.
        let _ =
            tokio::time::timeout(CLOSE_GRACE, self.socket.send(Message::Close(Some(frame)))).await;
    }
}

/// What a handled event means for the pong deadline.
enum Frame {
    Pong,
    Other,
}

/// Whether a receive error is a message or frame over the hard cap.
fn is_too_big(err: &axum::Error) -> bool {
    std::error::Error::source(err)
        .and_then(|cause| cause.downcast_ref::<tungstenite::Error>())
        .is_some_and(|cause| matches!(cause, tungstenite::Error::Capacity(_)))
}

//! lichess's Board API and Bot API (issue 24): a game's stream
//! (`gameFull`, then `gameState` at every change, `chatLine`), moves,
//! resign, abort, draw and takeback answers, chat; and lichess's AI
//! challenge. The two APIs are the same but for who may use them: the
//! Board API is for people (scope `play`), the Bot API for bot accounts
//! (scope `bot`), as on lichess.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::{Extension, Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use uuid::Uuid;

use super::{Form, LichessError, LichessResult};
use crate::domain::GameSeat;
use crate::http::api::challenges::{
    boolean, challenge_start, clock_of, draw_color, number, text, ChallengeForm,
};
use crate::http::chat;
use crate::http::client_ip::ClientIp;
use crate::http::error::ApiError;
use crate::identity::{self, Identity, Scope};
use crate::live::actor::{Action, Command};
use crate::live::game::{Answer, LiveGame};
use crate::protocol::lichess as shapes;
use crate::protocol::{Broadcast, ClockSettings, GameState, SeatKind, Side, Status};
use crate::social::chat::Room;
use crate::store::now_ms;
use crate::token::{self, TokenHash};
use crate::AppState;

/// Which of lichess's two play APIs a request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Board,
    Bot,
}

impl Api {
    /// The path prefix of its routes (`/api/board/…`, `/api/bot/…`).
    pub fn prefix(self) -> &'static str {
        match self {
            Api::Board => "board",
            Api::Bot => "bot",
        }
    }
}

/// How long a clock lichess shows for an untimed game (its maximum int).
const UNTIMED_MS: u64 = 2_147_483_647;

/// The person behind a Board or Bot API request, checked for that API.
pub async fn player_for(
    state: &AppState,
    headers: &HeaderMap,
    api: Api,
) -> Result<(Identity, bool), LichessError> {
    let person = identity::required(state.store(), headers).await?;
    let bot = state.store().is_bot(&person.player.id).await?;
    match api {
        Api::Board if bot => Err(ApiError::BadRequest(
            "this endpoint cannot be used with a bot account: use the Bot API".into(),
        )
        .into()),
        Api::Bot if !bot => Err(ApiError::BadRequest(
            "this endpoint can only be used with a bot account".into(),
        )
        .into()),
        Api::Board => {
            person.require(Scope::Play)?;
            Ok((person, bot))
        }
        Api::Bot => {
            person.require(Scope::Bot)?;
            Ok((person, bot))
        }
    }
}

fn no_such_game() -> LichessError {
    ApiError::NotFound("no such game".into()).into()
}

/// The person's seat in game `id`: 404 when they hold none (the game is
/// not theirs, as lichess answers).
async fn seat(
    state: &AppState,
    person: &Identity,
    id: &str,
) -> Result<(Uuid, Side, TokenHash), LichessError> {
    let id = Uuid::parse_str(id).map_err(|_| no_such_game())?;
    match state
        .registry
        .seat_of_player(id, &person.player.id)
        .await
        .map_err(ApiError::from)
    {
        Ok(Some((side, token))) => Ok((id, side, token)),
        Ok(None) | Err(ApiError::NotFound(_)) => Err(no_such_game()),
        Err(err) => Err(err.into()),
    }
}

/// A game action's refusal, as lichess answers it: 400 for anything the
/// game refuses (an illegal move, not one's turn, a finished game).
fn refused(err: impl Into<ApiError>) -> LichessError {
    let err = err.into();
    match err {
        ApiError::NotFound(_)
        | ApiError::Unauthorized
        | ApiError::Unavailable
        | ApiError::DatabaseUnavailable { .. }
        | ApiError::GameTimeout
        | ApiError::Overloaded(_)
        | ApiError::LeaseLost
        | ApiError::Internal(_) => LichessError(err),
        other => LichessError(ApiError::BadRequest(other.message())),
    }
}

async fn act(
    api: Api,
    state: &AppState,
    headers: &HeaderMap,
    id: &str,
    action: Action,
) -> LichessResult<Json<Value>> {
    let (person, _) = player_for(state, headers, api).await?;
    let (id, _, token) = seat(state, &person, id).await?;
    state
        .registry
        .act(id, &token, action)
        .await
        .map_err(refused)?;
    Ok(Json(json!({"ok": true})))
}

#[derive(Debug, Deserialize, Default)]
pub struct MoveQuery {
    #[serde(default, rename = "offeringDraw")]
    pub offering_draw: Option<String>,
}

/// `POST /api/{board|bot}/game/{id}/move/{uci}?offeringDraw=true|false`.
/// As on lichess, `offeringDraw=true` accepts the opponent's standing
/// draw offer (the move is then not played: the game is drawn) or, with
/// none standing, plays the move and offers a draw; a move without it
/// declines the opponent's offer, as every move does.
pub async fn play(
    api: Api,
    State(state): State<AppState>,
    Path((id, uci)): Path<(String, String)>,
    Query(query): Query<MoveQuery>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let offering = matches!(query.offering_draw.as_deref(), Some("true" | "1"));
    if !offering {
        return act(api, &state, &headers, &id, Action::Move(uci)).await;
    }
    let (person, _) = player_for(&state, &headers, api).await?;
    let (game, side, token) = seat(&state, &person, &id).await?;
    let standing = state.registry.state(game).await?.draw_offer;
    if standing == Some(side.other()) {
        state
            .registry
            .act(game, &token, Action::Draw)
            .await
            .map_err(refused)?;
        return Ok(Json(json!({"ok": true})));
    }
    state
        .registry
        .act(game, &token, Action::Move(uci))
        .await
        .map_err(refused)?;
    // The move stands even if the offer cannot be made (the game ended
    // with it).
    if let Err(err) = state.registry.act(game, &token, Action::Draw).await {
        tracing::debug!(game = %game, code = ApiError::from(err).code(), "draw offer after a move not made");
    }
    Ok(Json(json!({"ok": true})))
}

/// `POST /api/{board|bot}/game/{id}/{resign|abort}`.
pub async fn resign(
    api: Api,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    act(api, &state, &headers, &id, Action::Resign).await
}

pub async fn abort(
    api: Api,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    act(api, &state, &headers, &id, Action::Abort).await
}

/// `POST /api/{board|bot}/game/{id}/berserk` (issue 38): in an arena game
/// of an arena that allows it, before one's first move: half one's clock
/// and one's increment go, for a point more on a win of 7 moves or more.
pub async fn berserk(
    api: Api,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let arena = state.store().arena_of_game(id.trim()).await?;
    let Some((arena_id, _)) = arena else {
        return Err(ApiError::BadRequest("berserk is only for arena games".into()).into());
    };
    let arena = state.store().arena(&arena_id).await?;
    if !arena.is_some_and(|arena| arena.berserkable) {
        return Err(ApiError::BadRequest("this arena does not allow berserk".into()).into());
    }
    act(api, &state, &headers, &id, Action::Berserk).await
}

fn yes_no(answer: &str) -> Result<bool, LichessError> {
    match answer {
        "yes" | "accept" | "true" => Ok(true),
        "no" | "decline" | "false" => Ok(false),
        _ => Err(ApiError::BadRequest("answer yes or no".into()).into()),
    }
}

/// `POST /api/{board|bot}/game/{id}/draw/{yes|no}`: offer or accept a
/// draw, or decline the opponent's offer.
pub async fn draw(
    api: Api,
    State(state): State<AppState>,
    Path((id, answer)): Path<(String, String)>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let action = if yes_no(&answer)? {
        Action::Draw
    } else {
        Action::DropDrawOffer(Answer::Decline)
    };
    act(api, &state, &headers, &id, action).await
}

/// `POST /api/{board|bot}/game/{id}/takeback/{yes|no}`.
pub async fn takeback(
    api: Api,
    State(state): State<AppState>,
    Path((id, answer)): Path<(String, String)>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let action = if yes_no(&answer)? {
        Action::Takeback
    } else {
        Action::DropTakeback(Answer::Decline)
    };
    act(api, &state, &headers, &id, action).await
}

/// `POST /api/board/game/{id}/claim-victory`: on lichess, a win claimed
/// over an opponent who left. Rookery does not track an API opponent's
/// leaving (no `opponentGone`), so the claim is refused, as lichess
/// refuses it while the opponent is there; an absent opponent loses on
/// time instead.
pub async fn claim_victory(
    api: Api,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let (person, _) = player_for(&state, &headers, api).await?;
    seat(&state, &person, &id).await?;
    Err(ApiError::BadRequest("your opponent has not left the game".into()).into())
}

/// A player of a game as lichess's `gameFull` shows it.
fn player_json(live: &LiveGame, side: Side, bots: &[String]) -> Value {
    match live.seat(side) {
        GameSeat::Ai { level } => json!({"aiLevel": level}),
        seat => match seat.player() {
            Some(player) => json!({
                "id": player.name.to_lowercase(),
                "name": player.name,
                "title": if bots.contains(&player.id) { json!("BOT") } else { Value::Null },
                "rating": player.rating.rating,
                "provisional": player.rating.provisional,
            }),
            None => json!({"id": Value::Null, "name": "Anonymous", "title": Value::Null}),
        },
    }
}

/// lichess's status name of a GameState.
pub fn status_name(state: &GameState) -> &'static str {
    match (state.status, state.termination.as_deref()) {
        (Status::Waiting, _) => "created",
        (Status::Active, _) => "started",
        (Status::Finished, termination) => termination
            .and_then(rookery_engine::game::Termination::parse)
            .map(|termination| {
                shapes::ending_status(crate::domain::Ending {
                    winner: None,
                    termination,
                })
                .0
            })
            .unwrap_or("unknownFinish"),
    }
}

/// The winner of a finished GameState, from its result.
fn winner(state: &GameState) -> Option<&'static str> {
    match state.result.as_deref() {
        Some("1-0") => Some("white"),
        Some("0-1") => Some("black"),
        _ => None,
    }
}

/// lichess's `gameState` of a GameState.
pub fn game_state(state: &GameState) -> Value {
    let (wtime, btime, inc) = match &state.clock {
        Some(clock) => (clock.white_ms, clock.black_ms, clock.increment_ms),
        None => (UNTIMED_MS, UNTIMED_MS, 0),
    };
    let mut value = json!({
        "type": "gameState",
        "moves": state.moves.join(" "),
        "wtime": wtime,
        "btime": btime,
        "winc": inc,
        "binc": inc,
        "status": status_name(state),
    });
    if let Some(winner) = winner(state) {
        value["winner"] = json!(winner);
    }
    for (field, offer) in [
        ("draw", state.draw_offer),
        ("takeback", state.takeback_offer),
    ] {
        for side in Side::BOTH {
            if offer == Some(side) {
                value[format!("{}{field}", &side.as_str()[..1])] = json!(true);
            }
        }
    }
    value
}

/// lichess's `gameFull` of a game.
fn game_full(live: &LiveGame, state: &GameState, bots: &[String]) -> Value {
    let clock = live.clock_settings();
    let speed = shapes::speed(clock);
    let variant = live.variant();
    let initial = live.game().initial_position().to_fen();
    json!({
        "type": "gameFull",
        "id": live.id.to_string(),
        "variant": shapes::variant(variant),
        "clock": clock.map(|c: ClockSettings| json!({"initial": c.initial_ms, "increment": c.increment_ms})),
        "speed": speed,
        "perf": {"name": shapes::perf(variant, clock)},
        "rated": live.is_rated(),
        "createdAt": live.created_at,
        "white": player_json(live, Side::White, bots),
        "black": player_json(live, Side::Black, bots),
        "initialFen": shapes::initial_fen(variant, &initial),
        "state": game_state(state),
    })
}

/// The bots among a game's players.
async fn bots_of(state: &AppState, live: &LiveGame) -> Result<Vec<String>, ApiError> {
    let mut bots = Vec::new();
    for side in Side::BOTH {
        if let Some(player) = live.seat(side).player() {
            if state.store().is_bot(&player.id).await? {
                bots.push(player.id.clone());
            }
        }
    }
    Ok(bots)
}

/// `GET /api/{board|bot}/game/stream/{id}`.
pub async fn stream(
    api: Api,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Response> {
    let (person, _) = player_for(&state, &headers, api).await?;
    let (id, _, _) = seat(&state, &person, &id).await?;
    // Lines of the people this player blocks are not sent (issue 37).
    let muted = std::sync::Arc::new(chat::muted_by(&state, Some(&person.player.id)).await?);
    let chat = state.registry.events().subscribe(&chat::chat_key(id));
    let (first, receiver) = state
        .registry
        .call(id, |reply| Command::Subscribe { reply })
        .await?;
    let live = state.registry.snapshot(id).await?;
    let bots = bots_of(&state, &live).await?;
    let first_state: GameState = serde_json::from_slice(&first.line).map_err(ApiError::internal)?;
    let full = game_full(&live, &first_state, &bots);
    let done = first.finished;
    let last = game_state(&first_state).to_string();
    let shutdown = state.registry.shutdown_signal();
    let start = Bytes::from(format!("{full}\n"));
    let lines = futures_util::stream::unfold(
        (Some(start), receiver, chat, shutdown, last, done),
        move |(start, mut receiver, mut chat, mut shutdown, mut last, done)| {
            let muted = muted.clone();
            async move {
                if let Some(line) = start {
                    return Some((
                        Ok::<Bytes, Infallible>(line),
                        (None, receiver, chat, shutdown, last, done),
                    ));
                }
                if done || *shutdown.borrow() {
                    return None;
                }
                loop {
                    tokio::select! {
                        _ = shutdown.changed() => return None,
                        line = chat.recv() => match line {
                            Ok(line) if chat::readable(&line, None, &muted).is_none() => continue,
                            Ok(line) => {
                                let bytes = Bytes::from(format!("{line}\n"));
                                return Some((Ok(bytes), (None, receiver, chat, shutdown, last, false)));
                            }
                            Err(RecvError::Lagged(_)) => continue,
                            Err(RecvError::Closed) => return None,
                        },
                        next = tokio::time::timeout(crate::http::api::events::KEEP_ALIVE, receiver.recv()) => match next {
                            Err(_) => {
                                let keep_alive = Bytes::from_static(b"\n");
                                return Some((Ok(keep_alive), (None, receiver, chat, shutdown, last, false)));
                            }
                            Ok(Ok(Broadcast::State(shared))) => {
                                let Ok(game) = serde_json::from_slice::<GameState>(&shared.line) else {
                                    continue;
                                };
                                let line = game_state(&game).to_string();
                                // Presence changes send whole states too: only
                                // what lichess's gameState shows counts.
                                if line == last && !shared.finished {
                                    continue;
                                }
                                last = line.clone();
                                let bytes = Bytes::from(format!("{line}\n"));
                                return Some((Ok(bytes), (None, receiver, chat, shutdown, last, shared.finished)));
                            }
                            Ok(Ok(Broadcast::Presence(_))) | Ok(Err(RecvError::Lagged(_))) => continue,
                            Ok(Err(RecvError::Closed)) => return None,
                        },
                    }
                }
            }
        },
    );
    // The stream lasts only as long as its credential (issue 35).
    let lines = crate::http::api::events::while_valid(
        lines,
        crate::http::api::events::Credential::of(&headers),
        state.store().clone(),
    );
    Ok((
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(lines),
    )
        .into_response())
}

#[derive(Debug, Deserialize, Default)]
pub struct ChatForm {
    #[serde(default)]
    pub room: Option<Value>,
    #[serde(default)]
    pub text: Option<Value>,
}

fn chat_room(room: Option<String>) -> Result<Room, LichessError> {
    match room.as_deref() {
        None => Ok(Room::Player),
        Some(name) => Room::parse(name)
            .ok_or_else(|| ApiError::BadRequest("room is player or spectator".into()).into()),
    }
}

/// `POST /api/{board|bot}/game/{id}/chat` (`room`, `text`).
pub async fn post_chat(
    api: Api,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ChatForm>,
) -> LichessResult<Json<Value>> {
    let (person, _) = player_for(&state, &headers, api).await?;
    let (id, _, _) = seat(&state, &person, &id).await?;
    let room = chat_room(text(&form.room))?;
    // As lichess: a flood is dropped, not refused (a client that sees an
    // error may retry in a loop), so both outcomes answer ok.
    let line = text(&form.text).unwrap_or_default();
    chat::post(&state, &person.player, id, room, &line).await?;
    Ok(Json(json!({"ok": true})))
}

/// `GET /api/{board|bot}/game/{id}/chat`: the players' room.
pub async fn get_chat(
    api: Api,
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let (person, _) = player_for(&state, &headers, api).await?;
    let (id, _, _) = seat(&state, &person, &id).await?;
    let muted = chat::muted_by(&state, Some(&person.player.id)).await?;
    let lines = chat::history(&state, id, Room::Player, &muted).await?;
    Ok(Json(Value::Array(
        lines
            .into_iter()
            .map(|(user, text)| json!({"user": user, "text": text}))
            .collect(),
    )))
}

/// `POST /api/challenge/ai`: a game against Rookery's AI (`level` 1–8),
/// started at once.
#[derive(Debug, Deserialize, Default)]
pub struct AiForm {
    #[serde(default)]
    pub level: Option<Value>,
    #[serde(flatten)]
    pub terms: ChallengeForm,
}

pub async fn challenge_ai(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    headers: HeaderMap,
    Form(form): Form<AiForm>,
) -> LichessResult<Json<Value>> {
    let person = identity::required(state.store(), &headers).await?;
    if !(person.scopes.has(Scope::Play)
        || person.scopes.has(Scope::Bot)
        || person.scopes.has(Scope::Challenge))
    {
        return Err(ApiError::MissingScope(Scope::Play.as_str()).into());
    }
    let level = number(&form.level, "level")?.unwrap_or(1.0);
    if !(1.0..=8.0).contains(&level) || level.fract() != 0.0 {
        return Err(ApiError::BadRequest("level must be 1 to 8".into()).into());
    }
    let level = level as u8;
    let terms = form.terms;
    let (variant, fen) = challenge_start(&terms, true)?;
    let clock = clock_of(
        number(&terms.clock_limit, "clock.limit")?,
        number(&terms.clock_increment, "clock.increment")?,
    )?;
    let (_, side) = draw_color(&text(&terms.color).unwrap_or_else(|| "random".into()))?;
    let _ = boolean(&terms.rated, "rated")?;
    let mut seats = [SeatKind::Human, SeatKind::Human];
    seats[side.other().index()] = SeatKind::Ai { level };
    let id = Uuid::new_v4();
    let mut live = LiveGame::new(id, now_ms(), seats, clock, variant, fen.as_deref())?;
    // The client's searches take turns with other clients' (the AI
    // scheduler's fairness), as a game made through `POST /api/games` does.
    live.client = Some(client);
    live.take_seat(
        side,
        token::mint()?.hash,
        Some(person.player.clone()),
        Instant::now(),
    )?;
    live.make_private(None);
    state
        .store()
        .insert_game(&live.record(), &live.history())
        .await?;
    let game = live.state(Instant::now());
    state.registry.insert(live.clone()).await?;
    tracing::info!(game = %id, level, "lichess AI challenge");
    state
        .registry
        .events()
        .game_started(&live.event_games("ai"));
    let speed = shapes::speed(clock);
    Ok(Json(json!({
        "id": game.id,
        "variant": shapes::variant(variant),
        "speed": speed,
        "perf": shapes::perf(variant, clock),
        "rated": false,
        "fen": game.fen,
        "turns": game.moves.len(),
        "source": "ai",
        "status": {"id": 20, "name": "started"},
        "createdAt": game.created_at,
        "player": side.as_str(),
    })))
}

//! Games: create, join, read, list, export as PGN, stream as NDJSON, and the
//! seat holders' actions (move, resign, draw).

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, MethodRouter};
use axum::{Extension, Json};
use rookery_engine::MoveNote;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use uuid::Uuid;

use crate::domain::PlayerRef;
use crate::http::client_ip::ClientIp;
use crate::http::error::ApiError;
use crate::http::extract::{game_id, ApiJson, ApiQuery, MaybeJson};
use crate::http::rate_limit::{self, GameLedger};
use crate::identity::{self, IdentityError, Scope};
use crate::live::actor::{Action, Command, SeatSecret, StateReceiver};
use crate::live::game::LiveGame;
use crate::protocol::{
    Broadcast, CreateGame, GameList, GameState, GameWithSeat, JoinRequest, ListQuery, MoveRequest,
    RematchAnswer, RematchSeat, Seat, SharedState, Side, Status, Visibility,
};
use crate::store::now_ms;
use crate::token::{self, TokenHash};
use crate::AppState;

/// The registered player the request names (a player token, a personal
/// API token with the `play` scope, or a session: see
/// [`crate::identity`]), if it names one. An unknown Bearer token is an
/// error rather than silently anonymous.
async fn player_of(state: &AppState, headers: &HeaderMap) -> Result<Option<PlayerRef>, ApiError> {
    let Some(identity) = identity::identify(state.store(), headers).await? else {
        return Ok(None);
    };
    identity.require(Scope::Play)?;
    Ok(Some(identity.player))
}

pub async fn create(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<CreateGame>,
) -> Result<(StatusCode, Json<GameWithSeat>), ApiError> {
    let request = request.validate()?;
    let player = player_of(&state, &headers).await?;
    let id = Uuid::new_v4();
    let mut live = LiveGame::new(
        id,
        now_ms(),
        request.seats,
        request.clock,
        request.variant,
        request.fen.as_deref(),
    )?;
    live.play_history(&request.history)?;
    match request.rated {
        Some(false) => live.make_casual(),
        Some(true) if !live.is_rated() => {
            return Err(ApiError::BadRequest(
                "this game cannot be rated: a rated game starts from the standard position (or a Chess960 start) with no moves played, and has no clock or one of at least a minute".into(),
            ))
        }
        _ => {}
    }
    live.client = Some(client);
    let mut seats = Vec::with_capacity(2);
    if let Some(side) = request.creator_side {
        let sides: &[Side] = if request.both_seats {
            &Side::BOTH
        } else {
            std::slice::from_ref(&side)
        };
        for &side in sides {
            let token = token::mint()?;
            // Pass and play seats nobody by name: one player cannot play
            // themselves, so such a game counts for colours only.
            let owner = if request.both_seats {
                None
            } else {
                player.clone()
            };
            live.take_seat(side, token.hash, owner, Instant::now())?;
            seats.push(Seat {
                color: side,
                token: token.secret,
            });
        }
    }
    let seat = seats.first().cloned();
    // Pass and play: both seats, white then black.
    let both = <[Seat; 2]>::try_from(seats).ok();
    // A private game's free seat needs the invite secret: minted here,
    // shown once in this answer, kept only as a hash. Without a free seat
    // (human v AI) there is nothing to invite to.
    let invite = match request.visibility {
        Visibility::Open => None,
        Visibility::Private if live.status() == Status::Waiting => {
            let invite = token::mint()?;
            live.make_private(Some(invite.hash));
            Some(invite.secret)
        }
        Visibility::Private => {
            live.make_private(None);
            None
        }
    };
    // AI v AI games are capped (issue 8): counted before they are stored,
    // and uncounted again if storing fails.
    // So are waiting games, per client (issue 23).
    let ledger = if live.is_ai_vs_ai() {
        reserve_ai_game(&state, id, client).await?;
        Some(&state.ai_games)
    } else if live.status() == Status::Waiting {
        reserve_waiting_game(&state, id, client).await?;
        Some(&state.waiting_games)
    } else {
        None
    };
    let started = async {
        state
            .store()
            .insert_game(&live.record(), &live.history())
            .await?;
        let game = live.state(Instant::now());
        state.registry.insert(live).await?;
        Ok::<_, ApiError>(game)
    }
    .await;
    let game = match started {
        Ok(game) => game,
        Err(err) => {
            if let Some(ledger) = ledger {
                ledger.forget(id);
            }
            return Err(err);
        }
    };
    tracing::info!(game = %game.id, "game created");
    Ok((
        StatusCode::CREATED,
        Json(GameWithSeat {
            game,
            seat,
            invite,
            seats: both,
        }),
    ))
}

/// Counts a new AI v AI game against the caps, after dropping the games
/// that have finished since they were counted.
async fn reserve_ai_game(state: &AppState, id: Uuid, client: IpAddr) -> Result<(), ApiError> {
    let ledger = &state.ai_games;
    forget_unless(state, ledger, ledger.ids(), |game| !game.is_finished()).await;
    let caps = rate_limit::ai_game_caps(
        state.config.max_ai_games(),
        state.config.ai.max_ai_games_per_client,
    );
    ledger.reserve(id, client, caps)
}

/// Counts a new waiting game against `client`'s cap, after dropping the
/// client's games that are no longer waiting (joined, aborted, expired).
async fn reserve_waiting_game(state: &AppState, id: Uuid, client: IpAddr) -> Result<(), ApiError> {
    let ledger = &state.waiting_games;
    let expiry = std::time::Duration::from_secs(state.config.games.waiting_expiry_secs);
    if let Some(cutoff) = Instant::now().checked_sub(expiry * 2) {
        ledger.forget_before(cutoff);
    }
    let cap = state.config.games.max_waiting_games_per_client;
    let mine = ledger.ids_of(client);
    // Only a client at its cap pays for the check.
    if mine.len() >= cap {
        forget_unless(state, ledger, mine, |game| game.status == Status::Waiting).await;
    }
    ledger.reserve(id, client, rate_limit::waiting_game_cap(cap))
}

/// Stops counting the games of `counted` whose state no longer `counts`
/// (or that are gone).
async fn forget_unless(
    state: &AppState,
    ledger: &GameLedger,
    counted: Vec<Uuid>,
    counts: impl Fn(&GameState) -> bool,
) {
    for id in counted {
        match state.registry.state(id).await.map_err(ApiError::from) {
            Ok(game) if counts(&game) => {}
            Ok(_) | Err(ApiError::NotFound(_)) => ledger.forget(id),
            // Unknown (a database error): keep counting it.
            Err(err) => err.log(),
        }
    }
}

/// `POST /api/games/{id}/join`, with an optional body `{"invite":
/// SECRET}`: a private game's free seat needs it, an open game's does not.
pub async fn join(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    MaybeJson(request): MaybeJson<JoinRequest>,
) -> Result<Json<GameWithSeat>, ApiError> {
    let id = game_id(&id)?;
    let request = request.unwrap_or_default();
    let invite = request
        .invite
        .as_deref()
        .map(str::trim)
        .filter(|secret| !secret.is_empty())
        .map(TokenHash::of);
    let player = player_of(&state, &headers).await?;
    let token = token::mint()?;
    let (game, side) = state
        .registry
        .join(id, token.hash.clone(), player, invite)
        .await?;
    Ok(Json(GameWithSeat {
        game,
        seat: Some(Seat {
            color: side,
            token: token.secret,
        }),
        invite: None,
        seats: None,
    }))
}

pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<GameState>, ApiError> {
    let id = game_id(&id)?;
    Ok(Json(state.registry.state(id).await?))
}

const DEFAULT_LIST_LIMIT: u32 = 20;
const MAX_LIST_LIMIT: u32 = 100;

pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<GameList>, ApiError> {
    let statuses: &[Status] = match query.status.as_deref() {
        None | Some("") => &[Status::Waiting, Status::Active, Status::Finished],
        Some("active") => &[Status::Waiting, Status::Active],
        Some("finished") => &[Status::Finished],
        Some("waiting") => &[Status::Waiting],
        Some(_) => {
            return Err(ApiError::BadRequest(
                "status must be active, finished or waiting".into(),
            ))
        }
    };
    let limit = list_limit(query.limit.as_deref())?;
    let joinable = list_joinable(query.joinable.as_deref())?;
    if let Some(name) = query
        .player
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let filter = super::players::games_filter(statuses, joinable);
        let page = super::players::games_page(&state, name, filter, query.before.as_deref(), limit)
            .await?;
        return Ok(Json(page));
    }
    if query.before.is_some() {
        return Err(ApiError::BadRequest(
            "before pages one player's games: it needs player".into(),
        ));
    }
    // One query on the read pool; no actor is asked and no game replayed.
    let mut games = if joinable {
        // Open seeks are waiting games: a status filter that excludes
        // waiting games leaves none.
        if !statuses.contains(&Status::Waiting) {
            return Ok(Json(GameList {
                games: Vec::new(),
                next: None,
            }));
        }
        state.store().list_open_seeks(limit).await?
    } else {
        state.store().list_games(statuses, limit).await?
    };
    state.registry.show_presence(&mut games);
    Ok(Json(GameList { games, next: None }))
}

/// The `joinable` filter of a list: `true` (or `1`) lists only open seeks.
fn list_joinable(text: Option<&str>) -> Result<bool, ApiError> {
    match text.map(str::trim) {
        None | Some("" | "false" | "0") => Ok(false),
        Some("true" | "1") => Ok(true),
        Some(_) => Err(ApiError::BadRequest(
            "joinable must be true or false".into(),
        )),
    }
}

/// The `limit` of a list: a positive whole number; more than the most we
/// list is the most we list (the lichess way with `max`), not an error, so a
/// client asking for "everything" still gets an answer.
pub fn list_limit(text: Option<&str>) -> Result<u32, ApiError> {
    let text = match text.map(str::trim) {
        None | Some("") => return Ok(DEFAULT_LIST_LIMIT),
        Some(text) => text,
    };
    let bad = || ApiError::BadRequest("limit must be a whole number from 1".into());
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let digits = text.trim_start_matches('0');
    if digits.is_empty() {
        return Err(bad());
    }
    // Any number too long to parse is far above the maximum.
    Ok(digits
        .parse::<u32>()
        .map_or(MAX_LIST_LIMIT, |n| n.min(MAX_LIST_LIMIT)))
}

/// The query of a PGN export: `analysis=1` adds the stored analysis as
/// comments.
#[derive(Debug, serde::Deserialize)]
pub struct PgnQuery {
    analysis: Option<String>,
}

/// `GET /api/games/{id}/pgn`.
pub async fn pgn(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<PgnQuery>,
) -> Result<Response, ApiError> {
    let id = game_id(&id)?;
    let with_analysis = match query.analysis.as_deref().map(str::trim) {
        None | Some("" | "0" | "false") => false,
        Some("1" | "true") => true,
        Some(_) => {
            return Err(ApiError::BadRequest(
                "analysis must be 1 or 0 (true or false)".into(),
            ))
        }
    };
    let live = state.registry.snapshot(id).await?;
    let notes = if with_analysis {
        let rows = state
            .store()
            .analysis(id)
            .await?
            .map(|(_, rows)| rows)
            .unwrap_or_default();
        super::analysis::pgn_notes(live.game(), &rows)
    } else {
        Vec::new()
    };
    let text = export_pgn(&state, &live, &notes).await?;
    Ok((
        // Exactly the contract's type. Every PGN we write is ASCII (names
        // are A-Z a-z 0-9 _ -, FEN and SAN are ASCII), so no charset is
        // needed.
        [(CONTENT_TYPE, "application/x-chess-pgn")],
        text,
    )
        .into_response())
}

/// A game's PGN as the server exports it (here and on lichess's routes):
/// `Site` under `--public-url`, each move's stored clock as `[%clk]`, and
/// `notes` (the analysis) after the moves.
pub async fn export_pgn(
    state: &AppState,
    live: &LiveGame,
    notes: &[MoveNote],
) -> Result<String, ApiError> {
    let clocks: Vec<Option<(i64, i64)>> = if live.clock_settings().is_some() {
        let stored = state.store().move_clocks(live.id).await?;
        // By ply, and only while the stored moves are the game's (a move
        // made or taken back since the snapshot has no clock here).
        live.game()
            .uci_moves()
            .iter()
            .zip(&stored)
            .map_while(|(uci, row)| (&row.uci == uci).then_some(row.clock_ms))
            .collect()
    } else {
        Vec::new()
    };
    let public_base = state.config.public_base();
    // A tournament's game names it: a Swiss game its tournament and round
    // (issue 39), an arena's game its arena (issue 38).
    let swiss = state.store().swiss_of_game(&live.id.to_string()).await?;
    let arena = state.store().arena_of_game(&live.id.to_string()).await?;
    let arena = arena.map(|(_, name)| crate::http::lichess::arena::full_name(&name));
    let event = swiss
        .as_ref()
        .map(|(_, name, _)| name.as_str())
        .or(arena.as_deref());
    let round = swiss.as_ref().map(|(_, _, round)| *round);
    Ok(crate::protocol::pgn::write(
        &live.record(),
        live.game(),
        &crate::protocol::pgn::PgnExport {
            public_base: &public_base,
            clocks: &clocks,
            notes,
            event,
            round,
        },
    ))
}

/// `GET /api/games/{id}/stream`: one GameState per line, now and after
/// every change, until the game is finished.
pub async fn stream(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = game_id(&id)?;
    let (first, receiver) = state
        .registry
        .call(id, |reply| Command::Subscribe { reply })
        .await?;
    let shutdown = state.registry.shutdown_signal();
    let lines = futures_util::stream::unfold(
        StreamState::First(first, receiver),
        move |stream_state| {
            let shutdown = shutdown.clone();
            async move {
                match stream_state {
                    StreamState::First(game, receiver) => {
                        let line = game.line.clone();
                        let next = if game.finished {
                            StreamState::Done
                        } else {
                            StreamState::Following(receiver)
                        };
                        Some((Ok::<Bytes, Infallible>(line), next))
                    }
                    StreamState::Following(mut receiver) => loop {
                        match receiver.recv().await {
                            Ok(Broadcast::State(game)) => {
                                let line = game.line.clone();
                                let next = if game.finished {
                                    StreamState::Done
                                } else {
                                    StreamState::Following(receiver)
                                };
                                return Some((Ok(line), next));
                            }
                            // The stream carries states only.
                            Ok(Broadcast::Presence(_)) => continue,
                            // Every state is complete, so a subscriber that fell
                            // behind loses nothing by skipping to a newer one.
                            Err(RecvError::Lagged(_)) => continue,
                            // The game left this node's memory before its end:
                            // the server is shutting down, or (in a cluster)
                            // another node took the game over. A last line says
                            // so, so a client reconnects rather than believe the
                            // game ended (a clean EOF alone looks the same).
                            Err(RecvError::Closed) => {
                                let reason = if *shutdown.borrow() {
                                    "shutdown"
                                } else {
                                    "moved"
                                };
                                let line = format!(
                                "{{\"type\":\"stream_end\",\"reason\":\"{reason}\",\"reconnect\":true}}\n"
                            );
                                return Some((Ok(Bytes::from(line)), StreamState::Done));
                            }
                        }
                    },
                    StreamState::Done => None,
                }
            }
        },
    );
    Ok((
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(lines),
    )
        .into_response())
}

enum StreamState {
    First(Arc<SharedState>, StateReceiver),
    Following(StateReceiver),
    Done,
}

async fn act_http(
    state: &AppState,
    id: &str,
    headers: &HeaderMap,
    action: Action,
) -> Result<Json<GameState>, ApiError> {
    let id = game_id(id)?;
    let bearer = crate::identity::credentials::bearer(headers)?;
    // A seat token of this game, the contract's way. Its refusal stands
    // unless the request names a person who holds a seat here.
    let mut refusal = None;
    if let Some(secret) = &bearer {
        match state
            .registry
            .act(id, &TokenHash::of(secret), action.clone())
            .await
            .map_err(ApiError::from)
        {
            Err(err @ (ApiError::Unauthorized | ApiError::Forbidden(_))) => refusal = Some(err),
            other => return Ok(Json(other?)),
        }
    }
    // Else the person the request names, for the seat they hold here
    // (issue 21): an account token or session acts for its own seats.
    let refused = |refusal: Option<ApiError>, otherwise| Err(refusal.unwrap_or(otherwise));
    let person = match identity::identify(state.store(), headers).await {
        Ok(Some(person)) => person,
        Ok(None) | Err(IdentityError::Unauthorized) => {
            return refused(refusal, ApiError::Unauthorized)
        }
        Err(err) => return Err(err.into()),
    };
    let Some((_, token)) = state.registry.seat_of_player(id, &person.player.id).await? else {
        // A credential that names a person without a seat here stays 401
        // (no seat token of this game: the original contract's "unknown
        // token"); another game's seat token keeps its 403.
        return refused(
            refusal,
            ApiError::Forbidden("you hold no seat in this game".into()),
        );
    };
    if !(person.scopes.has(Scope::Play) || person.scopes.has(Scope::Bot)) {
        return Err(ApiError::MissingScope(Scope::Play.as_str()));
    }
    Ok(Json(state.registry.act(id, &token, action).await?))
}

pub async fn play(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<MoveRequest>,
) -> Result<Json<GameState>, ApiError> {
    act_http(&state, &id, &headers, Action::Move(request.uci)).await
}

pub async fn resign(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<GameState>, ApiError> {
    act_http(&state, &id, &headers, Action::Resign).await
}

pub async fn draw(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<GameState>, ApiError> {
    act_http(&state, &id, &headers, Action::Draw).await
}

/// The route of a seat holder's action that has no body (the offers'
/// answers, takeback, abort): `POST` with the seat token, answering the
/// GameState.
pub fn action(make: fn() -> Action) -> MethodRouter<AppState> {
    post(
        move |State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap| async move {
            act_http(&state, &id, &headers, make()).await
        },
    )
}

/// `POST /api/games/{id}/rematch`: offers or accepts a rematch. Once it is
/// agreed (now or before), the answer carries the caller's seat in the new
/// game; asking again gives the same seat again (the token is derived from
/// the caller's token here, see [`token::rematch_token`]).
pub async fn rematch(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<RematchAnswer>, ApiError> {
    let secret = crate::identity::credentials::required_bearer(&headers)?;
    let id = game_id(&id)?;
    let token = TokenHash::of(&secret);
    let game = state
        .registry
        .act(id, &token, Action::Rematch(SeatSecret(secret.clone())))
        .await?;
    // The action checked the token; its seat's colour, to name the new one.
    let side = state.registry.seat_of(id, &token).await?;
    let rematch = match (&game.rematch, side) {
        (Some(new_id), Some(side)) => {
            let new = Uuid::parse_str(new_id).map_err(ApiError::internal)?;
            Some(RematchSeat {
                id: new_id.to_string(),
                seat: Seat {
                    color: side.other(),
                    token: token::rematch_token(&secret, new),
                },
            })
        }
        _ => None,
    };
    Ok(Json(RematchAnswer { game, rematch }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_limits() {
        assert_eq!(list_limit(None).unwrap(), DEFAULT_LIST_LIMIT);
        assert_eq!(list_limit(Some("")).unwrap(), DEFAULT_LIST_LIMIT);
        assert_eq!(list_limit(Some("1")).unwrap(), 1);
        assert_eq!(list_limit(Some("100")).unwrap(), 100);
        assert_eq!(list_limit(Some("101")).unwrap(), MAX_LIST_LIMIT);
        assert_eq!(list_limit(Some("5000")).unwrap(), MAX_LIST_LIMIT);
        assert_eq!(
            list_limit(Some("99999999999999999999999")).unwrap(),
            MAX_LIST_LIMIT
        );
        for bad in ["0", "000", "-1", "abc", "2.5", "+3", "1e3"] {
            assert!(list_limit(Some(bad)).is_err(), "{bad}");
        }
    }
}

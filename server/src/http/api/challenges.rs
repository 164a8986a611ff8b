//! Challenges by name (issue 21) on lichess's paths and shapes (issue 24):
//!
//! - `POST /api/challenge/{username}` (`rated`, `clock.limit`,
//!   `clock.increment`, `color`, `variant` with `fen` or `chess960_start`;
//!   form-encoded or JSON) → the challenge
//! - `GET /api/challenge` → `{"in": [...], "out": [...]}`
//! - `GET /api/challenge/{id}/show` → the challenge
//! - `POST /api/challenge/{id}/accept` → `{"ok": true}`: the game (its id
//!   is the challenge's) starts with both seats taken
//! - `POST /api/challenge/{id}/decline` (`reason`) → `{"ok": true}`
//! - `POST /api/challenge/{id}/cancel` → `{"ok": true}`
//!
//! Each change is told on both players' event streams. Errors have
//! lichess's flat shape, `{"error": "..."}`.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::time::Instant;
use uuid::Uuid;

use crate::http::error::ApiError;
use crate::http::lichess::{Form, LichessResult};
use crate::identity::{self, Identity, Scope};
use crate::live::game::LiveGame;
use crate::protocol::lichess as shapes;
use crate::protocol::validate::{game_start, parse_variant};
use crate::protocol::{ClockSettings, SeatKind, Side, Variant};
use crate::store::challenges::{Challenge, ChallengeWrite, NewChallenge};
use crate::store::{now_ms, StoredGame};
use crate::token;
use crate::AppState;

/// An unanswered challenge expires after this long.
pub const CHALLENGE_TTL_MS: i64 = 10 * 60 * 1000;
/// Open challenges a player may have sent at once.
const MAX_OPEN_SENT: usize = 20;

/// Open challenges one person may have waiting for them: a flood of
/// challenges from many fresh accounts stops here (issue 35).
pub const MAX_OPEN_RECEIVED: usize = 20;

/// A challenge's terms, as lichess's clients send them: every value may be
/// a string (a form) or a number or boolean (JSON).
#[derive(Debug, Deserialize, Default)]
pub struct ChallengeForm {
    #[serde(default)]
    pub rated: Option<Value>,
    #[serde(default, rename = "clock.limit")]
    pub clock_limit: Option<Value>,
    #[serde(default, rename = "clock.increment")]
    pub clock_increment: Option<Value>,
    #[serde(default)]
    pub color: Option<Value>,
    #[serde(default)]
    pub variant: Option<Value>,
    #[serde(default)]
    pub fen: Option<Value>,
    /// Rookery's own (issue 40): with `variant=chess960`, the start
    /// position's number (0 to 959) instead of a `fen`.
    #[serde(default)]
    pub chess960_start: Option<Value>,
    /// lichess's days per move (correspondence): Rookery's untimed games
    /// have no per-move limit, so `days` (without a clock) makes an
    /// untimed game; with a clock it is refused.
    #[serde(default)]
    pub days: Option<Value>,
}

/// A number in a form or JSON value.
pub fn number(value: &Option<Value>, what: &str) -> Result<Option<f64>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .map(Some)
            .map_err(|_| ApiError::BadRequest(format!("{what} must be a number"))),
        Some(_) => Err(ApiError::BadRequest(format!("{what} must be a number"))),
    }
}

/// A boolean in a form or JSON value.
pub fn boolean(value: &Option<Value>, what: &str) -> Result<Option<bool>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) => match s.trim() {
            "" => Ok(None),
            "true" | "1" | "on" => Ok(Some(true)),
            "false" | "0" | "off" => Ok(Some(false)),
            _ => Err(ApiError::BadRequest(format!(
                "{what} must be true or false"
            ))),
        },
        Some(_) => Err(ApiError::BadRequest(format!(
            "{what} must be true or false"
        ))),
    }
}

/// A text in a form or JSON value.
pub fn text(value: &Option<Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

/// The clock of a challenge: `clock.limit` seconds (0 to 10800) and
/// `clock.increment` (0 to 180); neither: untimed (lichess's
/// correspondence). A limit of 0 needs an increment.
pub fn clock_of(
    limit: Option<f64>,
    increment: Option<f64>,
) -> Result<Option<ClockSettings>, ApiError> {
    let (limit, increment) = match (limit, increment) {
        (None, None) => return Ok(None),
        (limit, increment) => (limit.unwrap_or(0.0), increment.unwrap_or(0.0)),
    };
    if !(0.0..=10_800.0).contains(&limit) || !(0.0..=180.0).contains(&increment) {
        return Err(ApiError::BadRequest(
            "clock.limit is 0 to 10800 seconds and clock.increment 0 to 180".into(),
        ));
    }
    // lichess takes whole seconds here; a fraction would slip a clock of
    // less than a second past the rule below (issue 35).
    if limit.fract() != 0.0 || increment.fract() != 0.0 {
        return Err(ApiError::BadRequest(
            "clock.limit and clock.increment are whole seconds".into(),
        ));
    }
    if limit == 0.0 && increment == 0.0 {
        return Err(ApiError::BadRequest(
            "a clock of 0+0 cannot be played".into(),
        ));
    }
    Ok(Some(ClockSettings {
        // A first-move wait gives a 0-second clock its due; at least 1 ms
        // so the clock exists.
        initial_ms: ((limit * 1000.0) as u64).max(1),
        increment_ms: (increment * 1000.0) as u64,
    }))
}

/// The variant and start of a challenge's game, as lichess's rules have
/// them: `variant` `standard` (the default) or `chess960`; a `fen` only
/// with `fen_allowed` for standard chess (a game against the AI), and for
/// Chess960 only one of its 960 start positions (lichess's rule: a custom
/// position is not Chess960); `chess960_start` (0 to 959) instead; neither:
/// a Chess960 start drawn at random now.
pub fn challenge_start(
    form: &ChallengeForm,
    fen_allowed: bool,
) -> Result<(Variant, Option<String>), ApiError> {
    let variant = parse_variant(text(&form.variant).as_deref())?;
    let fen = text(&form.fen);
    if variant != Some(Variant::Chess960) && fen.is_some() && !fen_allowed {
        return Err(ApiError::BadRequest(
            "challenges start from the standard position (or a Chess960 start)".into(),
        ));
    }
    let start = number(&form.chess960_start, "chess960_start")?;
    let start = match start {
        Some(n) if n.fract() != 0.0 => {
            return Err(ApiError::BadRequest(
                "chess960_start must be 0 to 959".into(),
            ))
        }
        start => start.map(|n| n as i64),
    };
    let (variant, fen) = game_start(variant, fen, start)?;
    if variant == Variant::Chess960 {
        let fair = fen
            .as_deref()
            .and_then(|fen| rookery_engine::Position::from_fen(fen).ok())
            .is_some_and(|start| variant.is_fair_start(&start));
        if !fair {
            return Err(ApiError::BadRequest(
                "a Chess960 challenge's fen must be one of the 960 start positions".into(),
            ));
        }
    }
    Ok((variant, fen))
}

/// `white`, `black` or a fair coin: the challenger's colour.
pub fn draw_color(wish: &str) -> Result<(&'static str, Side), ApiError> {
    match wish {
        "white" => Ok(("white", Side::White)),
        "black" => Ok(("black", Side::Black)),
        "random" => {
            let mut byte = [0u8; 1];
            getrandom::fill(&mut byte).map_err(ApiError::internal)?;
            Ok((
                "random",
                if byte[0] & 1 == 0 {
                    Side::White
                } else {
                    Side::Black
                },
            ))
        }
        _ => Err(ApiError::BadRequest(
            "color must be white, black or random".into(),
        )),
    }
}

/// The person, with a scope that may handle challenges (a bot's token too).
async fn challenger(state: &AppState, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let person = identity::required(state.store(), headers).await?;
    if person.scopes.has(Scope::Challenge) || person.scopes.has(Scope::Bot) {
        Ok(person)
    } else {
        Err(ApiError::MissingScope(Scope::Challenge.as_str()))
    }
}

fn base_url(state: &AppState) -> String {
    state.config.public_base()
}

fn view(state: &AppState, row: &Challenge, viewer: &str) -> Value {
    shapes::challenge(row, Some(viewer), &base_url(state), now_ms())
}

/// Tells both players of a challenge `kind` (`challenge`,
/// `challengeCanceled`, `challengeDeclined`).
fn tell(state: &AppState, row: &Challenge, kind: &str) {
    for player in [&row.challenger_id, &row.dest_id] {
        let event = json!({"type": kind, "challenge": view(state, row, player)});
        state.registry.events().send(player, &event);
    }
}

async fn load(state: &AppState, id: &str) -> Result<Challenge, ApiError> {
    if Uuid::parse_str(id).is_err() {
        return Err(ApiError::NotFound("no such challenge".into()));
    }
    state
        .store()
        .challenge(id)
        .await?
        .ok_or_else(|| ApiError::NotFound("no such challenge".into()))
}

/// Challenge `id` if `person` is one of its two players; 404 otherwise (a
/// stranger learns nothing of it).
async fn load_own(state: &AppState, id: &str, person: &Identity) -> Result<Challenge, ApiError> {
    let row = load(state, id).await?;
    if person.player.id != row.dest_id && person.player.id != row.challenger_id {
        return Err(ApiError::NotFound("no such challenge".into()));
    }
    Ok(row)
}

/// `POST /api/challenge/{username}`.
pub async fn create(
    State(state): State<AppState>,
    Path(username): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ChallengeForm>,
) -> LichessResult<Json<Value>> {
    let person = challenger(&state, &headers).await?;
    let (variant, initial_fen) = challenge_start(&form, false)?;
    let dest = if super::players::validate_name(&username).is_ok() {
        state.store().credentials(&username).await?
    } else {
        None
    };
    let Some(dest) = dest else {
        return Err(ApiError::NotFound(format!("no such user: {username}")).into());
    };
    if dest.player.id == person.player.id {
        return Err(ApiError::BadRequest("you cannot challenge yourself".into()).into());
    }
    // Blocks, the person's setting, a closed account (issue 37).
    super::social::may_challenge(&state, &person.player.id, &dest.player.id).await?;
    let clock = clock_of(
        number(&form.clock_limit, "clock.limit")?,
        number(&form.clock_increment, "clock.increment")?,
    )?;
    if clock.is_some() && number(&form.days, "days")?.is_some() {
        return Err(ApiError::BadRequest("send either a clock or days, not both".into()).into());
    }
    let wish = text(&form.color).unwrap_or_else(|| "random".into());
    let (color, side) = draw_color(&wish)?;
    let rated = boolean(&form.rated, "rated")?.unwrap_or(false)
        && super::social::may_be_rated(&state, &person.player.id, &dest.player.id).await?;
    let sent = state
        .store()
        .open_challenges(&person.player.id)
        .await?
        .iter()
        .filter(|row| row.challenger_id == person.player.id)
        .count();
    if sent >= MAX_OPEN_SENT {
        return Err(ApiError::Limited(format!(
            "at most {MAX_OPEN_SENT} open challenges: cancel some first"
        ))
        .into());
    }
    let received = state
        .store()
        .open_challenges(&dest.player.id)
        .await?
        .iter()
        .filter(|row| row.dest_id == dest.player.id)
        .count();
    if received >= MAX_OPEN_RECEIVED {
        return Err(ApiError::Limited(format!(
            "{} has {MAX_OPEN_RECEIVED} challenges waiting already: try again later",
            dest.player.name
        ))
        .into());
    }
    let id = Uuid::new_v4().to_string();
    let now = now_ms();
    let created = state
        .store()
        .write_challenge(ChallengeWrite::Create(NewChallenge {
            id: id.clone(),
            challenger_id: person.player.id.clone(),
            dest_id: dest.player.id.clone(),
            color,
            final_color: side.as_str(),
            clock_initial_ms: clock.map(|c| c.initial_ms as i64),
            clock_increment_ms: clock.map(|c| c.increment_ms as i64),
            rated,
            created_at: now,
            expires_at: now + CHALLENGE_TTL_MS,
            variant: variant.key(),
            initial_fen,
        }))
        .await?;
    if !created {
        return Err(ApiError::internal("a new challenge was refused").into());
    }
    let row = load(&state, &id).await?;
    tracing::info!(challenge = %id, from = %person.player.name, to = %dest.player.name, "challenge");
    tell(&state, &row, "challenge");
    Ok(Json(view(&state, &row, &person.player.id)))
}

/// `GET /api/challenge`.
pub async fn list(State(state): State<AppState>, headers: HeaderMap) -> LichessResult<Json<Value>> {
    let person = challenger(&state, &headers).await?;
    let rows = state.store().open_challenges(&person.player.id).await?;
    let (incoming, outgoing): (Vec<_>, Vec<_>) =
        rows.iter().partition(|row| row.dest_id == person.player.id);
    let show = |rows: Vec<&Challenge>| -> Vec<Value> {
        rows.into_iter()
            .map(|row| view(&state, row, &person.player.id))
            .collect()
    };
    Ok(Json(json!({"in": show(incoming), "out": show(outgoing)})))
}

/// `GET /api/challenge/{id}/show`: a challenge of one's own.
pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = challenger(&state, &headers).await?;
    let row = load_own(&state, &id, &person).await?;
    Ok(Json(view(&state, &row, &person.player.id)))
}

fn still_open(row: &Challenge) -> Result<(), ApiError> {
    match row.status_at(now_ms()) {
        "created" => Ok(()),
        status => Err(ApiError::BadRequest(format!(
            "this challenge is {status}, not open"
        ))),
    }
}

/// `POST /api/challenge/{id}/accept`: only the one challenged. The game
/// (with the challenge's id) is stored with the challenge's acceptance in
/// one transaction, then starts; both players hear `gameStart`.
pub async fn accept(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = challenger(&state, &headers).await?;
    let row = load(&state, &id).await?;
    if person.player.id != row.dest_id {
        return Err(ApiError::NotFound("no such challenge to accept".into()).into());
    }
    still_open(&row)?;
    let (challenger_side, clock) = terms(&row)?;
    let game_id = Uuid::parse_str(&row.id).map_err(ApiError::internal)?;
    let mut live = LiveGame::new(
        game_id,
        now_ms(),
        [SeatKind::Human, SeatKind::Human],
        clock,
        row.variant(),
        row.initial_fen.as_deref(),
    )?;
    let challenger_ref = state
        .store()
        .player_by_id(&row.challenger_id)
        .await?
        .map(|(player, _)| player)
        .ok_or_else(|| ApiError::internal("the challenger is gone"))?;
    let now = Instant::now();
    // Seat tokens are minted as for any seat, and not shown: both players
    // act through their accounts (their seats follow them).
    live.take_seat(
        challenger_side,
        token::mint()?.hash,
        Some(challenger_ref),
        now,
    )?;
    live.take_seat(
        challenger_side.other(),
        token::mint()?.hash,
        Some(person.player.clone()),
        now,
    )?;
    live.make_private(None);
    live.restore_terms(row.rated && live.is_rated(), live.visibility(), None);
    let stored = StoredGame::of(&live.record(), now, now_ms());
    let accepted = state
        .store()
        .write_challenge(ChallengeWrite::Accept {
            id: row.id.clone(),
            game: Box::new(stored),
        })
        .await?;
    if !accepted {
        return Err(ApiError::BadRequest("this challenge is no longer open".into()).into());
    }
    state.registry.insert(live.clone()).await?;
    tracing::info!(challenge = %row.id, "challenge accepted: game started");
    state
        .registry
        .events()
        .game_started(&live.event_games("friend"));
    Ok(Json(json!({"ok": true})))
}

/// The challenger's side and the clock of a challenge.
fn terms(row: &Challenge) -> Result<(Side, Option<ClockSettings>), ApiError> {
    let side = Side::parse(&row.final_color).ok_or_else(|| ApiError::internal("bad colour"))?;
    let clock = row.clock_initial_ms.map(|initial| ClockSettings {
        initial_ms: u64::try_from(initial).unwrap_or(0),
        increment_ms: u64::try_from(row.clock_increment_ms.unwrap_or(0)).unwrap_or(0),
    });
    Ok((side, clock))
}

#[derive(Debug, Deserialize, Default)]
pub struct DeclineForm {
    #[serde(default)]
    pub reason: Option<Value>,
}

/// `POST /api/challenge/{id}/decline` (`reason`: lichess's keys).
pub async fn decline(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<DeclineForm>,
) -> LichessResult<Json<Value>> {
    let person = challenger(&state, &headers).await?;
    let row = load(&state, &id).await?;
    if person.player.id != row.dest_id {
        return Err(ApiError::NotFound("no such challenge to decline".into()).into());
    }
    close(
        &state,
        row,
        "declined",
        Some(shapes::decline_key(text(&form.reason).as_deref())),
    )
    .await
}

/// `POST /api/challenges/decline-all`: declines every open challenge
/// waiting for the person (reason `later` unless given), and answers how
/// many: `{"declined": N}`. A challenge closed meanwhile (accepted,
/// cancelled) is left as it is.
pub async fn decline_all(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<DeclineForm>,
) -> LichessResult<Json<Value>> {
    let person = challenger(&state, &headers).await?;
    let reason = match text(&form.reason) {
        Some(reason) => shapes::decline_key(Some(&reason)),
        None => "later",
    };
    let mut declined = 0;
    for row in state.store().open_challenges(&person.player.id).await? {
        if row.dest_id != person.player.id {
            continue;
        }
        if close(&state, row, "declined", Some(reason)).await.is_ok() {
            declined += 1;
        }
    }
    Ok(Json(json!({ "declined": declined })))
}

/// `POST /api/challenge/{id}/cancel`: the challenger takes it back (the one
/// challenged may cancel too, as on lichess).
pub async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> LichessResult<Json<Value>> {
    let person = challenger(&state, &headers).await?;
    let row = load_own(&state, &id, &person).await?;
    close(&state, row, "canceled", None).await
}

async fn close(
    state: &AppState,
    row: Challenge,
    status: &'static str,
    reason: Option<&'static str>,
) -> LichessResult<Json<Value>> {
    still_open(&row)?;
    let closed = state
        .store()
        .write_challenge(ChallengeWrite::Close {
            id: row.id.clone(),
            status,
            reason: reason.map(str::to_string),
        })
        .await?;
    if !closed {
        return Err(ApiError::BadRequest("this challenge is no longer open".into()).into());
    }
    let row = load(state, &row.id).await?;
    let kind = if status == "declined" {
        "challengeDeclined"
    } else {
        "challengeCanceled"
    };
    tell(state, &row, kind);
    Ok(Json(json!({"ok": true})))
}

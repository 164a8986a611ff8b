//! The JSON shapes of the public contract (`docs/API.md`): what clients send
//! and what the server answers, over HTTP, NDJSON and WebSocket alike.
//!
//! Requests parse straight into domain types where that is cheap (colours,
//! seat kinds); the remaining checks (level range, clock range, FEN) happen in
//! [`CreateGame::validate`] so a bad value is a `bad_request` with a message
//! that says what was wrong.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::Utf8Bytes;
use serde::{Deserialize, Serialize};

use crate::http::error::ApiError;
// The domain types the wire speaks as they are (see `live::domain`).
pub use crate::live::domain::{ClockSettings, SeatKind, Side, Status};

// ---------------------------------------------------------------- requests

/// `{"kind": "human"}` or `{"kind": "ai", "level": 1..8}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SeatRequest {
    Human,
    Ai { level: i64 },
}

/// The optional clock of a new game, in seconds.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ClockRequest {
    pub initial: f64,
    #[serde(default)]
    pub increment: f64,
}

/// `POST /api/games`.
#[derive(Debug, Clone, Deserialize)]
pub struct CreateGame {
    pub white: SeatRequest,
    pub black: SeatRequest,
    #[serde(rename = "as", default)]
    pub as_side: Option<SeatChoice>,
    #[serde(default)]
    pub clock: Option<ClockRequest>,
    #[serde(default)]
    pub fen: Option<String>,
    /// Added: who may take the free seat (default `open`, the original
    /// contract's join by id).
    #[serde(default)]
    pub visibility: Option<Visibility>,
    /// Added (issue 11): continue a game from a PGN: the new game starts
    /// from the PGN's last position (not with both `fen` and `pgn`).
    #[serde(default)]
    pub pgn: Option<String>,
    /// Added (issue 22): moves already played from `fen` (or the standard
    /// start), in UCI: the new game starts with them in its move list.
    #[serde(default)]
    pub moves: Option<Vec<String>>,
}

/// The `as` of a new game: one seat, or (added) `both` for pass and play,
/// one device holding both human seats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeatChoice {
    White,
    Black,
    Both,
}

/// Who may take a game's free human seat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Anyone with the game id: an open seek, listed as joinable.
    #[default]
    Open,
    /// Only a holder of the invite secret the creator was given.
    Private,
}

impl Visibility {
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Open => "open",
            Visibility::Private => "private",
        }
    }

    pub fn parse(text: &str) -> Option<Visibility> {
        match text {
            "open" => Some(Visibility::Open),
            "private" => Some(Visibility::Private),
            _ => None,
        }
    }
}

/// The longest clock a game may have (three hours) and the largest increment
/// (three minutes): generous for real play, and keeps millisecond values far
/// from overflow.
const MAX_INITIAL_MS: u64 = 3 * 60 * 60 * 1000;
const MAX_INCREMENT_MS: u64 = 3 * 60 * 1000;

/// A validated game request.
#[derive(Debug, Clone)]
pub struct NewGame {
    pub seats: [SeatKind; 2],
    /// The human seat the creator takes, if any.
    pub creator_side: Option<Side>,
    /// Pass and play: the creator takes both human seats (`creator_side`
    /// is then white).
    pub both_seats: bool,
    pub clock: Option<ClockSettings>,
    pub fen: Option<String>,
    /// Moves already played from `fen`, in UCI (an imported game's history).
    pub history: Vec<String>,
    pub visibility: Visibility,
}

/// The most moves (plies) a new game may start with.
pub const MAX_HISTORY_PLIES: usize = 1_000;

impl CreateGame {
    pub fn validate(self) -> Result<NewGame, ApiError> {
        let seat = |request: SeatRequest, side: Side| match request {
            SeatRequest::Human => Ok(SeatKind::Human),
            SeatRequest::Ai { level } => match u8::try_from(level) {
                Ok(level) if rookery_engine::level::level(level).is_some() => {
                    Ok(SeatKind::Ai { level })
                }
                _ => Err(ApiError::BadRequest(format!(
                    "{}: AI level must be 1 to 8, not {level}",
                    side.as_str()
                ))),
            },
        };
        let seats = [
            seat(self.white, Side::White)?,
            seat(self.black, Side::Black)?,
        ];
        let humans: Vec<Side> = Side::BOTH
            .into_iter()
            .filter(|side| seats[side.index()] == SeatKind::Human)
            .collect();
        let (creator_side, both_seats) = match (self.as_side, humans.as_slice()) {
            (Some(SeatChoice::Both), [_, _]) => (Some(Side::White), true),
            (Some(SeatChoice::Both), _) => {
                return Err(ApiError::BadRequest(
                    "\"as\": both needs two human seats".into(),
                ))
            }
            (Some(choice), _) => {
                let side = if choice == SeatChoice::White {
                    Side::White
                } else {
                    Side::Black
                };
                if !humans.contains(&side) {
                    return Err(ApiError::BadRequest(format!(
                        "\"as\": {} is not a human seat",
                        side.as_str()
                    )));
                }
                (Some(side), false)
            }
            (None, []) => (None, false),
            (None, [only]) => (Some(*only), false),
            (None, _) => (Some(Side::White), false),
        };
        let clock = match self.clock {
            None => None,
            Some(clock) => Some(validate_clock(clock)?),
        };
        let fen = self
            .fen
            .map(|fen| fen.trim().to_string())
            .filter(|fen| !fen.is_empty());
        let history = self.moves.unwrap_or_default();
        if history.len() > MAX_HISTORY_PLIES {
            return Err(ApiError::BadRequest(format!(
                "moves: at most {MAX_HISTORY_PLIES} plies"
            )));
        }
        let (fen, history) = match self.pgn.as_deref().map(str::trim) {
            None | Some("") => (fen, history),
            Some(_) if fen.is_some() || !history.is_empty() => {
                return Err(ApiError::BadRequest(
                    "send either fen (with moves) or pgn, not both".into(),
                ))
            }
            Some(pgn) => continue_from_pgn(pgn)?,
        };
        Ok(NewGame {
            seats,
            creator_side,
            both_seats,
            clock,
            fen,
            history,
            visibility: self.visibility.unwrap_or_default(),
        })
    }
}

/// A PGN's game, to continue it: its start (`None`: the standard one) and
/// its moves in UCI. 400 `bad_request` for a PGN that cannot be read or
/// whose game is already over.
fn continue_from_pgn(pgn: &str) -> Result<(Option<String>, Vec<String>), ApiError> {
    let read = crate::live::pgn::read(pgn).map_err(ApiError::BadRequest)?;
    if let Some(outcome) = read.game.outcome() {
        return Err(ApiError::BadRequest(format!(
            "the PGN's game is already over ({}): it can be replayed, not continued",
            outcome.termination
        )));
    }
    let start = read.game.initial_position().to_fen();
    let fen = (start != rookery_engine::Position::startpos().to_fen()).then_some(start);
    let moves = read.game.moves().iter().map(|mv| mv.to_uci()).collect();
    Ok((fen, moves))
}

fn validate_clock(clock: ClockRequest) -> Result<ClockSettings, ApiError> {
    let to_ms = |seconds: f64| -> Option<u64> {
        if seconds.is_finite() && seconds >= 0.0 {
            Some((seconds * 1000.0).round() as u64)
        } else {
            None
        }
    };
    let initial_ms = to_ms(clock.initial)
        .filter(|ms| (1..=MAX_INITIAL_MS).contains(ms))
        .ok_or_else(|| {
            ApiError::BadRequest(
                "clock.initial must be more than 0 and at most 10800 seconds".into(),
            )
        })?;
    let increment_ms = to_ms(clock.increment)
        .filter(|ms| *ms <= MAX_INCREMENT_MS)
        .ok_or_else(|| ApiError::BadRequest("clock.increment must be 0 to 180 seconds".into()))?;
    Ok(ClockSettings {
        initial_ms,
        increment_ms,
    })
}

/// `POST /api/players`.
#[derive(Debug, Deserialize)]
pub struct CreatePlayer {
    pub name: String,
}

/// `POST /api/games/{id}/move`.
#[derive(Debug, Deserialize)]
pub struct MoveRequest {
    pub uci: String,
}

/// `POST /api/games/{id}/join`: an optional body.
#[derive(Debug, Default, Deserialize)]
pub struct JoinRequest {
    /// The invite secret of a private game.
    #[serde(default)]
    pub invite: Option<String>,
}

/// `GET /api/games?status=&limit=&joinable=`.
#[derive(Debug, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub limit: Option<String>,
    /// Added: `true` lists only open seeks (waiting games anyone may join).
    #[serde(default)]
    pub joinable: Option<String>,
    /// Added (issue 11): only this registered player's games.
    #[serde(default)]
    pub player: Option<String>,
    /// Added (issue 11), with `player`: the cursor of the next page.
    #[serde(default)]
    pub before: Option<String>,
}

/// `GET /api/players/{name}/games?before=&limit=`.
#[derive(Debug, Deserialize)]
pub struct PlayerGamesQuery {
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub limit: Option<String>,
}

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
}

// ---------------------------------------------------------------- responses

/// The whole public state of a game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameState {
    pub id: String,
    pub status: Status,
    pub white: SeatView,
    pub black: SeatView,
    pub initial_fen: String,
    pub fen: String,
    pub turn: Side,
    pub moves: Vec<String>,
    pub san: Vec<String>,
    pub legal_moves: Vec<String>,
    pub check: bool,
    pub result: Option<String>,
    pub termination: Option<String>,
    pub clock: Option<ClockView>,
    pub draw_offer: Option<Side>,
    /// Added (offers): the side asking to take back its last move.
    pub takeback_offer: Option<Side>,
    /// Added: takebacks granted in this game.
    pub takebacks: u32,
    /// Added: the side offering a rematch of this finished game.
    pub rematch_offer: Option<Side>,
    /// Added: the id of the agreed rematch game.
    pub rematch: Option<String>,
    /// Added to the contract: read-only WebSocket connections watching now.
    pub spectators: u32,
    /// Added to the contract: creation time, milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Added: whether the result counts on the main scoreboard.
    pub rated: bool,
    /// Added: who may take the free seat.
    pub visibility: Visibility,
    /// Added: waiting for an opponent and open to anyone (an open seek).
    pub joinable: bool,
    /// Added (issue 22): while a side has not yet made its first move of a
    /// game with a clock (its clock does not run), the milliseconds it has
    /// left to make it before the game is aborted.
    #[serde(default)]
    pub first_move_ms: Option<u64>,
    /// Added (issue 22): on the one state made by the change that ended an
    /// offer, what became of it (so its maker is told); `null` otherwise.
    #[serde(default)]
    pub offer_answer: Option<OfferAnswer>,
}

/// What became of an offer (draw, takeback or rematch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfferAnswer {
    pub offer: OfferKind,
    /// The side that made the offer.
    pub by: Side,
    pub answer: OfferOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OfferKind {
    Draw,
    Takeback,
    Rematch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OfferOutcome {
    /// The opponent accepted it.
    Accepted,
    /// The opponent declined it (a draw offer is also declined by moving).
    Declined,
    /// Its maker took it back.
    Withdrawn,
    /// It lapsed: a move was made (a takeback request) or the game ended.
    Expired,
}

impl GameState {
    pub fn is_finished(&self) -> bool {
        self.status == Status::Finished
    }
}

/// A seat as shown in a GameState.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SeatView {
    Human {
        name: Option<String>,
        connected: bool,
        /// Added to the contract: whether someone holds this seat.
        taken: bool,
        /// Added (issue 11): a registered player's rating, as `rating` and
        /// `provisional` fields of the seat; absent for anonymous seats.
        #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
        rating: Option<SeatRating>,
    },
    Ai {
        level: u8,
    },
}

/// A registered player's Glicko-2 rating as a seat shows it: before the game
/// for a game that has been rated, else the player's rating when the seat
/// was taken or the game read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRating {
    /// Rounded to a whole number.
    pub rating: i64,
    /// The rating deviation is still above [`PROVISIONAL_DEVIATION`].
    pub provisional: bool,
}

/// Above this rating deviation a rating is shown as provisional (lichess's
/// threshold: about ten rated games from the start).
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

impl SeatRating {
    pub fn of(rating: f64, deviation: f64) -> SeatRating {
        SeatRating {
            rating: rating.round() as i64,
            provisional: deviation > PROVISIONAL_DEVIATION,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockView {
    pub white_ms: u64,
    pub black_ms: u64,
    pub increment_ms: u64,
    pub running: Option<Side>,
}

/// The secret that lets its holder move for a colour.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Seat {
    pub color: Side,
    pub token: String,
}

/// `POST /api/games` and `POST /api/games/{id}/join`.
#[derive(Debug, Clone, Serialize)]
pub struct GameWithSeat {
    pub game: GameState,
    pub seat: Option<Seat>,
    /// Added: a new private game's invite secret (shown once, stored hashed);
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invite: Option<String>,
    /// Added: a pass-and-play game's two seats, white then black (`seat`
    /// is the white one); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seats: Option<[Seat; 2]>,
}

/// `POST /api/games/{id}/rematch`: the game, and once the rematch is
/// agreed, the caller's seat in the new game.
#[derive(Debug, Clone, Serialize)]
pub struct RematchAnswer {
    pub game: GameState,
    pub rematch: Option<RematchSeat>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RematchSeat {
    /// The new game's id.
    pub id: String,
    pub seat: Seat,
}

/// `POST /api/players`.
#[derive(Debug, Serialize)]
pub struct PlayerCreated {
    pub id: String,
    pub name: String,
    pub token: String,
}

#[derive(Debug, Serialize)]
pub struct GameList {
    pub games: Vec<GameState>,
    /// Added (issue 11), lists of one player's games only: the `before`
    /// cursor of the next page, `null` on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Option<String>>,
}

#[derive(Debug, Serialize)]
pub struct LevelView {
    pub level: u8,
    pub name: &'static str,
    pub elo: Option<u32>,
    /// Added: the deepest search in plies, `null` for no limit.
    pub max_depth: Option<u32>,
    /// Added: the longest think per move, in milliseconds.
    pub max_think_ms: u64,
    /// Added: the most nodes searched per move, `null` for no limit.
    pub max_nodes: Option<u64>,
    /// Added: randomness of the move choice in centipawns (0: always best).
    pub temperature_cp: u32,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Scoreboard {
    pub colors: ColorScore,
    pub players: Vec<PlayerScore>,
    pub ai: Vec<AiScore>,
    /// Added: finished casual games (custom start or a clock under the
    /// minimum) by winning color; they count nowhere else.
    pub casual: ColorScore,
    /// Added (issue 11): the records, in a fixed order (see docs/API.md).
    pub records: Vec<RecordView>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ColorScore {
    pub white: i64,
    pub black: i64,
    pub draws: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlayerScore {
    pub name: String,
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
    /// Added (issue 11): Glicko-2 rating and deviation, rounded.
    pub rating: i64,
    pub rating_deviation: i64,
    /// Added: the deviation is above [`PROVISIONAL_DEVIATION`].
    pub provisional: bool,
}

/// One record of the scoreboard.
#[derive(Debug, Clone, Serialize)]
pub struct RecordView {
    /// `fastest_checkmate`, `fastest_checkmate_vs_ai`, `longest_game`,
    /// `biggest_upset` or `longest_win_streak`.
    pub record: &'static str,
    /// The AI level of a per-level record, else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// Moves, rating points or wins, by record.
    pub value: i64,
    /// The holder's name.
    pub player: String,
    /// Who they played in the game that set it: a player's name,
    /// `anonymous` or `level N`; absent for a win streak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opponent: Option<String>,
    /// The game that set it.
    pub game: String,
    /// When it was set, ms since the Unix epoch.
    pub at: i64,
}

/// `GET /api/players/{name}`.
#[derive(Debug, Clone, Serialize)]
pub struct PlayerProfile {
    pub name: String,
    /// When the player registered, ms since the Unix epoch.
    pub created_at: i64,
    pub rating: i64,
    pub rating_deviation: i64,
    pub provisional: bool,
    /// Finished games that count on the scoreboard (against anyone).
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
    pub win_streak: i64,
    pub best_win_streak: i64,
    /// The rating after each of the last [`HISTORY_POINTS`] rated games,
    /// oldest first.
    pub history: Vec<RatingPoint>,
}

/// The most rating history points a profile carries.
pub const HISTORY_POINTS: u32 = 500;

/// One rated game in a player's history.
#[derive(Debug, Clone, Serialize)]
pub struct RatingPoint {
    pub game: String,
    /// When the result was stored, ms since the Unix epoch.
    pub at: i64,
    pub opponent: String,
    /// `win`, `loss` or `draw`.
    pub result: &'static str,
    pub before: i64,
    pub after: i64,
    pub deviation: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AiScore {
    pub level: u8,
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
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
            spectators: 7,
            created_at: 1,
            rated: true,
            visibility: Visibility::Open,
            joinable: false,
            first_move_ms: None,
            offer_answer: None,
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

    /// `as` and the seats it leaves: (creator's seat, both seats), or an
    /// error, for each kind of game.
    #[test]
    fn the_creator_seat_follows_as() {
        let human = r#"{"kind":"human"}"#;
        let ai = r#"{"kind":"ai","level":2}"#;
        let cases = [
            (human, human, None, Some((Some(Side::White), false))),
            (
                human,
                human,
                Some("black"),
                Some((Some(Side::Black), false)),
            ),
            (human, human, Some("both"), Some((Some(Side::White), true))),
            (ai, human, None, Some((Some(Side::Black), false))),
            (ai, human, Some("both"), None),
            (ai, human, Some("white"), None),
            (ai, ai, None, Some((None, false))),
            (ai, ai, Some("both"), None),
        ];
        for (white, black, choice, expected) in cases {
            let choice = choice
                .map(|c| format!(r#","as":"{c}""#))
                .unwrap_or_default();
            let text = format!(r#"{{"white":{white},"black":{black}{choice}}}"#);
            let request: CreateGame = serde_json::from_str(&text).expect(&text);
            let got = request
                .validate()
                .ok()
                .map(|game| (game.creator_side, game.both_seats));
            assert_eq!(got, expected, "{text}");
        }
    }
}

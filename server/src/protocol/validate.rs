//! Request validation at the edge: [`CreateGame::validate`] turns a parsed
//! `POST /api/games` body into a [`NewGame`], or a 400 `bad_request` with a
//! message that says what was wrong.
//! The refusal is [`Invalid`], which the edge answers as `bad_request`.

use super::requests::{ClockRequest, CreateGame, SeatChoice, SeatRequest};
use super::{ClockSettings, SeatKind, Side};
use super::{Variant, Visibility};
use crate::domain::{random_chess960_start, CHESS960_STARTS};

/// A request the contract refuses, saying what was wrong (400
/// `bad_request`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

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
    /// The rules; a Chess960 game always has its `fen` (its start drawn,
    /// numbered or given).
    pub variant: Variant,
    pub fen: Option<String>,
    /// Moves already played from `fen`, in UCI (an imported game's history).
    pub history: Vec<String>,
    pub visibility: Visibility,
    /// What the creator chose: casual (`Some(false)`), rated
    /// (`Some(true)`), or the rated rule (`None`).
    pub rated: Option<bool>,
}

/// The most moves (plies) a new game may start with.
pub const MAX_HISTORY_PLIES: usize = 1_000;

impl CreateGame {
    pub fn validate(self) -> Result<NewGame, Invalid> {
        let seat = |request: SeatRequest, side: Side| match request {
            SeatRequest::Human => Ok(SeatKind::Human),
            SeatRequest::Ai { level } => match u8::try_from(level) {
                Ok(level) if rookery_engine::level::level(level).is_some() => {
                    Ok(SeatKind::Ai { level })
                }
                _ => Err(Invalid(format!(
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
                return Err(Invalid("\"as\": both needs two human seats".into()))
            }
            (Some(choice), _) => {
                let side = if choice == SeatChoice::White {
                    Side::White
                } else {
                    Side::Black
                };
                if !humans.contains(&side) {
                    return Err(Invalid(format!(
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
            return Err(Invalid(format!("moves: at most {MAX_HISTORY_PLIES} plies")));
        }
        let asked = parse_variant(self.variant.as_deref())?;
        let (variant, fen, history) = match self.pgn.as_deref().map(str::trim) {
            None | Some("") => {
                let (variant, fen) = game_start(asked, fen, self.chess960_start)?;
                (variant, fen, history)
            }
            Some(_) if fen.is_some() || !history.is_empty() => {
                return Err(Invalid(
                    "send either fen (with moves) or pgn, not both".into(),
                ))
            }
            Some(_) if self.chess960_start.is_some() => {
                return Err(Invalid(
                    "send either chess960_start or pgn, not both".into(),
                ))
            }
            Some(pgn) => {
                let (variant, fen, history) = continue_from_pgn(pgn, self.pgn_index.unwrap_or(0))?;
                if asked.is_some_and(|asked| asked != variant) {
                    return Err(Invalid(format!(
                        "variant {} but the PGN's game is {}",
                        asked.map_or("", Variant::key),
                        variant.key()
                    )));
                }
                (variant, fen, history)
            }
        };
        if self.pgn_index.is_some() && self.pgn.as_deref().is_none_or(|pgn| pgn.trim().is_empty()) {
            return Err(Invalid("pgn_index needs a pgn".into()));
        }
        Ok(NewGame {
            seats,
            creator_side,
            both_seats,
            clock,
            variant,
            fen,
            history,
            visibility: self.visibility.unwrap_or_default(),
            rated: self.rated,
        })
    }
}

/// A variant's key as a request names it (`None`: not named).
pub fn parse_variant(key: Option<&str>) -> Result<Option<Variant>, Invalid> {
    match key.map(str::trim) {
        None | Some("") => Ok(None),
        Some(key) => Variant::parse(key).map(Some).ok_or_else(|| {
            Invalid(format!(
                "variant must be standard or chess960, not {:?}",
                rookery_engine::text::excerpt(key)
            ))
        }),
    }
}

/// Where a new game starts, from what its request asked: the variant
/// (default standard) and its start. A standard game starts from `fen` or
/// the standard position; a Chess960 game from `fen` (any position, read
/// with Chess960 castling), else start `number` (0 to 959), else a start
/// drawn at random, so its FEN is always known. A start number for a
/// standard game is refused: it would be silently ignored.
pub fn game_start(
    variant: Option<Variant>,
    fen: Option<String>,
    number: Option<i64>,
) -> Result<(Variant, Option<String>), Invalid> {
    let variant = variant.unwrap_or_default();
    match (variant, fen, number) {
        (Variant::Standard, _, Some(_)) => {
            Err(Invalid("chess960_start needs variant chess960".into()))
        }
        (Variant::Chess960, Some(_), Some(_)) => Err(Invalid(
            "send either fen or chess960_start, not both".into(),
        )),
        (variant, Some(fen), None) => Ok((variant, Some(fen))),
        (Variant::Standard, None, None) => Ok((Variant::Standard, None)),
        (Variant::Chess960, None, number) => {
            let number = match number {
                None => random_chess960_start(),
                Some(n) => u32::try_from(n)
                    .ok()
                    .filter(|n| *n < CHESS960_STARTS)
                    .ok_or_else(|| Invalid(format!("chess960_start must be 0 to 959, not {n}")))?,
            };
            let fen = rookery_engine::chess960_start_fen(number)
                .ok_or_else(|| Invalid(format!("no Chess960 start {number}")))?;
            Ok((Variant::Chess960, Some(fen)))
        }
    }
}

/// A PGN's game (the `index`th of a text of several), to continue it: its
/// variant (Chess960 with a `[Variant "Chess960"]` tag), its start
/// (`None`: the standard one) and its moves in UCI. 400 `bad_request` for
/// a PGN that cannot be read, no such game, or a game already over.
fn continue_from_pgn(
    pgn: &str,
    index: usize,
) -> Result<(Variant, Option<String>, Vec<String>), Invalid> {
    let read = if index == 0 {
        crate::protocol::pgn::read(pgn).map_err(Invalid)?
    } else {
        let mut read = crate::protocol::pgn::read_games(pgn).map_err(Invalid)?;
        if index >= read.games.len() {
            return Err(Invalid(match read.unreadable {
                Some(why) => format!("pgn_index {index}: bad PGN: {why}"),
                None => format!("pgn_index {index}: the PGN has {} games", read.games.len()),
            }));
        }
        read.games.swap_remove(index)
    };
    if let Some(outcome) = read.game.outcome() {
        return Err(Invalid(format!(
            "the PGN's game is already over ({}): it can be replayed, not continued",
            outcome.termination
        )));
    }
    let variant = Variant::of(&read.game);
    let start = read.game.initial_position().to_fen();
    let standard =
        variant == Variant::Standard && start == rookery_engine::Position::startpos().to_fen();
    let fen = (!standard).then_some(start);
    Ok((variant, fen, read.game.uci_moves()))
}

fn validate_clock(clock: ClockRequest) -> Result<ClockSettings, Invalid> {
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
            Invalid("clock.initial must be more than 0 and at most 10800 seconds".into())
        })?;
    let increment_ms = to_ms(clock.increment)
        .filter(|ms| *ms <= MAX_INCREMENT_MS)
        .ok_or_else(|| Invalid("clock.increment must be 0 to 180 seconds".into()))?;
    Ok(ClockSettings {
        initial_ms,
        increment_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! A game's record: what a live game is when it is written ([`GameRecord`],
//! with the [`PlayedMove`] that changed it) and what the store reads back
//! to restore it ([`SavedGame`]), with the parts both share: how a game
//! ended ([`Ending`]) and a rematch ([`Rematch`]).

use std::time::Duration;

use rookery_engine::game::{Outcome, Termination};
use rookery_engine::Move;
use tokio::time::Instant;
use uuid::Uuid;

use super::{ClockSettings, GameSeat, Side, Status, Variant, Visibility};
use crate::token::TokenHash;

/// A game as it is written, at one moment: every column of its row. A live
/// game makes it (`LiveGame::record`); the store turns it into its row.
#[derive(Debug, Clone)]
pub struct GameRecord {
    pub id: Uuid,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// White's seat, then black's.
    pub seats: [GameSeat; 2],
    /// The rules (issue 40): a FEN does not say how castling is spelled.
    pub variant: Variant,
    pub initial_fen: String,
    pub fen: String,
    pub clock_settings: Option<ClockSettings>,
    /// The clock's times at the current turn's start, and since when the
    /// running side's turn runs (`None` while no clock runs).
    pub clock: Option<ClockRecord>,
    pub status: Status,
    pub ending: Option<Ending>,
    pub draw_offer: Option<Side>,
    pub takeback_offer: Option<Side>,
    pub takebacks: u32,
    pub rematch: Option<Rematch>,
    pub rated: bool,
    pub visibility: Visibility,
    pub invite: Option<TokenHash>,
    /// Plies already played when the game was created (an imported history).
    pub start_ply: usize,
    /// The sides (white, black) that went berserk in an arena game
    /// (migration 0016).
    pub berserk: [bool; 2],
}

impl GameRecord {
    pub fn seat(&self, side: Side) -> &GameSeat {
        &self.seats[side.index()]
    }

    pub fn is_finished(&self) -> bool {
        self.ending.is_some()
    }
}

/// A clock as written: both times when the current turn began, and the
/// instant it began for the side whose clock runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockRecord {
    pub remaining: [Duration; 2],
    pub running_since: Option<Instant>,
}

/// A move as played: what a live game's move produces and the store writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedMove {
    pub ply: usize,
    pub mv: Move,
    pub uci: String,
    pub san: String,
    /// Both clocks after the move, increment included (`None` without clock).
    pub clock_ms: Option<(u64, u64)>,
}

/// A game as the database holds it: what the store reads and a live game
/// is restored from (`LiveGame::restore`).
#[derive(Debug)]
pub struct SavedGame {
    pub id: Uuid,
    pub created_at: i64,
    pub updated_at: i64,
    pub seats: [GameSeat; 2],
    pub clock_settings: Option<ClockSettings>,
    /// The rules (migration 0013; `standard` for every game before it).
    pub variant: Variant,
    pub initial_fen: String,
    /// The moves in UCI, replayed from `initial_fen`.
    pub moves: Vec<String>,
    /// `None`: no clock stored (a clock then starts full).
    pub clock: Option<SavedClock>,
    pub ending: Option<Ending>,
    pub draw_offer: Option<Side>,
    pub takeback_offer: Option<Side>,
    pub takebacks: u32,
    pub rematch: Option<Rematch>,
    /// The terms fixed at creation (`rated` also turns false when a
    /// computer grants a takeback).
    pub rated: bool,
    pub visibility: Visibility,
    pub invite: Option<TokenHash>,
    /// Plies already played when the game was created (an imported history).
    pub start_ply: usize,
    /// The sides (white, black) that went berserk (migration 0016).
    pub berserk: [bool; 2],
}

/// A stored clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedClock {
    /// Remaining times when the current turn began.
    pub white_ms: u64,
    pub black_ms: u64,
    /// How long the side to move had already thought when the server stopped.
    pub spent: Duration,
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    pub winner: Option<Side>,
    pub termination: Termination,
}

impl Ending {
    /// The result string; an aborted game has none.
    pub fn result(&self) -> Option<&'static str> {
        if self.termination == Termination::Aborted {
            return None;
        }
        Some(match self.winner {
            Some(Side::White) => "1-0",
            Some(Side::Black) => "0-1",
            None => "1/2-1/2",
        })
    }

    pub fn from_outcome(outcome: Outcome) -> Ending {
        Ending {
            winner: outcome.winner.map(Side::from),
            termination: outcome.termination,
        }
    }
}

/// A rematch of a finished game, offered or agreed.
///
/// The new game's id is chosen when the rematch is first offered, so the
/// offerer's seat token in it can be fixed then: a seat token of a rematch
/// is derived from the player's seat token in this game and the new id
/// (`token::rematch_token`), and the server keeps only its hash
/// until the new game is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rematch {
    pub game: Uuid,
    pub offered_by: Side,
    /// The hash of the offerer's seat token in the new game.
    pub offerer_token: TokenHash,
    /// Both players agreed: the new game exists.
    pub agreed: bool,
}

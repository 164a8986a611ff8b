//! Swiss-system pairings by the FIDE Dutch system, as a pure library: no
//! I/O, no globals, every function a computation on values the caller owns.
//!
//! Modules:
//! - [`model`]: the tournament as recorded (players in initial order,
//!   rounds with games and byes) and the initial ranking;
//! - [`history`]: what the rules derive from the record (scores, opponents,
//!   colour preferences, floats, bye eligibility);
//! - [`dutch`]: pairing the next round (C.04.3, 2025/2026 edition);
//! - `colour`: the colour allocation rules for one pair;
//! - `matching`: maximum-cardinality matching, the oracle of the
//!   completion criterion;
//! - [`standings`]: points and tie-breaks;
//! - [`trf`]: FIDE TRF-16 import and export.
//!
//! The server's round loop: [`pair_next_round`] with
//! [`Tournament::present_next`], record the results as a [`Round`] with
//! [`Tournament::push_round`], show [`standings`], export with
//! [`trf::write`].

mod colour;
pub mod dutch;
pub mod history;
mod matching;
pub mod model;
mod order;
pub mod standings;
pub mod trf;

pub use dutch::{pair_next_round, Pairing, PairingError};
pub use model::{
    initial_ranking, Bye, ByeKind, Colour, Entrant, Entry, Game, GameResult, Player, PlayerId,
    Round, Score, Tournament,
};
pub use standings::{standings, Standing};
pub use trf::TrfError;

impl Pairing {
    /// The round as it stands once played, given each game's result in
    /// board order (`results[i]` for `pairs[i]`).
    pub fn into_round(&self, results: &[GameResult]) -> Round {
        Round {
            games: self
                .pairs
                .iter()
                .zip(results)
                .map(|(&(white, black), &result)| Game {
                    white,
                    black,
                    result,
                })
                .collect(),
            byes: self
                .bye
                .map(|player| Bye {
                    player,
                    kind: ByeKind::PairingAllocated,
                })
                .into_iter()
                .collect(),
        }
    }
}

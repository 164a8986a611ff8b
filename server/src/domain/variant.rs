//! The rules a game is played by ([`Variant`]): standard chess or Chess960
//! (issue 40), and what the variant decides about a game that is not the
//! engine's business: its keys and names on the wire, how its moves are
//! spelled in UCI, where a new game of it may start, and whether such a
//! start is fair enough to be rated.
//!
//! The engine plays both with one set of rules (castling is Chess960's,
//! the standard game its case of a king on e1 and rooks on a1 and h1); what
//! the variant changes is the UCI spelling of castling (king takes rook in
//! Chess960, as the UCI convention and lichess's API have it), which the
//! engine keeps as the position's [`CastlingMode`]. A FEN does not carry
//! it, so the variant is stored with the game.

use rookery_engine::{chess960_start_number, CastlingMode, Game, Position};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The number of Chess960 start positions (numbered 0..960; 518 is the
/// standard one).
pub const CHESS960_STARTS: u32 = 960;

/// The rules a game is played by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    #[default]
    Standard,
    Chess960,
}

impl Variant {
    /// The key the contract and lichess's API spell (`standard`, `chess960`).
    pub fn key(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Chess960 => "chess960",
        }
    }

    /// The name shown to people (lichess's `name`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Standard => "Standard",
            Variant::Chess960 => "Chess960",
        }
    }

    /// lichess's `short` name.
    pub fn short(self) -> &'static str {
        match self {
            Variant::Standard => "Std",
            Variant::Chess960 => "960",
        }
    }

    pub fn parse(key: &str) -> Option<Variant> {
        match key {
            "standard" => Some(Variant::Standard),
            "chess960" => Some(Variant::Chess960),
            _ => None,
        }
    }

    /// How the engine spells this variant's castling in UCI: the king's two
    /// squares in standard chess (`e1g1`), king takes rook in Chess960
    /// (`e1h1`, `b1a1`), where the king's two squares can be a king step.
    pub fn castling_mode(self) -> CastlingMode {
        match self {
            Variant::Standard => CastlingMode::Standard,
            Variant::Chess960 => CastlingMode::Chess960,
        }
    }

    /// The variant of an engine game (its castling mode).
    pub fn of(game: &Game) -> Variant {
        if game.is_chess960() {
            Variant::Chess960
        } else {
            Variant::Standard
        }
    }

    /// Whether a game of this variant from `start` (moves not yet played)
    /// may count on the scoreboard: it starts where every game of the
    /// variant may start, so neither side was handed anything. Standard:
    /// the standard position; Chess960: one of the 960 start positions.
    pub fn is_fair_start(self, start: &Position) -> bool {
        match self {
            Variant::Standard => start.to_fen() == Position::startpos().to_fen(),
            Variant::Chess960 => chess960_start_number(start).is_some(),
        }
    }
}

/// A Chess960 start number drawn at random, each of the 960 alike.
///
/// It takes its randomness from a version-4 UUID (122 random bits from the
/// OS, as every game id is made): the remainder's bias is below 2^-112,
/// and a server without a random source could not make the game's id
/// either.
pub fn random_chess960_start() -> u32 {
    (Uuid::new_v4().as_u128() % u128::from(CHESS960_STARTS)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rookery_engine::chess960_start;

    #[test]
    fn keys_round_trip_and_fair_starts_are_recognised() {
        for variant in [Variant::Standard, Variant::Chess960] {
            assert_eq!(Variant::parse(variant.key()), Some(variant));
        }
        assert_eq!(Variant::parse("atomic"), None);
        let start = chess960_start(0).unwrap();
        assert!(Variant::Chess960.is_fair_start(&start));
        assert!(!Variant::Standard.is_fair_start(&start));
        assert!(Variant::Standard.is_fair_start(&Position::startpos()));
        let moved = start.play(start.parse_uci("e2e4").unwrap()).unwrap();
        assert!(!Variant::Chess960.is_fair_start(&moved));
        assert!((0..50).all(|_| random_chess960_start() < CHESS960_STARTS));
    }
}

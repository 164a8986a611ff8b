//! A game: the start position, the moves played (in UCI and SAN), the hash of
//! every position reached, and the automatic endings decided from them.
//!
//! The game is the referee's memory. A position alone cannot tell a
//! threefold repetition; the list of Zobrist hashes can. Hashes equal only
//! when placement, side to move, castling rights and a *legal* en-passant
//! capture agree (see [`Position::ep_square`]), which is exactly FIDE's
//! definition of "the same position" (article 9.2).
//!
//! [`Game::play`] does not refuse moves after an automatic draw (threefold,
//! fifty moves, insufficient material): PGN files from over-the-board play
//! legitimately continue past an unclaimed repetition, so reading them must
//! work. A host that ends games automatically (the server) checks
//! [`Game::outcome`] before accepting a move.

use std::fmt;
use std::str::FromStr;

use crate::fen::FenError;
use crate::moves::Move;
use crate::position::{CastlingMode, IllegalMoveError, Position, UciMoveError};
use crate::san::SanError;
use crate::types::Color;

/// How a game ended. [`Game::outcome`] produces only the automatic endings
/// (the first five); a host adds the others from what players do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Termination {
    Checkmate,
    Stalemate,
    InsufficientMaterial,
    ThreefoldRepetition,
    FiftyMoves,
    Resignation,
    Timeout,
    Agreement,
    Aborted,
}

impl Termination {
    pub const ALL: [Termination; 9] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::InsufficientMaterial,
        Termination::ThreefoldRepetition,
        Termination::FiftyMoves,
        Termination::Resignation,
        Termination::Timeout,
        Termination::Agreement,
        Termination::Aborted,
    ];

    /// The API's snake_case name (`"threefold_repetition"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::InsufficientMaterial => "insufficient_material",
            Termination::ThreefoldRepetition => "threefold_repetition",
            Termination::FiftyMoves => "fifty_moves",
            Termination::Resignation => "resignation",
            Termination::Timeout => "timeout",
            Termination::Agreement => "agreement",
            Termination::Aborted => "aborted",
        }
    }

    /// Parses an API name (the inverse of [`Termination::as_str`]).
    pub fn parse(name: &str) -> Option<Termination> {
        Termination::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown termination name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown termination {0:?}")]
pub struct UnknownTermination(pub String);

impl FromStr for Termination {
    type Err = UnknownTermination;
    fn from_str(name: &str) -> Result<Termination, UnknownTermination> {
        Termination::parse(name).ok_or_else(|| UnknownTermination(crate::text::excerpt(name)))
    }
}

/// The end of a game: who won (`None` for a draw) and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub winner: Option<Color>,
    pub termination: Termination,
}

impl Outcome {
    pub const fn win(winner: Color, termination: Termination) -> Outcome {
        Outcome {
            winner: Some(winner),
            termination,
        }
    }

    pub const fn draw(termination: Termination) -> Outcome {
        Outcome {
            winner: None,
            termination,
        }
    }

    /// The PGN result: `"1-0"`, `"0-1"` or `"1/2-1/2"`.
    pub const fn result(&self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }
}

/// A game from a start position, with its full history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    initial: Position,
    position: Position,
    moves: Vec<Move>,
    san: Vec<String>,
    /// `hashes[i]` is the hash after `i` moves; one more entry than `moves`.
    hashes: Vec<u64>,
}

impl Default for Game {
    fn default() -> Game {
        Game::new(Position::startpos())
    }
}

impl Game {
    pub fn new(initial: Position) -> Game {
        Game {
            hashes: vec![initial.hash()],
            position: initial.clone(),
            initial,
            moves: Vec::new(),
            san: Vec::new(),
        }
    }

    pub fn from_fen(fen: &str) -> Result<Game, FenError> {
        Ok(Game::new(Position::from_fen(fen)?))
    }

    pub fn initial_position(&self) -> &Position {
        &self.initial
    }

    /// Is this a Chess960 game (castling written king-takes-rook in UCI)?
    /// The mode comes from the initial position (see
    /// [`Position::castling_mode`]); a Chess960 game starts from
    /// [`crate::chess960_start`] or a position given that mode.
    pub fn is_chess960(&self) -> bool {
        self.initial.is_chess960()
    }

    /// Sets how this game's castling moves are written and read in UCI,
    /// for the initial and the current position alike.
    pub fn set_castling_mode(&mut self, mode: CastlingMode) {
        self.initial.set_castling_mode(mode);
        self.position.set_castling_mode(mode);
    }

    /// The moves in UCI notation, each spelled in the position it was
    /// played from in the game's castling mode ([`Position::uci`]):
    /// castling `e1g1` in a standard game, king-takes-rook in Chess960.
    pub fn uci_moves(&self) -> Vec<String> {
        let mut position = self.initial.clone();
        self.moves
            .iter()
            .map(|&mv| {
                let uci = position.uci(mv);
                position.play_unchecked(mv);
                uci
            })
            .collect()
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The SAN of each move, written in the position it was played from.
    pub fn san_moves(&self) -> &[String] {
        &self.san
    }

    /// Zobrist hashes of every position from the initial one to the current
    /// one, inclusive.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Plays `mv` if it is legal in the current position; otherwise nothing
    /// changes.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMoveError> {
        let next = self.position.play(mv)?;
        self.san.push(self.position.san(mv));
        self.moves.push(mv);
        self.hashes.push(next.hash());
        self.position = next;
        Ok(())
    }

    /// Plays a move given in UCI notation; returns it. Castling reads as
    /// [`Position::parse_uci`] says: king-takes-rook (`e1h1`) always, the
    /// king's move to its square (`e1g1`) where that is no king step.
    pub fn play_uci(&mut self, uci: &str) -> Result<Move, UciMoveError> {
        let mv = self.position.parse_uci(uci)?;
        self.play(mv)
            .map_err(|_| UciMoveError::Illegal(uci.to_string()))?;
        Ok(mv)
    }

    /// Plays a move given in SAN; returns it.
    pub fn play_san(&mut self, san: &str) -> Result<Move, SanError> {
        let mv = self.position.parse_san(san)?;
        self.play(mv)
            .map_err(|_| SanError::Illegal(crate::text::excerpt(san)))?;
        Ok(mv)
    }

    /// How many times the current position has occurred in this game,
    /// counting itself.
    ///
    /// Only positions since the last capture or pawn move can repeat it
    /// (those are irreversible, and so are castling-right changes, which the
    /// hash includes), and only those with the same side to move: so the
    /// search steps back two plies at a time within the fifty-move window.
    pub fn repetition_count(&self) -> usize {
        let current = self.position.hash();
        let window = (self.position.halfmove_clock() as usize).min(self.hashes.len() - 1);
        self.hashes
            .iter()
            .rev()
            .take(window + 1)
            .step_by(2)
            .filter(|&&h| h == current)
            .count()
    }

    /// The automatic ending of the game, if it has ended. Precedence:
    /// checkmate or stalemate, then insufficient material, then threefold
    /// repetition, then the fifty-move rule. A move that mates while
    /// completing the fifty moves wins (FIDE 9.6.2).
    pub fn outcome(&self) -> Option<Outcome> {
        let pos = &self.position;
        if !pos.has_legal_moves() {
            return Some(if pos.is_check() {
                Outcome::win(!pos.turn(), Termination::Checkmate)
            } else {
                Outcome::draw(Termination::Stalemate)
            });
        }
        if pos.is_insufficient_material() {
            return Some(Outcome::draw(Termination::InsufficientMaterial));
        }
        if self.repetition_count() >= 3 {
            return Some(Outcome::draw(Termination::ThreefoldRepetition));
        }
        if pos.halfmove_clock() >= 100 {
            return Some(Outcome::draw(Termination::FiftyMoves));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play_all(game: &mut Game, moves: &str) {
        for uci in moves.split_whitespace() {
            game.play_uci(uci).unwrap_or_else(|e| panic!("{uci}: {e}"));
        }
    }

    #[test]
    fn records_history() {
        let mut game = Game::default();
        play_all(&mut game, "e2e4 e7e5 g1f3");
        assert_eq!(game.san_moves(), ["e4", "e5", "Nf3"]);
        assert_eq!(game.moves().len(), 3);
        assert_eq!(game.hashes().len(), 4);
        assert_eq!(game.hashes()[0], Position::startpos().hash());
        assert_eq!(*game.hashes().last().unwrap(), game.position().hash());
        assert_eq!(game.outcome(), None);
    }

    #[test]
    fn illegal_moves_change_nothing() {
        let mut game = Game::default();
        let before = game.clone();
        assert!(game.play_uci("e2e5").is_err());
        assert!(game.play_uci("zz").is_err());
        assert!(game.play_san("Nf4").is_err());
        assert_eq!(game, before);
    }

    #[test]
    fn fools_mate() {
        let mut game = Game::default();
        play_all(&mut game, "f2f3 e7e5 g2g4 d8h4");
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome, Outcome::win(Color::Black, Termination::Checkmate));
        assert_eq!(outcome.result(), "0-1");
        assert_eq!(game.san_moves().last().unwrap(), "Qh4#");
    }

    #[test]
    fn stalemate() {
        let mut game = Game::from_fen("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1").unwrap();
        play_all(&mut game, "f1f6");
        assert!(game.outcome().is_none(), "a check, not stalemate");
        let mut game = Game::from_fen("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1").unwrap();
        play_all(&mut game, "f1f7");
        assert_eq!(game.outcome(), Some(Outcome::draw(Termination::Stalemate)));
    }

    #[test]
    fn threefold_counts_positions_not_moves() {
        let mut game = Game::default();
        // Knights out and back twice: the start position occurs three times.
        play_all(&mut game, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1");
        // Ng1 against Nf6 with black to move, seen after plies 3 and 7.
        assert_eq!(game.repetition_count(), 2);
        assert!(game.outcome().is_none());
        play_all(&mut game, "f6g8");
        assert_eq!(game.repetition_count(), 3);
        assert_eq!(
            game.outcome(),
            Some(Outcome::draw(Termination::ThreefoldRepetition))
        );
        assert_eq!(game.outcome().unwrap().result(), "1/2-1/2");
    }

    #[test]
    fn lost_castling_rights_make_a_different_position() {
        let mut game =
            Game::from_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1").unwrap();
        // The king walks out and back: same placement, but rights are gone.
        play_all(&mut game, "e1f1 e8f8 f1e1 f8e8 e1f1 e8f8 f1e1 f8e8");
        assert_eq!(game.repetition_count(), 2);
        play_all(&mut game, "e1f1 e8f8 f1e1 f8e8");
        assert_eq!(game.repetition_count(), 3);
    }

    #[test]
    fn fifty_moves_and_mate_on_the_hundredth_ply() {
        let mut game = Game::from_fen("7k/8/8/8/8/8/R7/K7 w - - 99 80").unwrap();
        play_all(&mut game, "a2b2");
        assert_eq!(game.outcome(), Some(Outcome::draw(Termination::FiftyMoves)));
        let mut game = Game::from_fen("7k/8/6K1/8/8/8/8/R7 w - - 99 80").unwrap();
        play_all(&mut game, "a1a8");
        assert_eq!(
            game.outcome(),
            Some(Outcome::win(Color::White, Termination::Checkmate))
        );
    }

    #[test]
    fn insufficient_material_beats_repetition_and_fifty() {
        let mut game = Game::from_fen("7k/8/8/8/8/8/8/K6N w - - 120 80").unwrap();
        play_all(&mut game, "a1b1");
        assert_eq!(
            game.outcome(),
            Some(Outcome::draw(Termination::InsufficientMaterial))
        );
    }

    #[test]
    fn termination_names_round_trip() {
        for t in Termination::ALL {
            assert_eq!(t.as_str().parse::<Termination>(), Ok(t));
        }
        assert!("resigned".parse::<Termination>().is_err());
    }
}

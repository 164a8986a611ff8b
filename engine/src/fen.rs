//! FEN (Forsyth–Edwards Notation): strict parsing and writing.
//!
//! Parsing refuses anything that is not a position a legal game could be in
//! as far as cheap checks can tell: the server takes FENs from users and the
//! move generator relies on these invariants (one king each, no pawns on the
//! back ranks, the side not to move is not in check, castling rights match
//! the pieces, the en-passant square is consistent).

use thiserror::Error;

use crate::bitboard::Bitboard;
use crate::position::{CastlingRights, Position};
use crate::text::excerpt;
use crate::types::{Color, Piece, Role, Square};

pub const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FenError {
    #[error("a FEN has 6 space-separated fields, found {0}")]
    FieldCount(usize),
    #[error("bad piece placement {0:?}")]
    Placement(String),
    #[error("bad side to move {0:?} (expected w or b)")]
    Turn(String),
    #[error("bad castling rights {0:?}")]
    Castling(String),
    #[error("bad en-passant square {0:?}")]
    EnPassant(String),
    #[error("bad move counter {0:?}")]
    Counter(String),
    #[error("{0} must have exactly one king")]
    Kings(Color),
    #[error("pawns on the first or last rank")]
    PawnsOnBackRank,
    #[error("too many pieces for {0}")]
    TooManyPieces(Color),
    #[error("the side not to move is in check")]
    OppositeCheck,
    #[error("the side to move is in a check no legal move could give")]
    ImpossibleCheck,
}

impl Position {
    /// Parses a FEN with all six fields.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
        if fields.len() != 6 {
            return Err(FenError::FieldCount(fields.len()));
        }
        let mut pos = Position::empty();
        parse_placement(&mut pos, fields[0])?;

        pos.turn = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(FenError::Turn(excerpt(other))),
        };

        for color in Color::ALL {
            if pos.pieces(color, Role::King).count() != 1 {
                return Err(FenError::Kings(color));
            }
            let pieces = pos.by_color(color);
            if pieces.count() > 16 || (pieces & pos.by_role(Role::Pawn)).count() > 8 {
                return Err(FenError::TooManyPieces(color));
            }
        }
        if (pos.by_role(Role::Pawn) & (Bitboard::rank(0) | Bitboard::rank(7))).any() {
            return Err(FenError::PawnsOnBackRank);
        }
        let them = !pos.turn;
        if pos.is_attacked(pos.king(them), pos.turn, pos.occupied()) {
            return Err(FenError::OppositeCheck);
        }
        if is_impossible_check(&pos) {
            return Err(FenError::ImpossibleCheck);
        }

        pos.castling = parse_castling(&pos, fields[2])?;

        // Any counter a game can reach is accepted: play only ever adds one
        // (saturating, see `play_unchecked`), so whatever position play
        // reaches from a FEN this reads writes a FEN this reads back. (An
        // upper bound here, say 10,000, was broken by the very next move.)
        let halfmove_clock = fields[4]
            .parse::<u32>()
            .ok()
            .ok_or_else(|| FenError::Counter(excerpt(fields[4])))?;
        let fullmove_number = fields[5]
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| FenError::Counter(excerpt(fields[5])))?;
        pos.halfmove_clock = halfmove_clock;
        pos.fullmove_number = fullmove_number;

        pos.hash = pos.compute_hash();
        if fields[3] != "-" {
            let ep = parse_en_passant(&pos, fields[3])?;
            if !check_explained_by_double_step(&pos, ep) {
                return Err(FenError::ImpossibleCheck);
            }
            pos.set_ep_if_capturable(ep);
        }
        Ok(pos)
    }

    /// Writes the FEN. The en-passant field names a square only when an
    /// en-passant capture is legal (as lichess and python-chess's "legal" mode).
    ///
    /// Castling rights are written in X-FEN, in either castling mode:
    /// `K`/`Q`/`k`/`q` for a rook that is the outermost of its colour on
    /// its back rank (always so in the standard game, and at every Chess960
    /// start, so start positions read `KQkq` as lichess writes them), the
    /// rook's file letter where another rook stands further out (`Gkq`:
    /// White's g-file rook may castle, not the one on h1). White before
    /// Black, king side before queen side. The reader takes this, plain
    /// FEN and Shredder-FEN (`HAha`, `HFhf`).
    pub fn to_fen(&self) -> String {
        let mut fen = String::with_capacity(90);
        push_placement(&mut fen, |sq| self.piece_at(sq));
        fen.push(' ');
        fen.push(self.turn.fen_char());
        fen.push(' ');
        push_castling(&mut fen, self);
        fen.push(' ');
        match self.ep_square {
            Some(sq) => fen.push_str(&sq.to_string()),
            None => fen.push('-'),
        }
        fen.push_str(&format!(
            " {} {}",
            self.halfmove_clock, self.fullmove_number
        ));
        fen
    }
}

/// Writes the castling field (see [`Position::to_fen`]).
fn push_castling(fen: &mut String, pos: &Position) {
    if pos.castling_rights().is_empty() {
        fen.push('-');
        return;
    }
    for color in Color::ALL {
        let rooks = pos.pieces(color, Role::Rook) & Bitboard::rank(color.fold(0, 7));
        for kingside in [true, false] {
            let Some(rook) = pos.castling_rook(color, kingside) else {
                continue;
            };
            let outermost = if kingside {
                rooks.last() == Some(rook)
            } else {
                rooks.first() == Some(rook)
            };
            let letter = match (outermost, kingside) {
                (true, true) => 'K',
                (true, false) => 'Q',
                (false, _) => rook.file_char().to_ascii_uppercase(),
            };
            fen.push(match color {
                Color::White => letter,
                Color::Black => letter.to_ascii_lowercase(),
            });
        }
    }
}

/// Writes a FEN's piece placement (rank 8 first) of the board `piece_at`
/// describes.
pub(crate) fn push_placement(fen: &mut String, piece_at: impl Fn(Square) -> Option<Piece>) {
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match piece_at(Square::new(rank * 8 + file)) {
                Some(piece) => {
                    if empty > 0 {
                        fen.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    fen.push(piece.fen_char());
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            fen.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            fen.push('/');
        }
    }
}

fn parse_placement(pos: &mut Position, placement: &str) -> Result<(), FenError> {
    let bad = || FenError::Placement(excerpt(placement));
    let ranks: Vec<&str> = placement.split('/').collect();
    if ranks.len() != 8 {
        return Err(bad());
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8;
        let mut file = 0u8;
        for c in rank_text.chars() {
            if let Some(skip) = c.to_digit(10) {
                if !(1..=8).contains(&skip) {
                    return Err(bad());
                }
                file += skip as u8;
            } else {
                let piece = Piece::from_fen_char(c).ok_or_else(bad)?;
                let sq = Square::from_coords(file, rank).ok_or_else(bad)?;
                pos.put(piece, sq);
                file += 1;
            }
            if file > 8 {
                return Err(bad());
            }
        }
        if file != 8 {
            return Err(bad());
        }
    }
    Ok(())
}

/// Reads the castling field in X-FEN or Shredder-FEN, or a mix: `K`/`Q`
/// (`k`/`q`) name the outermost rook of that side of the king, a file
/// letter (`A`–`H` for White, `a`–`h` for Black) names the rook on that
/// file of the back rank. Each right needs the king on its back rank and
/// the rook there; one right per side of the king; no letter twice.
fn parse_castling(pos: &Position, text: &str) -> Result<CastlingRights, FenError> {
    let bad = || FenError::Castling(excerpt(text));
    if text == "-" {
        return Ok(CastlingRights::NONE);
    }
    let mut rights = CastlingRights::NONE;
    for c in text.chars() {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let back = color.fold(0, 7);
        let king = pos.king(color);
        if king.rank() != back {
            return Err(bad());
        }
        let rooks = pos.pieces(color, Role::Rook) & Bitboard::rank(back);
        let rook = match c.to_ascii_lowercase() {
            // The outermost rook: the last one towards the h-file, or the
            // first one towards the a-file.
            'k' => rooks.filter(|sq| sq.file() > king.file()).last(),
            'q' => rooks.into_iter().find(|sq| sq.file() < king.file()),
            file @ 'a'..='h' => {
                Square::from_coords(file as u8 - b'a', back).filter(|&sq| rooks.contains(sq))
            }
            _ => None,
        }
        .ok_or_else(bad)?;
        // One right per side of the king (this also refuses a letter
        // given twice).
        let king_file = u16::from(king.file());
        let side: u8 = if rook.file() > king.file() {
            !((2u16 << king_file) - 1) as u8
        } else {
            ((1u16 << king_file) - 1) as u8
        };
        if rights.rook_files(color) & side != 0 {
            return Err(bad());
        }
        rights = rights.with_rook(rook);
    }
    Ok(rights)
}

/// Checks that the en-passant square fits a double push just made by the side
/// not to move: on the right rank, empty, with the pushed pawn in front and
/// the square it came from empty.
fn parse_en_passant(pos: &Position, text: &str) -> Result<Square, FenError> {
    let bad = || FenError::EnPassant(excerpt(text));
    let sq = Square::from_name(text).ok_or_else(bad)?;
    let us = pos.turn;
    let them = !us;
    if sq.relative_rank(us) != 5 {
        return Err(bad());
    }
    let forward = us.fold(1, -1);
    let pushed = sq.offset(0, -forward).ok_or_else(bad)?;
    let origin = sq.offset(0, forward).ok_or_else(bad)?;
    if pos.occupied().contains(sq)
        || pos.occupied().contains(origin)
        || pos.piece_at(pushed) != Some(Piece::new(them, Role::Pawn))
    {
        return Err(bad());
    }
    Ok(sq)
}

/// An en-passant square says the last move was a pawn's double step, so
/// any check on the side to move must come from that move: the pawn itself,
/// or a slider whose line to the king ran through the square the pawn left.
/// (A line through the square it skipped was open before the move too.)
fn check_explained_by_double_step(pos: &Position, ep: Square) -> bool {
    let us = pos.turn;
    let (Some(pushed), Some(origin)) = (ep.offset(0, us.fold(-1, 1)), ep.offset(0, us.fold(1, -1)))
    else {
        return false;
    };
    let king = pos.king(us);
    pos.checkers()
        .all(|checker| checker == pushed || crate::attacks::between(king, checker).contains(origin))
}

/// A move gives at most two checks: one by the moved piece and one it
/// discovers, and a discovered check always comes from a slider. Two
/// checkers on one line through the king cannot arise either: neither piece
/// could have been blocking the other's ray. (The move generator would cope
/// with such positions; refusing them keeps FENs to reachable positions.)
fn is_impossible_check(pos: &Position) -> bool {
    let checkers = pos.checkers();
    if checkers.count() > 2 {
        return true;
    }
    if !checkers.more_than_one() {
        return false;
    }
    let sliders = pos.by_role(Role::Bishop) | pos.by_role(Role::Rook) | pos.by_role(Role::Queen);
    let mut pair = checkers;
    let (Some(a), Some(b)) = (pair.next(), pair.next()) else {
        return false;
    };
    (checkers & sliders).is_empty() || crate::attacks::line(a, b).contains(pos.king(pos.turn))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for fen in [
            STARTPOS,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ] {
            assert_eq!(Position::from_fen(fen).unwrap().to_fen(), fen);
        }
    }

    #[test]
    fn en_passant_square_only_when_capturable() {
        // After 1. e4 no black pawn can take en passant: the field is dropped.
        let pos = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
            .unwrap();
        assert_eq!(pos.ep_square(), None);
        assert!(pos.to_fen().contains(" b KQkq - "));
    }

    #[test]
    fn accepts_possible_double_checks() {
        // Knight check plus a discovered rook check (after Nd3+ from e5, say).
        assert!(Position::from_fen("4k3/8/8/8/8/3n4/8/4K2r w - - 0 1").is_ok());
        assert!(Position::from_fen("4k3/8/8/8/1b6/3n4/8/4K3 w - - 0 1").is_ok());
    }

    #[test]
    fn en_passant_square_must_explain_the_check() {
        // After c2-c4 the bishop on a1 cannot have been checking through c3.
        let fen = "8/8/1p3k2/3r1P2/1pP2N2/n6p/8/B6K b - c3 0 1";
        assert_eq!(Position::from_fen(fen), Err(FenError::ImpossibleCheck));
        // A check discovered through c2, or given by the pawn, is fine.
        assert!(Position::from_fen("8/8/8/8/1pP5/8/8/K1R1k3 b - c3 0 1").is_err());
        assert!(Position::from_fen("8/8/8/8/1pP5/8/R3k3/K7 b - c3 0 1").is_ok());
        assert!(Position::from_fen("8/8/8/3k4/1pP5/8/8/K7 b - c3 0 1").is_ok());
    }

    #[test]
    fn positions_from_play_read_back_at_any_counter() {
        // Found by the `fen` fuzz target: the reader used to cap the
        // counters (10,000 and 100,000), so one move from a FEN it accepted
        // gave a FEN it refused; at u32::MAX the increment overflowed.
        for fen in [
            "4k3/8/8/8/8/8/8/4K3 w - - 10000 1",
            "4k3/8/8/8/8/8/8/4K3 b - - 0 100000",
            "4k3/8/8/8/8/8/8/4K3 b - - 4294967295 4294967295",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            for &mv in &pos.legal_moves() {
                let next = pos.play(mv).unwrap();
                assert_eq!(Position::from_fen(&next.to_fen()), Ok(next), "{fen} {mv}");
            }
        }
        let saturated =
            Position::from_fen("4k3/8/8/8/8/8/8/4K3 b - - 4294967295 4294967295").unwrap();
        let mv = saturated.parse_uci("e8d8").unwrap();
        assert!(saturated
            .play(mv)
            .unwrap()
            .to_fen()
            .ends_with(" 4294967295 4294967295"));
        assert!(Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 4294967296 1").is_err());
    }

    #[test]
    fn rejects_impossible_positions() {
        let cases = [
            ("", FenError::FieldCount(0)),
            ("8/8/8/8/8/8/8/8 w - - 0 1", FenError::Kings(Color::White)),
            (
                "4k3/8/8/8/8/8/8/3KK3 w - - 0 1",
                FenError::Kings(Color::White),
            ),
            ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", FenError::PawnsOnBackRank),
            ("4k3/8/8/8/8/8/4Q3/4K3 w - - 0 1", FenError::OppositeCheck),
            // Three checkers; two knights; two rooks on one line.
            (
                "4k3/8/8/8/8/3n1n2/4q3/4K3 w - - 0 1",
                FenError::ImpossibleCheck,
            ),
            (
                "4k3/8/8/8/8/3n1n2/8/4K3 w - - 0 1",
                FenError::ImpossibleCheck,
            ),
            ("4k3/8/8/8/8/8/8/r3K2r w - - 0 1", FenError::ImpossibleCheck),
        ];
        for (fen, expected) in cases {
            assert_eq!(Position::from_fen(fen), Err(expected), "{fen}");
        }
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",
            "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
            "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKkq - 0 1",
        ] {
            assert!(Position::from_fen(fen).is_err(), "{fen}");
        }
    }
}

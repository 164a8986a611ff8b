//! Chess960 start positions by Scharnagl number.
//!
//! The 960 arrangements of the back rank (bishops on opposite colours, the
//! king between the rooks, Black mirroring White) are numbered 0 to 959 as
//! Reinhard Scharnagl did, and as lichess and the Stockfish data in
//! `tests/data/chess960-starts.epd` do; number 518 is the standard start.
//! The number is read as mixed-radix digits: the light-squared bishop's
//! file (4 choices), the dark-squared bishop's (4), the queen's place among
//! the six empty files (6), the knights' places among the five left (10);
//! the last three files take rook, king, rook.

use crate::position::{CastlingMode, Position};
use crate::types::Role;

/// How many Chess960 start positions there are.
pub const CHESS960_STARTS: u32 = 960;

/// The Scharnagl number of the standard start position.
pub const STANDARD_START: u32 = 518;

/// The two knights' places among five empty files, in Scharnagl's order.
const KNIGHTS: [(usize, usize); 10] = [
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (1, 2),
    (1, 3),
    (1, 4),
    (2, 3),
    (2, 4),
    (3, 4),
];

/// White's back rank of start `number` (0..960), a-file first.
fn back_rank(number: u32) -> Option<[Role; 8]> {
    if number >= CHESS960_STARTS {
        return None;
    }
    let mut rank: [Option<Role>; 8] = [None; 8];
    let mut n = number as usize;
    // Light squares of the first rank are b, d, f, h; dark ones a, c, e, g.
    rank[2 * (n % 4) + 1] = Some(Role::Bishop);
    n /= 4;
    rank[2 * (n % 4)] = Some(Role::Bishop);
    n /= 4;
    let empty = |rank: &[Option<Role>; 8]| -> Vec<usize> {
        (0..8).filter(|&f| rank[f].is_none()).collect()
    };
    rank[empty(&rank)[n % 6]] = Some(Role::Queen);
    n /= 6;
    let (first, second) = KNIGHTS[n];
    let free = empty(&rank);
    rank[free[first]] = Some(Role::Knight);
    rank[free[second]] = Some(Role::Knight);
    for (file, role) in empty(&rank)
        .into_iter()
        .zip([Role::Rook, Role::King, Role::Rook])
    {
        rank[file] = Some(role);
    }
    Some(rank.map(|role| role.unwrap_or(Role::Pawn)))
}

/// The FEN of Chess960 start `number` (0..960; 518 is the standard
/// position), castling written `KQkq` as lichess writes it (X-FEN: each
/// right is the outermost rook's).
pub fn chess960_start_fen(number: u32) -> Option<String> {
    let white: String = back_rank(number)?
        .iter()
        .map(|role| role.upper_char())
        .collect();
    Some(format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w KQkq - 0 1",
        white.to_ascii_lowercase()
    ))
}

/// Chess960 start `number` (0..960; 518 is the standard position), in the
/// Chess960 castling mode (castling written king-takes-rook in UCI).
pub fn chess960_start(number: u32) -> Option<Position> {
    let fen = chess960_start_fen(number)?;
    let position = Position::from_fen(&fen).ok()?;
    Some(position.with_castling_mode(CastlingMode::Chess960))
}

/// The Scharnagl number of `position` if it is a Chess960 start position
/// (its pieces, White to move, every castling right, move 1), in either
/// castling mode.
pub fn chess960_start_number(position: &Position) -> Option<u32> {
    let fen = position.to_fen();
    let white_rank = fen.split(['/', ' ']).nth(7)?;
    let mut number = None;
    for n in 0..CHESS960_STARTS {
        let rank: String = back_rank(n)?.iter().map(|r| r.upper_char()).collect();
        if rank == white_rank {
            number = Some(n);
            break;
        }
    }
    let n = number?;
    (chess960_start_fen(n)? == fen).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_numbers() {
        assert_eq!(
            chess960_start_fen(STANDARD_START).as_deref(),
            Some(crate::fen::STARTPOS)
        );
        assert_eq!(
            chess960_start_fen(0).as_deref(),
            Some("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1")
        );
        assert_eq!(chess960_start_fen(960), None);
        let mut ranks: Vec<[Role; 8]> = (0..960).filter_map(back_rank).collect();
        ranks.sort_by_key(|r| r.map(|role| role as u8));
        ranks.dedup();
        assert_eq!(ranks.len(), 960, "every number a different arrangement");
    }
}

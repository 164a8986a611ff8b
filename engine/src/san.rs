//! Standard Algebraic Notation (SAN), the move notation of PGN and of every
//! move list a person reads.
//!
//! Writing is exact: a piece letter, the origin file, rank or both only when
//! another piece of the same kind could also reach the target, `x` for
//! captures, `=Q` for promotions, `O-O`/`O-O-O`, and `+` or `#`.
//!
//! Reading is lenient the way PGN readers are, because PGN files come from
//! many programs: check and mate marks and `!`/`?` annotations are ignored, a
//! missing or superfluous `x` is accepted, castling may be written with zeros,
//! a promotion may omit the `=` (`e8Q`), and a king's move to its castling
//! square (`Kg1`) means castling unless a king step goes there (Chess960). What is never guessed: a move that fits two legal moves
//! is [`SanError::Ambiguous`], not the first one found.

use thiserror::Error;

use crate::bitboard::Bitboard;
use crate::movegen::MoveList;
use crate::moves::Move;
use crate::position::Position;
use crate::text::excerpt;
use crate::types::{Role, Square};

/// Why a SAN string could not be turned into a move.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SanError {
    /// The text is not SAN at all (in any position).
    #[error("not a SAN move: {0:?}")]
    Syntax(String),
    /// Well-formed SAN, but no legal move here fits it.
    #[error("illegal move here: {0}")]
    Illegal(String),
    /// Well-formed SAN that fits more than one legal move here.
    #[error("ambiguous move here: {0}")]
    Ambiguous(String),
}

/// A SAN move as written, before it is matched against the legal moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParsedSan {
    Castle {
        kingside: bool,
    },
    Normal {
        role: Role,
        from_file: Option<u8>,
        from_rank: Option<u8>,
        to: Square,
        promotion: Option<Role>,
    },
}

fn parse_syntax(text: &str) -> Option<ParsedSan> {
    // Annotations and check marks carry no information about the move.
    let core = text.trim_end_matches(['+', '#', '!', '?']);
    if !core.is_ascii() {
        return None;
    }
    match core {
        "O-O" | "0-0" => return Some(ParsedSan::Castle { kingside: true }),
        "O-O-O" | "0-0-0" => return Some(ParsedSan::Castle { kingside: false }),
        _ => {}
    }
    let mut bytes = core.as_bytes();

    // Promotion: `=Q`, or a bare piece letter straight after the rank.
    let mut promotion = None;
    if let [rest @ .., last] = bytes {
        if last.is_ascii_alphabetic() {
            let role = Role::from_char(*last as char).filter(|r| Role::PROMOTIONS.contains(r))?;
            promotion = Some(role);
            bytes = rest.strip_suffix(b"=").unwrap_or(rest);
        }
    }

    let [rest @ .., file @ b'a'..=b'h', rank @ b'1'..=b'8'] = bytes else {
        return None;
    };
    let to = Square::from_coords(file - b'a', rank - b'1')?;
    let rest = rest
        .strip_suffix(b"x")
        .or_else(|| rest.strip_suffix(b":"))
        .or_else(|| rest.strip_suffix(b"-"))
        .unwrap_or(rest);

    let (role, mut rest) = match rest {
        [letter @ (b'N' | b'B' | b'R' | b'Q' | b'K' | b'P'), rest @ ..] => {
            (Role::from_char(*letter as char)?, rest)
        }
        _ => (Role::Pawn, rest),
    };
    let mut from_file = None;
    if let [f @ b'a'..=b'h', tail @ ..] = rest {
        from_file = Some(f - b'a');
        rest = tail;
    }
    let mut from_rank = None;
    if let [r @ b'1'..=b'8', tail @ ..] = rest {
        from_rank = Some(r - b'1');
        rest = tail;
    }
    if !rest.is_empty() {
        return None;
    }
    if promotion.is_some() && (role != Role::Pawn || !matches!(to.rank(), 0 | 7)) {
        return None;
    }
    Some(ParsedSan::Normal {
        role,
        from_file,
        from_rank,
        to,
        promotion,
    })
}

impl Position {
    /// The SAN of `mv`, which should be legal here. An illegal move has no
    /// SAN; it is spelled in UCI notation instead, so that a caller's bug
    /// shows up as odd text rather than a panic.
    pub fn san(&self, mv: Move) -> String {
        let legal = self.legal_moves();
        if !legal.contains(&mv) {
            return mv.to_uci();
        }
        let mut san = String::with_capacity(8);
        let from = mv.from();
        let to = mv.to();
        let role = self.role_at(from).unwrap_or(Role::Pawn);

        if mv.is_castle() {
            san.push_str(if to.file() == 6 { "O-O" } else { "O-O-O" });
        } else if role == Role::Pawn {
            if from.file() != to.file() {
                san.push(from.file_char());
                san.push('x');
            }
            san.push_str(&to.to_string());
            if let Some(promotion) = mv.promotion() {
                san.push('=');
                san.push(promotion.upper_char());
            }
        } else {
            san.push(role.upper_char());
            // Other pieces of the same kind that could also go to `to`.
            let rivals = legal
                .iter()
                .filter(|m| {
                    m.to() == to
                        && m.from() != from
                        && !m.is_castle()
                        && self.role_at(m.from()) == Some(role)
                })
                .fold(Bitboard::EMPTY, |set, m| set.with(m.from()));
            if rivals.any() {
                // The file if it tells them apart, else the rank, else both.
                if (rivals & Bitboard::file(from.file())).is_empty() {
                    san.push(from.file_char());
                } else if (rivals & Bitboard::rank(from.rank())).is_empty() {
                    san.push(from.rank_char());
                } else {
                    san.push(from.file_char());
                    san.push(from.rank_char());
                }
            }
            if self.occupied().contains(to) {
                san.push('x');
            }
            san.push_str(&to.to_string());
        }

        let mut after = self.clone();
        after.play_unchecked(mv);
        if after.is_check() {
            san.push(if after.has_legal_moves() { '+' } else { '#' });
        }
        san
    }

    /// Finds the legal move written in SAN (leniently, see the module docs).
    pub fn parse_san(&self, text: &str) -> Result<Move, SanError> {
        let parsed = parse_syntax(text).ok_or_else(|| SanError::Syntax(excerpt(text)))?;
        let legal = self.legal_moves();
        let matches = |m: Move| match parsed {
            ParsedSan::Castle { kingside } => m.is_castle() && (m.to().file() == 6) == kingside,
            ParsedSan::Normal {
                role,
                from_file,
                from_rank,
                to,
                promotion,
            } => {
                m.to() == to
                    && m.promotion() == promotion
                    && self.role_at(m.from()) == Some(role)
                    && from_rank.is_none_or(|r| m.from().rank() == r)
                    // A pawn move without an origin file is a push: `d6`
                    // never means the en-passant capture `exd6`.
                    && match from_file {
                        Some(f) => m.from().file() == f,
                        None => role != Role::Pawn || m.from().file() == to.file(),
                    }
            }
        };
        // The king's move to its castling square (`Kg1`) means castling only
        // when no king step goes there: in Chess960 one may (king f1, rook
        // h1), and then `Kg1` is that step, and castling is `O-O`.
        let plain = legal
            .iter()
            .copied()
            .filter(|&m| !m.is_castle() && matches(m));
        let mut found = if plain.clone().next().is_some() {
            plain.collect::<MoveList>()
        } else {
            legal.iter().copied().filter(|&m| matches(m)).collect()
        }
        .into_iter();
        match (found.next(), found.next()) {
            (Some(mv), None) => Ok(mv),
            (None, _) => Err(SanError::Illegal(excerpt(text))),
            (Some(_), Some(_)) => Err(SanError::Ambiguous(excerpt(text))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).expect("valid test FEN")
    }

    fn san_of(p: &Position, uci: &str) -> String {
        p.san(p.parse_uci(uci).expect("legal test move"))
    }

    #[test]
    fn writes_basic_moves() {
        let p = Position::startpos();
        assert_eq!(san_of(&p, "e2e4"), "e4");
        assert_eq!(san_of(&p, "g1f3"), "Nf3");
        let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        assert_eq!(san_of(&p, "e1g1"), "O-O");
        assert_eq!(san_of(&p, "e1c1"), "O-O-O");
        assert_eq!(san_of(&p, "a1a8"), "Rxa8+");
    }

    #[test]
    fn disambiguates_by_file_rank_or_both() {
        // Knights on b1 and f1 both reach d2: file.
        let p = pos("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1");
        assert_eq!(san_of(&p, "b1d2"), "Nbd2");
        // Rooks on a1 and a5 both reach a3: rank.
        let p = pos("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1");
        assert_eq!(san_of(&p, "a1a3"), "R1a3");
        // Queens on a1, a3 and c1 all reach b2: a1 needs file and rank.
        let p = pos("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - - 0 1");
        assert_eq!(san_of(&p, "a1b2"), "Qa1b2");
        assert_eq!(san_of(&p, "a3b2"), "Q3b2");
        assert_eq!(san_of(&p, "c1b2"), "Qcb2");
    }

    #[test]
    fn pinned_piece_does_not_force_disambiguation() {
        // The knight on e2 is pinned by the rook on e8, so Nc3 is unique.
        let p = pos("4r1k1/8/8/8/8/8/4N3/1N2K3 w - - 0 1");
        assert_eq!(san_of(&p, "b1c3"), "Nc3");
    }

    #[test]
    fn promotions_captures_and_mate() {
        let p = pos("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
        assert_eq!(san_of(&p, "a7a8q"), "a8=Q");
        assert_eq!(san_of(&p, "a7b8n"), "axb8=N");
        let p = pos("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1");
        assert_eq!(san_of(&p, "a1a8"), "Ra8#");
        let p = pos("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1");
        assert_eq!(san_of(&p, "e5d6"), "exd6");
    }

    #[test]
    fn reads_leniently() {
        let p = pos("r3k2r/8/8/8/8/8/4P3/R3K2R w KQkq - 0 1");
        for text in ["O-O", "0-0", "O-O+", "Kg1", "O-O!?"] {
            assert_eq!(
                p.parse_san(text).map(|m| m.to_uci()),
                Ok("e1g1".into()),
                "{text}"
            );
        }
        assert_eq!(p.parse_san("0-0-0").map(|m| m.to_uci()), Ok("e1c1".into()));
        assert_eq!(p.parse_san("Rxa8").map(|m| m.to_uci()), Ok("a1a8".into()));
        assert_eq!(p.parse_san("Ra8").map(|m| m.to_uci()), Ok("a1a8".into()));
        assert_eq!(p.parse_san("e4").map(|m| m.to_uci()), Ok("e2e4".into()));
        assert_eq!(p.parse_san("e2e4").map(|m| m.to_uci()), Ok("e2e4".into()));
        let p = pos("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
        for (text, uci) in [("a8=Q", "a7a8q"), ("a8Q", "a7a8q"), ("axb8=N+", "a7b8n")] {
            assert_eq!(
                p.parse_san(text).map(|m| m.to_uci()),
                Ok(uci.into()),
                "{text}"
            );
        }
    }

    #[test]
    fn read_errors_are_classified() {
        let p = Position::startpos();
        for text in [
            "", "hello", "e9", "Ze4", "e4e", "Nf3x", "é4", "e8=K", "Ne8=Q",
        ] {
            assert!(
                matches!(p.parse_san(text), Err(SanError::Syntax(_))),
                "{text}"
            );
        }
        for text in ["e5", "Nf4", "O-O", "Ke2", "e8=Q"] {
            assert!(
                matches!(p.parse_san(text), Err(SanError::Illegal(_))),
                "{text}"
            );
        }
        let p = pos("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1");
        assert!(matches!(p.parse_san("Nd2"), Err(SanError::Ambiguous(_))));
        assert!(p.parse_san("Nfd2").is_ok());
        // A promotion needs its piece.
        let p = pos("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
        assert!(matches!(p.parse_san("a8"), Err(SanError::Illegal(_))));
    }
}

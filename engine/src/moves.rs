//! The move type and its UCI spelling.

use std::fmt;

use crate::types::{Role, Square};

/// What kind of move this is beyond its from/to squares.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum MoveKind {
    Normal,
    /// A pawn reaching the last rank, with the role it becomes.
    Promotion(Role),
    /// A pawn capture onto the en-passant square; the captured pawn is beside `to`.
    EnPassant,
    /// Castling, written as the king's two-square move (`e1g1`, as in UCI).
    Castle,
}

/// A move packed into 16 bits: from (6), to (6), kind (2), promotion role (2).
///
/// Packing matters: moves fill move lists, killer slots and every
/// transposition-table entry. `Move::NONE` (a1a1) is never a legal move and
/// stands for "no move" where an `Option` would cost space.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Move(u16);

const KIND_NORMAL: u16 = 0;
const KIND_PROMOTION: u16 = 1;
const KIND_EN_PASSANT: u16 = 2;
const KIND_CASTLE: u16 = 3;

impl Move {
    pub const NONE: Move = Move(0);

    #[inline]
    pub const fn new(from: Square, to: Square, kind: MoveKind) -> Move {
        let (kind_bits, promo_bits) = match kind {
            MoveKind::Normal => (KIND_NORMAL, 0),
            MoveKind::Promotion(role) => (KIND_PROMOTION, (role as u16).wrapping_sub(1) & 3),
            MoveKind::EnPassant => (KIND_EN_PASSANT, 0),
            MoveKind::Castle => (KIND_CASTLE, 0),
        };
        Move(from.index() as u16 | (to.index() as u16) << 6 | kind_bits << 12 | promo_bits << 14)
    }

    #[inline]
    pub const fn normal(from: Square, to: Square) -> Move {
        Move::new(from, to, MoveKind::Normal)
    }

    #[inline]
    pub const fn from(self) -> Square {
        Square::new((self.0 & 63) as u8)
    }

    #[inline]
    pub const fn to(self) -> Square {
        Square::new((self.0 >> 6 & 63) as u8)
    }

    #[inline]
    pub const fn kind(self) -> MoveKind {
        match self.0 >> 12 & 3 {
            KIND_NORMAL => MoveKind::Normal,
            KIND_PROMOTION => MoveKind::Promotion(match self.0 >> 14 {
                0 => Role::Knight,
                1 => Role::Bishop,
                2 => Role::Rook,
                _ => Role::Queen,
            }),
            KIND_EN_PASSANT => MoveKind::EnPassant,
            _ => MoveKind::Castle,
        }
    }

    #[inline]
    pub const fn promotion(self) -> Option<Role> {
        match self.kind() {
            MoveKind::Promotion(role) => Some(role),
            _ => None,
        }
    }

    #[inline]
    pub const fn is_castle(self) -> bool {
        self.0 >> 12 & 3 == KIND_CASTLE
    }

    #[inline]
    pub const fn is_en_passant(self) -> bool {
        self.0 >> 12 & 3 == KIND_EN_PASSANT
    }

    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// The raw 16 bits, for compact storage (transposition tables).
    #[inline]
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    #[inline]
    pub const fn from_bits(bits: u16) -> Move {
        Move(bits)
    }

    /// UCI long algebraic notation: `e2e4`, `e7e8q`, castling as `e1g1`.
    pub fn to_uci(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            return f.write_str("0000");
        }
        write!(f, "{}{}", self.from(), self.to())?;
        if let Some(role) = self.promotion() {
            write!(f, "{}", role.char())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips() {
        for from in Square::all() {
            for to in [Square::A1, Square::E4, Square::H8] {
                for kind in [
                    MoveKind::Normal,
                    MoveKind::EnPassant,
                    MoveKind::Castle,
                    MoveKind::Promotion(Role::Knight),
                    MoveKind::Promotion(Role::Bishop),
                    MoveKind::Promotion(Role::Rook),
                    MoveKind::Promotion(Role::Queen),
                ] {
                    let m = Move::new(from, to, kind);
                    assert_eq!((m.from(), m.to(), m.kind()), (from, to, kind));
                }
            }
        }
    }

    #[test]
    fn uci_spelling() {
        assert_eq!(Move::normal(Square::E2, Square::E4).to_uci(), "e2e4");
        assert_eq!(
            Move::new(Square::E7, Square::E8, MoveKind::Promotion(Role::Queen)).to_uci(),
            "e7e8q"
        );
        assert_eq!(
            Move::new(Square::E1, Square::G1, MoveKind::Castle).to_uci(),
            "e1g1"
        );
    }
}

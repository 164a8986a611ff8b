//! Attack tables: which squares a piece on a square attacks.
//!
//! Leapers (pawn, knight, king) and the `between`/`line` tables are computed
//! at compile time by `const fn`s. Sliders use "fancy" magic bitboards: the
//! occupancy bits that matter for a square are multiplied by a magic number so
//! that their top bits form a perfect index into a shared table. `build.rs`
//! finds the magics and fills the table (see there for why at build time).
//! We chose magics over PEXT so that one portable x86-64 build is fast on
//! every CPU, including AMD parts where PEXT is microcoded and slow.

use crate::bitboard::Bitboard;
#[cfg(test)]
use crate::geometry::sliding_attacks;
use crate::geometry::{offset, BISHOP_DELTAS, ROOK_DELTAS};
use crate::types::{Color, Role, Square};

pub(crate) struct Magic {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: u32,
}

include!(concat!(env!("OUT_DIR"), "/magics.rs"));

const fn leaper_table(deltas: &[(i8, i8)]) -> [Bitboard; 64] {
    let mut table = [Bitboard::EMPTY; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut bits = 0u64;
        let mut d = 0;
        while d < deltas.len() {
            if let Some(target) = offset(sq as u8, deltas[d].0, deltas[d].1) {
                bits |= 1 << target;
            }
            d += 1;
        }
        table[sq] = Bitboard(bits);
        sq += 1;
    }
    table
}

static KNIGHT_ATTACKS: [Bitboard; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);

static KING_ATTACKS: [Bitboard; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);

static PAWN_ATTACKS: [[Bitboard; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

/// For each pair of squares on a common rank, file or diagonal: the squares
/// strictly between them (`BETWEEN`) and the whole line through both,
/// edge to edge (`LINE`). Empty for unaligned pairs.
const fn line_tables() -> ([[Bitboard; 64]; 64], [[Bitboard; 64]; 64]) {
    let mut between = [[Bitboard::EMPTY; 64]; 64];
    let mut line = [[Bitboard::EMPTY; 64]; 64];
    let all_deltas = [ROOK_DELTAS, BISHOP_DELTAS];
    let mut a = 0;
    while a < 64 {
        let mut set = 0;
        while set < 2 {
            let deltas = all_deltas[set];
            let mut d = 0;
            while d < 4 {
                let (df, dr) = deltas[d];
                // The full line through `a` in this direction and its opposite.
                let full = ray(a as u8, df, dr) | ray(a as u8, -df, -dr) | 1 << a;
                let mut gap = 0u64;
                let mut current = a as u8;
                while let Some(b) = offset(current, df, dr) {
                    between[a][b as usize] = Bitboard(gap);
                    line[a][b as usize] = Bitboard(full);
                    gap |= 1 << b;
                    current = b;
                }
                d += 1;
            }
            set += 1;
        }
        a += 1;
    }
    (between, line)
}

const fn ray(sq: u8, df: i8, dr: i8) -> u64 {
    let mut bits = 0u64;
    let mut current = sq;
    while let Some(next) = offset(current, df, dr) {
        bits |= 1 << next;
        current = next;
    }
    bits
}

static LINE_TABLES: ([[Bitboard; 64]; 64], [[Bitboard; 64]; 64]) = line_tables();

#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    KNIGHT_ATTACKS[sq.index()]
}

#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    KING_ATTACKS[sq.index()]
}

/// Squares a `color` pawn on `sq` attacks (captures onto).
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    PAWN_ATTACKS[color.index()][sq.index()]
}

/// Every square some `color` pawn of `pawns` attacks: the whole set
/// shifted diagonally forward, without wrapping round the board's edge.
#[inline]
pub fn pawn_attacks_of_set(color: Color, pawns: Bitboard) -> Bitboard {
    let bits = pawns.0;
    let not_a = !Bitboard::file(0).0;
    let not_h = !Bitboard::file(7).0;
    Bitboard(match color {
        Color::White => ((bits << 9) & not_a) | ((bits << 7) & not_h),
        Color::Black => ((bits >> 7) & not_a) | ((bits >> 9) & not_h),
    })
}

#[inline]
fn magic_lookup(magic: &Magic, occupied: Bitboard) -> Bitboard {
    let index = ((occupied.0 & magic.mask).wrapping_mul(magic.magic) >> magic.shift) as usize;
    // SAFETY-free: the build script sized each slice to `1 << (64 - shift)`, so
    // the index is always in range; the bounds check stays for defence in depth.
    Bitboard(SLIDER_ATTACKS[magic.offset as usize + index])
}

#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGICS[sq.index()], occupied)
}

#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGICS[sq.index()], occupied)
}

#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Attacks of a non-pawn piece of `role` on `sq`.
#[inline]
pub fn piece_attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

/// Squares strictly between `a` and `b` if they share a line, else empty.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    LINE_TABLES.0[a.index()][b.index()]
}

/// The whole line (edge to edge) through `a` and `b` if aligned, else empty.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    LINE_TABLES.1[a.index()][b.index()]
}

/// The slow reference for sliders, for tests.
#[cfg(test)]
pub(crate) fn slow_slider_attacks(role: Role, sq: Square, occupied: Bitboard) -> Bitboard {
    let deltas = if role == Role::Rook {
        &ROOK_DELTAS
    } else {
        &BISHOP_DELTAS
    };
    Bitboard(sliding_attacks(sq.index() as u8, occupied.0, deltas))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magics_agree_with_ray_walking() {
        // A fixed pseudo-random sequence of occupancies per square.
        let mut state = 0x1234_5678_9abc_def1u64;
        for sq in Square::all() {
            for _ in 0..200 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let occ = Bitboard(state & state.rotate_left(17));
                assert_eq!(
                    rook_attacks(sq, occ),
                    slow_slider_attacks(Role::Rook, sq, occ)
                );
                assert_eq!(
                    bishop_attacks(sq, occ),
                    slow_slider_attacks(Role::Bishop, sq, occ)
                );
            }
        }
    }

    #[test]
    fn lines_and_betweens() {
        assert_eq!(
            between(Square::A1, Square::D4),
            Bitboard(0).with(Square::B2).with(Square::C3)
        );
        assert_eq!(between(Square::A1, Square::B3), Bitboard::EMPTY);
        assert!(line(Square::B2, Square::C3).contains(Square::H8));
        assert!(line(Square::B2, Square::C3).contains(Square::A1));
        assert_eq!(line(Square::A1, Square::B3), Bitboard::EMPTY);
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(king_attacks(Square::E4).count(), 8);
        assert_eq!(
            pawn_attacks(Color::White, Square::E4),
            Bitboard(0).with(Square::D5).with(Square::F5)
        );
    }
}

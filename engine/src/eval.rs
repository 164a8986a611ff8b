//! Static evaluation: how good the position is for the side to move, in
//! centipawns, without looking at any moves.
//!
//! Every term is a pair of middlegame and endgame values ([`S`]). The two
//! totals are blended by the game phase (how much non-pawn material is left),
//! so that, say, the king hides in the corner while queens are on and walks
//! to the centre once they are gone, without a cliff between the two.
//!
//! Terms, each in its own function so they can be read and tuned alone:
//! material and piece-square tables, mobility, pawn structure (passed,
//! isolated, doubled), king safety (pawn shield and attackers near the king),
//! bishop pair, rooks on open and half-open files, and a small tempo bonus.
//! The values are hand-set, not tuned; the weights live in named constants.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use crate::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use crate::bitboard::Bitboard;
use crate::position::Position;
use crate::types::{Color, Role, Square};

/// A middlegame/endgame score pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct S(pub i32, pub i32);

impl Add for S {
    type Output = S;
    #[inline]
    fn add(self, o: S) -> S {
        S(self.0 + o.0, self.1 + o.1)
    }
}
impl Sub for S {
    type Output = S;
    #[inline]
    fn sub(self, o: S) -> S {
        S(self.0 - o.0, self.1 - o.1)
    }
}
impl AddAssign for S {
    #[inline]
    fn add_assign(&mut self, o: S) {
        *self = *self + o;
    }
}
impl SubAssign for S {
    #[inline]
    fn sub_assign(&mut self, o: S) {
        *self = *self - o;
    }
}
impl Neg for S {
    type Output = S;
    #[inline]
    fn neg(self) -> S {
        S(-self.0, -self.1)
    }
}
impl Mul<i32> for S {
    type Output = S;
    #[inline]
    fn mul(self, k: i32) -> S {
        S(self.0 * k, self.1 * k)
    }
}

/// Piece values, indexed by [`Role::index`]. The king's is nominal.
pub const MATERIAL: [S; 6] = [
    S(82, 100),
    S(330, 300),
    S(345, 320),
    S(470, 540),
    S(980, 1000),
    S(0, 0),
];

/// Plain piece values for exchange arithmetic (SEE, move ordering, pruning
/// margins), where one number per piece is enough.
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

/// Phase weight of each role; the sum over the starting army is 24.
const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
const MAX_PHASE: i32 = 24;

const BISHOP_PAIR: S = S(28, 52);
const ROOK_OPEN_FILE: S = S(30, 12);
const ROOK_HALF_OPEN_FILE: S = S(14, 8);
const ISOLATED_PAWN: S = S(-10, -14);
const DOUBLED_PAWN: S = S(-8, -22);
const TEMPO: S = S(14, 6);
/// Passed-pawn bonus by rank counted from the pawn's own side.
const PASSED_PAWN: [S; 8] = [
    S(0, 0),
    S(2, 8),
    S(4, 12),
    S(10, 26),
    S(24, 48),
    S(44, 88),
    S(70, 130),
    S(0, 0),
];
/// Mobility: bonus per reachable square beyond a typical count, per role.
const MOBILITY: [(i32, S); 6] = [
    (0, S(0, 0)),
    (4, S(6, 6)),
    (6, S(5, 6)),
    (6, S(2, 5)),
    (12, S(1, 3)),
    (0, S(0, 0)),
];
/// King-zone attack weight per attacking role.
const KING_ATTACK_WEIGHT: [i32; 6] = [0, 2, 2, 3, 5, 0];
/// Pawn shield in front of a castled king (middlegame only).
const SHIELD_NEAR: i32 = 14;
const SHIELD_FAR: i32 = 7;
const SHIELD_MISSING: i32 = -16;

/// Piece-square tables, written as the board is seen by White: the first
/// row is rank 8, the last rank 1. Black uses the same tables mirrored.
#[rustfmt::skip]
const PAWN_MG: [i32; 64] = [
     0,   0,   0,   0,   0,   0,   0,   0,
    55,  65,  55,  65,  65,  55,  65,  55,
    12,  18,  28,  36,  36,  28,  18,  12,
     4,   8,  12,  26,  26,  12,   8,   4,
     0,   2,   8,  22,  22,   6,   2,   0,
     2,   2,   4,   6,   6,   0,   2,   2,
     0,   5,   5, -16, -16,   8,   8,   0,
     0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const PAWN_EG: [i32; 64] = [
     0,   0,   0,   0,   0,   0,   0,   0,
    45,  45,  40,  36,  36,  40,  45,  45,
    26,  26,  22,  18,  18,  22,  26,  26,
    12,  12,   8,   6,   6,   8,  12,  12,
     4,   4,   2,   0,   0,   2,   4,   4,
     0,   0,   0,   0,   0,   0,   0,   0,
     0,   0,   0,   0,   0,   0,   0,   0,
     0,   0,   0,   0,   0,   0,   0,   0,
];
#[rustfmt::skip]
const KNIGHT_MG: [i32; 64] = [
   -60, -25, -20, -15, -15, -20, -25, -60,
   -25, -10,   5,  10,  10,   5, -10, -25,
   -15,   5,  15,  25,  25,  15,   5, -15,
   -10,  10,  20,  28,  28,  20,  10, -10,
   -10,   5,  15,  22,  22,  15,   5, -10,
   -15,   2,  12,  10,  10,  12,   2, -15,
   -25, -12,   0,   5,   5,   0, -12, -25,
   -50, -20, -20, -15, -15, -20, -20, -50,
];
#[rustfmt::skip]
const BISHOP_MG: [i32; 64] = [
   -15,  -5, -10, -10, -10, -10,  -5, -15,
    -8,   5,   0,   0,   0,   0,   5,  -8,
    -5,   8,  10,   8,   8,  10,   8,  -5,
    -5,   5,   8,  15,  15,   8,   5,  -5,
    -5,   8,  10,  15,  15,  10,   8,  -5,
     0,  10,  10,  10,  10,  10,  10,   0,
     0,  15,   8,   5,   5,   8,  15,   0,
   -15,  -5, -12,  -8,  -8, -12,  -5, -15,
];
#[rustfmt::skip]
const ROOK_MG: [i32; 64] = [
    10,  12,  15,  18,  18,  15,  12,  10,
    20,  22,  25,  28,  28,  25,  22,  20,
     0,   5,   5,   8,   8,   5,   5,   0,
    -5,   0,   2,   5,   5,   2,   0,  -5,
   -10,  -5,   0,   2,   2,   0,  -5, -10,
   -12,  -5,   0,   0,   0,   0,  -5, -12,
   -15,  -8,  -2,   0,   0,  -2,  -8, -15,
    -8,  -5,   2,   8,   8,   5,  -5,  -8,
];
#[rustfmt::skip]
const QUEEN_MG: [i32; 64] = [
   -10,  -5,   0,   0,   0,   0,  -5, -10,
    -5,   0,   5,   5,   5,   5,   0,  -5,
    -5,   0,   5,   5,   5,   5,   0,  -5,
    -5,   0,   5,   5,   5,   5,   0,  -5,
    -5,   0,   5,   5,   5,   5,   0,  -5,
    -5,   2,   5,   5,   5,   5,   2,  -5,
   -10,   0,   3,   3,   3,   3,   0, -10,
   -15, -10,  -5,   0,  -5, -10, -10, -15,
];
#[rustfmt::skip]
const KING_MG: [i32; 64] = [
   -60, -60, -60, -60, -60, -60, -60, -60,
   -50, -50, -50, -50, -50, -50, -50, -50,
   -40, -40, -40, -45, -45, -40, -40, -40,
   -35, -35, -40, -45, -45, -40, -35, -35,
   -25, -30, -30, -40, -40, -30, -30, -25,
   -10, -15, -20, -25, -25, -20, -15, -10,
    10,  10,  -5, -20, -20,  -5,  10,  10,
    15,  30,  10, -10,   0, -10,  30,  15,
];

/// Endgame values that depend only on how central a square is: ring 0 is
/// the edge, ring 3 the four centre squares.
const KNIGHT_EG_RING: [i32; 4] = [-35, -10, 5, 15];
const BISHOP_EG_RING: [i32; 4] = [-15, -5, 3, 8];
const ROOK_EG_SEVENTH: i32 = 12;
const QUEEN_EG_RING: [i32; 4] = [-20, -5, 5, 12];
const KING_EG_RING: [i32; 4] = [-40, -10, 10, 25];

const fn ring(sq: usize) -> usize {
    let file = sq % 8;
    let rank = sq / 8;
    let f = if file < 7 - file { file } else { 7 - file };
    let r = if rank < 7 - rank { rank } else { 7 - rank };
    if f < r {
        f
    } else {
        r
    }
}

/// Material plus piece-square value of every (role, square) for White; Black
/// reads the vertically mirrored square. Built at compile time.
const fn build_psqt() -> [[S; 64]; 6] {
    let mut table = [[S(0, 0); 64]; 6];
    let mut sq = 0;
    while sq < 64 {
        // The tables are written rank 8 first: square `sq` is row `sq ^ 56`.
        let row = sq ^ 56;
        let rg = ring(sq);
        let seventh = if sq / 8 == 6 { ROOK_EG_SEVENTH } else { 0 };
        table[0][sq] = S(MATERIAL[0].0 + PAWN_MG[row], MATERIAL[0].1 + PAWN_EG[row]);
        table[1][sq] = S(
            MATERIAL[1].0 + KNIGHT_MG[row],
            MATERIAL[1].1 + KNIGHT_EG_RING[rg],
        );
        table[2][sq] = S(
            MATERIAL[2].0 + BISHOP_MG[row],
            MATERIAL[2].1 + BISHOP_EG_RING[rg],
        );
        table[3][sq] = S(MATERIAL[3].0 + ROOK_MG[row], MATERIAL[3].1 + seventh);
        table[4][sq] = S(
            MATERIAL[4].0 + QUEEN_MG[row],
            MATERIAL[4].1 + QUEEN_EG_RING[rg],
        );
        table[5][sq] = S(KING_MG[row], KING_EG_RING[rg]);
        sq += 1;
    }
    table
}

static PSQT: [[S; 64]; 6] = build_psqt();

/// Squares in front of a pawn on its file and the two neighbouring files:
/// no enemy pawn there means the pawn is passed.
const fn build_passed_masks() -> [[u64; 64]; 2] {
    let mut masks = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let file = (sq % 8) as i32;
        let rank = (sq / 8) as i32;
        let mut other = 0;
        while other < 64 {
            let of = other % 8;
            let or = other / 8;
            if (of - file).abs() <= 1 {
                if or > rank {
                    masks[0][sq] |= 1u64 << other;
                }
                if or < rank {
                    masks[1][sq] |= 1u64 << other;
                }
            }
            other += 1;
        }
        sq += 1;
    }
    masks
}

static PASSED_MASKS: [[u64; 64]; 2] = build_passed_masks();

#[inline]
fn adjacent_files(file: u8) -> Bitboard {
    let mut bb = Bitboard::EMPTY;
    if file > 0 {
        bb |= Bitboard::file(file - 1);
    }
    if file < 7 {
        bb |= Bitboard::file(file + 1);
    }
    bb
}

fn pawn_attack_span(color: Color, pawns: Bitboard) -> Bitboard {
    let bits = pawns.0;
    let not_a = !Bitboard::file(0).0;
    let not_h = !Bitboard::file(7).0;
    Bitboard(match color {
        Color::White => ((bits << 9) & not_a) | ((bits << 7) & not_h),
        Color::Black => ((bits >> 7) & not_a) | ((bits >> 9) & not_h),
    })
}

/// Evaluates `pos` from the side to move's point of view.
pub fn evaluate(pos: &Position) -> i32 {
    let mut score = S(0, 0);
    let mut phase = 0;
    for color in Color::ALL {
        let sign = if color == Color::White { 1 } else { -1 };
        let mut side = S(0, 0);
        for role in Role::ALL {
            for sq in pos.pieces(color, role) {
                let index = match color {
                    Color::White => sq.index(),
                    Color::Black => sq.index() ^ 56,
                };
                side += PSQT[role.index()][index];
                phase += PHASE_WEIGHT[role.index()];
            }
        }
        side += pieces_and_mobility(pos, color);
        side += pawn_structure(pos, color);
        side += king_safety(pos, color);
        score += side * sign;
    }
    score += if pos.turn() == Color::White {
        TEMPO
    } else {
        -TEMPO
    };

    let phase = phase.min(MAX_PHASE);
    let blended = (score.0 * phase + score.1 * (MAX_PHASE - phase)) / MAX_PHASE;
    let white_view = scale_drawish(pos, blended);
    match pos.turn() {
        Color::White => white_view,
        Color::Black => -white_view,
    }
}

/// Mobility, bishop pair and rooks on open files for `color`.
fn pieces_and_mobility(pos: &Position, color: Color) -> S {
    let them = !color;
    let occupied = pos.occupied();
    let own = pos.by_color(color);
    let enemy_pawn_attacks = pawn_attack_span(them, pos.pieces(them, Role::Pawn));
    let area = !own & !enemy_pawn_attacks;
    let own_pawns = pos.pieces(color, Role::Pawn);
    let their_pawns = pos.pieces(them, Role::Pawn);
    let mut s = S(0, 0);

    for (role, attacks_of) in [
        (
            Role::Knight,
            knight_mobility as fn(Square, Bitboard) -> Bitboard,
        ),
        (Role::Bishop, bishop_attacks),
        (Role::Rook, rook_attacks),
        (Role::Queen, queen_mobility),
    ] {
        let (typical, weight) = MOBILITY[role.index()];
        for sq in pos.pieces(color, role) {
            let count = (attacks_of(sq, occupied) & area).count() as i32;
            s += weight * (count - typical);
            if role == Role::Rook {
                let file = Bitboard::file(sq.file());
                if (file & own_pawns).is_empty() {
                    s += if (file & their_pawns).is_empty() {
                        ROOK_OPEN_FILE
                    } else {
                        ROOK_HALF_OPEN_FILE
                    };
                }
            }
        }
    }
    if pos.pieces(color, Role::Bishop).more_than_one() {
        s += BISHOP_PAIR;
    }
    s
}

fn knight_mobility(sq: Square, _occupied: Bitboard) -> Bitboard {
    knight_attacks(sq)
}

fn queen_mobility(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Passed, isolated and doubled pawns of `color`.
fn pawn_structure(pos: &Position, color: Color) -> S {
    let them = !color;
    let own_pawns = pos.pieces(color, Role::Pawn);
    let their_pawns = pos.pieces(them, Role::Pawn);
    let own_king = pos.king(color);
    let their_king = pos.king(them);
    let mut s = S(0, 0);
    for sq in own_pawns {
        let file = sq.file();
        if (adjacent_files(file) & own_pawns).is_empty() {
            s += ISOLATED_PAWN;
        }
        // Count a doubled pair once: penalise the rear pawn only.
        let ahead = Bitboard(PASSED_MASKS[color.index()][sq.index()]) & Bitboard::file(file);
        if (ahead & own_pawns).any() {
            s += DOUBLED_PAWN;
        }
        let passed = (Bitboard(PASSED_MASKS[color.index()][sq.index()]) & their_pawns).is_empty()
            && (ahead & own_pawns).is_empty();
        if passed {
            let rank = sq.relative_rank(color) as usize;
            s += PASSED_PAWN[rank];
            // In the endgame the kings race for the promotion path: a
            // passer far from the enemy king and escorted by its own is
            // worth much more. Scaled by how advanced it is.
            if let Some(stop) = sq.offset(0, color.fold(1, -1)) {
                let scale = rank.saturating_sub(2) as i32;
                let theirs = distance(their_king, stop) as i32;
                let ours = distance(own_king, stop) as i32;
                s += S(0, (theirs * 5 - ours * 2) * scale);
                if (ahead & pos.occupied()).is_empty() {
                    s += S(0, 4 * scale);
                }
            }
        }
    }
    s
}

#[inline]
fn distance(a: Square, b: Square) -> u8 {
    a.file().abs_diff(b.file()).max(a.rank().abs_diff(b.rank()))
}

/// Pawn shield and enemy pieces bearing on the king's surroundings (both
/// middlegame-only: with queens off the king should come out).
fn king_safety(pos: &Position, color: Color) -> S {
    let them = !color;
    let king = pos.king(color);
    let own_pawns = pos.pieces(color, Role::Pawn);
    let mut shield = 0;
    if king.relative_rank(color) <= 1 {
        let forward = color.fold(1, -1);
        for df in -1..=1 {
            let Some(front) = king.offset(df, forward) else {
                continue;
            };
            if own_pawns.contains(front) {
                shield += SHIELD_NEAR;
            } else if front
                .offset(0, forward)
                .is_some_and(|sq| own_pawns.contains(sq))
            {
                shield += SHIELD_FAR;
            } else {
                shield += SHIELD_MISSING;
            }
        }
    }

    let zone = king_attacks(king).with(king);
    let occupied = pos.occupied();
    let mut units = 0;
    let mut attackers = 0;
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for sq in pos.pieces(them, role) {
            let attacks = match role {
                Role::Knight => knight_attacks(sq),
                Role::Bishop => bishop_attacks(sq, occupied),
                Role::Rook => rook_attacks(sq, occupied),
                _ => queen_mobility(sq, occupied),
            };
            let hits = (attacks & zone).count() as i32;
            if hits > 0 {
                attackers += 1;
                units += hits * KING_ATTACK_WEIGHT[role.index()];
            }
        }
    }
    for sq in pos.pieces(them, Role::Pawn) {
        if (pawn_attacks(them, sq) & zone).any() {
            units += 1;
        }
    }
    // One lone attacker is rarely dangerous; several together are, and the
    // danger grows faster than linearly.
    let danger = if attackers >= 2 {
        (units * units * 2).min(600)
    } else {
        0
    };
    S(shield - danger, 0)
}

/// Pulls the score towards a draw when the side ahead cannot realistically
/// win: no pawns and at most a minor piece more.
fn scale_drawish(pos: &Position, white_view: i32) -> i32 {
    let strong = if white_view > 0 {
        Color::White
    } else {
        Color::Black
    };
    if pos.pieces(strong, Role::Pawn).any() {
        return white_view;
    }
    let material = |color: Color| -> i32 {
        [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .into_iter()
            .map(|role| pos.pieces(color, role).count() as i32 * SEE_VALUE[role.index()])
            .sum()
    };
    let diff = material(strong) - material(!strong);
    if diff <= SEE_VALUE[Role::Bishop.index()] {
        white_view / 8
    } else {
        white_view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_fen(fen: &str) -> i32 {
        evaluate(&Position::from_fen(fen).expect("valid FEN"))
    }

    #[test]
    fn start_position_is_roughly_level() {
        let score = eval_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(score.abs() < 40, "{score}");
    }

    #[test]
    fn colour_mirror_gives_the_same_score() {
        // The same position with colours swapped and the board flipped.
        let pairs = [
            (
                "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
                "rnbqk2r/pppp1ppp/5n2/2b1p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 4 4",
            ),
            (
                "8/5k2/3p4/1p1Pp2p/pP2Pp1P/P4P1K/8/8 b - - 99 50",
                "8/8/p4p1k/Pp2pP1p/1P1pP2P/3P4/5K2/8 w - - 99 50",
            ),
        ];
        for (a, b) in pairs {
            assert_eq!(eval_fen(a), eval_fen(b), "{a} vs {b}");
        }
    }

    #[test]
    fn extra_material_counts() {
        // White is a queen up.
        let score = eval_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(score > 700, "{score}");
        let score = eval_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
        assert!(score < -700, "{score}");
    }

    #[test]
    fn lone_minor_piece_is_scored_as_drawish() {
        assert!(eval_fen("8/8/4k3/8/8/3NK3/8/8 w - - 0 1").abs() < 60);
    }

    #[test]
    fn advanced_passed_pawn_is_worth_more() {
        let far = eval_fen("8/4P3/8/8/8/k7/8/4K3 w - - 0 1");
        let near = eval_fen("8/8/8/8/8/k3P3/8/4K3 w - - 0 1");
        assert!(far > near + 50, "{far} vs {near}");
    }
}

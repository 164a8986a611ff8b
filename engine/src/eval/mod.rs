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
//!
//! The weights that enter the score linearly live in one [`Weights`] value,
//! [`weights::WEIGHTS`], in a file the Texel tuner writes
//! (`engine/examples/texel.rs`, recipe in `tools/README.md`); the values
//! there are still the hand-set ones. The few non-linear terms (king
//! danger, the passed pawn's king race, the drawish scaling) keep their
//! constants here. [`EvalTables`] turns weights into the lookup tables the
//! evaluation reads, at compile time for the engine and at run time for
//! the tuner.

mod weights;

pub use weights::WEIGHTS;

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use crate::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, pawn_attacks_of_set, rook_attacks,
};
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

/// Plain piece values for exchange arithmetic (SEE, move ordering, pruning
/// margins), where one number per piece is enough.
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

/// Phase weight of each role; the sum over the starting army is 24.
const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
const MAX_PHASE: i32 = 24;

/// Mobility counts squares beyond a typical number per role, so that an
/// average piece scores about zero and the weight only shapes the slope.
const MOBILITY_TYPICAL: [i32; 6] = [0, 4, 6, 6, 12, 0];
/// King-zone attack weight per attacking role.
const KING_ATTACK_WEIGHT: [i32; 6] = [0, 2, 2, 3, 5, 0];
/// The weights that enter the score linearly: what the Texel tuner fits.
/// Every value is in centipawns; an [`S`] is a middlegame/endgame pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weights {
    /// Piece values by [`Role::index`]; the king's is nominal (always 0).
    pub material: [S; 6],
    /// Piece-square tables, written as the board is seen by White: the
    /// first row is rank 8, the last rank 1. Black reads them mirrored.
    pub pawn_mg: [i32; 64],
    pub pawn_eg: [i32; 64],
    pub knight_mg: [i32; 64],
    pub bishop_mg: [i32; 64],
    pub rook_mg: [i32; 64],
    pub queen_mg: [i32; 64],
    pub king_mg: [i32; 64],
    /// Endgame values that depend only on how central a square is: ring 0
    /// is the edge, ring 3 the four centre squares.
    pub knight_eg_ring: [i32; 4],
    pub bishop_eg_ring: [i32; 4],
    pub queen_eg_ring: [i32; 4],
    pub king_eg_ring: [i32; 4],
    /// A rook on the seventh rank in the endgame.
    pub rook_eg_seventh: i32,
    pub bishop_pair: S,
    pub rook_open_file: S,
    pub rook_half_open_file: S,
    pub isolated_pawn: S,
    pub doubled_pawn: S,
    /// For the side to move.
    pub tempo: S,
    /// Passed-pawn bonus by rank counted from the pawn's own side.
    pub passed_pawn: [S; 8],
    /// Mobility: per reachable square beyond [`MOBILITY_TYPICAL`], per role.
    pub mobility: [S; 6],
    /// Pawn shield in front of a castled king (middlegame only), per file
    /// next to the king: a pawn one square ahead, two ahead, or none.
    pub shield_near: i32,
    pub shield_far: i32,
    pub shield_missing: i32,
}

impl Weights {
    /// Calls `visit` with a name and a mutable reference for every weight,
    /// always in the same order: the tuner's view of the weights as one
    /// vector. Middlegame before endgame within a pair.
    pub fn for_each_mut(&mut self, mut visit: impl FnMut(&'static str, &mut i32)) {
        fn pairs(
            name: &'static str,
            values: &mut [S],
            visit: &mut impl FnMut(&'static str, &mut i32),
        ) {
            for v in values {
                visit(name, &mut v.0);
                visit(name, &mut v.1);
            }
        }
        pairs("material", &mut self.material, &mut visit);
        let singles: [(&'static str, &mut [i32]); 11] = [
            ("pawn_mg", &mut self.pawn_mg),
            ("pawn_eg", &mut self.pawn_eg),
            ("knight_mg", &mut self.knight_mg),
            ("bishop_mg", &mut self.bishop_mg),
            ("rook_mg", &mut self.rook_mg),
            ("queen_mg", &mut self.queen_mg),
            ("king_mg", &mut self.king_mg),
            ("knight_eg_ring", &mut self.knight_eg_ring),
            ("bishop_eg_ring", &mut self.bishop_eg_ring),
            ("queen_eg_ring", &mut self.queen_eg_ring),
            ("king_eg_ring", &mut self.king_eg_ring),
        ];
        for (name, values) in singles {
            for v in values {
                visit(name, v);
            }
        }
        visit("rook_eg_seventh", &mut self.rook_eg_seventh);
        for (name, pair) in [
            ("bishop_pair", &mut self.bishop_pair),
            ("rook_open_file", &mut self.rook_open_file),
            ("rook_half_open_file", &mut self.rook_half_open_file),
            ("isolated_pawn", &mut self.isolated_pawn),
            ("doubled_pawn", &mut self.doubled_pawn),
            ("tempo", &mut self.tempo),
        ] {
            pairs(name, std::slice::from_mut(pair), &mut visit);
        }
        pairs("passed_pawn", &mut self.passed_pawn, &mut visit);
        pairs("mobility", &mut self.mobility, &mut visit);
        visit("shield_near", &mut self.shield_near);
        visit("shield_far", &mut self.shield_far);
        visit("shield_missing", &mut self.shield_missing);
    }

    /// The Rust source of `engine/src/eval/weights.rs` holding these
    /// weights: what the tuner writes. A unit test checks that the file in
    /// the repository is exactly this writer's output for [`WEIGHTS`].
    pub fn to_rust(&self, provenance: &str) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        out.push_str("//! The evaluation's weights (see [`super::Weights`]).\n//!\n");
        for line in provenance.lines() {
            if line.is_empty() {
                out.push_str("//!\n");
            } else {
                let _ = writeln!(out, "//! {line}");
            }
        }
        out.push_str("\nuse super::{Weights, S};\n\n#[rustfmt::skip]\npub const WEIGHTS: Weights = Weights {\n");
        let pairs = |out: &mut String, name: &str, values: &[S]| {
            let items: Vec<String> = values
                .iter()
                .map(|v| format!("S({}, {})", v.0, v.1))
                .collect();
            if values.len() == 1 {
                let _ = writeln!(out, "    {name}: {},", items[0]);
            } else {
                let _ = writeln!(out, "    {name}: [{}],", items.join(", "));
            }
        };
        let table = |out: &mut String, name: &str, values: &[i32]| {
            if values.len() == 64 {
                let _ = writeln!(out, "    {name}: [");
                for row in values.chunks(8) {
                    let cells: Vec<String> = row.iter().map(|v| format!("{v:>4},")).collect();
                    let _ = writeln!(out, "        {}", cells.join(""));
                }
                out.push_str("    ],\n");
            } else {
                let items: Vec<String> = values.iter().map(i32::to_string).collect();
                let _ = writeln!(out, "    {name}: [{}],", items.join(", "));
            }
        };
        pairs(&mut out, "material", &self.material);
        table(&mut out, "pawn_mg", &self.pawn_mg);
        table(&mut out, "pawn_eg", &self.pawn_eg);
        table(&mut out, "knight_mg", &self.knight_mg);
        table(&mut out, "bishop_mg", &self.bishop_mg);
        table(&mut out, "rook_mg", &self.rook_mg);
        table(&mut out, "queen_mg", &self.queen_mg);
        table(&mut out, "king_mg", &self.king_mg);
        table(&mut out, "knight_eg_ring", &self.knight_eg_ring);
        table(&mut out, "bishop_eg_ring", &self.bishop_eg_ring);
        table(&mut out, "queen_eg_ring", &self.queen_eg_ring);
        table(&mut out, "king_eg_ring", &self.king_eg_ring);
        let _ = writeln!(out, "    rook_eg_seventh: {},", self.rook_eg_seventh);
        pairs(&mut out, "bishop_pair", &[self.bishop_pair]);
        pairs(&mut out, "rook_open_file", &[self.rook_open_file]);
        pairs(&mut out, "rook_half_open_file", &[self.rook_half_open_file]);
        pairs(&mut out, "isolated_pawn", &[self.isolated_pawn]);
        pairs(&mut out, "doubled_pawn", &[self.doubled_pawn]);
        pairs(&mut out, "tempo", &[self.tempo]);
        pairs(&mut out, "passed_pawn", &self.passed_pawn);
        pairs(&mut out, "mobility", &self.mobility);
        let _ = writeln!(out, "    shield_near: {},", self.shield_near);
        let _ = writeln!(out, "    shield_far: {},", self.shield_far);
        let _ = writeln!(out, "    shield_missing: {},", self.shield_missing);
        out.push_str("};\n");
        out
    }
}

/// The lookup tables the evaluation reads, built from [`Weights`]: the
/// weights themselves, and material plus piece-square value of every
/// (role, square) for White, merged into one table (Black reads the
/// vertically mirrored square).
pub struct EvalTables {
    weights: Weights,
    psqt: [[S; 64]; 6],
}

impl EvalTables {
    /// A `const fn` so the engine's own tables are built by the compiler.
    pub const fn new(weights: Weights) -> EvalTables {
        let psqt = build_psqt(&weights);
        EvalTables { weights, psqt }
    }

    pub fn weights(&self) -> &Weights {
        &self.weights
    }
}

/// The engine's tables, from [`WEIGHTS`].
static TABLES: EvalTables = EvalTables::new(WEIGHTS);

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

/// Material plus piece-square value of every (role, square) for White.
const fn build_psqt(w: &Weights) -> [[S; 64]; 6] {
    let mut table = [[S(0, 0); 64]; 6];
    let mut sq = 0;
    while sq < 64 {
        // The tables are written rank 8 first: square `sq` is row `sq ^ 56`.
        let row = sq ^ 56;
        let rg = ring(sq);
        let seventh = if sq / 8 == 6 { w.rook_eg_seventh } else { 0 };
        let m = &w.material;
        table[0][sq] = S(m[0].0 + w.pawn_mg[row], m[0].1 + w.pawn_eg[row]);
        table[1][sq] = S(m[1].0 + w.knight_mg[row], m[1].1 + w.knight_eg_ring[rg]);
        table[2][sq] = S(m[2].0 + w.bishop_mg[row], m[2].1 + w.bishop_eg_ring[rg]);
        table[3][sq] = S(m[3].0 + w.rook_mg[row], m[3].1 + seventh);
        table[4][sq] = S(m[4].0 + w.queen_mg[row], m[4].1 + w.queen_eg_ring[rg]);
        table[5][sq] = S(m[5].0 + w.king_mg[row], m[5].1 + w.king_eg_ring[rg]);
        sq += 1;
    }
    table
}

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

/// Evaluates `pos` from the side to move's point of view.
#[inline]
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(&TABLES, pos)
}

/// [`evaluate`] with other tables (the tuner's).
pub fn evaluate_with(tables: &EvalTables, pos: &Position) -> i32 {
    let white_view = scale_drawish(pos, breakdown(tables, pos).blended());
    match pos.turn() {
        Color::White => white_view,
        Color::Black => -white_view,
    }
}

/// The evaluation before its last two steps, for the tuner: the
/// middlegame/endgame pair from White's point of view and the game phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Breakdown {
    pub score: S,
    /// 0 (bare kings and pawns) to [`Breakdown::MAX_PHASE`] (all pieces).
    pub phase: i32,
}

impl Breakdown {
    pub const MAX_PHASE: i32 = MAX_PHASE;

    /// The two halves blended by the phase, from White's point of view.
    pub fn blended(&self) -> i32 {
        (self.score.0 * self.phase + self.score.1 * (MAX_PHASE - self.phase)) / MAX_PHASE
    }
}

/// The tapered score of `pos` before the drawish scaling (see
/// [`is_drawish`]), from White's point of view.
pub fn breakdown(tables: &EvalTables, pos: &Position) -> Breakdown {
    let w = &tables.weights;
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
                side += tables.psqt[role.index()][index];
                phase += PHASE_WEIGHT[role.index()];
            }
        }
        side += pieces_and_mobility(w, pos, color);
        side += pawn_structure(w, pos, color);
        side += king_safety(w, pos, color);
        score += side * sign;
    }
    score += if pos.turn() == Color::White {
        w.tempo
    } else {
        -w.tempo
    };
    Breakdown {
        score,
        phase: phase.min(MAX_PHASE),
    }
}

/// Mobility, bishop pair and rooks on open files for `color`.
fn pieces_and_mobility(w: &Weights, pos: &Position, color: Color) -> S {
    let them = !color;
    let occupied = pos.occupied();
    let own = pos.by_color(color);
    let enemy_pawn_attacks = pawn_attacks_of_set(them, pos.pieces(them, Role::Pawn));
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
        let (typical, weight) = (MOBILITY_TYPICAL[role.index()], w.mobility[role.index()]);
        for sq in pos.pieces(color, role) {
            let count = (attacks_of(sq, occupied) & area).count() as i32;
            s += weight * (count - typical);
            if role == Role::Rook {
                let file = Bitboard::file(sq.file());
                if (file & own_pawns).is_empty() {
                    s += if (file & their_pawns).is_empty() {
                        w.rook_open_file
                    } else {
                        w.rook_half_open_file
                    };
                }
            }
        }
    }
    if pos.pieces(color, Role::Bishop).more_than_one() {
        s += w.bishop_pair;
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
fn pawn_structure(w: &Weights, pos: &Position, color: Color) -> S {
    let them = !color;
    let own_pawns = pos.pieces(color, Role::Pawn);
    let their_pawns = pos.pieces(them, Role::Pawn);
    let own_king = pos.king(color);
    let their_king = pos.king(them);
    let mut s = S(0, 0);
    for sq in own_pawns {
        let file = sq.file();
        if (adjacent_files(file) & own_pawns).is_empty() {
            s += w.isolated_pawn;
        }
        // Count a doubled pair once: penalise the rear pawn only.
        let ahead = Bitboard(PASSED_MASKS[color.index()][sq.index()]) & Bitboard::file(file);
        if (ahead & own_pawns).any() {
            s += w.doubled_pawn;
        }
        let passed = (Bitboard(PASSED_MASKS[color.index()][sq.index()]) & their_pawns).is_empty()
            && (ahead & own_pawns).is_empty();
        if passed {
            let rank = sq.relative_rank(color) as usize;
            s += w.passed_pawn[rank];
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
fn king_safety(w: &Weights, pos: &Position, color: Color) -> S {
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
                shield += w.shield_near;
            } else if front
                .offset(0, forward)
                .is_some_and(|sq| own_pawns.contains(sq))
            {
                shield += w.shield_far;
            } else {
                shield += w.shield_missing;
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
/// win (see [`is_drawish`]).
fn scale_drawish(pos: &Position, white_view: i32) -> i32 {
    if is_drawish(pos, white_view) {
        white_view / 8
    } else {
        white_view
    }
}

/// Is the side ahead by `white_view` unlikely to win: no pawns and at most
/// a minor piece more? Then the evaluation is divided by 8.
pub fn is_drawish(pos: &Position, white_view: i32) -> bool {
    let strong = if white_view > 0 {
        Color::White
    } else {
        Color::Black
    };
    if pos.pieces(strong, Role::Pawn).any() {
        return false;
    }
    let material = |color: Color| -> i32 {
        [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .into_iter()
            .map(|role| pos.pieces(color, role).count() as i32 * SEE_VALUE[role.index()])
            .sum()
    };
    let diff = material(strong) - material(!strong);
    diff <= SEE_VALUE[Role::Bishop.index()]
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
    fn weights_file_is_the_writers_output() {
        // The tuner writes weights.rs with `Weights::to_rust`: the file in
        // the repository must be exactly that output, so a tuning run's
        // diff shows only changed numbers.
        let file = include_str!("weights.rs");
        let provenance: Vec<&str> = file
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with("//!"))
            .map(|l| l.strip_prefix("//! ").unwrap_or(""))
            .collect();
        assert_eq!(WEIGHTS.to_rust(&provenance.join("\n")), file);
    }

    #[test]
    fn every_weight_is_visited_once_and_moves_the_score() {
        let mut weights = WEIGHTS.clone();
        let mut names = Vec::new();
        weights.for_each_mut(|name, _| names.push(name));
        assert_eq!(
            names.len(),
            12 + 7 * 64 + 4 * 4 + 1 + 6 * 2 + 8 * 2 + 6 * 2 + 3
        );
        // One knight more for White: raising the knight's middlegame value
        // by 1 raises the middlegame half of the score by exactly 1.
        let pos = Position::from_fen("4k3/8/8/8/8/8/8/1N2K3 w - - 0 1").expect("valid FEN");
        let base = breakdown(&EvalTables::new(weights.clone()), &pos);
        let mut index = 0;
        weights.for_each_mut(|_, v| {
            if index == 2 {
                *v += 1;
            }
            index += 1;
        });
        assert_eq!(
            weights.material[1],
            S(WEIGHTS.material[1].0 + 1, WEIGHTS.material[1].1)
        );
        let raised = breakdown(&EvalTables::new(weights), &pos);
        assert_eq!(raised.score - base.score, S(1, 0));
    }

    #[test]
    fn the_score_is_linear_in_every_weight() {
        // The tuner models each half of the score as a linear function of
        // the weights, reading the slopes by nudging each weight by one.
        // That holds only if no weight enters non-linearly (squared,
        // clamped, in a condition): nudging by two must move the score by
        // exactly twice as much. Runtime tables must also equal the
        // compile-time ones.
        let positions: Vec<Position> = crate::bench::BENCH_POSITIONS
            .iter()
            .map(|fen| Position::from_fen(fen).expect("valid FEN"))
            .collect();
        let base = EvalTables::new(WEIGHTS.clone());
        for pos in &positions {
            assert_eq!(evaluate_with(&base, pos), evaluate(pos));
        }
        let mut count = 0;
        WEIGHTS.clone().for_each_mut(|_, _| count += 1);
        for index in 0..count {
            let nudged = |by: i32| {
                let mut w = WEIGHTS.clone();
                let mut i = 0;
                w.for_each_mut(|_, v| {
                    if i == index {
                        *v += by;
                    }
                    i += 1;
                });
                EvalTables::new(w)
            };
            let (one, two) = (nudged(1), nudged(2));
            for pos in &positions {
                let b = breakdown(&base, pos);
                let d1 = breakdown(&one, pos).score - b.score;
                let d2 = breakdown(&two, pos).score - b.score;
                assert_eq!(d1 * 2, d2, "weight {index} in {}", pos.to_fen());
                assert_eq!(breakdown(&one, pos).phase, b.phase);
            }
        }
    }

    #[test]
    fn advanced_passed_pawn_is_worth_more() {
        let far = eval_fen("8/4P3/8/8/8/k7/8/4K3 w - - 0 1");
        let near = eval_fen("8/8/8/8/8/k3P3/8/4K3 w - - 0 1");
        assert!(far > near + 50, "{far} vs {near}");
    }
}

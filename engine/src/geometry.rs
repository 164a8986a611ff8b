// Board geometry shared by the build script (which finds magic numbers and
// fills the sliding-attack table) and by the engine's compile-time tables.
//
// Everything here is a `const fn` on raw `u64` masks and `u8` square indices
// (a1 = 0, b1 = 1, …, h8 = 63), so that `build.rs` can `include!` this file
// without depending on the crate's own types.

/// Rook directions as (file, rank) steps.
pub const ROOK_DELTAS: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
/// Bishop directions as (file, rank) steps.
pub const BISHOP_DELTAS: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// The square `(file + df, rank + dr)` if it is on the board.
pub const fn offset(square: u8, df: i8, dr: i8) -> Option<u8> {
    let file = (square % 8) as i8 + df;
    let rank = (square / 8) as i8 + dr;
    if file < 0 || file > 7 || rank < 0 || rank > 7 {
        None
    } else {
        Some((rank * 8 + file) as u8)
    }
}

/// Squares a slider on `square` attacks along `deltas`, stopping at (and
/// including) the first occupied square of each ray. This is the slow
/// reference the magic tables are filled from.
pub const fn sliding_attacks(square: u8, occupied: u64, deltas: &[(i8, i8); 4]) -> u64 {
    let mut attacks = 0u64;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = deltas[d];
        let mut current = square;
        while let Some(next) = offset(current, df, dr) {
            attacks |= 1u64 << next;
            if occupied & (1u64 << next) != 0 {
                break;
            }
            current = next;
        }
        d += 1;
    }
    attacks
}

/// The occupancy bits that can change a slider's attacks from `square`: its
/// empty-board rays without the last square of each ray (a blocker on the
/// board edge blocks nothing further).
pub const fn relevant_occupancy(square: u8, deltas: &[(i8, i8); 4]) -> u64 {
    let mut mask = 0u64;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = deltas[d];
        let mut current = square;
        while let Some(next) = offset(current, df, dr) {
            if offset(next, df, dr).is_none() {
                break;
            }
            mask |= 1u64 << next;
            current = next;
        }
        d += 1;
    }
    mask
}

//! Zobrist hashing keys, generated at compile time from a fixed seed.
//!
//! A position's hash is the XOR of one key per (colour, role, square) piece,
//! one key per castling rook (by colour and back-rank file), the en-passant file key (only when an en-passant
//! capture is really possible, so positions that repeat are recognised as
//! equal), and the side key when black is to move. XOR makes every update
//! incremental: a move toggles only the keys it changes.

use crate::rng::SplitMix64;
use crate::types::{Color, Role, Square};

pub(crate) struct Keys {
    pieces: [[[u64; 64]; 6]; 2],
    /// The key of every set of castling rooks on one back rank, by colour
    /// and by the rank's eight bits (bit `f` set: the rook on file `f` may
    /// castle): each set is the XOR of its rooks' keys, precomputed so that
    /// a move changing rights costs two lookups, not a loop.
    castling: [[u64; 256]; 2],
    en_passant_file: [u64; 8],
    black_to_move: u64,
}

const fn generate() -> Keys {
    let mut rng = SplitMix64::new(0x526f_6f6b_6572_7921); // "Rookery!"
    let mut keys = Keys {
        pieces: [[[0; 64]; 6]; 2],
        castling: [[0; 256]; 2],
        en_passant_file: [0; 8],
        black_to_move: 0,
    };
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 6 {
            let mut s = 0;
            while s < 64 {
                keys.pieces[c][r][s] = rng.next_u64();
                s += 1;
            }
            r += 1;
        }
        c += 1;
    }
    // The keys of the four standard castling rooks come first, in the
    // order the four rights (K, Q, k, q) had when rights were four bits,
    // so standard positions hash as they always did; the other twelve
    // files' keys are drawn after everything else.
    let standard = [
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
    ];
    let mut f = 0;
    while f < 8 {
        keys.en_passant_file[f] = rng.next_u64();
        f += 1;
    }
    keys.black_to_move = rng.next_u64();
    // One key per (colour, file) of a castling rook.
    let mut single = [[0u64; 8]; 2];
    single[0][7] = standard[0];
    single[0][0] = standard[1];
    single[1][7] = standard[2];
    single[1][0] = standard[3];
    let mut c = 0;
    while c < 2 {
        let mut file = 1;
        while file < 7 {
            single[c][file] = rng.next_u64();
            file += 1;
        }
        c += 1;
    }
    let mut c = 0;
    while c < 2 {
        let mut set = 0;
        while set < 256 {
            let mut file = 0;
            while file < 8 {
                if set & (1 << file) != 0 {
                    keys.castling[c][set] ^= single[c][file];
                }
                file += 1;
            }
            set += 1;
        }
        c += 1;
    }
    keys
}

static KEYS: Keys = generate();

#[inline]
pub(crate) fn piece(color: Color, role: Role, sq: Square) -> u64 {
    KEYS.pieces[color.index()][role.index()][sq.index()]
}

#[inline]
pub(crate) fn castling(rooks: u16) -> u64 {
    KEYS.castling[0][usize::from(rooks as u8)] ^ KEYS.castling[1][usize::from(rooks >> 8)]
}

#[inline]
pub(crate) fn en_passant(sq: Square) -> u64 {
    KEYS.en_passant_file[sq.file() as usize]
}

#[inline]
pub(crate) fn black_to_move() -> u64 {
    KEYS.black_to_move
}

//! Zobrist hashing keys, generated at compile time from a fixed seed.
//!
//! A position's hash is the XOR of one key per (colour, role, square) piece,
//! the castling-rights key, the en-passant file key (only when an en-passant
//! capture is really possible, so positions that repeat are recognised as
//! equal), and the side key when black is to move. XOR makes every update
//! incremental: a move toggles only the keys it changes.

use crate::rng::SplitMix64;
use crate::types::{Color, Role, Square};

pub(crate) struct Keys {
    pieces: [[[u64; 64]; 6]; 2],
    castling: [u64; 16],
    en_passant_file: [u64; 8],
    black_to_move: u64,
}

const fn generate() -> Keys {
    let mut rng = SplitMix64::new(0x526f_6f6b_6572_7921); // "Rookery!"
    let mut keys = Keys {
        pieces: [[[0; 64]; 6]; 2],
        castling: [0; 16],
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
    // Castling keys are per right, and a set of rights XORs its members, so
    // that losing one right toggles exactly one key's worth of bits.
    let single = [
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
        rng.next_u64(),
    ];
    let mut set = 0;
    while set < 16 {
        let mut bit = 0;
        while bit < 4 {
            if set & (1 << bit) != 0 {
                keys.castling[set] ^= single[bit];
            }
            bit += 1;
        }
        set += 1;
    }
    let mut f = 0;
    while f < 8 {
        keys.en_passant_file[f] = rng.next_u64();
        f += 1;
    }
    keys.black_to_move = rng.next_u64();
    keys
}

static KEYS: Keys = generate();

#[inline]
pub(crate) fn piece(color: Color, role: Role, sq: Square) -> u64 {
    KEYS.pieces[color.index()][role.index()][sq.index()]
}

#[inline]
pub(crate) fn castling(rights: u8) -> u64 {
    KEYS.castling[rights as usize & 15]
}

#[inline]
pub(crate) fn en_passant(sq: Square) -> u64 {
    KEYS.en_passant_file[sq.file() as usize]
}

#[inline]
pub(crate) fn black_to_move() -> u64 {
    KEYS.black_to_move
}

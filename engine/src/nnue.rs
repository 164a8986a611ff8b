//! The evaluation network (NNUE: an efficiently updatable neural network),
//! as `examples/train_net.rs` trains it and writes it (format `RKNN` v1,
//! v2 with output buckets, v3 with king buckets ([`KingBuckets`]), laid
//! out in that file's header and [`file_header`]): reading
//! the file, the two accumulators of a position, their update when a move
//! is played, and the evaluation.
//!
//! The engine carries one network, [`built_in`] (`engine/nets/`, where its
//! provenance is written down): full strength (level 8, the server's and
//! UCI's) plays with it, because it beat the hand-written evaluation in
//! matches (issue 26, `tools/nnue.md`); the weaker levels keep the
//! hand-written evaluation they were calibrated with. UCI `EvalFile` reads
//! another network, `UseNNUE false` turns it off
//! ([`crate::search::Searcher::set_network`]). In a search the
//! accumulators live in an [`AccumulatorStack`], one entry per ply: a move
//! records its [`Change`] at the child's ply, and the entry is computed
//! from its parent's only when a position at that ply (or below it) is
//! evaluated, so a node cut off before its evaluation costs nothing.
//!
//! **The idea.** The first layer sees one input per man — (own or enemy,
//! role, square), the board seen from each side in turn, mirrored for
//! Black — and is the sum of its weight rows for the men on the board: an
//! *accumulator*, one per side. A move changes two to four men, so the
//! accumulators of the next position are the last ones plus or minus a
//! few rows (an *update*), not a new sum of up to 32 (a *refresh*); that
//! is what makes a network as cheap as a hand-written evaluation. Each
//! accumulator is clipped to [0, QA] and one output neuron reads both, the
//! side to move's first. A version-2 network has several output neurons
//! (*buckets*) and the number of men on the board picks the one that
//! reads ([`output_bucket`]): an endgame is weighed by other weights than
//! a middlegame, for the price of one more lookup.
//!
//! **Integers only**, as the file holds them: `i16` accumulators, `i32`
//! output sums, wrapping like the vector instructions. Integer addition
//! gives the same result in any order, so the AVX2 path (`std::arch`
//! intrinsics, chosen at run time when the processor has it) and the
//! portable loops give the same bits; the tests compare them.

use std::sync::{Arc, OnceLock};

use arrayvec::ArrayVec;
use thiserror::Error;

use crate::bitboard::Bitboard;
use crate::moves::{Move, MoveKind};
use crate::position::Position;
use crate::types::{Color, Piece, Role, Square};

/// Inputs of one side's view: 2 (own, enemy) × 6 roles × 64 squares.
pub const INPUTS: usize = 768;
/// The newest format version this engine reads: 3 (king buckets); it
/// reads version 2 (output buckets) and 1 (one output neuron) too.
pub const VERSION: u16 = 3;
const HEADER_BYTES: usize = 16;
/// Version 2's extra header: the number of output buckets (`u16`) and a
/// reserved `u16`, after the 16 bytes every version has.
const BUCKET_HEADER_BYTES: usize = 4;
/// Version 3's extra header after version 2's: the number of king buckets
/// (`u16`), the mirror flag (`u16`, 0 or 1), a reserved `u16`, a padding
/// `u16`, then the king-bucket map (64 bytes, see [`KingBuckets`]).
const KING_HEADER_BYTES: usize = 8 + 64;
/// King buckets a version-3 file may have.
pub const MAX_KING_BUCKETS: usize = 64;
/// Output buckets a version-2 file may have: a divisor of 32, so that
/// every bucket covers the same number of men.
pub const MAX_OUTPUT_BUCKETS: usize = 32;

/// The output bucket of a position with `men` men on the board (2 to 32)
/// for a network with `buckets` buckets: the men counts split evenly,
/// fewest first (8 buckets: 2–4 men, 5–8, …, 29–32). The trainer uses
/// this function too.
#[inline]
pub fn output_bucket(men: u32, buckets: usize) -> usize {
    ((men.max(1) as usize - 1) * buckets / 32).min(buckets - 1)
}

/// The input a man is for `perspective`'s accumulator: own men first, by
/// role, then square (a1 = 0), the board turned over for Black so that
/// both sides share one first layer. The trainer uses this function too,
/// so the two cannot disagree.
#[inline]
pub fn input_index(perspective: Color, square: usize, piece: Piece) -> usize {
    let enemy = usize::from(piece.color != perspective);
    let square = match perspective {
        Color::White => square,
        Color::Black => square ^ 56,
    };
    enemy * 384 + piece.role.index() * 64 + square
}

/// Which first layer a side's accumulator uses: a network with king
/// buckets has one first layer (768 inputs) per bucket, and the square of
/// the side's own king picks it (a *HalfKA*-style input: every man,
/// the kings included, as (own or enemy, role, square), repeated per
/// bucket of the own king's square).
///
/// Why this layout: a piece's worth depends on where the own king stands
/// (a knight near it defends, a pawn in front of it shelters), which a
/// single 768-input layer cannot express; with buckets it learns each
/// man's value per king region. *Mirrored*: when the own king is on files
/// a–d the board is mirrored left to right for that side, so the king is
/// always on files e–h and 32 king squares cover the board: the same
/// resolution for half the weights (chess is the same game mirrored, but
/// for castling rights, which the net does not see). The map is stored in
/// the file, so the engine reads any layout the trainer writes; a network
/// of version 1 or 2 is [`KingBuckets::NONE`], which gives exactly the
/// inputs of [`input_index`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KingBuckets {
    /// The bucket of the own king's square, the square seen from that side
    /// (turned over for Black) and, when mirrored, on files e–h (the map's
    /// entries for files a–d repeat those of e–h).
    map: [u8; 64],
    count: usize,
    mirror: bool,
}

/// How one side's accumulator reads the board: the first layer's block
/// (`offset`) and the square transformation (`xor`: 56 turns the board
/// over for Black, 7 mirrors it left to right).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Orientation {
    offset: usize,
    xor: usize,
}

impl KingBuckets {
    /// No king buckets, no mirror: the inputs of versions 1 and 2.
    pub const NONE: KingBuckets = KingBuckets {
        map: [0; 64],
        count: 1,
        mirror: false,
    };

    /// The mirrored layouts the trainer offers: `count` buckets (1, 4, 8,
    /// 16 or 32) over the own king's square on files e–h. Fine near the
    /// home ranks, where kings spend most of a game, coarse beyond them:
    /// 4 = ranks 1, 2, 3–4, 5–8; 8 = those split into files e–f and g–h;
    /// 16 = each square of ranks 1 and 2, then ranks 3, 4, 5–6 and 7–8
    /// split into e–f and g–h; 32 = every square.
    pub fn mirrored(count: usize) -> Option<KingBuckets> {
        let bucket = |rank: usize, file: usize| -> usize {
            let region = [0, 1, 2, 2, 3, 3, 3, 3][rank];
            match count {
                4 => region,
                8 => region * 2 + file / 2,
                16 => match rank {
                    0 | 1 => rank * 4 + file,
                    _ => 8 + [0, 0, 0, 1, 2, 2, 3, 3][rank] * 2 + file / 2,
                },
                32 => rank * 4 + file,
                _ => 0,
            }
        };
        if ![1, 4, 8, 16, 32].contains(&count) {
            return None;
        }
        let mut map = [0u8; 64];
        for (square, entry) in map.iter_mut().enumerate() {
            let (rank, file) = (square / 8, square % 8);
            // Files e–h are 4..8; a–d mirror onto them.
            let file = if file < 4 { 7 - file } else { file } - 4;
            *entry = bucket(rank, file) as u8;
        }
        Some(KingBuckets {
            map,
            count,
            mirror: true,
        })
    }

    /// The number of buckets (first-layer blocks).
    pub fn count(&self) -> usize {
        self.count
    }

    /// Orientations one side's accumulator can have: each bucket, on
    /// either side of the mirror.
    fn slots(&self) -> usize {
        2 * self.count
    }

    /// The orientation's index among [`KingBuckets::slots`].
    fn slot(&self, orientation: Orientation) -> usize {
        orientation.offset / INPUTS * 2 + usize::from(orientation.xor & 7 != 0)
    }

    /// Whether the board is mirrored to put the own king on files e–h.
    pub fn mirrored_files(&self) -> bool {
        self.mirror
    }

    /// How `perspective`'s accumulator reads the board with its own king on
    /// `king`.
    #[inline]
    pub fn orient(&self, perspective: Color, king: Square) -> Orientation {
        let vertical = perspective.fold(0, 56);
        let k = king.index() ^ vertical;
        let horizontal = if self.mirror && k % 8 < 4 { 7 } else { 0 };
        Orientation {
            offset: usize::from(self.map[k]) * INPUTS,
            xor: vertical ^ horizontal,
        }
    }

    /// The input a man is for `perspective`'s accumulator oriented so (the
    /// trainer uses this function too, so the two cannot disagree).
    #[inline]
    pub fn feature(
        orientation: Orientation,
        perspective: Color,
        square: usize,
        piece: Piece,
    ) -> usize {
        let enemy = usize::from(piece.color != perspective);
        orientation.offset + enemy * 384 + piece.role.index() * 64 + (square ^ orientation.xor)
    }
}

/// The built-in network's file: `engine/nets/README.md` says what it was
/// trained on, how, and what it measured (the trainer's `--init` starts
/// from these bytes).
pub const BUILT_IN: &[u8] = include_bytes!("../nets/rookery-256.nnue");

/// The network built into the engine, read once (it is checked like any
/// file; a test proves it reads).
pub fn built_in() -> Arc<Network> {
    static NETWORK: OnceLock<Arc<Network>> = OnceLock::new();
    NETWORK
        .get_or_init(|| match Network::from_bytes(BUILT_IN) {
            Ok(network) => Arc::new(network),
            Err(e) => panic!("the built-in network does not read: {e}"),
        })
        .clone()
}

/// The network a command line names: `built-in` is [`built_in`], anything
/// else a file read with [`Network::from_file`].
pub fn named(name: &str) -> Result<Arc<Network>, String> {
    if name == "built-in" {
        Ok(built_in())
    } else {
        Network::from_file(name).map(Arc::new)
    }
}

/// Why bytes are not a network this engine can use.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NetworkError {
    #[error("{0} bytes: shorter than the 16-byte header")]
    TooShort(usize),
    #[error("not a Rookery network (magic {0:?}, expected \"RKNN\")")]
    Magic([u8; 4]),
    #[error("format version {0}: this engine reads versions 1 to {VERSION}")]
    Version(u16),
    #[error("{0} output buckets: must divide 32")]
    Buckets(u16),
    #[error("king buckets: {0}")]
    KingBuckets(String),
    #[error("{0} inputs: this engine's networks have {INPUTS}")]
    Inputs(u16),
    #[error("accumulator size {0}: must be a positive multiple of 16")]
    Hidden(u16),
    #[error("quantisation QA {qa}, QB {qb}, scale {scale}: none may be 0")]
    Quantisation { qa: u16, qb: u16, scale: u16 },
    #[error("{actual} bytes where the header promises {expected}")]
    Length { expected: usize, actual: usize },
}

/// A network read from its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    hidden: usize,
    /// Which block of the first layer each side reads.
    kings: KingBuckets,
    /// `kings.count() × INPUTS` rows of `hidden`: what each input adds to
    /// an accumulator.
    input_weights: Vec<i16>,
    input_bias: Vec<i16>,
    /// `buckets × 2 × hidden`: per output bucket, the side to move's half
    /// first; `i8` in the file, widened so the output is one multiply-add
    /// of `i16`s.
    output_weights: Vec<i16>,
    /// One per output bucket.
    output_bias: Vec<i32>,
    /// Output buckets (1 for a version-1 file): the output neuron that
    /// reads the accumulators depends on how many men are on the board.
    buckets: usize,
    qa: i16,
    qb: i32,
    scale: i32,
    /// Take the AVX2 path (checked once, when the network is read).
    avx2: bool,
    /// The file's sha256, in hex: which network played and scored a data
    /// file (`datagen`'s provenance), the same hash `sha256sum` prints.
    sha256: String,
}

/// A position's two accumulators, White's view and Black's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accumulators {
    sides: [Vec<i16>; 2],
}

/// The largest file [`Network::from_file`] reads: a 4,096 × 2 network is
/// about 6 MiB, so this is room to spare, and a path to something that is
/// not a network (a device, a huge file) is refused before it is read.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

impl Network {
    /// Reads a network from the file at `path` (a regular file of at most
    /// [`MAX_FILE_BYTES`]); the error says why not, for a person.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Network, String> {
        let path = path.as_ref();
        let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
        if !metadata.is_file() {
            return Err("not a regular file".into());
        }
        if metadata.len() > MAX_FILE_BYTES {
            return Err(format!(
                "{} bytes: larger than any network ({MAX_FILE_BYTES} at most)",
                metadata.len()
            ));
        }
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        Network::from_bytes(&bytes).map_err(|e| e.to_string())
    }

    /// Reads a network file, checking every field before trusting it.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetworkError> {
        if bytes.len() < HEADER_BYTES {
            return Err(NetworkError::TooShort(bytes.len()));
        }
        let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
        if &magic != b"RKNN" {
            return Err(NetworkError::Magic(magic));
        }
        let field = |i: usize| u16::from_le_bytes([bytes[4 + 2 * i], bytes[5 + 2 * i]]);
        let (version, inputs, hidden, qa, qb, scale) =
            (field(0), field(1), field(2), field(3), field(4), field(5));
        if !(1..=VERSION).contains(&version) {
            return Err(NetworkError::Version(version));
        }
        if inputs as usize != INPUTS {
            return Err(NetworkError::Inputs(inputs));
        }
        if hidden == 0 || hidden % 16 != 0 {
            return Err(NetworkError::Hidden(hidden));
        }
        // QA is a clip bound for i16 accumulators.
        if qa == 0 || qa > i16::MAX as u16 || qb == 0 || scale == 0 {
            return Err(NetworkError::Quantisation { qa, qb, scale });
        }
        let h = hidden as usize;
        let (buckets, mut header) = if version == 1 {
            (1, HEADER_BYTES)
        } else {
            let Some(&[lo, hi, ..]) = bytes.get(HEADER_BYTES..HEADER_BYTES + BUCKET_HEADER_BYTES)
            else {
                return Err(NetworkError::TooShort(bytes.len()));
            };
            let buckets = u16::from_le_bytes([lo, hi]);
            if buckets == 0 || buckets as usize > MAX_OUTPUT_BUCKETS || 32 % buckets != 0 {
                return Err(NetworkError::Buckets(buckets));
            }
            (buckets as usize, HEADER_BYTES + BUCKET_HEADER_BYTES)
        };
        let kings = if version < 3 {
            KingBuckets::NONE
        } else {
            let Some(extra) = bytes.get(header..header + KING_HEADER_BYTES) else {
                return Err(NetworkError::TooShort(bytes.len()));
            };
            header += KING_HEADER_BYTES;
            let count = usize::from(u16::from_le_bytes([extra[0], extra[1]]));
            let mirror = u16::from_le_bytes([extra[2], extra[3]]);
            if count == 0 || count > MAX_KING_BUCKETS {
                return Err(NetworkError::KingBuckets(format!(
                    "{count}: from 1 to {MAX_KING_BUCKETS}"
                )));
            }
            if mirror > 1 {
                return Err(NetworkError::KingBuckets(format!("mirror flag {mirror}")));
            }
            let mut map = [0u8; 64];
            map.copy_from_slice(&extra[8..]);
            if let Some(bad) = map.iter().find(|&&b| usize::from(b) >= count) {
                return Err(NetworkError::KingBuckets(format!(
                    "the map names bucket {bad} of {count}"
                )));
            }
            KingBuckets {
                map,
                count,
                mirror: mirror == 1,
            }
        };
        let rows = kings.count * INPUTS;
        let expected = header + 2 * rows * h + 2 * h + buckets * (2 * h + 4);
        if bytes.len() != expected {
            return Err(NetworkError::Length {
                expected,
                actual: bytes.len(),
            });
        }
        let i16s = |from: usize, count: usize| -> Vec<i16> {
            bytes[from..from + 2 * count]
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect()
        };
        let input_weights = i16s(header, rows * h);
        let mut at = header + 2 * rows * h;
        let input_bias = i16s(at, h);
        at += 2 * h;
        let output_weights = bytes[at..at + buckets * 2 * h]
            .iter()
            .map(|&b| i16::from(b as i8))
            .collect();
        at += buckets * 2 * h;
        let output_bias = bytes[at..at + 4 * buckets]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Network {
            hidden: h,
            kings,
            input_weights,
            input_bias,
            output_weights,
            output_bias,
            buckets,
            qa: qa as i16,
            qb: i32::from(qb),
            scale: i32::from(scale),
            avx2: avx2_available(),
            sha256: sha256_hex(bytes),
        })
    }

    /// The size of one side's accumulator.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The number of output buckets (1: one output neuron for every
    /// position).
    pub fn output_buckets(&self) -> usize {
        self.buckets
    }

    /// The king-bucket layout ([`KingBuckets::NONE`] for versions 1 and 2).
    pub fn king_buckets(&self) -> &KingBuckets {
        &self.kings
    }

    /// The sha256 of the file the network was read from, in hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Whether this network takes the AVX2 path.
    pub fn uses_avx2(&self) -> bool {
        self.avx2
    }

    /// The same network on the portable path (to compare the two).
    pub fn portable(mut self) -> Network {
        self.avx2 = false;
        self
    }

    fn row(&self, input: usize) -> &[i16] {
        &self.input_weights[input * self.hidden..][..self.hidden]
    }

    /// How `perspective`'s accumulator reads `position`.
    #[inline]
    fn orientation(&self, perspective: Color, position: &Position) -> Orientation {
        self.kings.orient(perspective, position.king(perspective))
    }

    /// `perspective`'s accumulator of `position`, summed from scratch into
    /// `side`.
    fn refresh_side(&self, position: &Position, perspective: Color, side: &mut [i16]) {
        side.copy_from_slice(&self.input_bias);
        let orientation = self.orientation(perspective, position);
        for square in position.occupied() {
            let Some(piece) = position.piece_at(square) else {
                continue;
            };
            let row = self.row(KingBuckets::feature(
                orientation,
                perspective,
                square.index(),
                piece,
            ));
            self.apply(side, &[row], &[]);
        }
    }

    /// Both accumulators of `position`, summed from scratch.
    pub fn refresh(&self, position: &Position) -> Accumulators {
        let mut sides = [self.input_bias.clone(), self.input_bias.clone()];
        for perspective in Color::ALL {
            self.refresh_side(position, perspective, &mut sides[perspective.index()]);
        }
        Accumulators { sides }
    }

    /// Turns `before`'s accumulators into `after`'s, where `after` is
    /// `before` with one move played: only the men that differ are
    /// subtracted and added. The difference is read off the two boards
    /// rather than the move, so castling, en passant and promotion need no
    /// rule of their own here. A side whose king changed bucket (or side
    /// of the mirror) reads another block of the first layer: its
    /// accumulator is summed again.
    pub fn update(&self, accumulators: &mut Accumulators, before: &Position, after: &Position) {
        // A move takes at most two men off their squares and puts at most
        // two on new ones (castling: king and rook; a capture: the mover
        // and its victim off, the mover on).
        let mut removed: ArrayVec<(usize, Piece), 2> = ArrayVec::new();
        let mut added: ArrayVec<(usize, Piece), 2> = ArrayVec::new();
        for color in Color::ALL {
            for role in Role::ALL {
                let (old, new) = (before.pieces(color, role), after.pieces(color, role));
                let piece = Piece::new(color, role);
                for square in old & !new {
                    if removed.try_push((square.index(), piece)).is_err() {
                        // Not one move apart: start again from the board.
                        *accumulators = self.refresh(after);
                        return;
                    }
                }
                for square in new & !old {
                    if added.try_push((square.index(), piece)).is_err() {
                        *accumulators = self.refresh(after);
                        return;
                    }
                }
            }
        }
        for perspective in Color::ALL {
            let side = &mut accumulators.sides[perspective.index()];
            let orientation = self.orientation(perspective, after);
            if orientation != self.orientation(perspective, before) {
                self.refresh_side(after, perspective, side);
                continue;
            }
            let rows = |changes: &ArrayVec<(usize, Piece), 2>| -> ArrayVec<&[i16], 2> {
                changes
                    .iter()
                    .map(|&(square, piece)| {
                        self.row(KingBuckets::feature(
                            orientation,
                            perspective,
                            square,
                            piece,
                        ))
                    })
                    .collect()
            };
            self.apply(side, &rows(&added), &rows(&removed));
        }
    }

    /// The evaluation of `position`, whose accumulators these are, for
    /// the side to move, in centipawns.
    pub fn evaluate(&self, accumulators: &Accumulators, position: &Position) -> i32 {
        let turn = position.turn();
        let us = &accumulators.sides[turn.index()];
        let them = &accumulators.sides[(!turn).index()];
        self.output(us, them, position.occupied().count())
    }

    /// The output neuron of the bucket for `men` men over the side to
    /// move's accumulator and the other side's.
    fn output(&self, us: &[i16], them: &[i16], men: u32) -> i32 {
        let bucket = output_bucket(men, self.buckets);
        let weights = &self.output_weights[bucket * 2 * self.hidden..][..2 * self.hidden];
        let (w_us, w_them) = weights.split_at(self.hidden);
        let sum = self.output_bias[bucket] + self.dot(us, w_us) + self.dot(them, w_them);
        (i64::from(sum) * i64::from(self.scale) / (i64::from(self.qa) * i64::from(self.qb))) as i32
    }

    /// [`Network::evaluate`] of a position, from a refresh.
    pub fn evaluate_position(&self, position: &Position) -> i32 {
        self.evaluate(&self.refresh(position), position)
    }

    /// Whether `change` moves `perspective`'s king into another bucket or
    /// across the mirror (so that side's accumulator must be summed
    /// afresh). Never for a network without king buckets.
    #[inline]
    fn changes_bucket(&self, perspective: Color, change: &Change) -> bool {
        if self.kings == KingBuckets::NONE {
            return false;
        }
        let king = Piece::new(perspective, Role::King);
        let from = change.removed().iter().find(|&&(_, p)| p == king);
        let to = change.added().iter().find(|&&(_, p)| p == king);
        match (from, to) {
            (Some(&(from, _)), Some(&(to, _))) => {
                self.kings.orient(perspective, Square::new(from))
                    != self.kings.orient(perspective, Square::new(to))
            }
            _ => false,
        }
    }

    /// `target = source + Σ adds − Σ subs`, in one pass.
    #[inline]
    fn apply_into(&self, target: &mut [i16], source: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set when the processor reports AVX2
            // (`avx2_available`), the one requirement of this function.
            return unsafe { simd::apply_into(target, source, adds, subs) };
        }
        target.copy_from_slice(source);
        apply_rows(target, adds, subs);
    }

    fn apply(&self, accumulator: &mut [i16], adds: &[&[i16]], subs: &[&[i16]]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set when the processor reports AVX2
            // (`avx2_available`), the one requirement of these functions.
            return unsafe { simd::apply(accumulator, adds, subs) };
        }
        apply_rows(accumulator, adds, subs);
    }

    fn dot(&self, accumulator: &[i16], weights: &[i16]) -> i32 {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: as in `apply`.
            return unsafe { simd::clipped_dot(accumulator, weights, self.qa) };
        }
        clipped_dot(accumulator, weights, self.qa)
    }
}

/// What a move changes on the board as the network sees it: the men it
/// takes off their squares and the men it puts on, at most two of each
/// (a capture: victim and mover off, the mover or its promotion on;
/// castling: king and rook off and on). A null move changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    removed: [(u8, Piece); 2],
    added: [(u8, Piece); 2],
    removed_len: u8,
    added_len: u8,
}

impl Change {
    /// No man moves (a null move: only the side to move changes, which
    /// the evaluation reads from the position, not the accumulators).
    pub const NONE: Change = {
        let filler = (0, Piece::new(Color::White, Role::Pawn));
        Change {
            removed: [filler; 2],
            added: [filler; 2],
            removed_len: 0,
            added_len: 0,
        }
    };

    /// The change `mv`, legal in `position`, makes.
    #[inline]
    pub fn of_move(position: &Position, mv: Move) -> Change {
        let us = position.turn();
        let (from, to) = (mv.from(), mv.to());
        let moved = position.role_at(from).unwrap_or(Role::Pawn);
        let mut change = Change::NONE;
        match mv.kind() {
            MoveKind::Normal | MoveKind::Promotion(_) => {
                if let Some(victim) = position.role_at(to) {
                    change.remove(to, Piece::new(!us, victim));
                }
                change.remove(from, Piece::new(us, moved));
                change.add(to, Piece::new(us, mv.promotion().unwrap_or(moved)));
            }
            MoveKind::EnPassant => {
                let victim = Square::from_coords(to.file(), from.rank()).unwrap_or(to);
                change.remove(victim, Piece::new(!us, Role::Pawn));
                change.remove(from, Piece::new(us, Role::Pawn));
                change.add(to, Piece::new(us, Role::Pawn));
            }
            MoveKind::Castle => {
                // Chess960 too: the rook is the one the rights name.
                let (rook_from, rook_to) =
                    position.castling_rook_squares(mv).unwrap_or((from, from));
                change.remove(from, Piece::new(us, Role::King));
                change.remove(rook_from, Piece::new(us, Role::Rook));
                change.add(to, Piece::new(us, Role::King));
                change.add(rook_to, Piece::new(us, Role::Rook));
            }
        }
        change
    }

    #[inline]
    fn remove(&mut self, square: Square, piece: Piece) {
        self.removed[usize::from(self.removed_len)] = (square.index() as u8, piece);
        self.removed_len += 1;
    }

    #[inline]
    fn add(&mut self, square: Square, piece: Piece) {
        self.added[usize::from(self.added_len)] = (square.index() as u8, piece);
        self.added_len += 1;
    }

    fn removed(&self) -> &[(u8, Piece)] {
        &self.removed[..usize::from(self.removed_len)]
    }

    fn added(&self) -> &[(u8, Piece)] {
        &self.added[..usize::from(self.added_len)]
    }
}

/// The accumulators of the positions along a search path, one entry per
/// ply, each computed lazily from its parent's: [`AccumulatorStack::push`]
/// only records what a move changes, and [`AccumulatorStack::evaluate`]
/// brings the entries from the deepest computed one down to the ply it
/// evaluates (usually one step). The root, ply 0, is refreshed by
/// [`AccumulatorStack::set_root`].
///
/// Each side is brought down on its own: a move of a side's king into
/// another bucket (or across the mirror) means that side's accumulator
/// cannot be derived from its parent's, so it is summed afresh from the
/// position being evaluated, while the other side's is still updated.
/// The entries between stay uncomputed for that side; if the search comes
/// back to one of them, it is refreshed from its own position then.
///
/// That refresh goes through a *refresh table* (a cache per side and king
/// orientation, as engines with king buckets keep one): the accumulator
/// last summed for that side with its king in that bucket, and the board
/// it was summed for. Bringing it to the new board costs the men that
/// differ, usually a handful, instead of every man on the board.
#[derive(Clone, Debug)]
pub struct AccumulatorStack {
    hidden: usize,
    /// Per ply, White's accumulator then Black's (`2 × hidden` values).
    values: Vec<i16>,
    /// Per ply (from 1), the change from the ply above.
    changes: Vec<Change>,
    /// Per ply and side, whether `values` holds that accumulator.
    computed: Vec<[bool; 2]>,
    /// The refresh table, empty for a network without king buckets (it
    /// only refreshes at the root).
    table: Vec<TableEntry>,
}

/// One side's accumulator for one king orientation, and the men it sums:
/// `[colour][role]` (all empty: only the bias, as a new entry starts).
#[derive(Clone, Debug)]
struct TableEntry {
    values: Vec<i16>,
    men: [[Bitboard; 6]; 2],
}

impl AccumulatorStack {
    /// A stack of `plies` entries for `network`.
    pub fn new(network: &Network, plies: usize) -> AccumulatorStack {
        let plies = plies.max(1);
        let slots = match network.kings == KingBuckets::NONE {
            true => 0,
            false => 2 * network.kings.slots(),
        };
        AccumulatorStack {
            hidden: network.hidden,
            values: vec![0; plies * 2 * network.hidden],
            changes: vec![Change::NONE; plies],
            computed: vec![[false; 2]; plies],
            table: vec![
                TableEntry {
                    values: network.input_bias.clone(),
                    men: [[Bitboard::EMPTY; 6]; 2],
                };
                slots
            ],
        }
    }

    /// `perspective`'s accumulator of `position` into `side`, through the
    /// refresh table: the entry for the king's orientation is brought from
    /// the board it was summed for to this one, then copied.
    fn refresh_from_table(
        &mut self,
        network: &Network,
        position: &Position,
        perspective: Color,
        side: std::ops::Range<usize>,
    ) {
        let orientation = network.orientation(perspective, position);
        let slot = perspective.index() * network.kings.slots() + network.kings.slot(orientation);
        let entry = &mut self.table[slot];
        for color in Color::ALL {
            for role in Role::ALL {
                let piece = Piece::new(color, role);
                let (old, new) = (
                    entry.men[color.index()][role.index()],
                    position.pieces(color, role),
                );
                let row = |square: Square| {
                    network.row(KingBuckets::feature(
                        orientation,
                        perspective,
                        square.index(),
                        piece,
                    ))
                };
                for square in old & !new {
                    network.apply(&mut entry.values, &[], &[row(square)]);
                }
                for square in new & !old {
                    network.apply(&mut entry.values, &[row(square)], &[]);
                }
                entry.men[color.index()][role.index()] = new;
            }
        }
        self.values[side].copy_from_slice(&entry.values);
    }

    /// Refreshes ply 0 from `root`.
    pub fn set_root(&mut self, network: &Network, root: &Position) {
        debug_assert_eq!(self.hidden, network.hidden);
        let h = self.hidden;
        let (white, black) = self.values[..2 * h].split_at_mut(h);
        network.refresh_side(root, Color::White, white);
        network.refresh_side(root, Color::Black, black);
        self.computed[0] = [true; 2];
    }

    /// Records that the position at `ply` (≥ 1) is the one at `ply − 1`
    /// changed by `change`.
    #[inline]
    pub fn push(&mut self, ply: usize, change: Change) {
        debug_assert!(ply >= 1);
        self.changes[ply] = change;
        self.computed[ply] = [false; 2];
    }

    /// The evaluation, for the side to move, of `position`, the one at
    /// `ply`.
    #[inline]
    pub fn evaluate(&mut self, network: &Network, ply: usize, position: &Position) -> i32 {
        self.materialise(network, ply, position);
        let h = self.hidden;
        let entry = &self.values[ply * 2 * h..][..2 * h];
        let (white, black) = entry.split_at(h);
        let men = position.occupied().count();
        match position.turn() {
            Color::White => network.output(white, black, men),
            Color::Black => network.output(black, white, men),
        }
    }

    /// The accumulators at `ply`, whose position is `position` (computed
    /// if they were pending).
    pub fn accumulators(
        &mut self,
        network: &Network,
        ply: usize,
        position: &Position,
    ) -> Accumulators {
        self.materialise(network, ply, position);
        let h = self.hidden;
        let entry = &self.values[ply * 2 * h..][..2 * h];
        Accumulators {
            sides: [entry[..h].to_vec(), entry[h..].to_vec()],
        }
    }

    fn materialise(&mut self, network: &Network, ply: usize, position: &Position) {
        let h = self.hidden;
        for perspective in Color::ALL {
            let side = perspective.index();
            if self.computed[ply][side] {
                continue;
            }
            // The deepest computed entry above, unless a king move into
            // another bucket comes first (ply 0 is always computed).
            let mut base = ply;
            let mut refresh = false;
            while !self.computed[base][side] {
                if network.changes_bucket(perspective, &self.changes[base]) {
                    refresh = true;
                    break;
                }
                base -= 1;
            }
            if refresh {
                let at = ply * 2 * h + side * h;
                self.refresh_from_table(network, position, perspective, at..at + h);
                self.computed[ply][side] = true;
                continue;
            }
            // No king move between changes the orientation: the position
            // evaluated has the one of every ply from `base` down.
            let orientation = network.orientation(perspective, position);
            for at in base + 1..=ply {
                let (above, below) = self.values.split_at_mut(at * 2 * h);
                let parent = &above[(at - 1) * 2 * h + side * h..][..h];
                let entry = &mut below[side * h..][..h];
                let change = &self.changes[at];
                let rows = |men: &[(u8, Piece)]| -> ArrayVec<&[i16], 2> {
                    men.iter()
                        .map(|&(square, piece)| {
                            network.row(KingBuckets::feature(
                                orientation,
                                perspective,
                                usize::from(square),
                                piece,
                            ))
                        })
                        .collect()
                };
                network.apply_into(
                    entry,
                    parent,
                    &rows(change.added()),
                    &rows(change.removed()),
                );
                self.computed[at][side] = true;
            }
        }
    }
}

/// The header of a network file: format version 1 for one output bucket
/// (16 bytes), version 2 with the bucket count for more (20 bytes),
/// version 3 with king buckets (92 bytes: version 2's, then the king
/// buckets' count, the mirror flag, two reserved `u16`s and the 64-byte
/// map). The trainer writes its files with it, so the writer and
/// [`Network::from_bytes`] share one definition of the layout's start.
pub fn file_header(
    hidden: usize,
    buckets: usize,
    kings: &KingBuckets,
    qa: u16,
    qb: u16,
    scale: u16,
) -> Vec<u8> {
    let mut bytes = b"RKNN".to_vec();
    let version = if *kings != KingBuckets::NONE {
        3
    } else if buckets > 1 {
        2
    } else {
        1
    };
    for field in [version, INPUTS as u16, hidden as u16, qa, qb, scale] {
        bytes.extend_from_slice(&field.to_le_bytes());
    }
    if version >= 2 {
        // The bucket count, and a reserved field.
        for field in [buckets as u16, 0] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
    }
    if version >= 3 {
        for field in [kings.count as u16, u16::from(kings.mirror), 0, 0] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.extend_from_slice(&kings.map);
    }
    bytes
}

/// A network file with random weights of the trainer's sizes and
/// quantisation (weights mostly within ±60, one in fifty five times
/// larger): for tests and benchmarks of the machinery, not for play.
/// Format version 1 for one output bucket, 2 for more, 3 with king
/// buckets.
#[doc(hidden)]
pub fn random_network_file(hidden: usize, buckets: usize, seed: u64) -> Vec<u8> {
    random_network_file_with(hidden, buckets, &KingBuckets::NONE, seed)
}

/// [`random_network_file`] with a king-bucket layout.
#[doc(hidden)]
pub fn random_network_file_with(
    hidden: usize,
    buckets: usize,
    kings: &KingBuckets,
    seed: u64,
) -> Vec<u8> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    let mut bytes = file_header(hidden, buckets, kings, 255, 64, 400);
    for _ in 0..(kings.count * INPUTS + 1) * hidden {
        let w = (rng.below(121) as i16 - 60) * if rng.below(50) == 0 { 5 } else { 1 };
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    for _ in 0..buckets * 2 * hidden {
        bytes.push((rng.below(255) as i16 - 127) as i8 as u8);
    }
    for bucket in 0..buckets as i32 {
        bytes.extend_from_slice(&(1234 - 300 * bucket).to_le_bytes());
    }
    bytes
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Adds and subtracts weight rows. Wrapping, like the vector
/// instructions: a network whose sums leave `i16` is refused by the
/// trainer, and wrapping keeps the two paths equal even then.
#[inline(always)]
fn apply_rows(accumulator: &mut [i16], adds: &[&[i16]], subs: &[&[i16]]) {
    for row in adds {
        for (a, &w) in accumulator.iter_mut().zip(row.iter()) {
            *a = a.wrapping_add(w);
        }
    }
    for row in subs {
        for (a, &w) in accumulator.iter_mut().zip(row.iter()) {
            *a = a.wrapping_sub(w);
        }
    }
}

/// `Σ clamp(a, 0, qa) · w`: the clipped ReLU and the output neuron.
#[inline(always)]
fn clipped_dot(accumulator: &[i16], weights: &[i16], qa: i16) -> i32 {
    accumulator
        .iter()
        .zip(weights)
        .map(|(&a, &w)| i32::from(a.clamp(0, qa)) * i32::from(w))
        .fold(0i32, i32::wrapping_add)
}

/// The AVX2 path, written with the vector instructions themselves: 16
/// accumulator values a register. Every sum wraps as the portable path's
/// does (`_mm256_add_epi16` and `wrapping_add` on `i16`; the dot product's
/// `i32` lanes with `wrapping_add`), and integer addition modulo 2^n does
/// not depend on the order, so both paths give the same bits; the tests
/// compare them on every evaluation.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    /// Values of `i16` in one 256-bit register.
    const LANES: usize = 16;

    /// `target = source + Σ adds − Σ subs`: each register's worth loaded
    /// once, updated by every row, stored once.
    ///
    /// # Safety
    /// The processor must have AVX2. All slices as long as `target` (a
    /// multiple of 16: the file's check on the accumulator size).
    #[target_feature(enable = "avx2")]
    pub unsafe fn apply_into(target: &mut [i16], source: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
        let n = target.len();
        debug_assert!(n % LANES == 0 && source.len() == n);
        debug_assert!(adds.iter().chain(subs).all(|row| row.len() >= n));
        for at in (0..n).step_by(LANES) {
            // SAFETY: `at + 16 <= n` for every slice (checked above in
            // debug builds, guaranteed by the callers); unaligned loads.
            unsafe {
                let mut v = _mm256_loadu_si256(source.as_ptr().add(at).cast());
                for row in adds {
                    v = _mm256_add_epi16(v, _mm256_loadu_si256(row.as_ptr().add(at).cast()));
                }
                for row in subs {
                    v = _mm256_sub_epi16(v, _mm256_loadu_si256(row.as_ptr().add(at).cast()));
                }
                _mm256_storeu_si256(target.as_mut_ptr().add(at).cast(), v);
            }
        }
    }

    /// `accumulator += Σ adds − Σ subs`.
    ///
    /// # Safety
    /// As [`apply_into`].
    #[target_feature(enable = "avx2")]
    pub unsafe fn apply(accumulator: &mut [i16], adds: &[&[i16]], subs: &[&[i16]]) {
        let n = accumulator.len();
        debug_assert!(n % LANES == 0);
        debug_assert!(adds.iter().chain(subs).all(|row| row.len() >= n));
        for at in (0..n).step_by(LANES) {
            // SAFETY: as in `apply_into`.
            unsafe {
                let slot = accumulator.as_mut_ptr().add(at).cast::<__m256i>();
                let mut v = _mm256_loadu_si256(slot);
                for row in adds {
                    v = _mm256_add_epi16(v, _mm256_loadu_si256(row.as_ptr().add(at).cast()));
                }
                for row in subs {
                    v = _mm256_sub_epi16(v, _mm256_loadu_si256(row.as_ptr().add(at).cast()));
                }
                _mm256_storeu_si256(slot, v);
            }
        }
    }

    /// `Σ clamp(a, 0, qa) · w`: clip with a max and a min, then
    /// `_mm256_madd_epi16` multiplies 16 pairs and adds neighbours into 8
    /// `i32` lanes (each product at most 32,767 · 127 in magnitude for the
    /// trainer's `i8` output weights, so a pair's sum fits `i32`).
    ///
    /// # Safety
    /// The processor must have AVX2; both slices of the same length, a
    /// multiple of 16.
    #[target_feature(enable = "avx2")]
    pub unsafe fn clipped_dot(accumulator: &[i16], weights: &[i16], qa: i16) -> i32 {
        let n = accumulator.len();
        debug_assert!(n % LANES == 0 && weights.len() == n);
        let zero = _mm256_setzero_si256();
        let ceiling = _mm256_set1_epi16(qa);
        let mut sum = _mm256_setzero_si256();
        for at in (0..n).step_by(LANES) {
            // SAFETY: `at + 16 <= n` for both slices.
            unsafe {
                let a = _mm256_loadu_si256(accumulator.as_ptr().add(at).cast());
                let w = _mm256_loadu_si256(weights.as_ptr().add(at).cast());
                let clipped = _mm256_min_epi16(_mm256_max_epi16(a, zero), ceiling);
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(clipped, w));
            }
        }
        let mut lanes = [0i32; 8];
        // SAFETY: `lanes` is 32 bytes.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), sum) };
        lanes
            .iter()
            .fold(0i32, |total, &lane| total.wrapping_add(lane))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn random_file(hidden: usize, seed: u64) -> Vec<u8> {
        random_network_file(hidden, 1, seed)
    }

    const FENS: [&str; 5] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    ];

    #[test]
    fn the_built_in_network_reads_and_knows_material() {
        let network = built_in();
        assert!(Arc::ptr_eq(&network, &built_in()), "read once");
        // The hash engine/nets/README.md quotes.
        assert_eq!(
            network.sha256(),
            "ef63db3de406152072ea704fada7eecc92c7261afef60fd1512147e4ec2ac429"
        );
        let eval = |fen: &str| network.evaluate_position(&Position::from_fen(fen).unwrap());
        let start = eval(FENS[0]);
        assert!(start.abs() < 100, "the start position is level: {start}");
        // White a queen up, from either side's point of view.
        let queen_up = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert!(eval(queen_up) > 500, "{}", eval(queen_up));
        let queen_up_black_to_move = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1";
        assert!(eval(queen_up_black_to_move) < -500);
    }

    /// Every feature set the engine reads: output buckets 1 or 8, no king
    /// buckets (versions 1 and 2), and each mirrored king-bucket layout
    /// (version 3).
    fn feature_sets() -> Vec<(usize, KingBuckets)> {
        let mut sets = vec![(1, KingBuckets::NONE), (8, KingBuckets::NONE)];
        for (buckets, kings) in [(8, 1), (1, 4), (8, 8), (8, 16), (1, 32)] {
            sets.push((buckets, KingBuckets::mirrored(kings).unwrap()));
        }
        sets
    }

    /// The start positions of the random games: [`FENS`], and Chess960
    /// ones whose castling moves the king onto its rook's square or keeps
    /// it where it is.
    fn starts() -> Vec<Position> {
        let mut starts: Vec<Position> = FENS
            .iter()
            .map(|fen| Position::from_fen(fen).unwrap())
            .collect();
        for fen in [
            // King b1 between rooks a1 and g1: O-O puts the king on the
            // rook's square (g1), O-O-O the rook on d1 beyond the king.
            "rk4r1/pppppppp/8/8/8/8/PPPPPPPP/RK4R1 w KQkq - 0 1",
            // King already on g1 with its rook on h1: O-O moves only the
            // rook; O-O-O goes to c1 from the b-file rook.
            "1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w KQkq - 0 1",
        ] {
            let position = Position::from_fen(fen).unwrap();
            starts.push(position.with_castling_mode(crate::CastlingMode::Chess960));
        }
        starts
    }

    fn network_with(hidden: usize, buckets: usize, kings: &KingBuckets, seed: u64) -> Network {
        let network =
            Network::from_bytes(&random_network_file_with(hidden, buckets, kings, seed)).unwrap();
        assert_eq!(network.output_buckets(), buckets);
        assert_eq!(network.king_buckets(), kings);
        network
    }

    #[test]
    fn updates_along_random_games_equal_refreshes_on_both_paths() {
        for (buckets, kings) in feature_sets() {
            updates_equal_refreshes(buckets, &kings);
        }
    }

    fn updates_equal_refreshes(buckets: usize, kings: &KingBuckets) {
        let network = network_with(32, buckets, kings, 1);
        let portable = network.clone().portable();
        let mut rng = SplitMix64::new(9);
        let (mut castles, mut en_passants, mut promotions, mut plies) = (0, 0, 0, 0);
        let (mut castles_960, mut bucket_changes) = (0, 0);
        for start in starts() {
            for _ in 0..20 {
                let mut position = start.clone();
                let mut accumulators = network.refresh(&position);
                let mut portable_accumulators = portable.refresh(&position);
                for _ in 0..60 {
                    let moves = position.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    let mv = moves[rng.below(moves.len())];
                    castles += usize::from(mv.is_castle());
                    en_passants += usize::from(mv.is_en_passant());
                    promotions += usize::from(mv.promotion().is_some());
                    let next = position.play(mv).unwrap();
                    let mover = position.turn();
                    castles_960 += usize::from(
                        mv.is_castle() && position.castling_mode() == crate::CastlingMode::Chess960,
                    );
                    bucket_changes += usize::from(
                        kings.orient(mover, position.king(mover))
                            != kings.orient(mover, next.king(mover)),
                    );
                    network.update(&mut accumulators, &position, &next);
                    portable.update(&mut portable_accumulators, &position, &next);
                    position = next;
                    plies += 1;
                    assert_eq!(
                        accumulators,
                        network.refresh(&position),
                        "{mv} to {position:?}"
                    );
                    assert_eq!(portable_accumulators, accumulators);
                    assert_eq!(
                        network.evaluate(&accumulators, &position),
                        portable.evaluate_position(&position)
                    );
                }
            }
        }
        assert!(
            castles > castles_960
                && castles_960 > 0
                && en_passants > 0
                && promotions > 0
                && plies > 1000,
            "{castles} castles ({castles_960} Chess960), {en_passants} en passant, \
             {promotions} promotions, {plies} plies"
        );
        // A king-bucket network met king moves into other buckets.
        assert_eq!(bucket_changes > 0, *kings != KingBuckets::NONE, "{kings:?}");
    }

    /// The search's way: an [`AccumulatorStack`] fed [`Change::of_move`]
    /// along random games (and null moves), evaluated lazily after one to
    /// four plies at a time, always equal to a refresh of the position, on
    /// the AVX2 path and the portable one alike.
    #[test]
    fn the_stack_along_random_games_equals_refreshes_on_both_paths() {
        for (buckets, kings) in feature_sets() {
            stack_equals_refreshes(buckets, &kings);
        }
    }

    fn stack_equals_refreshes(buckets: usize, kings: &KingBuckets) {
        let network = network_with(32, buckets, kings, 4);
        let portable = network.clone().portable();
        let mut rng = SplitMix64::new(11);
        let (mut castles, mut en_passants, mut promotions, mut captures, mut nulls) =
            (0, 0, 0, 0, 0);
        let (mut castles_960, mut bucket_changes) = (0, 0);
        let mut checked = 0;
        let en_passant_now = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3";
        let mut roots = starts();
        roots.push(Position::from_fen(en_passant_now).unwrap());
        for root in roots {
            for _ in 0..30 {
                let root = root.clone();
                let mut stack = AccumulatorStack::new(&network, 130);
                let mut portable_stack = AccumulatorStack::new(&portable, 130);
                stack.set_root(&network, &root);
                portable_stack.set_root(&portable, &root);
                // The path: the position at each ply.
                let mut path = vec![root];
                for _ in 0..100 {
                    let position = path.last().unwrap().clone();
                    let ply = path.len();
                    let moves = position.legal_moves();
                    let child = if !position.is_check() && rng.below(20) == 0 {
                        nulls += 1;
                        stack.push(ply, Change::NONE);
                        portable_stack.push(ply, Change::NONE);
                        position.null_move()
                    } else if moves.is_empty() {
                        break;
                    } else {
                        // En passant is rare in random play: take it
                        // whenever it is there, half the time.
                        let en_passant = moves.iter().find(|m| m.is_en_passant());
                        let mv = match en_passant {
                            Some(&mv) if rng.below(2) == 0 => mv,
                            _ => moves[rng.below(moves.len())],
                        };
                        castles += usize::from(mv.is_castle());
                        en_passants += usize::from(mv.is_en_passant());
                        promotions += usize::from(mv.promotion().is_some());
                        captures +=
                            usize::from(position.role_at(mv.to()).is_some() && !mv.is_castle());
                        castles_960 += usize::from(
                            mv.is_castle()
                                && position.castling_mode() == crate::CastlingMode::Chess960,
                        );
                        let change = Change::of_move(&position, mv);
                        let mover = position.turn();
                        bucket_changes += usize::from(network.changes_bucket(mover, &change));
                        stack.push(ply, change);
                        portable_stack.push(ply, change);
                        position.play(mv).unwrap()
                    };
                    path.push(child);
                    // Sometimes back up a few plies, as a search does, and
                    // go on from there: the entries below are stale then
                    // and must be recomputed, not trusted.
                    if path.len() > 4 && rng.below(8) == 0 {
                        let back = 1 + rng.below(3);
                        path.truncate(path.len() - back);
                        continue;
                    }
                    if rng.below(4) != 0 {
                        continue; // evaluated later, several plies at once
                    }
                    let ply = path.len() - 1;
                    let position = &path[ply];
                    let fresh = network.refresh(position);
                    assert_eq!(
                        stack.accumulators(&network, ply, position),
                        fresh,
                        "{position:?}"
                    );
                    assert_eq!(portable_stack.accumulators(&portable, ply, position), fresh);
                    let expected = network.evaluate(&fresh, position);
                    assert_eq!(stack.evaluate(&network, ply, position), expected);
                    assert_eq!(
                        portable_stack.evaluate(&portable, ply, position),
                        portable.evaluate_position(position)
                    );
                    assert_eq!(expected, portable.evaluate_position(position));
                    checked += 1;
                }
            }
        }
        assert!(
            castles > castles_960
                && castles_960 > 0
                && en_passants > 0
                && promotions > 0
                && captures > 100
                && nulls > 10,
            "{castles} castles ({castles_960} Chess960), {en_passants} en passant, \
             {promotions} promotions, {captures} captures, {nulls} null moves"
        );
        assert_eq!(bucket_changes > 0, *kings != KingBuckets::NONE, "{kings:?}");
        assert!(checked > 1000, "{checked} positions checked");
    }

    /// The refresh table, used at every position of random games for both
    /// sides: each entry, brought from whatever board it last summed to
    /// this one, equals a refresh (on both paths).
    #[test]
    fn the_refresh_table_brings_an_entry_to_any_board() {
        for kings in [4, 16, 32] {
            let network = network_with(32, 8, &KingBuckets::mirrored(kings).unwrap(), 8);
            let portable = network.clone().portable();
            let mut stacks = [
                AccumulatorStack::new(&network, 2),
                AccumulatorStack::new(&portable, 2),
            ];
            let mut rng = SplitMix64::new(kings as u64);
            let mut checked = 0;
            for start in starts() {
                for _ in 0..5 {
                    let mut position = start.clone();
                    for _ in 0..80 {
                        let fresh = network.refresh(&position);
                        for perspective in Color::ALL {
                            for (stack, net) in stacks.iter_mut().zip([&network, &portable]) {
                                stack.refresh_from_table(net, &position, perspective, 0..32);
                                assert_eq!(
                                    stack.values[..32],
                                    fresh.sides[perspective.index()][..],
                                    "{position:?}"
                                );
                            }
                            checked += 1;
                        }
                        let moves = position.legal_moves();
                        if moves.is_empty() {
                            break;
                        }
                        position = position.play(moves[rng.below(moves.len())]).unwrap();
                    }
                }
            }
            assert!(checked > 2000, "{checked}");
        }
    }

    /// The vector instructions against the portable loops on random rows
    /// of the whole `i16` range (sums that wrap included), for accumulator
    /// sizes from 16 to 1,024.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_path_equals_the_portable_one_bit_for_bit() {
        if !avx2_available() {
            return; // nothing to compare on this processor
        }
        let mut rng = SplitMix64::new(17);
        let mut row = |n: usize| -> Vec<i16> { (0..n).map(|_| rng.next_u64() as i16).collect() };
        for n in [16, 32, 48, 256, 1024] {
            for _ in 0..50 {
                let (source, a, b, c, d) = (row(n), row(n), row(n), row(n), row(n));
                let (adds, subs): (&[&[i16]], &[&[i16]]) = (&[&a, &b], &[&c, &d]);
                let mut portable = source.clone();
                apply_rows(&mut portable, adds, subs);
                let mut vector = vec![0; n];
                // SAFETY: AVX2 is there (checked above); equal lengths, a
                // multiple of 16.
                unsafe { simd::apply_into(&mut vector, &source, adds, subs) };
                assert_eq!(vector, portable);
                let mut in_place = source.clone();
                unsafe { simd::apply(&mut in_place, adds, subs) };
                assert_eq!(in_place, portable);
                // Output weights as the file holds them (i8), and any.
                let small: Vec<i16> = a.iter().map(|&w| w >> 8).collect();
                for (weights, qa) in [(&small, 255), (&b, 255), (&b, i16::MAX)] {
                    let vector = unsafe { simd::clipped_dot(&source, weights, qa) };
                    assert_eq!(vector, clipped_dot(&source, weights, qa));
                }
            }
        }
    }

    /// A king-bucket network's file: its layout reads back, and a damaged
    /// king header is an error.
    #[test]
    fn king_bucket_files_read_back_and_bad_ones_are_refused() {
        let kings = KingBuckets::mirrored(16).unwrap();
        let good = random_network_file_with(16, 8, &kings, 5);
        let network = Network::from_bytes(&good).unwrap();
        assert_eq!(
            (network.king_buckets(), network.output_buckets()),
            (&kings, 8)
        );
        assert_eq!(u16::from_le_bytes([good[4], good[5]]), 3);
        for len in (0..good.len()).step_by(4099).chain([good.len() - 1]) {
            assert!(Network::from_bytes(&good[..len]).is_err(), "{len} bytes");
        }
        let with = |offset: usize, value: u8| {
            let mut bytes = good.clone();
            bytes[offset] = value;
            Network::from_bytes(&bytes)
        };
        // Count at 20, mirror flag at 22, the map from 28.
        assert!(matches!(with(20, 0), Err(NetworkError::KingBuckets(_))));
        assert!(matches!(with(20, 65), Err(NetworkError::KingBuckets(_))));
        assert!(
            matches!(with(20, 8), Err(NetworkError::KingBuckets(_))),
            "the map names 15"
        );
        assert!(matches!(with(20, 17), Err(NetworkError::Length { .. })));
        assert!(matches!(with(22, 2), Err(NetworkError::KingBuckets(_))));
        assert!(matches!(
            with(28 + 63, 16),
            Err(NetworkError::KingBuckets(_))
        ));
        assert_eq!(with(4, 4), Err(NetworkError::Version(4)));
        // The layouts: 4, 8, 16, 32 buckets, each used, files a-d the
        // mirror of e-h.
        for count in [1, 4, 8, 16, 32] {
            let layout = KingBuckets::mirrored(count).unwrap();
            let used: std::collections::BTreeSet<u8> = layout.map.iter().copied().collect();
            assert_eq!(used.len(), count);
            assert!((0..64).all(|sq| layout.map[sq] == layout.map[sq ^ 7]));
        }
        assert_eq!(KingBuckets::mirrored(5), None);
    }

    /// A mirrored layout sees a position without castling rights and its
    /// left-right mirror alike; the buckets make the king's square matter.
    #[test]
    fn a_mirrored_layout_evaluates_a_left_right_mirror_the_same() {
        let network = network_with(16, 8, &KingBuckets::mirrored(16).unwrap(), 6);
        let pairs = [
            (
                "r4rk1/1pq2ppp/p1n1b3/3pP3/2pP4/P1N2N2/1P3PPP/R2QR1K1 b - - 3 17",
                "1kr4r/ppp2qp1/3b1n1p/3Pp3/4Pp2/2N2N1P/PPP3P1/1K1RQ2R b - - 3 17",
            ),
            (
                "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                "8/5p2/4p3/r5PK/k1p3R1/8/1P1P4/8 w - - 0 1",
            ),
        ];
        for (fen, mirror) in pairs {
            let (a, b) = (
                Position::from_fen(fen).unwrap(),
                Position::from_fen(mirror).unwrap(),
            );
            assert_eq!(
                network.evaluate_position(&a),
                network.evaluate_position(&b),
                "{fen}"
            );
        }
        // The same men with the white king a square away in another
        // bucket (g1, rank 1, to g2, rank 2): another first-layer block.
        let g1 = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/6K1 w - - 0 1").unwrap();
        let g2 = Position::from_fen("6k1/5ppp/8/8/8/8/5PPK/8 w - - 0 1").unwrap();
        let plain = network_with(16, 8, &KingBuckets::NONE, 6);
        let kings = network.king_buckets();
        assert_ne!(
            kings.orient(Color::White, g1.king(Color::White)),
            kings.orient(Color::White, g2.king(Color::White))
        );
        assert_ne!(
            network.evaluate_position(&g1),
            network.evaluate_position(&g2)
        );
        assert_ne!(plain.evaluate_position(&g1), network.evaluate_position(&g1));
    }

    /// Colours swapped and the board turned over: the side to move sees
    /// the same, so the network must say the same.
    #[test]
    fn a_mirrored_position_evaluates_the_same() {
        let network = Network::from_bytes(&random_file(16, 2)).unwrap();
        let pairs = [
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                "r3k2r/pppbbppp/2n2q1P/1P2p3/3pn3/BN2PNP1/P1PPQPB1/R3K2R b KQkq - 0 1",
            ),
            (
                "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                "8/4p1p1/8/1r3P1K/kp5R/3P4/2P5/8 b - - 0 1",
            ),
        ];
        let mut values = Vec::new();
        for (fen, mirror) in pairs {
            let (a, b) = (
                Position::from_fen(fen).unwrap(),
                Position::from_fen(mirror).unwrap(),
            );
            let value = network.evaluate_position(&a);
            assert_eq!(value, network.evaluate_position(&b), "{fen}");
            values.push(value);
        }
        assert_ne!(values[0], values[1], "a network that says one thing");
    }

    #[test]
    fn bad_files_are_errors_never_panics() {
        let good = random_file(16, 3);
        assert!(Network::from_bytes(&good).is_ok());
        // Every truncation, and one byte too many.
        for len in (0..good.len()).step_by(97).chain([good.len() - 1]) {
            assert!(Network::from_bytes(&good[..len]).is_err(), "{len} bytes");
        }
        let mut long = good.clone();
        long.push(0);
        assert!(matches!(
            Network::from_bytes(&long),
            Err(NetworkError::Length { .. })
        ));
        let with = |offset: usize, value: u16| {
            let mut bytes = good.clone();
            bytes[offset..offset + 2].copy_from_slice(&value.to_le_bytes());
            Network::from_bytes(&bytes)
        };
        assert_eq!(with(4, 4), Err(NetworkError::Version(4)));
        assert_eq!(with(4, 0), Err(NetworkError::Version(0)));
        // Version 2 reads its bucket count after the 16 bytes.
        let buckets = random_network_file(16, 4, 3);
        assert_eq!(
            Network::from_bytes(&buckets).map(|n| n.output_buckets()),
            Ok(4)
        );
        for len in (0..buckets.len()).step_by(97).chain([buckets.len() - 1]) {
            assert!(Network::from_bytes(&buckets[..len]).is_err(), "{len} bytes");
        }
        let with_buckets = |value: u16| {
            let mut bytes = buckets.clone();
            bytes[16..18].copy_from_slice(&value.to_le_bytes());
            Network::from_bytes(&bytes)
        };
        assert_eq!(with_buckets(3), Err(NetworkError::Buckets(3)));
        assert_eq!(with_buckets(0), Err(NetworkError::Buckets(0)));
        assert_eq!(with_buckets(64), Err(NetworkError::Buckets(64)));
        assert!(matches!(with_buckets(8), Err(NetworkError::Length { .. })));
        // A version-1 file said to be version 2 is short of its buckets.
        assert!(with(4, 2).is_err());
        assert_eq!(with(6, 769), Err(NetworkError::Inputs(769)));
        assert_eq!(with(8, 24), Err(NetworkError::Hidden(24)));
        assert_eq!(with(8, 0), Err(NetworkError::Hidden(0)));
        assert!(matches!(
            with(10, 0),
            Err(NetworkError::Quantisation { .. })
        ));
        assert!(matches!(
            Network::from_bytes(b"NNUE\0\0\0\0\0\0\0\0\0\0\0\0"),
            Err(NetworkError::Magic(_))
        ));
    }

    #[test]
    fn the_evaluation_is_the_documented_formula() {
        // One accumulator entry per side, by hand: hidden 16, every first
        // layer weight 0 except the white king's row, biases 10.
        let hidden = 16;
        let mut bytes = b"RKNN".to_vec();
        for field in [1, INPUTS as u16, hidden as u16, 255, 64, 400] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        let king = Piece::new(Color::White, Role::King);
        let rows = [
            input_index(Color::White, 4, king),
            input_index(Color::Black, 4, king),
        ];
        for input in 0..INPUTS {
            for _ in 0..hidden {
                let w: i16 = if input == rows[0] {
                    300
                } else if input == rows[1] {
                    50
                } else {
                    0
                };
                bytes.extend_from_slice(&w.to_le_bytes());
            }
        }
        for _ in 0..hidden {
            bytes.extend_from_slice(&10i16.to_le_bytes());
        }
        bytes.extend(std::iter::repeat_n(2u8, hidden)); // side to move's half
        bytes.extend(std::iter::repeat_n((-1i8) as u8, hidden));
        bytes.extend_from_slice(&1000i32.to_le_bytes());
        let network = Network::from_bytes(&bytes).unwrap();
        // White to move, kings on e1 and a8 (the black king's rows are 0):
        // White's accumulator 10 + 300 clipped to 255, Black's 10 + 50.
        let position = Position::from_fen("k7/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let sum = 1000 + 16 * 255 * 2 - 16 * 60;
        assert_eq!(network.evaluate_position(&position), sum * 400 / (255 * 64));
        // Black to move: the halves swap.
        let position = Position::from_fen("k7/8/8/8/8/8/8/4K3 b - - 0 1").unwrap();
        let sum = 1000 + 16 * 60 * 2 - 16 * 255;
        assert_eq!(network.evaluate_position(&position), sum * 400 / (255 * 64));
    }

    #[test]
    fn the_output_bucket_follows_the_men_on_the_board() {
        assert_eq!(
            (2..=32)
                .map(|men| output_bucket(men, 8))
                .collect::<Vec<_>>(),
            [
                0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7,
                7, 7, 7
            ]
        );
        assert!((2..=32).all(|men| output_bucket(men, 1) == 0));
        assert_eq!(output_bucket(16, 2), 0);
        assert_eq!(output_bucket(17, 2), 1);
        // Two buckets, every weight 0: the evaluation is the bias of the
        // bucket the men count picks.
        let hidden = 16;
        let mut bytes = b"RKNN".to_vec();
        for field in [2, INPUTS as u16, hidden as u16, 255, 64, 400, 2, 0] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.resize(bytes.len() + 2 * (INPUTS + 1) * hidden + 2 * 2 * hidden, 0);
        for bias in [255 * 64, -2 * 255 * 64i32] {
            bytes.extend_from_slice(&bias.to_le_bytes());
        }
        let network = Network::from_bytes(&bytes).unwrap();
        let eval = |fen: &str| network.evaluate_position(&Position::from_fen(fen).unwrap());
        assert_eq!(eval("k7/8/8/8/8/8/8/4K3 w - - 0 1"), 400);
        assert_eq!(
            eval("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
            -800
        );
        // 16 men, then 17.
        assert_eq!(eval("rnbqkbnr/ppppppp1/8/8/8/8/8/4K3 w kq - 0 1"), 400);
        assert_eq!(eval("rnbqkbnr/pppppppp/8/8/8/8/8/4K3 w kq - 0 1"), -800);
    }
}

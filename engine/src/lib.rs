//! Rookery's chess engine: the rules referee for every online game and the
//! computer opponent.
//!
//! A pure library: no async runtime, no globals with mutable state. Modules:
//!
//! - [`types`]: colours, roles, pieces, squares.
//! - [`bitboard`]: sets of squares as 64-bit words.
//! - [`attacks`]: attack tables (magic bitboards for sliders).
//! - [`position`]: the position, copy-make move application, Zobrist hashing,
//!   and the rules about material (insufficient material, the null move).
//! - [`movegen`]: fully legal move generation (castling by the Chess960
//!   rule, of which the standard game's is a case).
//! - [`chess960`]: the 960 start positions by Scharnagl number.
//! - [`fen`]: FEN parsing and writing.
//! - [`game`]: a game's history, repetitions and automatic endings.
//! - [`moves`]: the packed move type and UCI spelling.
//! - [`san`]: Standard Algebraic Notation.
//! - [`pgn`]: PGN export and import of whole games.
//! - [`perft`]: move-tree counting, for proofs and benchmarks.
//! - [`calendar`]: Gregorian dates from Unix time (a data file's
//!   provenance; hosts' PGN dates).
//! - [`rng`]: SplitMix64, the one random number generator (engine and tests).
//! - [`eval`]: static evaluation (tapered material, piece-square tables,
//!   mobility, pawn structure, king safety), its weights in one generated
//!   file that the Texel tuner (`examples/texel.rs`) rewrites.
//! - [`nnue`]: the evaluation network trained from self-play
//!   (`examples/train_net.rs`): its file, accumulators and their updates;
//!   not used by the search until it wins its matches.
//! - [`search`]: iterative-deepening alpha-beta search in a caller-owned
//!   [`search::Searcher`], with time management.
//! - [`tt`]: the transposition table.
//! - [`bench`]: the fixed-depth search benchmark (`rookery-engine bench`).
//! - [`uci`]: the UCI shell behind the `rookery-engine` binary.
//! - [`level`]: the difficulty levels shared by UCI and the server.
//! - [`datagen`]: training data for an evaluation network from self-play
//!   (`rookery-engine datagen`): the 32-byte record, the append-only file,
//!   the generator.
//! - [`ai`]: the computer player's entry point for hosts.

pub mod ai;
pub mod attacks;
pub mod bench;
pub mod bitboard;
pub mod calendar;
pub mod chess960;
pub mod datagen;
pub mod eval;
pub mod fen;
pub mod game;
/// Geometry shared with the build script (see its header comment); the
/// build script alone uses some of it.
#[allow(dead_code)]
mod geometry;
pub mod level;
pub mod movegen;
pub mod moves;
pub mod nnue;
pub mod perft;
pub mod pgn;
pub mod position;
pub mod rng;
pub mod san;
pub mod search;
pub mod text;
pub mod tt;
pub mod types;
pub mod uci;
mod zobrist;

pub use bitboard::Bitboard;
pub use chess960::{chess960_start, chess960_start_fen, chess960_start_number};
pub use fen::FenError;
pub use game::{Game, Outcome, Termination};
pub use movegen::MoveList;
pub use moves::{Move, MoveKind};
pub use pgn::{read_pgn, write_pgn, write_pgn_annotated, MoveNote, PgnError, PgnGame};
pub use position::{CastlingMode, CastlingRights, IllegalMoveError, Position, UciMoveError};
pub use san::SanError;
pub use types::{Color, Piece, Role, Square};

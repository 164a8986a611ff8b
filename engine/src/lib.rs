//! Rookery's chess engine: the rules referee for every online game and the
//! computer opponent.
//!
//! A pure library: no async runtime, no globals with mutable state. Modules:
//!
//! - [`types`]: colours, roles, pieces, squares.
//! - [`bitboard`]: sets of squares as 64-bit words.
//! - [`attacks`]: attack tables (magic bitboards for sliders).
//! - [`position`]: the position, copy-make move application, Zobrist hashing.
//! - [`movegen`]: fully legal move generation.
//! - [`fen`]: FEN parsing and writing.
//! - [`moves`]: the packed move type and UCI spelling.
//! - [`perft`]: move-tree counting, for proofs and benchmarks.
//! - [`eval`]: static evaluation (tapered material, piece-square tables,
//!   mobility, pawn structure, king safety).
//! - [`search`]: iterative-deepening alpha-beta search in a caller-owned
//!   [`search::Searcher`], with time management.
//! - [`tt`]: the transposition table.
//! - [`bench`]: the fixed-depth search benchmark (`rookery-engine bench`).
//! - [`level`]: the difficulty levels shared by UCI and the server.
//! - [`ai`]: the computer player's entry point for hosts.

pub mod ai;
pub mod attacks;
pub mod bench;
pub mod bitboard;
pub mod eval;
pub mod fen;
/// Geometry shared with the build script (see its header comment); the
/// build script alone uses some of it.
#[allow(dead_code)]
mod geometry;
pub mod level;
pub mod movegen;
pub mod moves;
pub mod perft;
pub mod position;
pub mod search;
pub mod tt;
pub mod types;
mod zobrist;

pub use bitboard::Bitboard;
pub use fen::FenError;
pub use movegen::MoveList;
pub use moves::{Move, MoveKind};
pub use position::{CastlingRights, IllegalMoveError, Position, UciMoveError};
pub use types::{Color, Piece, Role, Square};

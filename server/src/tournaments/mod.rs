//! Tournaments (issue 38): each kind in its own room, one director per
//! tournament (a lease of its row, so one node directs it at a time).
//!
//! - [`arena`]: Arena tournaments as lichess runs them: pairing waves as
//!   players become free, scoring with the fire and berserk, standings.

pub mod arena;

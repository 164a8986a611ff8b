//! Tournaments, beside `live/`: directors that pair players and create
//! ordinary games through the registry, each kind in its own room, one
//! director per tournament (a lease of its row in a cluster, so one node
//! directs it at a time).
//!
//! - [`arena`]: Arena tournaments as lichess runs them (issue 38): pairing
//!   waves as players become free, scoring with the fire and berserk,
//!   standings.
//! - [`swiss`]: Swiss tournaments of a team (issue 39), paired by the
//!   `rookery-swiss` crate (the FIDE Dutch system).

pub mod arena;
pub mod swiss;

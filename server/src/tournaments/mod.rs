//! Tournaments (issue 39 and the Arena's issue): directors that pair
//! rounds and create ordinary games through the registry, beside `live/`.
//!
//! - [`swiss`]: Swiss tournaments of a team, paired by the `rookery-swiss`
//!   crate (the FIDE Dutch system), one director per tournament.

pub mod swiss;

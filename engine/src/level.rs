//! The difficulty levels, one table for both the UCI `Level` option and the
//! server's AI seats.
//!
//! PROVISIONAL: the limits below are first guesses and `elo` is `None` until
//! the levels are calibrated by real matches (the AI issue replaces this).

/// One difficulty level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// 1 (beginner) to 8 (full strength).
    pub number: u8,
    pub name: &'static str,
    /// Calibrated strength in Elo, once measured.
    pub elo: Option<u32>,
    /// Maximum search depth in plies (`None`: no limit).
    pub max_depth: Option<u32>,
    /// Longest think per move in milliseconds, before clock limits.
    pub max_think_ms: u64,
}

pub const LEVELS: [Level; 8] = [
    Level {
        number: 1,
        name: "Beginner",
        elo: None,
        max_depth: Some(1),
        max_think_ms: 200,
    },
    Level {
        number: 2,
        name: "Novice",
        elo: None,
        max_depth: Some(2),
        max_think_ms: 300,
    },
    Level {
        number: 3,
        name: "Casual",
        elo: None,
        max_depth: Some(3),
        max_think_ms: 400,
    },
    Level {
        number: 4,
        name: "Intermediate",
        elo: None,
        max_depth: Some(4),
        max_think_ms: 500,
    },
    Level {
        number: 5,
        name: "Club",
        elo: None,
        max_depth: Some(6),
        max_think_ms: 700,
    },
    Level {
        number: 6,
        name: "Strong club",
        elo: None,
        max_depth: Some(8),
        max_think_ms: 1000,
    },
    Level {
        number: 7,
        name: "Expert",
        elo: None,
        max_depth: None,
        max_think_ms: 2000,
    },
    Level {
        number: 8,
        name: "Master",
        elo: None,
        max_depth: None,
        max_think_ms: 5000,
    },
];

/// The level numbered `number` (1–8).
pub fn level(number: u8) -> Option<&'static Level> {
    LEVELS.iter().find(|level| level.number == number)
}

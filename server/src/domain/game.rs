//! The small types of a game: colours, a game's status, what sits in a
//! seat, a clock's settings, who may join. They belong to the
//! game, not to the wire; `protocol` re-exports them because the contract
//! spells them exactly as they serialise here.

use rookery_engine::Color;
use serde::{Deserialize, Serialize};

/// A colour as the contract spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    White,
    Black,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }

    pub fn parse(text: &str) -> Option<Side> {
        match text {
            "white" => Some(Side::White),
            "black" => Some(Side::Black),
            _ => None,
        }
    }

    pub fn other(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    pub fn index(self) -> usize {
        match self {
            Side::White => 0,
            Side::Black => 1,
        }
    }

    pub const BOTH: [Side; 2] = [Side::White, Side::Black];
}

impl From<Color> for Side {
    fn from(color: Color) -> Side {
        match color {
            Color::White => Side::White,
            Color::Black => Side::Black,
        }
    }
}

impl From<Side> for Color {
    fn from(side: Side) -> Color {
        match side {
            Side::White => Color::White,
            Side::Black => Color::Black,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Waiting,
    Active,
    Finished,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Waiting => "waiting",
            Status::Active => "active",
            Status::Finished => "finished",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "waiting" => Some(Status::Waiting),
            "active" => Some(Status::Active),
            "finished" => Some(Status::Finished),
            _ => None,
        }
    }
}

/// A seat of a new game once checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatKind {
    Human,
    Ai { level: u8 },
}

/// A clock's settings: the initial time and the increment per move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSettings {
    pub initial_ms: u64,
    pub increment_ms: u64,
}

/// Who may take a game's free human seat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Anyone with the game id: an open seek, listed as joinable.
    #[default]
    Open,
    /// Only a holder of the invite secret the creator was given.
    Private,
}

impl Visibility {
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Open => "open",
            Visibility::Private => "private",
        }
    }

    pub fn parse(text: &str) -> Option<Visibility> {
        match text {
            "open" => Some(Visibility::Open),
            "private" => Some(Visibility::Private),
            _ => None,
        }
    }
}

//! [`GameError`]: why a [`LiveGame`](super::LiveGame) refused a change.

use rookery_engine::game::Termination;

/// Why a [`LiveGame`](super::LiveGame) refused a change. The game is
/// untouched. Its kind of answer is [`GameError::refusal`] (in
/// `live/error.rs`), which the HTTP and WebSocket edge maps onto the
/// contract's codes; the messages here are the ones the client reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("bad FEN: {0}")]
    BadFen(String),
    #[error("the game would be over before it starts ({0})")]
    OverBeforeStart(Termination),
    #[error("the game is over")]
    GameOver,
    #[error("no free seat in this game")]
    SeatTaken,
    #[error("this game is private: joining needs the invite secret from the creator's link")]
    InviteRequired,
    #[error("this invite secret does not open this game")]
    WrongInvite,
    #[error("you already hold the other seat of this game: a player cannot play themselves")]
    SamePlayer,
    #[error("the game has not started: waiting for an opponent to join")]
    NotStarted,
    #[error("it is not your turn")]
    NotYourTurn,
    #[error("not a move in UCI notation: {0:?}")]
    NotUci(String),
    #[error("{0} is not legal in this position")]
    Illegal(String),
    /// The engine refused a move given as a `Move` (the AI's path).
    #[error("{0}")]
    Rejected(String),
    #[error("{0}")]
    NothingToTakeBack(String),
    #[error("each side has moved: the game can no longer be aborted (resign instead)")]
    AbortTooLate,
    #[error("{0}")]
    NoRematch(String),
    /// Berserk refused: not an arena game that allows it, a move made
    /// already, no clock, or berserk twice.
    #[error("{0}")]
    NoBerserk(String),
}

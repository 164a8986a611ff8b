//! What can be asked of a live game, written once: the same typed
//! messages go to a game's actor in this process and, as JSON, to the
//! node that owns it in a cluster (`cluster/`). A new command is a new
//! [`Ask`] variant, its [`Reply`], and the actor's handling of it; the
//! proxy and the owner's side forward every ask alike.
//!
//! Two commands stay in process ([`super::actor::Command`]): a snapshot
//! of the whole game and a subscription to its states, whose answers are
//! not messages.

use serde::{Deserialize, Serialize};

use super::error::LiveError;
use super::game::Answer;
use crate::domain::PlayerRef;
use crate::protocol::{GameState, Side};
use crate::token::TokenHash;

/// What a seat holder can do.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "do", content = "with", rename_all = "snake_case")]
pub enum Action {
    Move(String),
    Resign,
    Draw,
    DropDrawOffer(Answer),
    Takeback,
    DropTakeback(Answer),
    /// Offer or accept a rematch; the seat's token (its secret) derives the
    /// player's seat token in the new game. On the cluster's wire it
    /// travels as it came: NATS must be a trusted network
    /// (docs/architecture.md).
    Rematch(SeatSecret),
    DropRematch(Answer),
    Abort,
    /// Halve one's clock before one's first move (an arena game's rule; the
    /// edge checks the arena allows it).
    Berserk,
}

/// A seat token as the player sent it. Its `Debug` hides it, so an action
/// can be logged.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SeatSecret(pub String);

impl std::fmt::Debug for SeatSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeatSecret([redacted])")
    }
}

/// A question or order for a game.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Ask {
    /// The state.
    State,
    /// The state and the `(epoch, seq)` of the last change published to
    /// the cluster (a proxy on another node starts from it).
    Synced,
    /// Which seat `token` holds in this game, if any.
    Authorize {
        token: TokenHash,
    },
    /// The seat the registered player `player_id` holds in this game, if
    /// any, with its token's hash (so an account acts for its own seat).
    SeatOf {
        player_id: String,
    },
    Join {
        token: TokenHash,
        player: Option<PlayerRef>,
        /// The hash of the invite secret sent, if any.
        invite: Option<TokenHash>,
    },
    Act {
        token: TokenHash,
        action: Action,
    },
    /// Writes the game as it is now (after a restart, the clock restarted
    /// charged only the thinking done before the stop).
    Persist,
    /// Ends the game if it is still stale: waiting with no change for
    /// `waiting_ms`, or untimed and active with no change for `idle_ms`.
    Expire {
        waiting_ms: i64,
        idle_ms: i64,
    },
    /// An operator ends the game (`aborted`).
    Abort,
    /// A WebSocket opened (`delta` 1) or closed (-1) for a seat or, with
    /// `side: None`, for a spectator. Told, not asked: no reply.
    Presence {
        side: Option<Side>,
        delta: i32,
    },
    /// The WebSockets another node of a cluster has open on this game, as
    /// whole counts (its proxy's). Sent on every change and again every
    /// [`PRESENCE_REFRESH`] while any is open; the owner stops counting a
    /// node's connections it has not heard of for [`PRESENCE_EXPIRY`] (the
    /// node died or hangs). Told, not asked: no reply.
    NodePresence {
        node: String,
        spectators: u32,
        white: u32,
        black: u32,
    },
}

/// How often a cluster node tells a game's owner again the connections it
/// has open on that game ([`Ask::NodePresence`]).
pub const PRESENCE_REFRESH: std::time::Duration = std::time::Duration::from_secs(5);

/// How long an owner keeps counting another node's connections without
/// hearing from it (three refreshes missed): a dead or paused node's
/// sockets stop showing in `connected` and `spectators` after this.
pub const PRESENCE_EXPIRY: std::time::Duration = std::time::Duration::from_secs(15);

/// A game's answer to an [`Ask`], one variant per kind of question.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reply", content = "value", rename_all = "snake_case")]
pub enum Reply {
    State(Box<GameState>),
    Synced(Box<GameState>, (i64, u64)),
    Seat(Option<Side>),
    SeatOf(Option<(Side, TokenHash)>),
    Joined(Result<(Box<GameState>, Side), LiveError>),
    /// An action's or an abort's outcome: the state after it.
    Done(Result<Box<GameState>, LiveError>),
    Persisted(Result<(), LiveError>),
    Expired(bool),
}

impl Ask {
    /// The answer that carries `err` for this question, for those whose
    /// answer can be an error; the others are simply asked again.
    pub fn failed(&self, err: LiveError) -> Option<Reply> {
        match self {
            Ask::Join { .. } => Some(Reply::Joined(Err(err))),
            Ask::Act { .. } | Ask::Abort => Some(Reply::Done(Err(err))),
            Ask::Persist => Some(Reply::Persisted(Err(err))),
            Ask::State
            | Ask::Synced
            | Ask::Authorize { .. }
            | Ask::SeatOf { .. }
            | Ask::Expire { .. }
            | Ask::Presence { .. }
            | Ask::NodePresence { .. } => None,
        }
    }
}

impl Reply {
    /// The error this answer carries, if any.
    pub fn error(&self) -> Option<&LiveError> {
        match self {
            Reply::Joined(Err(err)) | Reply::Done(Err(err)) | Reply::Persisted(Err(err)) => {
                Some(err)
            }
            _ => None,
        }
    }

    /// An answer of another kind than the question's: a bug, never the
    /// client's fault.
    pub fn unexpected(self) -> LiveError {
        LiveError::internal(format!("unexpected answer {self:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "Moved" stays this floor's retry signal after the trip, whatever
    /// made the owner say it (a lost lease, a node shutting down).
    #[test]
    fn moved_stays_moved() {
        for err in [LiveError::Moved, LiveError::ShuttingDown] {
            let json = serde_json::to_string(&Reply::Persisted(Err(err))).unwrap();
            let reply: Reply = serde_json::from_str(&json).unwrap();
            assert!(matches!(reply.error(), Some(LiveError::Moved)), "{json}");
        }
    }

    #[test]
    fn asks_round_trip() {
        let ask = Ask::Act {
            token: TokenHash("ab".repeat(32)),
            action: Action::DropRematch(Answer::Withdraw),
        };
        let json = serde_json::to_string(&ask).unwrap();
        let back: Ask = serde_json::from_str(&json).unwrap();
        assert_eq!(format!("{ask:?}"), format!("{back:?}"));
        let secret = Action::Rematch(SeatSecret("s3cret".into()));
        assert!(!format!("{secret:?}").contains("s3cret"));
    }
}

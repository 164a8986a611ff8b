//! What crosses NATS between the nodes: the subjects of a game, the
//! changes an owner publishes, and the requests other nodes send it (the
//! live floor's own [`Ask`], answered with its [`Reply`], or with the
//! error that the game is not there any more).

use axum::body::Bytes;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::Cluster;
use crate::live::error::LiveError;
use crate::live::messages::{Ask, Reply};
use crate::protocol::{GameState, Presence};

pub(super) fn command_subject(game: Uuid) -> String {
    format!("rookery.game.{game}.cmd")
}

pub(super) fn state_subject(game: Uuid) -> String {
    format!("rookery.game.{game}.state")
}

/// The subject of every node's events (challenges, games started and
/// finished, chat lines): one subject, the player in the message.
pub(super) const EVENTS_SUBJECT: &str = "rookery.events";

/// An event relayed between nodes: which node sent it (it skips its own),
/// for whom, and the NDJSON line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct EventMessage {
    pub origin: String,
    pub player: String,
    pub line: String,
}

/// The subject on which each node announces its open event streams.
pub(super) const PRESENCE_SUBJECT: &str = "rookery.presence";

/// One part of a node's announcement of who has an event stream open on
/// it: announcement `round`, part `part` of `parts` (a long list is cut
/// into parts well under NATS's 1 MiB message limit).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct PresenceMessage {
    pub origin: String,
    pub round: u64,
    pub part: u32,
    pub parts: u32,
    pub players: Vec<String>,
}

/// A change an owner publishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    State { game: Box<GameState> },
    Presence { presence: Presence },
}

/// One published change, numbered: `(epoch, seq)` grows with every message
/// of a game, across owners too (a new owner has a higher epoch).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct StateMessage {
    pub(super) epoch: i64,
    pub(super) seq: u64,
    pub(super) change: Change,
}

/// An owner's answer on the wire: the game's reply, or an error when the
/// game has no actor there any more (then [`LiveError::Moved`]).
pub(super) type WireReply = Result<Reply, LiveError>;

/// Why a forwarded request has no answer.
#[derive(Debug)]
pub(super) enum Forward {
    /// Nobody owns the game right now (its owner died or let it go).
    NoOwner,
    /// The owner answered with an error.
    Refused(LiveError),
    /// NATS failed, or the answer was unreadable.
    Failed(String),
}

impl Cluster {
    /// Sends `ask` to the owner of `game` and waits for its answer, or
    /// [`Forward::NoOwner`] once the owner is silent past its lease's
    /// expiry: a paused or hung node keeps its NATS subscription (the
    /// request would only time out), but it stopped renewing, so the game
    /// is free to take (its later writes are fenced).
    pub(super) async fn request(&self, game: Uuid, ask: &Ask) -> Result<Reply, Forward> {
        tokio::select! {
            answer = self.request_owner(game, ask) => answer,
            () = self.owner_silent(game) => {
                tracing::warn!(%game, "the game's owner is silent past its lease: taking it over");
                Err(Forward::NoOwner)
            }
        }
    }

    /// Completes when `game`'s lease has expired (or is gone) while a
    /// request waits: looked at every [`Cluster::sweep_period`].
    async fn owner_silent(&self, game: Uuid) {
        let period = self.sweep_period();
        loop {
            tokio::time::sleep(period).await;
            match self.inner.store.lease_of(game).await {
                Ok(Some(lease)) if lease.is_live(crate::store::now_ms()) => {}
                Ok(_) => return,
                // The database will tell next time; the request may answer.
                Err(err) => err.log(),
            }
        }
    }

    async fn request_owner(&self, game: Uuid, ask: &Ask) -> Result<Reply, Forward> {
        let payload = serde_json::to_vec(ask).map_err(|err| Forward::Failed(err.to_string()))?;
        let reply = self
            .inner
            .client
            .request(command_subject(game), payload.into())
            .await
            .map_err(|err| match err.kind() {
                async_nats::client::RequestErrorKind::NoResponders => Forward::NoOwner,
                _ => Forward::Failed(err.to_string()),
            })?;
        let answer: WireReply = serde_json::from_slice(&reply.payload)
            .map_err(|err| Forward::Failed(format!("unreadable answer: {err}")))?;
        answer.map_err(Forward::Refused)
    }

    /// Sends `ask` to the owner without waiting (presence).
    pub(super) fn tell(&self, game: Uuid, ask: &Ask) {
        if let Ok(payload) = serde_json::to_vec(ask) {
            let _ = self
                .inner
                .outbox
                .send((command_subject(game), Bytes::from(payload)));
        }
    }
}

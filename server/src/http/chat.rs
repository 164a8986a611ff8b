//! A game's chat at the edge (issue 37): one way in for a line, whether it
//! comes over the game's WebSocket (`{"type": "chat"}`) or lichess's
//! `POST /api/{board|bot}/game/{id}/chat`, and one way out, the game's
//! chat channel on the event hub, which every reader (WebSockets, board
//! streams) hears and filters for its own room and its own blocks.
//!
//! A line is taken when, in order: it has 1 to 140 characters once
//! cleaned (the word filter then applies, `social::chat`); its writer is
//! not timed out by a moderator (403 `forbidden`); in the players' room,
//! no one else seated there blocks its writer (403 `forbidden`); and the
//! writer's flood gate lets it through (else it is dropped:
//! [`Posted::Dropped`]). It is then stored and pushed.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::domain::PlayerRef;
use crate::http::error::ApiError;
use crate::protocol::Side;
use crate::social::chat::Room;
use crate::store::now_ms;
use crate::store::social::BLOCK;
use crate::AppState;

/// The key of a game's chat on the event hub.
pub fn chat_key(id: Uuid) -> String {
    format!("chat:{id}")
}

/// What became of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Posted {
    /// Stored and pushed, as it will be shown (cleaned, filtered).
    Sent(String),
    /// Over the flood gate: neither stored nor pushed.
    Dropped,
}

/// One line as the hub carries it (lichess's `chatLine`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HubLine {
    #[serde(rename = "type")]
    pub kind: String,
    pub room: String,
    pub username: String,
    pub text: String,
}

/// The names (lower case) whose lines `reader` does not see: the people
/// they block.
pub async fn muted_by(state: &AppState, reader: Option<&str>) -> Result<HashSet<String>, ApiError> {
    let Some(reader) = reader else {
        return Ok(HashSet::new());
    };
    Ok(state
        .store()
        .relations_of(reader, BLOCK)
        .await?
        .into_iter()
        .map(|named| named.name.to_lowercase())
        .collect())
}

/// Posts `raw` as `writer` in game `id`'s `room`.
pub async fn post(
    state: &AppState,
    writer: &PlayerRef,
    id: Uuid,
    room: Room,
    raw: &str,
) -> Result<Posted, ApiError> {
    let text = state
        .chat
        .prepare(raw)
        .map_err(|refused| ApiError::BadRequest(refused.message()))?;
    let store = state.store();
    if let Some(until) = store
        .standing(&writer.id)
        .await?
        .and_then(|standing| standing.chat_silenced_until)
        .filter(|until| *until > now_ms())
    {
        let minutes = (until - now_ms() + 59_999) / 60_000;
        return Err(ApiError::Forbidden(format!(
            "a moderator timed you out of chat: {minutes} more minutes"
        )));
    }
    if room == Room::Player {
        let live = state.registry.snapshot(id).await?;
        for side in Side::BOTH {
            let Some(seated) = live.seat(side).player() else {
                continue;
            };
            if seated.id != writer.id && store.blocks_between(&seated.id, &writer.id).await? {
                return Err(ApiError::Forbidden(
                    "you cannot chat with this player".into(),
                ));
            }
        }
    }
    if !state.chat.admit(&writer.id, id, room) {
        tracing::debug!(game = %id, player = %writer.id, "chat line dropped: flood");
        metrics::counter!("rookery_chat_dropped_total").increment(1);
        return Ok(Posted::Dropped);
    }
    store
        .add_chat(&id.to_string(), room.as_str(), &writer.name, &text)
        .await?;
    let line =
        json!({"type": "chatLine", "room": room.as_str(), "username": writer.name, "text": text});
    state.registry.events().send(&chat_key(id), &line);
    Ok(Posted::Sent(text))
}

/// Game `id`'s lines in `room`, oldest first, without those of the people
/// in `muted`: (username, text).
pub async fn history(
    state: &AppState,
    id: Uuid,
    room: Room,
    muted: &HashSet<String>,
) -> Result<Vec<(String, String)>, ApiError> {
    let mut lines = state.store().chat(&id.to_string(), room.as_str()).await?;
    lines.retain(|(user, _)| !muted.contains(&user.to_lowercase()));
    Ok(lines)
}

/// A line from the hub, if it is for `room` (any room: `None`) and its
/// writer is not muted.
pub fn readable(line: &str, room: Option<Room>, muted: &HashSet<String>) -> Option<HubLine> {
    let line: HubLine = serde_json::from_str(line).ok()?;
    if room.is_some_and(|room| room.as_str() != line.room) {
        return None;
    }
    if muted.contains(&line.username.to_lowercase()) {
        return None;
    }
    Some(line)
}

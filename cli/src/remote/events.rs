//! The person's event stream, `GET /api/stream/event` (lichess's): one JSON
//! object a line, a bare newline as a keep-alive. It opens with what is
//! open now (a `challenge` line for each open challenge, a `gameStart` line
//! for each active game), then says what happens as it happens. Nothing
//! marks where the opening ends, so readers match events by challenge or
//! game id rather than by their order.

use std::time::Duration;

use serde::Deserialize;

use super::client::{describe, Challenge, EventGame, RemoteError, Server};

/// The stream is given up as dead after this long without a byte: the
/// server sends a keep-alive every 6 seconds.
pub const SILENCE_LIMIT: Duration = Duration::from_secs(30);

/// Reconnection attempts after the stream ends, a second apart.
const RECONNECT_ATTEMPTS: u32 = 10;

/// The longest line taken: a challenge or a game is a few hundred bytes.
const MAX_LINE: usize = 1 << 20;

/// One event; the fields the terminal uses.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    /// A challenge to or from the person: made, or open when the stream
    /// opened.
    #[serde(rename = "challenge")]
    Challenge { challenge: Challenge },
    #[serde(rename = "challengeCanceled")]
    ChallengeCanceled { challenge: Challenge },
    #[serde(rename = "challengeDeclined")]
    ChallengeDeclined { challenge: Challenge },
    /// A game of the person's started (or is active, when the stream
    /// opened).
    #[serde(rename = "gameStart")]
    GameStart { game: EventGame },
    /// A kind this client does not use (`gameFinish`), or does not know
    /// (a newer server's).
    #[serde(other)]
    Other,
}

/// An open event stream.
pub struct EventStream {
    response: reqwest::Response,
    /// Bytes read and not yet cut into lines.
    pending: Vec<u8>,
}

impl EventStream {
    pub fn new(response: reqwest::Response) -> EventStream {
        EventStream {
            response,
            pending: Vec::new(),
        }
    }

    /// The next event; `Ok(None)` when the server ended the stream (it
    /// does when it shuts down, or when the token is revoked).
    pub async fn next(&mut self) -> Result<Option<Event>, RemoteError> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line);
                let text = text.trim();
                if text.is_empty() {
                    continue; // a keep-alive
                }
                match serde_json::from_str::<Event>(text) {
                    Ok(event) => return Ok(Some(event)),
                    // One unreadable event is not worth the stream.
                    Err(e) => eprintln!("rookery: an unreadable event ({e}) was skipped"),
                }
                continue;
            }
            if self.pending.len() > MAX_LINE {
                return Err(RemoteError::plain(
                    "the event stream sent a line too long to read",
                ));
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.pending.extend_from_slice(&bytes),
                Ok(None) => return Ok(None),
                Err(e) => {
                    return Err(RemoteError::plain(format!(
                        "the event stream broke: {}",
                        describe(&e)
                    )))
                }
            }
        }
    }
}

/// Opens the stream again after it ended (a server restart, a network
/// blip): ten tries, a second apart, said on stderr. A refusal (a revoked
/// token, say) is final at once.
pub async fn reopen(server: &Server) -> Result<EventStream, String> {
    eprintln!("rookery: the event stream ended; reconnecting");
    let mut last = String::new();
    for _ in 0..RECONNECT_ATTEMPTS {
        tokio::time::sleep(Duration::from_secs(1)).await;
        match server.events().await {
            Ok(stream) => {
                eprintln!("rookery: reconnected");
                return Ok(stream);
            }
            Err(why) if why.is_refusal() => return Err(why.to_string()),
            Err(why) => last = why.to_string(),
        }
    }
    Err(format!("gave up reconnecting to the event stream: {last}"))
}

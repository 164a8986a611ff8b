//! The HTTP side of the contract and its wire types.

use std::time::Duration;

use reqwest::Url;
use serde::Deserialize;
use serde_json::{json, Value};

use super::origin;

/// How long one HTTP request or WebSocket connection attempt may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, Deserialize)]
pub struct GameState {
    pub id: String,
    pub status: String,
    pub white: SeatInfo,
    pub black: SeatInfo,
    pub initial_fen: String,
    pub moves: Vec<String>,
    pub turn: String,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub termination: Option<String>,
    #[serde(default)]
    pub clock: Option<ClockState>,
    #[serde(default)]
    pub draw_offer: Option<String>,
    /// The side asking to take back its last move.
    #[serde(default)]
    pub takeback_offer: Option<String>,
    /// The side offering a rematch of this finished game.
    #[serde(default)]
    pub rematch_offer: Option<String>,
    /// The agreed rematch's game id.
    #[serde(default)]
    pub rematch: Option<String>,
    #[serde(default)]
    pub spectators: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SeatInfo {
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub level: Option<u8>,
    #[serde(default)]
    pub taken: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ClockState {
    pub white_ms: i64,
    pub black_ms: i64,
    #[serde(default)]
    pub running: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Seat {
    pub color: String,
    pub token: String,
}

#[derive(Debug, Deserialize)]
struct GameWithSeat {
    game: GameState,
    seat: Option<Seat>,
}

#[derive(Debug, Deserialize)]
struct GameList {
    games: Vec<GameState>,
}

/// A server error in the contract's shape.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
struct ErrorDetail {
    code: String,
    message: String,
}

/// What went wrong talking to the server.
#[derive(Debug)]
pub struct RemoteError {
    /// The contract's error code, when the server answered with one.
    pub code: Option<String>,
    pub message: String,
}

impl RemoteError {
    fn plain(message: impl Into<String>) -> RemoteError {
        RemoteError {
            code: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "server says: {} ({code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A rookery-server reached over HTTP.
pub struct Server {
    /// `http://host:port`, no trailing slash.
    pub base: String,
    http: reqwest::Client,
    player_token: Option<String>,
}

impl Server {
    pub fn new(url: &str, player_token: Option<String>) -> Result<Server, String> {
        let with_scheme = if url.contains("://") {
            url.to_string()
        } else {
            format!("http://{url}")
        };
        let parsed =
            Url::parse(&with_scheme).map_err(|e| format!("{url:?} is not a server URL: {e}"))?;
        match parsed.scheme() {
            "http" => {}
            // Built without TLS to keep the client small; a TLS-terminating
            // proxy in front of the server needs a TLS-enabled build.
            "https" => {
                return Err("https servers are not supported by this build: use http://".into())
            }
            other => return Err(format!("{url:?}: unsupported scheme {other}")),
        }
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Server {
            base: origin(&parsed),
            http,
            player_token,
        })
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.player_token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, RemoteError> {
        let response = request
            .send()
            .await
            .map_err(|e| RemoteError::plain(format!("cannot reach {}: {e}", self.base)))?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        Err(match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => RemoteError {
                code: Some(body.error.code),
                message: body.error.message,
            },
            Err(_) => RemoteError::plain(format!("{} answered {status}", self.base)),
        })
    }

    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, RemoteError> {
        let response = self.send(request).await?;
        let value: Value = response.json().await.map_err(|e| {
            RemoteError::plain(format!("unreadable answer from {}: {e}", self.base))
        })?;
        serde_json::from_value(value)
            .map_err(|e| RemoteError::plain(format!("unexpected answer from {}: {e}", self.base)))
    }

    /// Creates a game; returns it, the creator's seat and the invite link.
    pub async fn create(
        &self,
        body: Value,
    ) -> Result<(GameState, Option<Seat>, String), RemoteError> {
        let request = self.authorized(
            self.http
                .post(format!("{}/api/games", self.base))
                .json(&body),
        );
        let raw: Value = self.json(request).await?;
        let created: GameWithSeat = serde_json::from_value(raw.clone()).map_err(|e| {
            RemoteError::plain(format!("unexpected answer from {}: {e}", self.base))
        })?;
        let mut link = format!("{}/games/{}", self.base, created.game.id);
        // Servers that protect friend games with an invite secret return it
        // with the creation; the link must carry it for the friend to join.
        // It goes in the fragment, as in the web client's links: a fragment
        // is never sent to a server, so the secret stays out of access logs.
        if let Some(invite) = raw.get("invite").and_then(Value::as_str) {
            if let Ok(mut url) = Url::parse(&link) {
                url.set_fragment(Some(&format!("invite={}", encode(invite))));
                link = url.to_string();
            }
        }
        Ok((created.game, created.seat, link))
    }

    pub async fn join(
        &self,
        id: &str,
        invite: Option<&str>,
    ) -> Result<(GameState, Seat), RemoteError> {
        let body = match invite {
            Some(invite) => json!({ "invite": invite }),
            None => json!({}),
        };
        let request = self.authorized(
            self.http
                .post(format!("{}/api/games/{}/join", self.base, encode(id)))
                .json(&body),
        );
        let joined: GameWithSeat = self.json(request).await?;
        let seat = joined
            .seat
            .ok_or_else(|| RemoteError::plain("the server gave no seat"))?;
        Ok((joined.game, seat))
    }

    pub async fn game(&self, id: &str) -> Result<GameState, RemoteError> {
        self.json(
            self.http
                .get(format!("{}/api/games/{}", self.base, encode(id))),
        )
        .await
    }

    pub async fn live_games(&self) -> Result<Vec<GameState>, RemoteError> {
        let list: GameList = self
            .json(
                self.http
                    .get(format!("{}/api/games?status=active&limit=100", self.base)),
            )
            .await?;
        Ok(list.games)
    }

    pub async fn pgn(&self, id: &str) -> Result<String, RemoteError> {
        let response = self
            .send(
                self.http
                    .get(format!("{}/api/games/{}/pgn", self.base, encode(id))),
            )
            .await?;
        response
            .text()
            .await
            .map_err(|e| RemoteError::plain(format!("cannot read the PGN: {e}")))
    }

    pub fn ws_url(&self, id: &str, token: Option<&str>) -> String {
        let base = self.base.replacen("http://", "ws://", 1);
        match token {
            Some(token) => format!("{base}/ws/games/{}?token={}", encode(id), encode(token)),
            None => format!("{base}/ws/games/{}", encode(id)),
        }
    }
}

/// Percent-encodes a path or query component.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// True for the contract's "no free seat" answer.
pub fn is_seat_taken(error: &RemoteError) -> bool {
    error.code.as_deref() == Some("seat_taken")
}

/// True when the server answered 404 for the game.
pub fn is_not_found(error: &RemoteError) -> bool {
    error.code.as_deref() == Some("not_found")
}

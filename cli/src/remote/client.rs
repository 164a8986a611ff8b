//! The HTTP side of the contract and its wire types, over HTTP or HTTPS
//! (see [`super::tls`]). Challenges and the event stream speak lichess's
//! dialect (form-encoded bodies, lichess's shapes, errors as a flat
//! `{"error": "..."}`); their types are here too.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, COOKIE, SET_COOKIE};
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
    /// `standard` or `chess960` (servers before issue 40 send none:
    /// standard).
    #[serde(default)]
    pub variant: Option<String>,
}

impl GameState {
    /// Whether the game is Chess960: its castling is written king takes
    /// rook in UCI, both ways.
    pub fn is_chess960(&self) -> bool {
        self.variant.as_deref() == Some("chess960")
    }
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

/// A server error in the contract's shape, or in lichess's flat one (the
/// challenge routes).
#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ErrorDetail {
    Coded { code: String, message: String },
    Flat(String),
}

/// `POST /api/account/tokens`' answer (the token is shown this once).
#[derive(Debug, Deserialize)]
pub struct NewToken {
    pub id: String,
    pub token: String,
}

/// `GET /api/account`: the fields the terminal shows.
#[derive(Debug, Deserialize)]
pub struct Account {
    /// The name as chosen (lichess's `username`).
    pub username: String,
}

/// A challenge, as lichess's ChallengeJson: the fields the terminal uses.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Challenge {
    pub id: String,
    /// `created`, `accepted`, `declined`, `canceled` or `expired`.
    pub status: String,
    pub challenger: ChallengeUser,
    pub dest_user: ChallengeUser,
    #[serde(default)]
    pub rated: bool,
    #[serde(default)]
    pub speed: String,
    pub time_control: TimeControl,
    /// `{"key": "standard"}` or `{"key": "chess960", ...}` (older servers
    /// send none: standard).
    #[serde(default)]
    pub variant: Option<VariantName>,
    /// The challenger's colour, drawn when the challenge was made.
    #[serde(default)]
    pub final_color: Option<String>,
    /// `in` (to the reader) or `out` (from the reader).
    #[serde(default)]
    pub direction: Option<String>,
    #[serde(default)]
    pub created_at: i64,
    #[serde(default)]
    pub expires_at: i64,
    /// What the one challenged said in declining (lichess's words for
    /// the reason's key).
    #[serde(default)]
    pub decline_reason: Option<String>,
    /// The game an accepted challenge became (its id is the challenge's).
    #[serde(default)]
    pub game_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChallengeUser {
    pub name: String,
    #[serde(default)]
    pub rating: Option<f64>,
    #[serde(default)]
    pub provisional: bool,
}

/// A challenge's variant: its key.
#[derive(Debug, Clone, Deserialize)]
pub struct VariantName {
    pub key: String,
}

impl Challenge {
    pub fn is_chess960(&self) -> bool {
        self.variant.as_ref().is_some_and(|v| v.key == "chess960")
    }
}

/// `{"type": "clock", "limit", "increment", "show"}` or
/// `{"type": "unlimited"}`.
#[derive(Debug, Clone, Deserialize)]
pub struct TimeControl {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub show: Option<String>,
}

/// `GET /api/challenge`: the open challenges to and from the person.
#[derive(Debug, Deserialize)]
pub struct ChallengeLists {
    #[serde(rename = "in", default)]
    pub incoming: Vec<Challenge>,
    #[serde(rename = "out", default)]
    pub outgoing: Vec<Challenge>,
}

/// A game in an event (lichess's `gameStart` and `gameFinish`): the
/// fields the terminal uses.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventGame {
    pub game_id: String,
    /// The colour the event's reader plays.
    pub color: String,
    /// The arena the game belongs to (lichess's `tournamentId`).
    #[serde(default)]
    pub tournament_id: Option<String>,
    /// The Swiss tournament the game belongs to.
    #[serde(default)]
    pub swiss_id: Option<String>,
}

/// A challenge's terms, as `rookery challenge` asks for them.
#[derive(Debug, Clone)]
pub struct ChallengeTerms {
    /// Seconds, and seconds added a move; none: an untimed game.
    pub clock: Option<(u64, u64)>,
    /// `white`, `black` or `random`: the challenger's colour.
    pub color: &'static str,
    pub rated: bool,
    /// A Chess960 game, from this start (none: the server draws one);
    /// `None`: standard chess.
    pub chess960: Option<Option<u32>>,
}

/// How the one challenged (or the challenger) answers a challenge.
pub enum ChallengeAnswer<'a> {
    Accept,
    /// With lichess's reason key (`later`, `tooFast`, ...).
    Decline(&'a str),
    Cancel,
}

/// The web client's session cookie, which `rookery login` holds only
/// while it makes a token.
const SESSION_COOKIE: &str = "rookery_session";

/// What went wrong talking to the server.
#[derive(Debug)]
pub struct RemoteError {
    /// The contract's error code, when the server answered with one.
    pub code: Option<String>,
    pub message: String,
    /// The HTTP status, when the server answered.
    pub status: Option<u16>,
}

impl RemoteError {
    pub(super) fn plain(message: impl Into<String>) -> RemoteError {
        RemoteError {
            code: None,
            message: message.into(),
            status: None,
        }
    }

    /// The server refused the request itself (a 4xx answer): trying it
    /// again as it is would not help.
    pub fn is_refusal(&self) -> bool {
        self.status
            .is_some_and(|status| (400..500).contains(&status))
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

/// A rookery-server reached over HTTP or HTTPS.
#[derive(Clone)]
pub struct Server {
    /// `http://host:port` or `https://host:port`, no trailing slash.
    pub base: String,
    http: reqwest::Client,
    /// Sent as `Authorization: Bearer` with every request: a player token
    /// (`--player-token`) or the stored login's API token.
    token: Option<String>,
    /// The token is the stored login's (a refusal then says how to renew
    /// it).
    stored_login: bool,
    /// For an `https://` server: the TLS configuration its WebSockets use
    /// too.
    tls: Option<Arc<rustls::ClientConfig>>,
}

/// A server URL, `http://` when no scheme is given.
fn parse_server_url(url: &str) -> Result<Url, String> {
    let with_scheme = if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    };
    let parsed =
        Url::parse(&with_scheme).map_err(|e| format!("{url:?} is not a server URL: {e}"))?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(format!("{url:?}: unsupported scheme {other}")),
    }
}

impl Server {
    /// A server at `url` (`http://` or `https://`); `ca_cert` adds a
    /// private CA to the trusted roots of an `https://` one.
    pub fn new(url: &str, ca_cert: Option<&Path>) -> Result<Server, String> {
        let parsed = parse_server_url(url)?;
        let tls = match parsed.scheme() {
            "https" => Some(super::tls::client_config(ca_cert)?),
            _ => None,
        };
        let mut http = reqwest::Client::builder().timeout(REQUEST_TIMEOUT);
        if let Some(tls) = &tls {
            http = http.use_preconfigured_tls((**tls).clone());
        }
        let http = http
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Server {
            base: origin(&parsed),
            http,
            token: None,
            stored_login: false,
            tls,
        })
    }

    /// Sends `token` as `Authorization: Bearer` from now on; `stored`:
    /// it is the stored login's.
    pub fn authenticate(&mut self, token: String, stored: bool) {
        self.token = Some(token);
        self.stored_login = stored;
    }

    /// Whether the server is reached over TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, RemoteError> {
        let response = request.send().await.map_err(|e| {
            let mut why = format!("cannot reach {}: {}", self.base, describe(&e));
            if why.contains("UnknownIssuer") {
                why.push_str(
                    " (no trusted CA signed its certificate: for a private CA, give --ca-cert FILE)",
                );
            }
            RemoteError::plain(why)
        })?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        let mut error = match serde_json::from_str::<ErrorBody>(&text) {
            Ok(ErrorBody {
                error: ErrorDetail::Coded { code, message },
            }) => RemoteError {
                code: Some(code),
                message,
                status: None,
            },
            Ok(ErrorBody {
                error: ErrorDetail::Flat(message),
            }) => RemoteError::plain(message),
            Err(_) => RemoteError::plain(format!("{} answered {status}", self.base)),
        };
        error.status = Some(status.as_u16());
        if self.stored_login && status == reqwest::StatusCode::UNAUTHORIZED {
            error.message.push_str(&format!(
                "; the login stored for {base} no longer works: \
                 rookery login --server {base} again, or rookery logout --forget",
                base = self.base
            ));
        }
        Err(error)
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
            self.authorized(
                self.http
                    .get(format!("{}/api/games/{}", self.base, encode(id))),
            ),
        )
        .await
    }

    pub async fn live_games(&self) -> Result<Vec<GameState>, RemoteError> {
        let list: GameList = self
            .json(
                self.authorized(
                    self.http
                        .get(format!("{}/api/games?status=active&limit=100", self.base)),
                ),
            )
            .await?;
        Ok(list.games)
    }

    pub async fn pgn(&self, id: &str) -> Result<String, RemoteError> {
        let response =
            self.send(self.authorized(self.http.get(format!(
                "{}/api/games/{}/pgn",
                self.base,
                encode(id)
            ))))
            .await?;
        response
            .text()
            .await
            .map_err(|e| RemoteError::plain(format!("cannot read the PGN: {e}")))
    }

    // ------------------------------------------------------------ accounts

    /// `POST /api/session`: logs in with a name and password; returns the
    /// session cookie's value and the account.
    pub async fn log_in(
        &self,
        name: &str,
        password: &str,
    ) -> Result<(String, Account), RemoteError> {
        let response = self
            .send(
                self.http
                    .post(format!("{}/api/session", self.base))
                    .json(&json!({ "name": name, "password": password })),
            )
            .await?;
        let session = response
            .headers()
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .find_map(|cookie| {
                let (pair, _attributes) = cookie.split_once(';').unwrap_or((cookie, ""));
                let (name, value) = pair.split_once('=')?;
                (name.trim() == SESSION_COOKIE && !value.trim().is_empty())
                    .then(|| value.trim().to_string())
            })
            .ok_or_else(|| RemoteError::plain(format!("{} gave no session", self.base)))?;
        let account: Account = response.json().await.map_err(|e| {
            RemoteError::plain(format!("unexpected answer from {}: {e}", self.base))
        })?;
        Ok((session, account))
    }

    fn with_session(
        &self,
        request: reqwest::RequestBuilder,
        session: &str,
    ) -> reqwest::RequestBuilder {
        request.header(COOKIE, format!("{SESSION_COOKIE}={session}"))
    }

    /// `POST /api/account/tokens` in `session`: a personal API token for
    /// playing and challenges.
    pub async fn create_token(
        &self,
        session: &str,
        description: &str,
    ) -> Result<NewToken, RemoteError> {
        let request = self.http.post(format!("{}/api/account/tokens", self.base));
        let body = json!({"description": description, "scopes": ["play", "challenge"]});
        self.json(self.with_session(request, session).json(&body))
            .await
    }

    /// `DELETE /api/account/tokens/{id}`: in `session`, or else with the
    /// token itself as Bearer.
    pub async fn revoke_token(
        &self,
        id: &str,
        token: &str,
        session: Option<&str>,
    ) -> Result<(), RemoteError> {
        let request = self
            .http
            .delete(format!("{}/api/account/tokens/{}", self.base, encode(id)));
        let request = match session {
            Some(session) => self.with_session(request, session),
            None => request.header(AUTHORIZATION, format!("Bearer {token}")),
        };
        self.send(request).await.map(drop)
    }

    /// `DELETE /api/session`: ends `session`.
    pub async fn log_out(&self, session: &str) -> Result<(), RemoteError> {
        let request = self.http.delete(format!("{}/api/session", self.base));
        self.send(self.with_session(request, session))
            .await
            .map(drop)
    }

    /// `GET /api/account`: who this server's token belongs to.
    pub async fn account(&self) -> Result<Account, RemoteError> {
        self.json(self.authorized(self.http.get(format!("{}/api/account", self.base))))
            .await
    }

    // --------------------------------------------------------- seat actions

    /// `POST /api/games/{id}/{action}` (`move`, `resign`, `draw/decline`
    /// ...) with the account's token, for the seat the account holds.
    pub async fn seat_action(
        &self,
        id: &str,
        action: &str,
        body: Option<Value>,
    ) -> Result<GameState, RemoteError> {
        let request = self
            .http
            .post(format!("{}/api/games/{}/{action}", self.base, encode(id)));
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        self.json(self.authorized(request)).await
    }

    // ---------------------------------------------------------- challenges

    /// `POST /api/challenge/{name}`, form-encoded as lichess's clients send
    /// it.
    pub async fn create_challenge(
        &self,
        name: &str,
        terms: &ChallengeTerms,
    ) -> Result<Challenge, RemoteError> {
        let mut form = vec![
            ("color", terms.color.to_string()),
            ("rated", terms.rated.to_string()),
        ];
        if let Some((limit, increment)) = terms.clock {
            form.push(("clock.limit", limit.to_string()));
            form.push(("clock.increment", increment.to_string()));
        }
        if let Some(start) = terms.chess960 {
            form.push(("variant", "chess960".to_string()));
            if let Some(number) = start {
                form.push(("chess960_start", number.to_string()));
            }
        }
        let request = self
            .http
            .post(format!("{}/api/challenge/{}", self.base, encode(name)))
            .form(&form);
        self.json(self.authorized(request)).await
    }

    // ---------------------------------------------------------- tournaments

    /// `GET {path}` as JSON: the tournaments' lichess shapes, which their
    /// callers read leniently.
    pub async fn get_value(&self, path: &str) -> Result<Value, RemoteError> {
        self.json(self.authorized(self.http.get(format!("{}{path}", self.base))))
            .await
    }

    /// `GET {path}` as text (the NDJSON of a tournament's results).
    pub async fn get_text(&self, path: &str) -> Result<String, RemoteError> {
        let response = self
            .send(self.authorized(self.http.get(format!("{}{path}", self.base))))
            .await?;
        response
            .text()
            .await
            .map_err(|e| RemoteError::plain(format!("unreadable answer from {}: {e}", self.base)))
    }

    /// `POST /api/board/game/{id}/{action}` (lichess's Board API) with
    /// the account's token.
    pub async fn board_action(&self, id: &str, action: &str) -> Result<(), RemoteError> {
        self.post_form(&format!("/api/board/game/{}/{action}", encode(id)), &[])
            .await
    }

    /// `POST {path}`, form-encoded as lichess's clients send it.
    pub async fn post_form(&self, path: &str, form: &[(&str, &str)]) -> Result<(), RemoteError> {
        let request = self.http.post(format!("{}{path}", self.base)).form(form);
        self.send(self.authorized(request)).await.map(drop)
    }

    /// `GET /api/challenge`.
    pub async fn challenges(&self) -> Result<ChallengeLists, RemoteError> {
        self.json(self.authorized(self.http.get(format!("{}/api/challenge", self.base))))
            .await
    }

    /// `GET /api/challenge/{id}/show`.
    pub async fn challenge(&self, id: &str) -> Result<Challenge, RemoteError> {
        self.json(self.authorized(self.http.get(format!(
            "{}/api/challenge/{}/show",
            self.base,
            encode(id)
        ))))
        .await
    }

    /// `POST /api/challenge/{id}/accept`, `decline` (with `reason`) or
    /// `cancel`.
    pub async fn answer_challenge(
        &self,
        id: &str,
        answer: ChallengeAnswer<'_>,
    ) -> Result<(), RemoteError> {
        let (verb, form) = match answer {
            ChallengeAnswer::Accept => ("accept", vec![]),
            ChallengeAnswer::Decline(reason) => ("decline", vec![("reason", reason)]),
            ChallengeAnswer::Cancel => ("cancel", vec![]),
        };
        let request = self
            .http
            .post(format!("{}/api/challenge/{}/{verb}", self.base, encode(id)))
            .form(&form);
        self.send(self.authorized(request)).await.map(drop)
    }

    /// Opens `GET /api/stream/event`. The person is subscribed once this
    /// returns: an event that happens afterwards is on the stream.
    pub async fn events(&self) -> Result<super::events::EventStream, RemoteError> {
        // The stream's own client: the request timeout of the others would
        // cut it, so it has a time limit per read instead (the server
        // sends a keep-alive every 6 seconds).
        let mut http = reqwest::Client::builder()
            .connect_timeout(REQUEST_TIMEOUT)
            .read_timeout(super::events::SILENCE_LIMIT);
        if let Some(tls) = &self.tls {
            http = http.use_preconfigured_tls((**tls).clone());
        }
        let http = http
            .build()
            .map_err(|e| RemoteError::plain(format!("cannot start the HTTP client: {e}")))?;
        let request = self.authorized(http.get(format!("{}/api/stream/event", self.base)));
        // The answer's head comes at once; only its body goes on.
        let response = tokio::time::timeout(REQUEST_TIMEOUT, self.send(request))
            .await
            .map_err(|_| {
                RemoteError::plain(format!("{} did not open the event stream", self.base))
            })??;
        Ok(super::events::EventStream::new(response))
    }

    // ----------------------------------------------------------- WebSocket

    /// How the game's WebSockets connect: through the same TLS
    /// configuration as the HTTP requests, or plain.
    pub fn ws_connector(&self) -> tokio_tungstenite::Connector {
        match &self.tls {
            Some(tls) => tokio_tungstenite::Connector::Rustls(tls.clone()),
            None => tokio_tungstenite::Connector::Plain,
        }
    }

    pub fn ws_url(&self, id: &str, token: Option<&str>) -> String {
        let base = if let Some(host) = self.base.strip_prefix("https://") {
            format!("wss://{host}")
        } else {
            self.base.replacen("http://", "ws://", 1)
        };
        match token {
            Some(token) => format!("{base}/ws/games/{}?token={}", encode(id), encode(token)),
            None => format!("{base}/ws/games/{}", encode(id)),
        }
    }
}

/// An error with its causes, `outer: inner: innermost`: reqwest's own
/// words ("error sending request") hide the useful part, such as the TLS
/// library's "invalid peer certificate: UnknownIssuer".
pub fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let words = cause.to_string();
        // Some layers repeat their cause in their own message.
        if !text.contains(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        source = cause.source();
    }
    text
}

/// Percent-encodes a path or query component.
pub fn encode(text: &str) -> String {
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

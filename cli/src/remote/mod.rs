//! Online play through a `rookery-server`'s public contract (docs/API.md).
//!
//! - [`client`]: the HTTP side (create, join, list, PGN, accounts) and the
//!   wire types of the contract, read leniently so newer servers' extra
//!   fields pass.
//! - [`session`]: one live game over its WebSocket, played or watched.
//! - [`tls`]: the one TLS configuration of `https://` and `wss://`
//!   (system roots plus `--ca-cert`).
//! - [`account`]: `login`, `logout`, `whoami`; [`credentials`]: the
//!   stored logins (a personal API token per server, mode 0600).
//!
//! This module reads game references from the command line and prints the
//! list of live games.

pub mod account;
mod client;
mod credentials;
mod session;
mod tls;

use reqwest::Url;

pub use client::{is_not_found, is_seat_taken, RemoteError, Server};
pub use session::{Participant, RemoteSession};

use client::SeatInfo;

/// A game named on the command line: its server, id and invite secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRef {
    pub server: Option<String>,
    pub id: String,
    pub invite: Option<String>,
}

/// Reads `GAME_URL_OR_ID`: a bare id, or a game page URL such as
/// `http://host:8080/games/ID#invite=SECRET` (the link the web client
/// shares), whose origin names the server.
pub fn parse_game_ref(text: &str) -> Result<GameRef, String> {
    let text = text.trim();
    if !text.contains('/') {
        if text.is_empty() {
            return Err("empty game id".into());
        }
        return Ok(GameRef {
            server: None,
            id: text.to_string(),
            invite: None,
        });
    }
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not a game URL: {e}"))?;
    let segments: Vec<&str> = url.path_segments().map(|s| s.collect()).unwrap_or_default();
    let id = segments
        .iter()
        .position(|s| *s == "games")
        .and_then(|i| segments.get(i + 1))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| format!("{text:?} is not a game URL (expected .../games/ID)"))?;
    // The web client's links carry the secret in the fragment
    // (`#invite=SECRET`); a query parameter is read too.
    // The secret is hex, so the fragment needs no percent-decoding.
    let from_fragment = url.fragment().and_then(|fragment| {
        fragment
            .split('&')
            .find_map(|pair| pair.strip_prefix("invite="))
            .filter(|value| !value.is_empty())
            .map(str::to_string)
    });
    let invite = from_fragment.or_else(|| {
        url.query_pairs()
            .find(|(name, value)| name == "invite" && !value.is_empty())
            .map(|(_, value)| value.into_owned())
    });
    Ok(GameRef {
        server: Some(origin(&url)),
        id: id.to_string(),
        invite,
    })
}

pub(crate) fn origin(url: &Url) -> String {
    match url.port() {
        Some(port) => format!("{}://{}:{port}", url.scheme(), url.host_str().unwrap_or("")),
        None => format!("{}://{}", url.scheme(), url.host_str().unwrap_or("")),
    }
}

pub(crate) fn describe_seat(seat: &SeatInfo) -> String {
    match seat.kind.as_str() {
        "ai" => match seat.level {
            Some(level) => format!("computer (level {level})"),
            None => "computer".into(),
        },
        _ => match (&seat.name, seat.taken) {
            (Some(name), _) => name.clone(),
            (None, Some(false)) => "(free seat)".into(),
            (None, _) => "anonymous".into(),
        },
    }
}

pub(crate) fn format_ms(ms: i64) -> String {
    let ms = ms.max(0);
    let tenths = ms / 100;
    format!("{}:{:02}.{}", tenths / 600, tenths / 10 % 60, tenths % 10)
}

/// `rookery games`: one line per live game.
pub async fn list_games(server: &Server) -> Result<String, RemoteError> {
    let games = server.live_games().await?;
    if games.is_empty() {
        return Ok("no live games\n".into());
    }
    let mut out = String::new();
    for game in games {
        let clock = match &game.clock {
            Some(clock) => format!(
                "  {} / {}",
                format_ms(clock.white_ms),
                format_ms(clock.black_ms)
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "{}  {}  {} v {}  {} moves{clock}\n",
            game.id,
            game.status,
            describe_seat(&game.white),
            describe_seat(&game.black),
            game.moves.len(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_refs() {
        let cases = [
            ("abc-123", Some((None, "abc-123", None))),
            (
                "http://127.0.0.1:8080/games/abc?invite=s3cret",
                Some((Some("http://127.0.0.1:8080"), "abc", Some("s3cret"))),
            ),
            (
                "http://127.0.0.1:8080/games/abc#invite=f00d",
                Some((Some("http://127.0.0.1:8080"), "abc", Some("f00d"))),
            ),
            (
                "http://chess.example/games/abc/",
                Some((Some("http://chess.example"), "abc", None)),
            ),
            ("http://chess.example/watch", None),
            ("not a url/games/x", None),
        ];
        for (text, expected) in cases {
            let got = parse_game_ref(text)
                .ok()
                .map(|r| (r.server, r.id, r.invite));
            let expected = expected
                .map(|(s, id, inv)| (s.map(String::from), id.to_string(), inv.map(String::from)));
            assert_eq!(got, expected, "{text}");
        }
    }

    #[test]
    fn clock_format() {
        assert_eq!(format_ms(300_000), "5:00.0");
        assert_eq!(format_ms(61_234), "1:01.2");
        assert_eq!(format_ms(-5), "0:00.0");
    }
}

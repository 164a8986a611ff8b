//! Online play through a `rookery-server`'s public contract (docs/API.md).
//!
//! - [`client`]: the HTTP side (create, join, list, PGN, accounts) and the
//!   wire types of the contract, read leniently so newer servers' extra
//!   fields pass.
//! - [`session`]: one live game over its WebSocket, played or watched;
//!   [`inbox`]: the player's lines, read on their own thread.
//! - [`tls`]: the one TLS configuration of `https://` and `wss://`
//!   (system roots plus `--ca-cert`).
//! - [`account`]: `login`, `logout`, `whoami`; [`credentials`]: the
//!   stored logins (a personal API token per server, mode 0600).
//! - [`challenge`]: `challenge`, `challenges`, `accept`, `decline`;
//!   [`events`]: the person's event stream they listen to.
//! - [`tournament`]: `arena list`, `arena join` / `swiss join` (join, then
//!   play each pairing as it comes), `arena withdraw` / `swiss withdraw`.
//!
//! This module reads game and challenge references from the command line
//! and prints the list of live games.

pub mod account;
pub mod challenge;
mod client;
mod credentials;
mod events;
mod inbox;
mod session;
mod tls;
pub mod tournament;

use reqwest::Url;

pub use client::{is_not_found, is_seat_taken, ChallengeTerms, GameState, RemoteError, Server};
pub use session::{Participant, RemoteSession};

use client::SeatInfo;

/// A game named on the command line: its server, id and invite secret. (A
/// challenge too: its game will have its id.)
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
    let (mut game, url) = parse_reference(text, "game")?;
    if let Some(url) = url {
        game.invite = invite_in(&url);
    }
    Ok(game)
}

/// Reads `CHALLENGE_URL_OR_ID`: a bare id, or the challenge's page
/// (`http://host:8080/challenges/ID`, its `url`), whose origin names the
/// server. A challenge's game has the challenge's id.
pub fn parse_challenge_ref(text: &str) -> Result<GameRef, String> {
    parse_reference(text, "challenge").map(|(challenge, _)| challenge)
}

/// A bare id, or a URL with `/{kind}s/ID` in its path (and the URL).
fn parse_reference(text: &str, kind: &str) -> Result<(GameRef, Option<Url>), String> {
    let text = text.trim();
    if !text.contains('/') {
        if text.is_empty() {
            return Err(format!("empty {kind} id"));
        }
        let bare = GameRef {
            server: None,
            id: text.to_string(),
            invite: None,
        };
        return Ok((bare, None));
    }
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not a {kind} URL: {e}"))?;
    let segments: Vec<&str> = url.path_segments().map(|s| s.collect()).unwrap_or_default();
    let folder = format!("{kind}s");
    let id = segments
        .iter()
        .position(|s| *s == folder)
        .and_then(|i| segments.get(i + 1))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| format!("{text:?} is not a {kind} URL (expected .../{folder}/ID)"))?;
    let reference = GameRef {
        server: Some(origin(&url)),
        id: id.to_string(),
        invite: None,
    };
    Ok((reference, Some(url)))
}

/// A game link's invite secret.
fn invite_in(url: &Url) -> Option<String> {
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
    from_fragment.or_else(|| {
        url.query_pairs()
            .find(|(name, value)| name == "invite" && !value.is_empty())
            .map(|(_, value)| value.into_owned())
    })
}

/// The colour of the seat `account` (a name) holds in `state`, if any.
pub fn account_seat(state: &GameState, account: &str) -> Option<rookery_engine::Color> {
    let holds = |seat: &SeatInfo| {
        seat.kind == "human"
            && seat
                .name
                .as_deref()
                .is_some_and(|name| name.eq_ignore_ascii_case(account))
    };
    if holds(&state.white) {
        Some(rookery_engine::Color::White)
    } else if holds(&state.black) {
        Some(rookery_engine::Color::Black)
    } else {
        None
    }
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
    fn challenge_refs() {
        let page = parse_challenge_ref("https://chess.example/challenges/c-1").unwrap();
        assert_eq!(page.server.as_deref(), Some("https://chess.example"));
        assert_eq!(page.id, "c-1");
        assert_eq!(parse_challenge_ref(" c-2 ").unwrap().id, "c-2");
        assert!(parse_challenge_ref("https://chess.example/games/c-1").is_err());
    }

    #[test]
    fn clock_format() {
        assert_eq!(format_ms(300_000), "5:00.0");
        assert_eq!(format_ms(61_234), "1:01.2");
        assert_eq!(format_ms(-5), "0:00.0");
    }
}

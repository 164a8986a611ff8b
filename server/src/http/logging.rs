//! Logs without secrets. Seat tokens, player tokens and invite secrets must
//! not reach a log at any level: logs are shipped, kept and read by people
//! who must not be able to move for a player.
//!
//! Two ways a secret could get there, both closed here:
//!
//! - The request span. tower-http's default span records the whole URI, and
//!   a WebSocket upgrade carries its seat token as `?token=`. [`RequestSpan`]
//!   records the URI with every query value replaced by `[redacted]`, except
//!   the few keys known to be harmless; so a new secret-bearing parameter is
//!   redacted without anyone remembering to list it.
//! - The WebSocket library. `tungstenite` dumps every frame's payload at
//!   `trace` (and messages at `debug`), which would print any token a client
//!   sends in a message. [`env_filter`] caps it at `info` whatever
//!   `RUST_LOG` says.

use axum::http::{Request, Uri};
use tower_http::trace::MakeSpan;
use tracing::Span;
use tracing_subscriber::filter::Directive;
use tracing_subscriber::EnvFilter;

/// Query keys whose values are logged as sent.
const PLAIN_QUERY_KEYS: &[&str] = &["status", "limit", "joinable"];

/// Targets that would log message payloads below `info`.
const PAYLOAD_LOGGERS: &[&str] = &["tungstenite=info", "tokio_tungstenite=info"];

const REDACTED: &str = "[redacted]";

/// The filter of the server's log: `RUST_LOG` (default `info`), with the
/// payload-dumping targets capped at `info`.
pub fn env_filter() -> EnvFilter {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    PAYLOAD_LOGGERS
        .iter()
        .filter_map(|directive| directive.parse::<Directive>().ok())
        // A directive for a target outranks a bare level (`RUST_LOG=trace`),
        // and replaces one for the same target (`RUST_LOG=tungstenite=trace`).
        .fold(filter, EnvFilter::add_directive)
}

/// The request span of tower-http's `TraceLayer`: what its default span
/// records (method, URI, version), with the URI redacted.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestSpan;

impl<B> MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, request: &Request<B>) -> Span {
        tracing::debug_span!(
            "request",
            method = %request.method(),
            uri = %redacted_uri(request.uri()),
            version = ?request.version(),
        )
    }
}

/// `uri` as it may be logged: path segments that look like one of our
/// secrets (32 or more hex digits: a token pasted into a path by mistake)
/// and every query value but those of [`PLAIN_QUERY_KEYS`] are replaced by
/// `[redacted]`. Query keys are kept when they are short plain words, so the
/// log still says which parameter was sent.
pub fn redacted_uri(uri: &Uri) -> String {
    let path = uri
        .path()
        .split('/')
        .map(|segment| {
            if segment.len() >= 32 && segment.bytes().all(|b| b.is_ascii_hexdigit()) {
                REDACTED
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/");
    let Some(query) = uri.query() else {
        return path;
    };
    let query = query
        .split('&')
        .map(|pair| {
            let key = pair.split_once('=').map_or(pair, |(key, _)| key);
            let plain_word = !key.is_empty()
                && key.len() <= 20
                && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
            if PLAIN_QUERY_KEYS.contains(&key) {
                pair.to_string()
            } else if plain_word {
                format!("{key}={REDACTED}")
            } else {
                REDACTED.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("&");
    format!("{path}?{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(uri: &str) -> String {
        redacted_uri(&uri.parse::<Uri>().unwrap())
    }

    #[test]
    fn query_secrets_are_redacted() {
        let token = "ab".repeat(32);
        let cases = [
            (
                "/api/games?status=active&limit=5",
                "/api/games?status=active&limit=5",
            ),
            ("/api/games?joinable=true", "/api/games?joinable=true"),
            (
                &format!("/ws/games/x?token={token}"),
                "/ws/games/x?token=[redacted]",
            ),
            (
                &format!("/games/x?invite={token}&limit=3"),
                "/games/x?invite=[redacted]&limit=3",
            ),
            (&format!("/x?{token}"), "/x?[redacted]"),
            (&format!("/x?%74oken={token}"), "/x?[redacted]"),
            (
                &format!("/api/games/{token}/join"),
                "/api/games/[redacted]/join",
            ),
            (
                "/api/games/6f1c2b8e-2d7a-4c55-9b0e-0d6f3f3f7f11",
                "/api/games/6f1c2b8e-2d7a-4c55-9b0e-0d6f3f3f7f11",
            ),
            ("/healthz", "/healthz"),
        ];
        for (uri, expected) in cases {
            assert_eq!(redacted(uri), expected, "{uri}");
        }
    }

    #[test]
    fn the_payload_caps_parse() {
        for directive in PAYLOAD_LOGGERS {
            assert!(directive.parse::<Directive>().is_ok(), "{directive}");
        }
    }
}

//! The server's request parsing: JSON bodies through the server's own
//! `ApiJson` extractor, query strings through `ApiQuery`, WebSocket text as
//! the socket reads it, and the checks that follow (`CreateGame::validate`,
//! player names, game ids).
//!
//! The first byte picks the request kind; the rest is the body, query or
//! message. Invariants:
//! - `ApiJson` accepts a body exactly when serde_json alone reads it as the
//!   type (the wrapper only changes the error's shape), and a refused body
//!   is a `bad_request` 400 whose error body is valid JSON;
//! - a validated `CreateGame` keeps the contract's ranges: AI levels 1 to 8,
//!   a clock of more than 0 and at most 3 h with an increment of at most
//!   3 min, a creator seat that is a human seat (present whenever one is),
//!   a FEN trimmed and non-empty;
//! - a name `validate_name` accepts is 1 to 20 characters of `A-Za-z0-9_-`;
//! - a game id that parses prints back to a form that parses the same;
//! - a `GameState` survives serialise → deserialise unchanged (the web
//!   client and the tests read back what the server writes).
#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use libfuzzer_sys::fuzz_target;
use rookery_server::http::api::players::validate_name;
use rookery_server::http::error::ApiError;
use rookery_server::http::extract::{game_id, ApiJson, ApiQuery};
use rookery_server::protocol::{
    ClientMessage, CreateGame, CreatePlayer, GameState, ListQuery, MoveRequest, SeatKind, Side,
    Status, WsQuery,
};
use serde::de::DeserializeOwned;

/// The extractors are async; nothing in them waits, so a current-thread
/// runtime made once drives them.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime needs no resources that can be missing")
    })
}

fn check_error(error: &ApiError) {
    assert_eq!(error.code(), "bad_request", "{error:?}");
    assert_eq!(error.status(), StatusCode::BAD_REQUEST, "{error:?}");
    let body = serde_json::to_string(&error.body()).unwrap_or_default();
    let value: serde_json::Value = serde_json::from_str(&body)
        .unwrap_or_else(|e| panic!("error body is not JSON ({e}): {body}"));
    assert_eq!(value["error"]["code"], "bad_request", "{body}");
}

/// Reads `body` with the server's extractor, checking it agrees with serde.
fn body<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    let request = Request::new(Body::from(data.to_vec()));
    let extracted = runtime().block_on(ApiJson::<T>::from_request(request, &()));
    let plain = serde_json::from_slice::<T>(data);
    match extracted {
        Ok(ApiJson(value)) => {
            assert!(plain.is_ok(), "ApiJson accepts what serde_json refuses");
            Some(value)
        }
        Err(error) => {
            assert!(
                plain.is_err(),
                "ApiJson refuses what serde_json reads: {error:?}"
            );
            check_error(&error);
            None
        }
    }
}

/// Reads a query string with the server's extractor.
fn query<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    let text = std::str::from_utf8(data).ok()?;
    // Only what makes a valid request target reaches the server: hyper
    // refuses the rest before routing.
    let request = Request::builder()
        .uri(format!("/api/games?{text}"))
        .body(())
        .ok()?;
    let (mut parts, ()) = request.into_parts();
    match runtime().block_on(ApiQuery::<T>::from_request_parts(&mut parts, &())) {
        Ok(ApiQuery(value)) => Some(value),
        Err(error) => {
            check_error(&error);
            None
        }
    }
}

fn check_create_game(request: CreateGame) {
    let Ok(game) = request.validate() else {
        return;
    };
    for seat in game.seats {
        if let SeatKind::Ai { level } = seat {
            assert!((1..=8).contains(&level), "AI level {level}");
        }
    }
    let human = |side: Side| game.seats[side.index()] == SeatKind::Human;
    match game.creator_side {
        Some(side) => assert!(human(side), "creator takes a non-human seat"),
        None => assert!(
            !Side::BOTH.into_iter().any(human),
            "human seat with no creator"
        ),
    }
    if game.both_seats {
        assert!(
            Side::BOTH.into_iter().all(human) && game.creator_side == Some(Side::White),
            "pass and play without two human seats"
        );
    }
    if let Some(clock) = game.clock {
        assert!(
            (1..=3 * 60 * 60 * 1000).contains(&clock.initial_ms),
            "{clock:?}"
        );
        assert!(clock.increment_ms <= 3 * 60 * 1000, "{clock:?}");
    }
    if let Some(fen) = &game.fen {
        assert!(!fen.is_empty() && fen.trim() == fen, "FEN {fen:?}");
    }
}

fn check_game_state(data: &[u8]) {
    let Ok(state) = serde_json::from_slice::<GameState>(data) else {
        return;
    };
    let written = serde_json::to_string(&state).unwrap_or_default();
    let again: GameState = serde_json::from_str(&written)
        .unwrap_or_else(|e| panic!("written state does not read ({e}): {written}"));
    assert_eq!(again, state, "{written}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, data)) = data.split_first() else {
        return;
    };
    match kind % 8 {
        0 => {
            // The WebSocket reads text frames only, as a `&str`.
            if let Ok(text) = std::str::from_utf8(data) {
                if let Ok(ClientMessage::Move { uci }) = serde_json::from_str(text) {
                    // What the socket does next with the text.
                    let _ = rookery_engine::Position::startpos().parse_uci(&uci);
                }
            }
        }
        1 => {
            if let Some(request) = body::<CreateGame>(data) {
                check_create_game(request);
            }
        }
        2 => {
            if let Some(CreatePlayer { name }) = body::<CreatePlayer>(data) {
                if validate_name(&name).is_ok() {
                    assert!((1..=20).contains(&name.len()), "{name:?}");
                    assert!(
                        name.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                        "{name:?}"
                    );
                }
            }
        }
        3 => {
            let _ = body::<MoveRequest>(data);
        }
        4 => {
            if let Some(ListQuery { status, .. }) = query::<ListQuery>(data) {
                if let Some(status) = status.as_deref() {
                    if let Some(parsed) = Status::parse(status) {
                        assert_eq!(parsed.as_str(), status);
                    }
                }
            }
        }
        5 => {
            let _ = query::<WsQuery>(data);
        }
        6 => check_game_state(data),
        _ => {
            if let Ok(text) = std::str::from_utf8(data) {
                if let Ok(id) = game_id(text) {
                    assert_eq!(game_id(&id.to_string()).ok(), Some(id), "{text:?}");
                }
            }
        }
    }
});

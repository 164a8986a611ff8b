//! The HTTP edge: everything between a TCP connection and the game's
//! floors. The accept loop ([`serve`]) with its connection caps and timers
//! ([`timers`]), HTTPS ([`tls`]), who the client is ([`client_ip`]), the
//! request's head (`Host`, its size: [`head`]), security headers on every
//! answer ([`headers`]), the cross-site check
//! ([`origin`]), per-client token buckets and the AI v AI game caps
//! ([`rate_limit`]), bodies read whole before routing ([`body`]), the log
//! filter and request span with secrets redacted ([`logging`]), the
//! metrics' route and request counts ([`metrics`]), axum's extractors answering in the
//! contract's shape ([`extract`]), and the one error every answer is built
//! from ([`error`]). Then the surfaces: Rookery's own API per resource
//! ([`api`]), lichess's dialect ([`lichess`]), the WebSocket endpoint
//! ([`ws`]), a game's chat for both ([`chat`]) and the static web client
//! ([`web`]).

pub mod api;
pub mod body;
pub mod chat;
pub mod client_ip;
pub mod error;
pub mod extract;
pub mod head;
pub mod headers;
pub mod lichess;
pub mod logging;
pub mod metrics;
pub mod origin;
pub mod rate_limit;
pub mod serve;
pub mod timers;
pub mod tls;
pub mod web;
pub mod ws;

//! Limits per client: a token bucket for every client address (see
//! [`crate::http::client_ip`]: the TCP peer, or the client a trusted proxy names;
//! an IPv6 client by its /64) for HTTP requests, and another for WebSocket
//! messages; and the admission caps on live AI v AI games (in total and per
//! client) and on waiting games (per client), kept by [`GameLedger`].
//!
//! A bucket holds up to `burst` tokens and refills at `per_second`; each
//! request or message takes one. Keyed by address, not by connection: a
//! client that opens a new connection for every request still draws from
//! the same bucket. Players behind one NAT share it, so the defaults are
//! generous (a flood is hundreds of requests in a moment).
//!
//! A bucket that has refilled to full is the same as no bucket, so such
//! entries are dropped from time to time: the map holds only the clients
//! active within the last `burst / per_second` seconds.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Mutex, MutexGuard, PoisonError};

use axum::extract::{Request, State};
use axum::http::header::RETRY_AFTER;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use tokio::time::Instant;
use uuid::Uuid;

pub use crate::config::values::RateLimit;
use crate::http::client_ip::ClientIp;
use crate::http::error::ApiError;
use crate::AppState;

/// A token bucket. It starts full the first time it is used.
#[derive(Debug, Default)]
pub struct TokenBucket {
    state: Option<(f64, Instant)>,
}

impl TokenBucket {
    /// Whether the bucket has refilled to `burst` by `now` (then it is the
    /// same as a fresh one).
    pub fn is_full(&self, limit: RateLimit, now: Instant) -> bool {
        self.state.is_none_or(|(tokens, last)| {
            tokens + now.saturating_duration_since(last).as_secs_f64() * limit.per_second
                >= f64::from(limit.burst.max(1))
        })
    }

    /// Takes one token if there is one.
    pub fn try_take(&mut self, limit: RateLimit, now: Instant) -> bool {
        let burst = f64::from(limit.burst.max(1));
        let (tokens, last) = self.state.unwrap_or((burst, now));
        let refilled = (tokens
            + now.saturating_duration_since(last).as_secs_f64() * limit.per_second)
            .min(burst);
        if refilled >= 1.0 {
            self.state = Some((refilled - 1.0, now));
            true
        } else {
            self.state = Some((refilled, now));
            false
        }
    }
}

/// What the server knows about each accepted connection (the request
/// extension `ConnectInfo<Connection>`).
#[derive(Debug, Clone)]
pub struct Connection {
    pub remote: SocketAddr,
}

/// The buckets of every recently active client, for one kind of traffic.
#[derive(Debug)]
pub struct ClientBuckets {
    limit: RateLimit,
    inner: Mutex<Buckets>,
}

#[derive(Debug)]
struct Buckets {
    by_client: HashMap<IpAddr, TokenBucket>,
    /// Size at which full buckets are next swept out.
    sweep_at: usize,
}

/// The map is swept no sooner than at this size.
const SWEEP_MIN: usize = 1024;

impl ClientBuckets {
    pub fn new(limit: RateLimit) -> ClientBuckets {
        ClientBuckets {
            limit,
            inner: Mutex::new(Buckets {
                by_client: HashMap::new(),
                sweep_at: SWEEP_MIN,
            }),
        }
    }

    pub fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Takes one token from `client`'s bucket if there is one.
    pub fn try_take(&self, client: IpAddr, now: Instant) -> bool {
        // Held for a map operation only, and a panic cannot leave a bucket
        // half-updated: a poisoned lock is still a valid map.
        let mut buckets = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.by_client.len() >= buckets.sweep_at {
            let limit = self.limit;
            buckets
                .by_client
                .retain(|_, bucket| !bucket.is_full(limit, now));
            // Sweeping again only after the map doubles keeps the cost per
            // request constant on average.
            buckets.sweep_at = (buckets.by_client.len() * 2).max(SWEEP_MIN);
        }
        buckets
            .by_client
            .entry(client)
            .or_default()
            .try_take(self.limit, now)
    }

    /// Clients with a bucket right now.
    pub fn tracked(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_client
            .len()
    }
}

/// The per-client limits of a running server.
#[derive(Debug)]
pub struct Limits {
    pub http: ClientBuckets,
    pub ws: ClientBuckets,
    /// Accounts created (`--signups-per-hour`, `--signup-burst`).
    pub signups: ClientBuckets,
    /// The analysis board's evaluations (`--board-analyses-per-minute`).
    pub board: ClientBuckets,
    /// Requests that may send mail (a reset link, a verification link):
    /// [`MAIL_RATE`] per address.
    pub mails: ClientBuckets,
}

/// Requests that may send mail, per client address: 10 an hour, 5 at once.
/// Each costs someone's mailbox a letter (and the operator's SMTP quota),
/// so a script cannot turn the server into a mail cannon.
pub const MAIL_RATE: crate::config::values::RateLimit = crate::config::values::RateLimit {
    per_second: 10.0 / 3600.0,
    burst: 5,
};

/// Middleware: one token per request from the client's HTTP bucket.
pub async fn limit_requests(
    State(state): State<AppState>,
    Extension(ClientIp(client)): Extension<ClientIp>,
    request: Request,
    next: Next,
) -> Response {
    let limits = &state.limits.http;
    if !limits.try_take(client, Instant::now()) {
        tracing::debug!(%client, "HTTP rate limit hit");
        metrics::counter!("rookery_rate_limited_total", "what" => "http").increment(1);
        let mut response = ApiError::RateLimited.into_response();
        response.headers_mut().insert(
            RETRY_AFTER,
            HeaderValue::from(limits.limit().seconds_per_token()),
        );
        return response;
    }
    next.run(request).await
}

/// Games counted towards caps per client (address), with the client that
/// created each: live AI v AI games (`--max-ai-games`,
/// `--max-ai-games-per-client`: such a game costs a search thread for as
/// long as it runs and nobody has to be there) and waiting games
/// (`--max-waiting-games-per-client`: each holds memory and a database row
/// until somebody joins or it expires). Without caps one client could
/// queue the whole machine or fill its disk.
///
/// Entries leave when their game is seen no longer counting (the creation
/// path checks before refusing) or an operator stops it. Games found at
/// start-up (a restart) are counted again from the database towards the
/// server's cap; their creator's address is not stored, so they count
/// towards no client's cap (the owner is `None`).
#[derive(Debug, Default)]
pub struct GameLedger {
    games: Mutex<HashMap<Uuid, Counted>>,
}

/// One counted game: who created it (None: found at start-up) and when it
/// was counted.
#[derive(Debug, Clone, Copy)]
struct Counted {
    owner: Option<IpAddr>,
    since: Instant,
}

impl GameLedger {
    fn lock(&self) -> MutexGuard<'_, HashMap<Uuid, Counted>> {
        // One insert or remove at a time: a poisoned lock is still whole.
        self.games.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The games counted now.
    pub fn ids(&self) -> Vec<Uuid> {
        self.lock().keys().copied().collect()
    }

    /// The games counted now for `client`.
    pub fn ids_of(&self, client: IpAddr) -> Vec<Uuid> {
        self.lock()
            .iter()
            .filter(|(_, counted)| counted.owner == Some(client))
            .map(|(id, _)| *id)
            .collect()
    }

    pub fn forget(&self, id: Uuid) {
        self.lock().remove(&id);
    }

    /// Stops counting the games counted before `cutoff` (which can no
    /// longer count: a waiting game older than the waiting expiry has been
    /// joined or aborted), so clients that never reach their cap leave no
    /// entries behind.
    pub fn forget_before(&self, cutoff: Instant) {
        self.lock().retain(|_, counted| counted.since >= cutoff);
    }

    /// Counts games found at start-up, whose creator is unknown.
    pub fn count_resumed(&self, ids: impl IntoIterator<Item = Uuid>) {
        let mut games = self.lock();
        let since = Instant::now();
        for id in ids {
            games.entry(id).or_insert(Counted { owner: None, since });
        }
    }

    /// Counts game `id` for `client` unless `refuse`, given the number of
    /// games counted in all and for this client, says why not.
    pub fn reserve(
        &self,
        id: Uuid,
        client: IpAddr,
        refuse: impl FnOnce(usize, usize) -> Option<ApiError>,
    ) -> Result<(), ApiError> {
        let mut games = self.lock();
        let mine = games
            .values()
            .filter(|counted| counted.owner == Some(client))
            .count();
        if let Some(refusal) = refuse(games.len(), mine) {
            return Err(refusal);
        }
        let counted = Counted {
            owner: Some(client),
            since: Instant::now(),
        };
        games.insert(id, counted);
        Ok(())
    }
}

/// `--max-ai-games` and `--max-ai-games-per-client`, for
/// [`GameLedger::reserve`]: 429 `rate_limited` saying which is reached.
pub fn ai_game_caps(
    max_total: usize,
    max_per_client: usize,
) -> impl FnOnce(usize, usize) -> Option<ApiError> {
    move |total, mine| {
        if total >= max_total {
            Some(ApiError::Limited(format!(
                "the server already runs {total} AI v AI games, its limit: try again when one ends"
            )))
        } else if mine >= max_per_client {
            Some(ApiError::Limited(format!(
                "you already have {mine} live AI v AI games, the limit per client: \
                 wait for one to end"
            )))
        } else {
            None
        }
    }
}

/// `--max-waiting-games-per-client`, for [`GameLedger::reserve`].
pub fn waiting_game_cap(max_per_client: usize) -> impl FnOnce(usize, usize) -> Option<ApiError> {
    move |_, mine| {
        (mine >= max_per_client).then(|| {
            ApiError::Limited(format!(
                "you already have {mine} games waiting for an opponent, the limit per client: \
                 wait for one to be joined, or abort one"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn retry_after_is_the_time_for_one_token() {
        let limit = |per_second| RateLimit {
            per_second,
            burst: 1,
        };
        assert_eq!(limit(50.0).seconds_per_token(), 1);
        assert_eq!(limit(0.25).seconds_per_token(), 4);
        assert_eq!(limit(0.0).seconds_per_token(), 3600);
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_a_burst_then_the_rate() {
        let limit = RateLimit {
            per_second: 2.0,
            burst: 3,
        };
        let mut bucket = TokenBucket::default();
        let now = Instant::now();
        assert!((0..3).all(|_| bucket.try_take(limit, now)));
        assert!(!bucket.try_take(limit, now));
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(bucket.try_take(limit, Instant::now()));
        assert!(!bucket.try_take(limit, Instant::now()));
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!((0..3).all(|_| bucket.try_take(limit, Instant::now())));
        assert!(!bucket.try_take(limit, Instant::now()));
    }

    #[tokio::test(start_paused = true)]
    async fn clients_have_their_own_buckets_and_idle_ones_are_swept() {
        let limit = RateLimit {
            per_second: 1.0,
            burst: 2,
        };
        let buckets = ClientBuckets::new(limit);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let now = Instant::now();
        assert!(buckets.try_take(a, now) && buckets.try_take(a, now));
        assert!(!buckets.try_take(a, now));
        assert!(buckets.try_take(b, now));
        // Many clients, long ago: once the map is big enough, it is swept
        // down to the clients whose buckets have not refilled yet.
        for n in 0..SWEEP_MIN as u32 - 2 {
            buckets.try_take(IpAddr::from((n + 1_000).to_be_bytes()), now);
        }
        assert_eq!(buckets.tracked(), SWEEP_MIN);
        tokio::time::advance(Duration::from_secs(10)).await;
        let later = Instant::now();
        assert!(buckets.try_take(a, later));
        assert_eq!(buckets.tracked(), 1, "only a is active");
    }

    #[test]
    fn the_ledger_caps_games_in_total_and_per_client() {
        let ledger = GameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let ids: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
        ledger.reserve(ids[0], a, ai_game_caps(3, 2)).unwrap();
        ledger.reserve(ids[1], a, ai_game_caps(3, 2)).unwrap();
        let refused = ledger.reserve(ids[2], a, ai_game_caps(3, 2)).unwrap_err();
        assert_eq!(refused.code(), "rate_limited");
        assert!(refused.message().contains("per client"), "{refused}");
        ledger.reserve(ids[2], b, ai_game_caps(3, 2)).unwrap();
        let refused = ledger.reserve(ids[3], b, ai_game_caps(3, 2)).unwrap_err();
        assert!(refused.message().contains("server"), "{refused}");
        ledger.forget(ids[0]);
        ledger.reserve(ids[3], a, ai_game_caps(3, 2)).unwrap();
        assert_eq!(ledger.ids().len(), 3);
    }

    #[test]
    fn resumed_games_count_for_the_server_not_for_a_client() {
        let ledger = GameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let resumed = [Uuid::new_v4(), Uuid::new_v4()];
        ledger.count_resumed(resumed);
        ledger.count_resumed(resumed);
        assert_eq!(ledger.ids().len(), 2);
        // Per client 2: the resumed games are nobody's.
        ledger
            .reserve(Uuid::new_v4(), a, ai_game_caps(3, 2))
            .unwrap();
        let refused = ledger
            .reserve(Uuid::new_v4(), a, ai_game_caps(3, 2))
            .unwrap_err();
        assert!(refused.message().contains("server"), "{refused}");
        ledger.forget(resumed[0]);
        ledger
            .reserve(Uuid::new_v4(), a, ai_game_caps(3, 2))
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn old_entries_can_be_forgotten_at_once() {
        let ledger = GameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        ledger
            .reserve(Uuid::new_v4(), a, waiting_game_cap(5))
            .unwrap();
        tokio::time::advance(Duration::from_secs(10)).await;
        let cutoff = Instant::now();
        let newer = Uuid::new_v4();
        ledger.reserve(newer, a, waiting_game_cap(5)).unwrap();
        ledger.forget_before(cutoff);
        assert_eq!(ledger.ids_of(a), [newer]);
    }

    #[test]
    fn the_waiting_cap_counts_only_the_clients_own_games() {
        let ledger = GameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        ledger.count_resumed([Uuid::new_v4()]);
        let first = Uuid::new_v4();
        ledger.reserve(first, a, waiting_game_cap(2)).unwrap();
        ledger
            .reserve(Uuid::new_v4(), a, waiting_game_cap(2))
            .unwrap();
        let refused = ledger
            .reserve(Uuid::new_v4(), a, waiting_game_cap(2))
            .unwrap_err();
        assert_eq!(refused.code(), "rate_limited");
        assert!(refused.message().contains("waiting"), "{refused}");
        ledger
            .reserve(Uuid::new_v4(), b, waiting_game_cap(2))
            .unwrap();
        assert_eq!(ledger.ids_of(a).len(), 2);
        ledger.forget(first);
        ledger
            .reserve(Uuid::new_v4(), a, waiting_game_cap(2))
            .unwrap();
    }
}

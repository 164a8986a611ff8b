//! Failed logins slow down whoever keeps failing, without ever stopping a
//! person's right password on the device they usually log in from.
//!
//! Three counts, each with a few free failures and then waits that double
//! after the last failure (1 s, 2 s, 4 s …) up to a cap:
//!
//! - **Per name and address** (5 free, at most [`MAX_PAIR_WAIT`], 60 s):
//!   someone mistyping their own password, or guessing one name from one
//!   address. A success there clears it.
//! - **Per address** (20 free across every name, at most
//!   [`MAX_CLIENT_WAIT`], 15 minutes): a guesser spraying many names from
//!   one address. A success does *not* clear it (logging into one's own
//!   account between guesses must not buy more guesses); it is forgotten
//!   [`FORGET_AFTER`] after the last failure.
//! - **Per name, from anywhere** (10 free, at most [`MAX_NAME_WAIT`], 60 s):
//!   many addresses guessing one name. It never refuses an address that
//!   logged into that name before ([`KNOWN_FOR`], 30 days, up to
//!   [`KNOWN_PER_NAME`] addresses a name) nor a request from the account's
//!   own session: their password is checked whatever the name's count, so
//!   an attacker failing a victim's name on schedule cannot lock the victim
//!   out. A new device may have to wait while someone guesses its name.
//!
//! Memory is bounded: a name is counted only once it is a valid name (at
//! most 20 bytes; anything else counts against the address only), and each
//! table holds at most [`MAX_ENTRIES`] entries: forgotten ones are swept
//! when it fills, then the oldest half if it is still full. Kept in memory
//! per node.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::IdentityError;
use crate::domain::valid_name;

const FREE_PER_PAIR: u32 = 5;
const FREE_PER_CLIENT: u32 = 20;
const FREE_PER_NAME: u32 = 10;
pub const MAX_PAIR_WAIT: Duration = Duration::from_secs(60);
pub const MAX_CLIENT_WAIT: Duration = Duration::from_secs(15 * 60);
pub const MAX_NAME_WAIT: Duration = Duration::from_secs(60);
pub const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);
/// How long an address stays known for a name after a login.
pub const KNOWN_FOR: Duration = Duration::from_secs(30 * 24 * 3600);
/// Addresses remembered per name (the most recent ones).
pub const KNOWN_PER_NAME: usize = 8;
pub const MAX_ENTRIES: usize = 100_000;

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

impl Failures {
    /// How long from `now` the next try must wait under `free` and `max`.
    fn wait(&self, free: u32, max: Duration, now: Instant) -> Duration {
        if now.saturating_duration_since(self.last) >= FORGET_AFTER || self.count < free {
            return Duration::ZERO;
        }
        let doublings = (self.count - free).min(20);
        let until = self.last + Duration::from_secs(1u64 << doublings).min(max);
        until.saturating_duration_since(now)
    }
}

/// A bounded table of failure counts.
#[derive(Debug)]
struct Counts<K>(HashMap<K, Failures>);

impl<K> Default for Counts<K> {
    fn default() -> Self {
        Counts(HashMap::new())
    }
}

impl<K: Hash + Eq + Clone> Counts<K> {
    fn wait(&self, key: &K, free: u32, max: Duration, now: Instant) -> Duration {
        self.0
            .get(key)
            .map_or(Duration::ZERO, |seen| seen.wait(free, max, now))
    }

    fn fail(&mut self, key: K, now: Instant) {
        if self.0.len() >= MAX_ENTRIES && !self.0.contains_key(&key) {
            self.make_room(now);
        }
        let seen = self.0.entry(key).or_insert(Failures {
            count: 0,
            last: now,
        });
        if now.saturating_duration_since(seen.last) >= FORGET_AFTER {
            seen.count = 0;
        }
        seen.count = seen.count.saturating_add(1);
        seen.last = now;
    }

    /// Forgets what is forgotten anyway, then the oldest half if the table
    /// is still full.
    fn make_room(&mut self, now: Instant) {
        self.0
            .retain(|_, seen| now.saturating_duration_since(seen.last) < FORGET_AFTER);
        if self.0.len() >= MAX_ENTRIES {
            let mut lasts: Vec<Instant> = self.0.values().map(|seen| seen.last).collect();
            let middle = lasts.len() / 2;
            let (_, cut, _) = lasts.select_nth_unstable(middle);
            let cut = *cut;
            self.0.retain(|_, seen| seen.last > cut);
        }
    }
}

#[derive(Debug, Default)]
struct Tables {
    pairs: Counts<(String, IpAddr)>,
    clients: Counts<IpAddr>,
    names: Counts<String>,
    /// Per name, the addresses that logged into it and when.
    known: HashMap<String, Vec<(IpAddr, Instant)>>,
}

#[derive(Debug, Default)]
pub struct LoginThrottle {
    tables: Mutex<Tables>,
}

/// The key of an address: itself for IPv4, its /64 for IPv6 (one client
/// holds a whole /64).
fn address(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64))),
        },
        v4 => v4,
    }
}

/// The name as counted: lowercase, only if it is a valid name.
fn counted_name(name: &str) -> Option<String> {
    valid_name(name).then(|| name.to_ascii_lowercase())
}

impl LoginThrottle {
    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        // Every operation leaves the tables consistent between statements:
        // a poisoned lock still holds valid counts.
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Refuses a login try that comes too soon after failures (429 with the
    /// seconds to wait). `own_session`: the request comes from a session of
    /// the account itself (a password change), which the name's count
    /// never refuses.
    pub fn check(
        &self,
        name: &str,
        client: IpAddr,
        own_session: bool,
        now: Instant,
    ) -> Result<(), IdentityError> {
        let client = address(client);
        let tables = self.tables();
        let mut wait = tables
            .clients
            .wait(&client, FREE_PER_CLIENT, MAX_CLIENT_WAIT, now);
        if let Some(name) = counted_name(name) {
            let pair = (name.clone(), client);
            wait = wait.max(tables.pairs.wait(&pair, FREE_PER_PAIR, MAX_PAIR_WAIT, now));
            let known = own_session || Self::is_known(&tables, &name, client, now);
            if !known {
                wait = wait.max(tables.names.wait(&name, FREE_PER_NAME, MAX_NAME_WAIT, now));
            }
        }
        if wait.is_zero() {
            Ok(())
        } else {
            Err(IdentityError::LoginThrottled {
                retry_after: wait.as_secs_f64().ceil() as u64,
            })
        }
    }

    fn is_known(tables: &Tables, name: &str, client: IpAddr, now: Instant) -> bool {
        tables.known.get(name).is_some_and(|addresses| {
            addresses.iter().any(|(address, since)| {
                *address == client && now.saturating_duration_since(*since) < KNOWN_FOR
            })
        })
    }

    pub fn failed(&self, name: &str, client: IpAddr, now: Instant) {
        let client = address(client);
        let mut tables = self.tables();
        tables.clients.fail(client, now);
        if let Some(name) = counted_name(name) {
            tables.pairs.fail((name.clone(), client), now);
            tables.names.fail(name, now);
        }
    }

    /// The right password: the pair's count is cleared and the address is
    /// known for the name from now on. The address's and the name's counts
    /// stay (see the module's header).
    pub fn succeeded(&self, name: &str, client: IpAddr, now: Instant) {
        let client = address(client);
        let Some(name) = counted_name(name) else {
            return;
        };
        let mut tables = self.tables();
        tables.pairs.0.remove(&(name.clone(), client));
        if tables.known.len() >= MAX_ENTRIES && !tables.known.contains_key(&name) {
            tables.known.retain(|_, addresses| {
                addresses.retain(|(_, since)| now.saturating_duration_since(*since) < KNOWN_FOR);
                !addresses.is_empty()
            });
            if tables.known.len() >= MAX_ENTRIES {
                // Still full of recent logins: the oldest half goes.
                let mut newest: Vec<Instant> = tables
                    .known
                    .values()
                    .filter_map(|a| a.iter().map(|(_, since)| *since).max())
                    .collect();
                let middle = newest.len() / 2;
                let (_, cut, _) = newest.select_nth_unstable(middle);
                let cut = *cut;
                tables
                    .known
                    .retain(|_, a| a.iter().any(|(_, since)| *since > cut));
            }
        }
        let addresses = tables.known.entry(name).or_default();
        addresses.retain(|(address, _)| *address != client);
        addresses.push((client, now));
        if addresses.len() > KNOWN_PER_NAME {
            addresses.remove(0);
        }
    }

    /// Entries held now, all tables together (for tests and the note on
    /// memory).
    pub fn entries(&self) -> usize {
        let tables = self.tables();
        tables.pairs.0.len() + tables.clients.0.len() + tables.names.0.len() + tables.known.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn retry_after(result: Result<(), IdentityError>) -> u64 {
        match result {
            Err(IdentityError::LoginThrottled { retry_after }) => retry_after,
            other => panic!("not throttled: {other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_pair_waits_longer_after_each_failure_up_to_a_cap() {
        let throttle = LoginThrottle::default();
        let home = ip("192.0.2.1");
        for _ in 0..FREE_PER_PAIR {
            throttle
                .check("Carol", home, false, Instant::now())
                .unwrap();
            throttle.failed("carol", home, Instant::now());
        }
        // The fifth failure: one second, then two, four ...
        assert_eq!(
            retry_after(throttle.check("CAROL", home, false, Instant::now())),
            1
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        throttle
            .check("carol", home, false, Instant::now())
            .unwrap();
        throttle.failed("carol", home, Instant::now());
        assert_eq!(
            retry_after(throttle.check("carol", home, false, Instant::now())),
            2
        );
        // Another address is not this pair.
        throttle
            .check("carol", ip("192.0.2.2"), false, Instant::now())
            .unwrap();
        // The right password clears the pair.
        tokio::time::advance(Duration::from_secs(2)).await;
        throttle.succeeded("carol", home, Instant::now());
        throttle
            .check("carol", home, false, Instant::now())
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_name_under_attack_still_lets_its_known_address_and_session_in() {
        let throttle = LoginThrottle::default();
        let home = ip("192.0.2.10");
        throttle.succeeded("victim", home, Instant::now());
        // Many addresses fail the victim's name, each once a second.
        for n in 0..60u8 {
            throttle.failed("victim", ip(&format!("198.51.100.{n}")), Instant::now());
            tokio::time::advance(Duration::from_millis(100)).await;
        }
        // A new address waits for the name's count ...
        let wait = retry_after(throttle.check("victim", ip("203.0.113.7"), false, Instant::now()));
        assert!(wait >= 1 && wait <= MAX_NAME_WAIT.as_secs(), "{wait}");
        // ... the victim's usual address and own session do not.
        throttle
            .check("victim", home, false, Instant::now())
            .unwrap();
        throttle
            .check("victim", ip("203.0.113.7"), true, Instant::now())
            .unwrap();
        // A known address expires after a month without a login.
        tokio::time::advance(KNOWN_FOR).await;
        throttle.failed("victim", ip("198.51.100.1"), Instant::now());
        for _ in 0..FREE_PER_NAME {
            throttle.failed("victim", ip("198.51.100.2"), Instant::now());
        }
        assert!(throttle
            .check("victim", home, false, Instant::now())
            .is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn an_address_spraying_names_is_not_forgiven_by_its_own_logins() {
        let throttle = LoginThrottle::default();
        let sprayer = ip("192.0.2.66");
        let mut refused = None;
        for n in 0..120u32 {
            let name = format!("target{}", n % 30);
            if n % 19 == 18 {
                // Logging into its own account between guesses.
                throttle.succeeded("sprayer", sprayer, Instant::now());
            }
            if throttle
                .check(&name, sprayer, false, Instant::now())
                .is_err()
            {
                refused = Some(n);
                break;
            }
            throttle.failed(&name, sprayer, Instant::now());
        }
        assert_eq!(
            refused,
            Some(FREE_PER_CLIENT),
            "refused after the free failures"
        );
        tokio::time::advance(FORGET_AFTER).await;
        throttle
            .check("target1", sprayer, false, Instant::now())
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn invalid_names_are_not_stored_and_the_tables_are_bounded() {
        let throttle = LoginThrottle::default();
        let long = "x".repeat(16 * 1024);
        for n in 0..1000u32 {
            let client = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            throttle.failed(&long, client, Instant::now());
        }
        // Only the addresses were counted, not the 16 KB name.
        assert_eq!(throttle.entries(), 1000);
        let mut tables = Counts::<u32>::default();
        for n in 0..(MAX_ENTRIES as u32 + 10) {
            tables.fail(n, Instant::now());
            tokio::time::advance(Duration::from_micros(1)).await;
        }
        assert!(tables.0.len() <= MAX_ENTRIES, "{}", tables.0.len());
        // The newest are kept.
        assert!(tables.0.contains_key(&(MAX_ENTRIES as u32 + 9)));
    }
}

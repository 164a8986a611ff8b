//! Failed logins slow down whoever keeps failing: per account name and per
//! client address, with waits that double after a few free tries.
//!
//! - **Per name**: 5 failures free, then each further try must wait 1 s,
//!   2 s, 4 s … after the last failure, at most [`MAX_NAME_WAIT`] (60 s).
//!   The cap is what keeps an attacker from locking a real person out: at
//!   worst, the person waits a minute between tries, and their right
//!   password then works (and clears the count).
//! - **Per address**: 20 failures free (a family behind one address
//!   mistyping), then the same doubling up to [`MAX_CLIENT_WAIT`]
//!   (15 minutes): a guesser spraying many names from one address.
//! - Counts are forgotten [`FORGET_AFTER`] after the last failure, and a
//!   successful login clears its name's and address's counts.
//!
//! Kept in memory per node; the table is bounded ([`MAX_ENTRIES`]):
//! forgotten entries are swept when it fills.

use super::IdentityError;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

const FREE_PER_NAME: u32 = 5;
const FREE_PER_CLIENT: u32 = 20;
pub const MAX_NAME_WAIT: Duration = Duration::from_secs(60);
pub const MAX_CLIENT_WAIT: Duration = Duration::from_secs(15 * 60);
pub const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);
const MAX_ENTRIES: usize = 100_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Name(String),
    Client(IpAddr),
}

impl Key {
    fn rule(&self) -> (u32, Duration) {
        match self {
            Key::Name(_) => (FREE_PER_NAME, MAX_NAME_WAIT),
            Key::Client(_) => (FREE_PER_CLIENT, MAX_CLIENT_WAIT),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

#[derive(Debug, Default)]
pub struct LoginThrottle {
    failures: Mutex<HashMap<Key, Failures>>,
}

/// How long after the last failure the next try may come.
fn wait_after(count: u32, free: u32, max: Duration) -> Duration {
    if count < free {
        return Duration::ZERO;
    }
    let doublings = (count - free).min(20);
    Duration::from_secs(1u64 << doublings).min(max)
}

impl LoginThrottle {
    fn keys(name: &str, client: IpAddr) -> [Key; 2] {
        [Key::Name(name.to_lowercase()), Key::Client(client)]
    }

    /// Refuses a login try that comes too soon after failures (429 with the
    /// seconds to wait).
    pub fn check(&self, name: &str, client: IpAddr, now: Instant) -> Result<(), IdentityError> {
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let mut wait = Duration::ZERO;
        for key in Self::keys(name, client) {
            let Some(seen) = failures.get(&key) else {
                continue;
            };
            if now.saturating_duration_since(seen.last) >= FORGET_AFTER {
                continue;
            }
            let (free, max) = key.rule();
            let until = seen.last + wait_after(seen.count, free, max);
            wait = wait.max(until.saturating_duration_since(now));
        }
        if wait.is_zero() {
            Ok(())
        } else {
            Err(IdentityError::LoginThrottled {
                retry_after: wait.as_secs_f64().ceil() as u64,
            })
        }
    }

    pub fn failed(&self, name: &str, client: IpAddr, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        if failures.len() >= MAX_ENTRIES {
            failures.retain(|_, seen| now.saturating_duration_since(seen.last) < FORGET_AFTER);
        }
        for key in Self::keys(name, client) {
            let seen = failures.entry(key).or_insert(Failures {
                count: 0,
                last: now,
            });
            if now.saturating_duration_since(seen.last) >= FORGET_AFTER {
                seen.count = 0;
            }
            seen.count = seen.count.saturating_add(1);
            seen.last = now;
        }
    }

    pub fn succeeded(&self, name: &str, client: IpAddr) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        for key in Self::keys(name, client) {
            failures.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn failures_make_the_next_try_wait_longer_up_to_a_cap() {
        let throttle = LoginThrottle::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..FREE_PER_NAME - 1 {
            throttle.check("Carol", ip, Instant::now()).unwrap();
            throttle.failed("Carol", ip, Instant::now());
        }
        throttle.check("carol", ip, Instant::now()).unwrap();
        throttle.failed("carol", ip, Instant::now());
        // The fifth failure: one second, then two, four ...
        let Err(IdentityError::LoginThrottled { retry_after }) =
            throttle.check("CAROL", ip, Instant::now())
        else {
            panic!("not throttled");
        };
        assert_eq!(retry_after, 1);
        tokio::time::advance(Duration::from_secs(1)).await;
        throttle.check("carol", ip, Instant::now()).unwrap();
        for _ in 0..40 {
            throttle.failed("carol", ip, Instant::now());
        }
        let Err(IdentityError::LoginThrottled { retry_after }) = throttle
            .check("dave", "192.0.2.2".parse().unwrap(), Instant::now())
            .and_then(|()| throttle.check("carol", "192.0.2.2".parse().unwrap(), Instant::now()))
        else {
            panic!("not throttled");
        };
        assert_eq!(
            retry_after,
            MAX_NAME_WAIT.as_secs(),
            "the name's wait is capped"
        );
        // The address that failed 45 times waits longer, whatever the name.
        let Err(IdentityError::LoginThrottled { retry_after }) =
            throttle.check("dave", ip, Instant::now())
        else {
            panic!("not throttled");
        };
        assert!(retry_after > MAX_NAME_WAIT.as_secs());
        // A success clears the name.
        throttle.succeeded("carol", "192.0.2.2".parse().unwrap());
        throttle
            .check("carol", "192.0.2.2".parse().unwrap(), Instant::now())
            .unwrap();
        // And everything is forgotten in time.
        tokio::time::advance(FORGET_AFTER).await;
        throttle.check("dave", ip, Instant::now()).unwrap();
    }
}

//! A connection's two waiting timers, kept apart:
//!
//! - the **header timer** (`--header-timeout-ms`): from the first byte of a
//!   request head (or from accept, on a fresh connection: a client that
//!   connects owes a request) until the head is complete. It stops a
//!   slowloris client that trickles its headers.
//! - the **keep-alive idle timer** (`--keepalive-idle-ms`): from the end of
//!   a response until the first byte of the next request. It frees the
//!   descriptor of a client that keeps a connection for later.
//!
//! hyper's own header timer runs from when it starts waiting for a head, so
//! it cannot tell the two apart; we run both here instead. The connection
//! moves through [`Phase`]s: its socket reports the first byte read while
//! idle, the service reports a request taken and its response's body
//! finished (or dropped). While a request is served no connection timer
//! runs but the **write timer** (`--ws-write-timeout-ms`): a part of the
//! response (an NDJSON stream's line) handed to hyper and not taken by the
//! client within it (hyper did not come back for the next part: the
//! socket's send buffer is full) closes the connection, as for a
//! WebSocket. The body timer ([`crate::http::body`]) and the request timer
//! ([`crate::http::serve::limit_time`]) cover the rest of serving.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use tokio::sync::Notify;
use tokio::time::Instant;

/// What a connection is doing, for its timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Between requests since `since`, no byte of the next one yet.
    Idle { since: Instant },
    /// The first byte of a request head came at `since` (or the connection
    /// was accepted then), and the head is not complete.
    Head { since: Instant },
    /// `count` requests are being served (HTTP/1.1: one, unless a client
    /// pipelines); `handed`: when a part of the response went to hyper
    /// that it has not come back after (the write timer runs from then).
    Serving {
        count: usize,
        handed: Option<Instant>,
    },
}

/// The phase of one connection, shared by its socket, its service and its
/// serving loop.
#[derive(Debug)]
pub struct ConnectionTimers {
    phase: Mutex<Phase>,
    /// Wakes the serving loop when the phase changes (its deadline moves).
    changed: Notify,
    header_timeout: Duration,
    idle_timeout: Duration,
    write_timeout: Duration,
}

/// Why a connection's timer closed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expired {
    /// A request head took longer than the header timer.
    Header,
    /// No request came within the keep-alive idle timer.
    Idle,
    /// The client did not take a part of its response within the write
    /// timer.
    Write,
}

impl ConnectionTimers {
    /// A fresh connection, accepted now: the header timer runs.
    pub fn new(
        header_timeout: Duration,
        idle_timeout: Duration,
        write_timeout: Duration,
    ) -> Arc<ConnectionTimers> {
        Arc::new(ConnectionTimers {
            phase: Mutex::new(Phase::Head {
                since: Instant::now(),
            }),
            changed: Notify::new(),
            header_timeout,
            idle_timeout,
            write_timeout,
        })
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        // A phase is one plain value, set in one step: a poisoned lock
        // still holds a valid one.
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When the current phase's timer runs out (while serving, only the
    /// write timer, when a part of the response waits for the client).
    pub fn deadline(&self) -> Option<Instant> {
        match *self.phase() {
            Phase::Idle { since } => Some(since + self.idle_timeout),
            Phase::Head { since } => Some(since + self.header_timeout),
            Phase::Serving { handed, .. } => handed.map(|since| since + self.write_timeout),
        }
    }

    /// Whether a timer has run out at `now`, and which.
    pub fn expired(&self, now: Instant) -> Option<Expired> {
        let expired = match *self.phase() {
            Phase::Idle { since } => (now >= since + self.idle_timeout).then_some(Expired::Idle),
            Phase::Head { since } => {
                (now >= since + self.header_timeout).then_some(Expired::Header)
            }
            Phase::Serving { handed, .. } => handed
                .is_some_and(|since| now >= since + self.write_timeout)
                .then_some(Expired::Write),
        };
        expired
    }

    /// Waits until the phase changes.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    fn set(&self, phase: Phase) {
        *self.phase() = phase;
        // `notify_one` keeps a permit if the loop is not waiting yet, so a
        // change between its reading the deadline and its waiting is not
        // lost.
        self.changed.notify_one();
    }

    /// Bytes arrived on the socket: the first ones after an idle wait start
    /// a request head.
    pub fn on_read(&self) {
        let idle = matches!(*self.phase(), Phase::Idle { .. });
        if idle {
            self.set(Phase::Head {
                since: Instant::now(),
            });
        }
    }

    /// A request's head is complete and the service takes it. The returned
    /// guard marks the request served when it is dropped: keep it until
    /// the response's body is sent.
    pub fn serving(self: &Arc<Self>) -> Served {
        let count = match *self.phase() {
            Phase::Serving { count, .. } => count + 1,
            _ => 1,
        };
        self.set(Phase::Serving {
            count,
            handed: None,
        });
        Served {
            timers: self.clone(),
        }
    }
}

/// One request being served; dropping it ends the request (the idle timer
/// starts when the last one ends).
#[derive(Debug)]
pub struct Served {
    timers: Arc<ConnectionTimers>,
}

impl Served {
    /// A part of the response went to hyper: the write timer runs until
    /// hyper asks for the next one.
    fn handed(&self) {
        let mut phase = self.timers.phase();
        if let Phase::Serving {
            count,
            handed: None,
        } = *phase
        {
            *phase = Phase::Serving {
                count,
                handed: Some(Instant::now()),
            };
            drop(phase);
            self.timers.changed.notify_one();
        }
    }

    /// hyper asked for the next part: the client took the last one.
    fn taken(&self) {
        let mut phase = self.timers.phase();
        if let Phase::Serving {
            count,
            handed: Some(_),
        } = *phase
        {
            // No wake-up needed: the loop finds no expiry at the old
            // deadline and reads the new one.
            *phase = Phase::Serving {
                count,
                handed: None,
            };
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let next = match *self.timers.phase() {
            Phase::Serving { count, .. } if count > 1 => Phase::Serving {
                count: count - 1,
                handed: None,
            },
            _ => Phase::Idle {
                since: Instant::now(),
            },
        };
        self.timers.set(next);
    }
}

/// A response body that holds its request's [`Served`] guard until the
/// body is finished or dropped (a stream that ends, a client that leaves).
pub struct ServedBody {
    inner: Body,
    served: Option<Served>,
}

impl ServedBody {
    pub fn wrap(inner: Body, served: Served) -> Body {
        Body::new(ServedBody {
            inner,
            served: Some(served),
        })
    }
}

impl http_body::Body for ServedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Some(served) = &self.served {
            served.taken();
        }
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            // The whole body is out: the request is served now, not when
            // hyper gets round to dropping the body.
            Poll::Ready(None) => self.served = None,
            Poll::Ready(Some(Ok(_))) => {
                if let Some(served) = &self.served {
                    served.handed();
                }
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(2);
    const IDLE: Duration = Duration::from_secs(5);

    #[tokio::test(start_paused = true)]
    async fn each_phase_has_its_own_timer() {
        let timers = ConnectionTimers::new(HEADER, IDLE, Duration::from_secs(7));
        let accepted = Instant::now();
        assert_eq!(timers.deadline(), Some(accepted + HEADER));
        assert_eq!(timers.expired(accepted + HEADER), Some(Expired::Header));

        let first = timers.serving();
        assert_eq!(timers.deadline(), None);
        let second = timers.serving();
        drop(first);
        assert_eq!(timers.deadline(), None, "a pipelined request still runs");
        tokio::time::advance(Duration::from_secs(1)).await;
        drop(second);
        let idle_since = Instant::now();
        assert_eq!(timers.deadline(), Some(idle_since + IDLE));
        assert_eq!(timers.expired(idle_since + HEADER), None);
        assert_eq!(timers.expired(idle_since + IDLE), Some(Expired::Idle));

        // Bytes while idle start a head; bytes during a head do not move
        // its start.
        tokio::time::advance(Duration::from_secs(1)).await;
        timers.on_read();
        let head_since = Instant::now();
        tokio::time::advance(Duration::from_secs(1)).await;
        timers.on_read();
        assert_eq!(timers.deadline(), Some(head_since + HEADER));
    }

    #[tokio::test]
    async fn a_body_ends_its_request_when_it_is_sent() {
        let timers = ConnectionTimers::new(HEADER, IDLE, Duration::from_secs(7));
        let body = ServedBody::wrap(Body::from("answer"), timers.serving());
        assert_eq!(timers.deadline(), None);
        let bytes = axum::body::to_bytes(body, 1024).await.unwrap();
        assert_eq!(&bytes[..], b"answer");
        assert!(timers.deadline().is_some());
    }
}

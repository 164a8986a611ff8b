//! Search threads lent to post-game analysis ([`AnalysisSlot`]).
//!
//! Analysis borrows the game searches' slots through a third, lowest class
//! ([`AiScheduler::analysis_slot`]): it gets a slot only when no game's
//! search waits, and any game's search arriving while every slot is taken
//! preempts it first (see [`Priority::Analysis`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::ai::pool::Inner;
use crate::ai::queue::{Control, Job, Queues, Running};
use crate::ai::{AiScheduler, Priority};

/// An analysis slot asked for and not yet granted.
pub(super) struct SlotWaiter {
    id: u64,
    control: Arc<Control>,
    granted: oneshot::Sender<()>,
}

/// One search thread lent to post-game analysis. The holder runs its own
/// blocking work (on `spawn_blocking`) polling
/// [`AnalysisSlot::stop_flag`]; when a game's search needs the thread the
/// flag is raised and [`AnalysisSlot::was_preempted`] says so: the holder
/// drops its half-done result and asks for a new slot. Dropping the slot
/// gives the thread back.
pub struct AnalysisSlot {
    id: u64,
    control: Arc<Control>,
    inner: Arc<Inner>,
}

impl AnalysisSlot {
    /// The flag the analysis work polls: raised when a game's search needs
    /// the thread (or the slot is dropped). It can move to a blocking
    /// thread.
    pub fn stop_flag(&self) -> StopFlag {
        StopFlag(self.control.clone())
    }

    /// Whether a game's search took the thread back.
    pub fn was_preempted(&self) -> bool {
        self.control.preempted.load(Ordering::Acquire)
    }
}

impl Drop for AnalysisSlot {
    fn drop(&mut self) {
        self.control.cancelled.store(true, Ordering::Release);
        self.control.interrupt.store(true, Ordering::Release);
        let mut queues = self.inner.lock();
        queues.running.retain(|running| running.id != self.id);
        self.inner.grant_slots(&mut queues);
    }
}

/// An analysis slot's stop flag, owned, for the blocking thread doing the
/// work.
#[derive(Clone)]
pub struct StopFlag(Arc<Control>);

impl StopFlag {
    pub fn get(&self) -> &AtomicBool {
        &self.0.interrupt
    }
}

impl AiScheduler {
    /// Waits for a search thread at the lowest priority ([`Priority::Analysis`]).
    pub async fn analysis_slot(&self) -> AnalysisSlot {
        let control = Arc::new(Control::default());
        let (granted, wait) = oneshot::channel();
        let inner = &self.pool.inner;
        let id = {
            let mut queues = inner.lock();
            let id = queues.next_id;
            queues.next_id += 1;
            queues.slot_waiters.push_back(SlotWaiter {
                id,
                control: control.clone(),
                granted,
            });
            inner.grant_slots(&mut queues);
            id
        };
        // The slot exists from here: if this future is dropped before the
        // grant arrives, dropping it frees the slot it may have been given.
        let slot = AnalysisSlot {
            id,
            control,
            inner: inner.clone(),
        };
        // The sender lives in the queue until granted; the scheduler lives
        // as long as `self`, so it cannot be dropped unanswered.
        let _ = wait.await;
        slot
    }
}

impl Inner {
    /// Grants waiting analysis slots while slots are free and no game's
    /// search waits.
    pub(super) fn grant_slots(&self, queues: &mut Queues) {
        let waiting = |jobs: &VecDeque<Job>| jobs.iter().any(|job| !job.control.is_cancelled());
        if queues.closed || waiting(&queues.human) || waiting(&queues.background) {
            return;
        }
        while queues.running.len() < self.threads {
            let Some(waiter) = queues.slot_waiters.pop_front() else {
                return;
            };
            if waiter.granted.is_closed() {
                continue; // its holder stopped waiting
            }
            queues.running.push(Running {
                id: waiter.id,
                priority: Priority::Analysis,
                client: None,
                control: waiter.control.clone(),
                started: Instant::now(),
            });
            // A holder that stopped waiting just now drops its slot, which
            // frees the slot again.
            let _ = waiter.granted.send(());
        }
    }

    /// A game's search arrived: when every thread is busy, one running
    /// analysis gives its thread back.
    pub(super) fn preempt_analysis(&self, queues: &mut Queues) {
        if queues.running.len() < self.threads {
            return;
        }
        let already = queues.running.iter().any(|running| {
            running.priority == Priority::Analysis
                && running.control.preempted.load(Ordering::Acquire)
        });
        if already {
            return;
        }
        if let Some(running) = queues
            .running
            .iter()
            .find(|running| running.priority == Priority::Analysis)
        {
            running.control.preempted.store(true, Ordering::Release);
            running.control.interrupt.store(true, Ordering::Release);
            tracing::debug!(slot = running.id, "analysis preempted");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::mpsc;

    use super::*;
    use crate::ai::testing::request;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_analysis_slot_yields_to_any_game_search_and_waits_behind_them() {
        let scheduler = AiScheduler::new(1, Duration::ZERO);
        let slot = scheduler.analysis_slot().await;
        let stop = slot.stop_flag();
        assert!(!stop.get().load(Ordering::Acquire));
        // A game's search arrives while the only slot is lent: the slot is
        // told to give it back, and the search answers.
        let (tx, mut rx) = mpsc::channel(4);
        let _thinking = scheduler.start(request(1, Priority::Background), tx);
        assert!(slot.was_preempted());
        assert!(stop.get().load(Ordering::Acquire));
        drop(slot);
        let answer = rx.recv().await.expect("the game's answer");
        assert_eq!(answer.ply, 1);
        // The slot is free again: a new slot is granted.
        let again = tokio::time::timeout(Duration::from_secs(30), scheduler.analysis_slot())
            .await
            .expect("a new slot");
        assert!(!again.was_preempted());
    }
}

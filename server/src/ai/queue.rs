//! The queues of searches waiting for a thread, and who goes next.
//!
//! Fairness: the queue has two classes. A search for a game with a human
//! seat (someone is waiting for that answer) always goes before a search
//! for an AI v AI game (a show that can wait). AI v AI searches run first
//! come, first served; human games' searches take turns by client (the
//! game creator's address): the client with the fewest searches running
//! goes next. And when a human's search arrives while every thread is
//! busy, one running AI v AI search is *preempted*: its stop flag is raised,
//! its half-done answer is thrown away and it goes back to the front of its
//! class's queue; failing that, a client holding two or more threads gives
//! one up the same way to a client holding none. So a human's opponent
//! starts thinking at once whatever AI v AI games, or one client's many
//! games, run, and answers within its level's think time (plus the time
//! other clients' searches take, when there are more of them than threads).
//!
//! Post-game analysis waits in a third, lowest class (`slots.rs`).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::ai::pool::Inner;
use crate::ai::slots::SlotWaiter;
use crate::ai::{AiAnswer, Priority, SearchRequest};

/// The flags shared by a search, its game and the scheduler.
#[derive(Debug, Default)]
pub(super) struct Control {
    /// The game no longer wants this search.
    pub(super) cancelled: AtomicBool,
    /// What the running search polls: raised to cancel or to preempt it.
    pub(super) interrupt: AtomicBool,
    /// Interrupted to make room for a human's search (not cancelled).
    pub(super) preempted: AtomicBool,
}

impl Control {
    pub(super) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

/// A search waiting for a thread (or running on one).
pub(super) struct Job {
    pub(super) id: u64,
    pub(super) request: Arc<SearchRequest>,
    pub(super) control: Arc<Control>,
    pub(super) answers: mpsc::Sender<AiAnswer>,
    /// Failed tries so far.
    pub(super) failures: u32,
    /// When it was queued (the wait metric).
    pub(super) queued_at: Instant,
}

/// A search, or an analysis slot, holding a thread.
pub(super) struct Running {
    pub(super) id: u64,
    pub(super) priority: Priority,
    pub(super) client: Option<IpAddr>,
    pub(super) control: Arc<Control>,
}

/// Everything under the scheduler's one lock.
#[derive(Default)]
pub(super) struct Queues {
    pub(super) human: VecDeque<Job>,
    pub(super) background: VecDeque<Job>,
    /// Analyses waiting for a slot (lowest class).
    pub(super) slot_waiters: VecDeque<SlotWaiter>,
    pub(super) running: Vec<Running>,
    pub(super) next_id: u64,
    /// The scheduler is gone: search threads exit when they see it.
    pub(super) closed: bool,
}

impl Queues {
    pub(super) fn queue(&mut self, priority: Priority) -> &mut VecDeque<Job> {
        match priority {
            Priority::Human => &mut self.human,
            // Analysis never queues a `Job` (it waits for an `AnalysisSlot`).
            Priority::Background | Priority::Analysis => &mut self.background,
        }
    }

    /// The next job to run that its game still wants (dropping the others):
    /// a human search first, from the client with the fewest human
    /// searches running (first come, first served among equals), so one
    /// client's many games cannot keep everyone else's opponents waiting.
    pub(super) fn pop_next(&mut self) -> Option<Job> {
        self.human.retain(|job| !job.control.is_cancelled());
        let running = self.human_searches_by_client();
        let fairest = self
            .human
            .iter()
            .enumerate()
            .min_by_key(|(index, job)| {
                let client = job.request.client;
                (running.get(&client).copied().unwrap_or(0), *index)
            })
            .map(|(index, _)| index);
        if let Some(job) = fairest.and_then(|index| self.human.remove(index)) {
            return Some(job);
        }
        while let Some(job) = self.background.pop_front() {
            if !job.control.is_cancelled() {
                return Some(job);
            }
        }
        None
    }

    /// Human searches running and not being preempted, per client.
    fn human_searches_by_client(&self) -> HashMap<Option<IpAddr>, usize> {
        let mut counts = HashMap::new();
        for running in &self.running {
            if running.priority == Priority::Human
                && !running.control.preempted.load(Ordering::Acquire)
            {
                *counts.entry(running.client).or_insert(0) += 1;
            }
        }
        counts
    }
}

impl Inner {
    /// Makes room for a waiting human search: when every thread is busy and
    /// there are more human searches waiting than running AI v AI searches
    /// already being preempted, interrupts one more AI v AI search.
    pub(super) fn preempt_for_human(&self, queues: &mut Queues) {
        // Analysis slots do not hold a search thread (they are preempted
        // by `preempt_analysis`).
        let searching = queues
            .running
            .iter()
            .filter(|running| running.priority != Priority::Analysis)
            .count();
        if searching < self.threads {
            return;
        }
        let waiting = queues
            .human
            .iter()
            .filter(|job| !job.control.is_cancelled())
            .count();
        let (yielding, mut candidates): (Vec<_>, Vec<_>) = queues
            .running
            .iter()
            .filter(|running| running.priority == Priority::Background)
            .partition(|running| running.control.preempted.load(Ordering::Acquire));
        for running in candidates
            .drain(..)
            .take(waiting.saturating_sub(yielding.len()))
        {
            running.control.preempted.store(true, Ordering::Release);
            running.control.interrupt.store(true, Ordering::Release);
            tracing::debug!(search = running.id, "AI v AI search preempted");
        }
        self.preempt_for_other_clients(queues);
    }

    /// When every thread is busy and a client with no human search running
    /// waits while another client has several running, one of the busy
    /// client's searches yields (it runs again first among that client's
    /// own): each client gets a thread before any client gets a second.
    fn preempt_for_other_clients(&self, queues: &mut Queues) {
        let mut running = queues.human_searches_by_client();
        let yielding = queues
            .running
            .iter()
            .filter(|running| running.control.preempted.load(Ordering::Acquire))
            .count();
        let mut starved: Vec<Option<IpAddr>> = Vec::new();
        for job in &queues.human {
            let client = job.request.client;
            if !job.control.is_cancelled()
                && !running.contains_key(&client)
                && !starved.contains(&client)
            {
                starved.push(client);
            }
        }
        for _ in 0..starved.len().saturating_sub(yielding) {
            // The client holding the most threads gives one up, if it
            // holds more than one.
            let Some((&busiest, &count)) = running.iter().max_by_key(|(_, count)| **count) else {
                return;
            };
            if count < 2 {
                return;
            }
            let Some(victim) = queues.running.iter().rev().find(|running| {
                running.priority == Priority::Human
                    && running.client == busiest
                    && !running.control.preempted.load(Ordering::Acquire)
            }) else {
                return;
            };
            victim.control.preempted.store(true, Ordering::Release);
            victim.control.interrupt.store(true, Ordering::Release);
            tracing::debug!(search = victim.id, "search preempted for another client's");
            running.insert(busiest, count - 1);
        }
    }
}

/// The same search, for a queue again.
pub(super) fn clone_job(job: &Job) -> Job {
    Job {
        id: job.id,
        request: job.request.clone(),
        control: job.control.clone(),
        answers: job.answers.clone(),
        failures: job.failures,
        queued_at: job.queued_at,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::ai::testing::{first_legal_move, request};
    use crate::ai::{AiScheduler, SearchFn};

    /// A search that records the order searches start in, and (for AI v AI
    /// ones) blocks until stopped.
    fn recording(order: Arc<Mutex<Vec<usize>>>) -> SearchFn {
        Arc::new(move |request, _budget, stop| {
            order.lock().unwrap().push(request.ply);
            if request.priority == Priority::Background {
                while !stop.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Ok(Some(first_legal_move()))
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn human_searches_go_first_and_preempt_ai_v_ai_ones() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let scheduler = AiScheduler::with_search(1, Duration::ZERO, recording(order.clone()));
        let (tx, mut rx) = mpsc::channel(16);
        // Two AI v AI searches: the first runs (and never ends by itself),
        // the second waits.
        let background: Vec<_> = [100, 101]
            .map(|ply| scheduler.start(request(ply, Priority::Background), tx.clone()))
            .into();
        while order.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // A human's search arrives: it runs next, before the waiting AI v
        // AI one, by preempting the running one.
        let human = scheduler.start(request(1, Priority::Human), tx.clone());
        let answer = rx.recv().await.expect("the human's answer");
        assert_eq!(answer.ply, 1);
        assert_eq!(order.lock().unwrap()[..2], [100, 1]);
        // The preempted search runs again, first: stop the AI v AI games.
        while order.lock().unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(order.lock().unwrap()[2], 100);
        drop((background, human));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_clients_many_games_do_not_keep_another_clients_opponent_waiting() {
        let flooder: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        // The flooder's searches run until stopped; the other client's
        // answers at once.
        let order = Arc::new(Mutex::new(Vec::new()));
        let record = order.clone();
        let search: SearchFn = Arc::new(move |request, _budget, stop| {
            record.lock().unwrap().push(request.ply);
            if request.client == Some(flooder) {
                while !stop.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Ok(Some(first_legal_move()))
        });
        let scheduler = AiScheduler::with_search(2, Duration::ZERO, search);
        let (tx, mut rx) = mpsc::channel(16);
        let for_client = |ply, client| SearchRequest {
            client: Some(client),
            ..request(ply, Priority::Human)
        };
        // Three of the flooder's games want a move: two run, one waits.
        let flood: Vec<_> = [1, 2, 3]
            .map(|ply| scheduler.start(for_client(ply, flooder), tx.clone()))
            .into();
        while order.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The other client's search goes before the flooder's waiting one,
        // and one of the flooder's two running searches makes room for it
        // (without that it would wait for ever here).
        let other_search = scheduler.start(for_client(10, other), tx.clone());
        let answer = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the other client's search ran")
            .expect("the other client's answer");
        assert_eq!(answer.ply, 10);
        assert_eq!(order.lock().unwrap()[2], 10, "{:?}", order.lock().unwrap());
        // The flooder keeps one thread meanwhile, and gets both back.
        while order.lock().unwrap().len() < 4 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop((flood, other_search));
    }
}

//! The queues of searches waiting for a thread, and who goes next.
//!
//! Fairness: the queue has two classes. A search for a game with a human
//! seat (someone is waiting for that answer) always goes before a search
//! for an AI v AI game (a show that can wait). AI v AI searches run first
//! come, first served. Human games' searches take turns by client (the
//! game creator's address): the client with the fewest searches running
//! goes next, and among equals the client that used the least search time
//! lately ([`Usage`]: a client's search time, halving every
//! [`USAGE_HALF_LIFE`]), so a newcomer goes before the old requests of
//! clients that keep long searches going; first come, first served only
//! breaks the ties that remain.
//!
//! Preemption: when a human's search arrives while every thread is busy,
//! one running search is *preempted*: its stop flag is raised, its
//! half-done answer is thrown away and it goes back to its class's queue
//! (the front, for AI v AI; by the order above, for a human game's), to
//! run again from the start when a thread is free. The victim is, in this
//! order:
//!
//! 1. a running AI v AI search;
//! 2. for a client owed a thread (it holds fewer than
//!    `--max-ai-searches-per-client`, [`DEFAULT_MAX_SEARCHES_PER_CLIENT`],
//!    and wants another), the newest search of the client holding the most
//!    threads, when that client holds at least two more than it;
//! 3. for a newcomer (a client with no search running), the search of the
//!    client that used the most search time lately, even when every client
//!    holds one thread, when that client used [`PREEMPT_MARGIN`] more than
//!    the newcomer (so clients with long searches do not preempt each
//!    other in turn, and cannot preempt a newcomer's short search).
//!
//! So a client's searches beyond its `--max-ai-searches-per-client` wait
//! behind every other client's and take only threads nobody else wants,
//! and a human's opponent starts thinking at once whatever AI v AI games,
//! or other clients' long searches, run: a level-1 reply comes within its
//! think time plus a few milliseconds while two or three addresses keep
//! masters (level 8) thinking on every thread. The price is paid by those
//! long searches: a preempted one starts again.
//!
//! Post-game analysis waits in a third, lowest class (`slots.rs`).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    /// When it took the thread.
    pub(super) started: Instant,
}

/// How many human games' searches a client is owed at once unless told
/// otherwise (`--max-ai-searches-per-client`).
pub const DEFAULT_MAX_SEARCHES_PER_CLIENT: usize = 2;

/// How fast a client's past search time is forgotten: it halves every
/// this long.
pub const USAGE_HALF_LIFE: Duration = Duration::from_secs(30);

/// How much more search time lately a client must have used than a
/// newcomer for its lone running search to make room for the newcomer's.
pub const PREEMPT_MARGIN: Duration = Duration::from_millis(500);

/// Clients remembered before those whose usage has faded are forgotten.
const USAGE_ENTRIES: usize = 256;

/// A client's past search time (human games' searches), decaying.
#[derive(Debug, Clone, Copy)]
pub(super) struct Usage {
    seconds: f64,
    at: Instant,
}

impl Usage {
    /// What is left of it at `now`.
    fn at(&self, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.seconds * 0.5f64.powf(elapsed / USAGE_HALF_LIFE.as_secs_f64())
    }
}

/// Everything under the scheduler's one lock.
pub(super) struct Queues {
    pub(super) human: VecDeque<Job>,
    pub(super) background: VecDeque<Job>,
    /// Analyses waiting for a slot (lowest class).
    pub(super) slot_waiters: VecDeque<SlotWaiter>,
    pub(super) running: Vec<Running>,
    pub(super) next_id: u64,
    /// The scheduler is gone: search threads exit when they see it.
    pub(super) closed: bool,
    /// Each client's past search time.
    pub(super) usage: HashMap<Option<IpAddr>, Usage>,
    /// Human games' searches a client is owed at once.
    pub(super) max_per_client: usize,
}

impl Default for Queues {
    fn default() -> Queues {
        Queues {
            human: VecDeque::new(),
            background: VecDeque::new(),
            slot_waiters: VecDeque::new(),
            running: Vec::new(),
            next_id: 0,
            closed: false,
            usage: HashMap::new(),
            max_per_client: DEFAULT_MAX_SEARCHES_PER_CLIENT,
        }
    }
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
    /// searches running, then the least search time lately (first come,
    /// first served among equals), so one client's many games, or a few
    /// clients' long searches, cannot keep everyone else's opponents
    /// waiting.
    pub(super) fn pop_next(&mut self) -> Option<Job> {
        self.human.retain(|job| !job.control.is_cancelled());
        let now = Instant::now();
        let running = self.human_searches_by_client();
        let mut usage: HashMap<Option<IpAddr>, f64> = HashMap::new();
        let mut fairest: Option<(usize, usize, f64)> = None;
        for (index, job) in self.human.iter().enumerate() {
            let client = job.request.client;
            let held = running.get(&client).copied().unwrap_or(0);
            let used = *usage
                .entry(client)
                .or_insert_with(|| self.usage_of(client, now));
            let better = match fairest {
                None => true,
                Some((_, best_held, best_used)) => {
                    held < best_held || (held == best_held && used < best_used)
                }
            };
            if better {
                fairest = Some((index, held, used));
            }
        }
        if let Some(job) = fairest.and_then(|(index, _, _)| self.human.remove(index)) {
            return Some(job);
        }
        while let Some(job) = self.background.pop_front() {
            if !job.control.is_cancelled() {
                return Some(job);
            }
        }
        None
    }

    /// `client`'s search time lately, in seconds: what its finished human
    /// games' searches used (fading), and its running ones so far.
    fn usage_of(&self, client: Option<IpAddr>, now: Instant) -> f64 {
        let past = self.usage.get(&client).map_or(0.0, |usage| usage.at(now));
        let running: f64 = self
            .running
            .iter()
            .filter(|running| running.priority == Priority::Human && running.client == client)
            .map(|running| now.saturating_duration_since(running.started).as_secs_f64())
            .sum();
        past + running
    }

    /// Adds `spent` to `client`'s search time (a human game's search that
    /// held a thread that long, whatever became of it).
    pub(super) fn charge(&mut self, client: Option<IpAddr>, spent: Duration, now: Instant) {
        let usage = self.usage.entry(client).or_insert(Usage {
            seconds: 0.0,
            at: now,
        });
        *usage = Usage {
            seconds: usage.at(now) + spent.as_secs_f64(),
            at: now,
        };
        if self.usage.len() > USAGE_ENTRIES {
            // Forget the clients whose usage has faded below a millisecond.
            self.usage.retain(|_, usage| usage.at(now) >= 0.001);
        }
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

    /// When every thread is busy, the human searches that give way to
    /// other clients' (rules 2 and 3 of the module's doc): each client
    /// owed a thread, the one with the fewest running and the least search
    /// time lately first, may get one from the client holding the most
    /// threads (the most search time lately among equals).
    fn preempt_for_other_clients(&self, queues: &mut Queues) {
        let now = Instant::now();
        let owed = queues.max_per_client.max(1);
        let mut running = queues.human_searches_by_client();
        let yielding = queues
            .running
            .iter()
            .filter(|running| running.control.preempted.load(Ordering::Acquire))
            .count();
        // The clients waiting that are owed a thread, with their usage.
        let mut needy: Vec<(Option<IpAddr>, usize, f64)> = Vec::new();
        for job in &queues.human {
            let client = job.request.client;
            let held = running.get(&client).copied().unwrap_or(0);
            if !job.control.is_cancelled()
                && held < owed
                && !needy.iter().any(|(other, _, _)| *other == client)
            {
                needy.push((client, held, queues.usage_of(client, now)));
            }
        }
        needy.sort_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)));
        let wanted = needy.len().saturating_sub(yielding);
        for (client, held, used) in needy.into_iter().take(wanted) {
            let Some((busiest, count, busiest_used)) = running
                .iter()
                .filter(|(other, count)| **other != client && **count > 0)
                .map(|(other, count)| (*other, *count, queues.usage_of(*other, now)))
                .max_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)))
            else {
                return;
            };
            let fair = count >= held + 2
                || (held == 0 && busiest_used > used + PREEMPT_MARGIN.as_secs_f64());
            if !fair {
                continue;
            }
            let Some(victim) = queues.running.iter().rev().find(|running| {
                running.priority == Priority::Human
                    && running.client == busiest
                    && !running.control.preempted.load(Ordering::Acquire)
            }) else {
                continue;
            };
            victim.control.preempted.store(true, Ordering::Release);
            victim.control.interrupt.store(true, Ordering::Release);
            tracing::debug!(search = victim.id, "search preempted for another client's");
            running.insert(busiest, count - 1);
            *running.entry(client).or_insert(0) += 1;
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
    /// A scheduler whose searches for `busy` run until stopped (recording
    /// the order searches start in), and answer at once otherwise.
    fn busy_clients(
        threads: usize,
        busy: Vec<IpAddr>,
        order: Arc<Mutex<Vec<usize>>>,
    ) -> AiScheduler {
        let search: SearchFn = Arc::new(move |request, _budget, stop| {
            order.lock().unwrap().push(request.ply);
            if request.client.is_some_and(|client| busy.contains(&client)) {
                while !stop.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Ok(Some(first_legal_move()))
        });
        AiScheduler::with_search(threads, Duration::ZERO, search)
    }

    /// `big` starts searches 1-3, then `small` search 10; returns once all
    /// four run.
    async fn three_and_one(
        scheduler: &AiScheduler,
        big: IpAddr,
        small: IpAddr,
        order: &Arc<Mutex<Vec<usize>>>,
        tx: &mpsc::Sender<AiAnswer>,
    ) -> Vec<crate::ai::Thinking> {
        let mut held: Vec<_> = [1, 2, 3]
            .map(|ply| scheduler.start(for_client(ply, big), tx.clone()))
            .into();
        held.push(scheduler.start(for_client(10, small), tx.clone()));
        while order.lock().unwrap().len() < 4 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        held
    }

    fn for_client(ply: usize, client: IpAddr) -> SearchRequest {
        SearchRequest {
            client: Some(client),
            ..request(ply, Priority::Human)
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_below_its_share_gets_a_thread_from_one_far_above_it() {
        let big: IpAddr = "192.0.2.1".parse().unwrap();
        let small: IpAddr = "192.0.2.2".parse().unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let scheduler = busy_clients(4, vec![big, small], order.clone());
        let (tx, mut rx) = mpsc::channel(16);
        // The big client took three of the four threads while alone, the
        // small one the last.
        let mut held = three_and_one(&scheduler, big, small, &order, &tx).await;
        // The small client (one thread, owed two) asks for another: the big
        // one (three, two more than it) gives one up.
        held.push(scheduler.start(for_client(11, small), tx.clone()));
        within_a_second(&order, 11).await;
        assert_eq!(scheduler.stats().running, 4);
        drop(held);
        while rx.try_recv().is_ok() {}
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn beyond_its_share_a_client_takes_no_thread_from_others() {
        let big: IpAddr = "192.0.2.1".parse().unwrap();
        let small: IpAddr = "192.0.2.2".parse().unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let scheduler = busy_clients(4, vec![big, small], order.clone());
        // Owed one search at a time: the small client's second waits.
        scheduler.set_max_searches_per_client(1);
        let (tx, _rx) = mpsc::channel(16);
        let mut held = three_and_one(&scheduler, big, small, &order, &tx).await;
        held.push(scheduler.start(for_client(11, small), tx.clone()));
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            order.lock().unwrap().len(),
            4,
            "{:?}",
            order.lock().unwrap()
        );
        assert_eq!(scheduler.stats().waiting_human, 1);
        drop(held);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn clients_with_long_searches_do_not_preempt_each_other() {
        let clients: Vec<IpAddr> = ["192.0.2.1", "192.0.2.2", "192.0.2.3"]
            .map(|client| client.parse().unwrap())
            .into();
        let order = Arc::new(Mutex::new(Vec::new()));
        let scheduler = busy_clients(2, clients.clone(), order.clone());
        let (tx, _rx) = mpsc::channel(16);
        // The first two clients hold the threads for a while, the third
        // has held one before for as long: it is no newcomer by its usage.
        let mut held = vec![
            scheduler.start(for_client(1, clients[0]), tx.clone()),
            scheduler.start(for_client(2, clients[1]), tx.clone()),
        ];
        scheduler.pool.inner.lock().charge(
            Some(clients[2]),
            Duration::from_secs(1),
            Instant::now(),
        );
        tokio::time::sleep(Duration::from_millis(700)).await;
        held.push(scheduler.start(for_client(3, clients[2]), tx.clone()));
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The first two run (on two threads, so they may begin in either
        // order) and the third waits.
        let mut started = order.lock().unwrap().clone();
        started.sort_unstable();
        assert_eq!(started, [1, 2]);
        // A real newcomer, with a short search, is let in at once.
        let newcomer: IpAddr = "192.0.2.9".parse().unwrap();
        held.push(scheduler.start(for_client(9, newcomer), tx.clone()));
        within_a_second(&order, 9).await;
        drop(held);
    }

    /// Waits (at most a second) until the search for `ply` has started.
    async fn within_a_second(order: &Arc<Mutex<Vec<usize>>>, ply: usize) {
        let deadline = Instant::now() + Duration::from_secs(1);
        while !order.lock().unwrap().contains(&ply) {
            assert!(
                Instant::now() < deadline,
                "search {ply} did not start: {:?}",
                order.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

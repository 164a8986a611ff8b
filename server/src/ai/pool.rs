//! The search threads: what they share with the scheduler's handles
//! ([`Inner`]), their owner ([`Pool`], whose drop tells them to exit), and
//! a thread's life: wait for the next job, run it, then answer, retry it,
//! or put it back in its queue after a preemption.
//!
//! Each search thread lowers its own OS priority at start
//! ([`crate::ai::SearchPriority`]: a nice value, `--ai-nice`, 10 by
//! default, or Linux's `SCHED_IDLE` policy, `--ai-idle`; both are per
//! thread on Linux), so that when the searches keep every core busy the
//! runtime's threads still get a core as soon as they wake up. More threads
//! than cores would only slice the same cores thinner and make every AI
//! slower.
//!
//! Workers: with `--nats`, a search is sent to the worker processes
//! instead ([`crate::ai::remote`]); then `--ai-remote-slots` search threads
//! mostly wait on NATS, and a search falls back to this node's cores (still
//! at most `--ai-threads` at once) when no worker can do it.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use rookery_engine::Move;
use tokio::time::Instant;

use crate::ai::queue::{clone_job, Job, Queues, Running};
use crate::ai::remote::RemoteSearch;
use crate::ai::{
    AiAnswer, Priority, SearchFailed, SearchFn, SearchPriority, SearchResult, RETRIES,
};

/// What the search threads share with the scheduler's handles.
pub(super) struct Inner {
    pub(super) threads: usize,
    pub(super) search: SearchFn,
    pub(super) queues: Mutex<Queues>,
    /// Signalled when a job is queued (or the scheduler closes).
    pub(super) work: Condvar,
    /// The workers, when searches go to them (with the runtime their
    /// client runs on); then `local` bounds the searches that fall back to
    /// this node.
    pub(super) remote: Option<(Arc<RemoteSearch>, tokio::runtime::Handle)>,
    pub(super) local: Arc<tokio::sync::Semaphore>,
}

/// The search threads' owner: when the last [`AiScheduler`] clone goes,
/// the threads are told to exit (each after the search it is running).
pub(super) struct Pool {
    pub(super) inner: Arc<Inner>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        let mut queues = self.inner.lock();
        queues.closed = true;
        // Nobody is left to want the queued searches' answers.
        queues.human.clear();
        queues.background.clear();
        queues.slot_waiters.clear();
        for running in &queues.running {
            running.control.interrupt.store(true, Ordering::Release);
        }
        drop(queues);
        self.inner.work.notify_all();
    }
}

/// Lowers the calling thread's scheduling priority. On Linux nice and the
/// scheduling policy belong to one thread (the kernel schedules threads as
/// tasks): `setpriority(PRIO_PROCESS, tid)` and `sched_setscheduler(0)`
/// change only the caller. Lowering either needs no privilege; a failure is
/// logged and the thread searches at the priority it has.
#[cfg(target_os = "linux")]
pub(super) fn lower_priority(priority: SearchPriority) {
    // SAFETY: gettid, setpriority and sched_setscheduler take plain
    // integers and a pointer to a parameter that lives across the call.
    let status = unsafe {
        match priority {
            SearchPriority::Nice(nice) => {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::setpriority(libc::PRIO_PROCESS, tid, nice.clamp(0, 19))
            }
            SearchPriority::Idle => {
                let param = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_IDLE, &param)
            }
        }
    };
    if status != 0 {
        let error = std::io::Error::last_os_error();
        tracing::warn!(%error, ?priority, "could not lower an AI search thread's priority");
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn lower_priority(priority: SearchPriority) {
    tracing::debug!(?priority, "search threads' priority is only set on Linux");
}

impl Inner {
    pub(super) fn lock(&self) -> MutexGuard<'_, Queues> {
        // Every change under this lock is a push, a pop or a flag: a panic
        // elsewhere cannot leave it half-done, so a poisoned lock is fine.
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next job for a free search thread, waiting for one; `None` when
    /// the scheduler is gone.
    fn next_job(&self) -> Option<Job> {
        let mut queues = self.lock();
        loop {
            if queues.closed {
                return None;
            }
            if let Some(job) = queues.pop_next() {
                queues.running.push(Running {
                    id: job.id,
                    priority: job.request.priority,
                    client: job.request.client,
                    control: job.control.clone(),
                    started: Instant::now(),
                });
                return Some(job);
            }
            queues = self
                .work
                .wait(queues)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Runs `job`'s search on this thread, catching a panic.
    fn search_here(&self, job: &Job) -> std::thread::Result<SearchResult> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            // The budget is taken now, when the search really starts.
            let budget = job
                .request
                .clock
                .map(|clock| clock.budget_at(Instant::now()));
            (self.search)(&job.request, budget, &job.control.interrupt)
        }))
    }

    /// A search thread's life: run jobs until the scheduler is gone.
    pub(super) fn serve(&self) {
        while let Some(job) = self.next_job() {
            self.run(job);
        }
    }

    /// Runs one job on this search thread, then decides what its result
    /// means: an answer, a retry, a requeue after preemption, or nothing.
    fn run(&self, mut job: Job) {
        let class = match job.request.priority {
            Priority::Human => "human",
            Priority::Background => "ai_v_ai",
            Priority::Analysis => "analysis",
        };
        let started = Instant::now();
        metrics::histogram!("rookery_ai_wait_seconds", "class" => class).record(
            started
                .saturating_duration_since(job.queued_at)
                .as_secs_f64(),
        );
        let searched = match &self.remote {
            // This thread waits for the worker's answer (or gives up).
            Some((remote, runtime)) => {
                match runtime.block_on(remote.search(job.id, &job.request, &job.control.interrupt))
                {
                    Ok(result) => Ok(result),
                    Err(unavailable) => {
                        tracing::info!(%unavailable, ply = job.request.ply, "AI search runs on this node");
                        let _slot = runtime.block_on(self.local.clone().acquire_owned());
                        self.search_here(&job)
                    }
                }
            }
            None => self.search_here(&job),
        };
        metrics::histogram!("rookery_ai_search_seconds", "class" => class)
            .record(started.elapsed().as_secs_f64());
        let result = match searched {
            Ok(Ok(Some(mv))) => Ok(mv),
            Ok(Ok(None)) => Err("the search found no move".to_string()),
            Ok(Err(err)) => Err(err),
            Err(panic) => Err(format!("the search panicked: {}", panic_message(&panic))),
        };
        let answer = {
            let mut queues = self.lock();
            queues.running.retain(|running| running.id != job.id);
            if job.request.priority == Priority::Human {
                // Preempted or not, the thread was this client's meanwhile.
                queues.charge(job.request.client, started.elapsed(), Instant::now());
            }
            let answer = self.settle(&mut queues, &mut job, result);
            self.grant_slots(&mut queues);
            answer
        };
        if let Some(answer) = answer {
            if job.control.is_cancelled() {
                return;
            }
            // The game may have ended meanwhile and its actor gone: then the
            // answer has nobody to go to, which is fine. A game has one
            // search at a time and its channel room for several answers,
            // so this does not wait on the game.
            let _ = job.answers.blocking_send(answer);
        }
    }

    /// What a finished run leads to: `Some(answer)` to send, or `None`
    /// when the job was dropped or put back in a queue.
    fn settle(
        &self,
        queues: &mut Queues,
        job: &mut Job,
        result: Result<Move, String>,
    ) -> Option<AiAnswer> {
        let control = &job.control;
        if control.is_cancelled() {
            return None;
        }
        let ply = job.request.ply;
        let position = job.request.position.hash();
        if control.preempted.swap(false, Ordering::AcqRel) {
            // Its half-done answer is thrown away; it goes back to the
            // front of its class's queue and runs again from the start when
            // a thread is free (an AI v AI search first in its class; a
            // human game's in the clients' turn, `Queues::pop_next`).
            control.interrupt.store(false, Ordering::Release);
            if control.is_cancelled() {
                return None;
            }
            let priority = job.request.priority;
            queues.queue(priority).push_front(clone_job(job));
            return None;
        }
        match result {
            Ok(mv) => Some(AiAnswer {
                ply,
                position,
                outcome: Ok(mv),
            }),
            Err(error) => {
                job.failures += 1;
                tracing::error!(ply, failures = job.failures, %error, "AI search failed");
                if job.failures <= RETRIES {
                    let priority = job.request.priority;
                    queues.queue(priority).push_front(clone_job(job));
                    None
                } else {
                    Some(AiAnswer {
                        ply,
                        position,
                        outcome: Err(SearchFailed {
                            attempts: job.failures,
                            last_error: error,
                        }),
                    })
                }
            }
        }
    }
}

/// The text a panic was raised with, when it is one.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::mpsc;

    use super::*;
    use crate::ai::testing::{first_legal_move, request};
    use crate::ai::AiScheduler;

    /// The calling thread's scheduling policy and nice value.
    #[cfg(target_os = "linux")]
    fn own_priority() -> (i32, i32) {
        // SAFETY: plain integer calls about the calling thread.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            (
                libc::sched_getscheduler(0),
                libc::getpriority(libc::PRIO_PROCESS, tid),
            )
        }
    }

    /// The scheduling policy and nice value of the thread a search runs
    /// on, as the search itself reads them.
    #[cfg(target_os = "linux")]
    async fn priority_seen_by_a_search(priority: SearchPriority) -> (i32, i32) {
        let seen = Arc::new(Mutex::new(None));
        let record = seen.clone();
        let search: SearchFn = Arc::new(move |_, _, _| {
            *record.lock().unwrap() = Some(own_priority());
            Ok(Some(first_legal_move()))
        });
        let scheduler = AiScheduler::configured(1, priority, Duration::ZERO, search);
        let (tx, mut rx) = mpsc::channel(1);
        let _thinking = scheduler.start(request(1, Priority::Human), tx);
        rx.recv().await.expect("an answer");
        let seen = seen.lock().unwrap().expect("the search ran");
        seen
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn search_threads_run_at_the_priority_asked_for() {
        let before = own_priority();
        let (policy, nice) = priority_seen_by_a_search(SearchPriority::Nice(13)).await;
        assert_eq!(policy, libc::SCHED_OTHER);
        assert!(nice >= 13, "nice {nice}");
        let (policy, _) = priority_seen_by_a_search(SearchPriority::Idle).await;
        assert_eq!(policy, libc::SCHED_IDLE);
        // Only the search threads are lowered: this one keeps its own.
        assert_eq!(own_priority(), before);
    }
}

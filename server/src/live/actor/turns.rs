//! What the actor does by itself: the clock's deadline (a flag fall, the
//! first-move rule) and the AI's turn (starting a search, taking its
//! answer, playing its move after the AI v AI pacing).

use std::time::Duration;

use rookery_engine::Move;
use tokio::time::Instant;

use super::GameActor;
use crate::ai::{AiAnswer, ClockSnapshot, Priority, SearchRequest};

impl GameActor {
    pub(super) async fn on_clock_deadline(&mut self) {
        let now = Instant::now();
        if self.live.deadline().is_none_or(|deadline| deadline > now) {
            return;
        }
        if let Err(err) = self
            .change(Some(now), |live, now| {
                live.check_flag(now);
                Ok(((), None))
            })
            .await
        {
            // The write failed: the flag stays down, and `retry_at` keeps
            // the timer from firing again before the backoff has passed.
            err.log();
        }
    }

    /// Starts a search when the side to move is a computer seat and no search
    /// for this ply is running.
    pub(super) fn start_ai_if_needed(&mut self) {
        if self.closing {
            return;
        }
        let Some(level) = self.live.ai_to_move() else {
            self.thinking = None;
            return;
        };
        let ply = self.live.game().moves().len();
        if self.thinking.as_ref().is_some_and(|t| t.ply == ply) || self.held_ai_move.is_some() {
            return;
        }
        let game = self.live.game();
        let hashes = game.hashes();
        let now = Instant::now();
        // The clock keeps running while the search waits for a thread: the
        // scheduler takes the budget from this snapshot when it starts.
        let clock = self.live.clock().map(|clock| ClockSnapshot {
            remaining: clock.remaining(self.live.turn(), now),
            increment: Duration::from_millis(clock.view(now).increment_ms),
            taken_at: now,
        });
        let priority = if self.live.is_ai_vs_ai() {
            Priority::Background
        } else {
            Priority::Human
        };
        let request = SearchRequest {
            ply,
            position: game.position().clone(),
            history: hashes[..hashes.len() - 1].to_vec(),
            level,
            clock,
            priority,
            client: self.live.client,
        };
        self.thinking = Some(self.context.ai.start(request, self.answers_tx.clone()));
    }

    pub(super) async fn on_ai_answer(&mut self, answer: AiAnswer) {
        let current = self.live.game().moves().len();
        // The position too: after a takeback the same ply can come back
        // with another position, and an answer sent before the takeback may
        // still be queued.
        let position = self.live.game().position().hash();
        if answer.ply != current || answer.position != position || self.live.ai_to_move().is_none()
        {
            tracing::debug!(game = %self.live.id, ply = answer.ply, current, "stale AI answer dropped");
            return;
        }
        self.thinking = None;
        let mv = match answer.outcome {
            Ok(mv) => mv,
            Err(failure) => {
                // The scheduler already retried: end the game rather than
                // leave its players waiting for a move that never comes.
                tracing::error!(game = %self.live.id, ply = answer.ply, %failure, "AI cannot move: game aborted");
                let aborted = self
                    .change(None, |live, now| live.abort(now).map(|()| ((), None)))
                    .await;
                if let Err(err) = aborted {
                    err.log();
                    // Not recorded: try a fresh search rather than stall.
                    self.start_ai_if_needed();
                }
                return;
            }
        };
        if self.live.is_ai_vs_ai() {
            let not_before = self.last_move_at + self.context.ai.ai_move_delay;
            let now = Instant::now();
            if now < not_before {
                // Hold the move so a person can follow; the pause is not the
                // AI's thinking, so its clock stops meanwhile.
                self.live.pause_clock(now);
                self.held_ai_move = Some((mv, not_before));
                return;
            }
        }
        self.apply_ai_move(mv).await;
    }

    pub(super) async fn apply_ai_move(&mut self, mv: Move) {
        let result = self
            .change(None, |live, now| {
                live.play_move(mv, now).map(|played| ((), Some(played)))
            })
            .await;
        if let Err(err) = result {
            err.log();
            // Hold the move and try again after the backoff (no new search:
            // the move is still the answer for this position).
            let at = self.retry_at.unwrap_or_else(Instant::now);
            if self.live.game().position().is_legal(mv) && self.live.ai_to_move().is_some() {
                self.held_ai_move = Some((mv, at));
            } else {
                self.start_ai_if_needed();
            }
        }
    }
}

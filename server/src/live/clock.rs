//! A chess clock with increment (Fischer), kept by the server.
//!
//! The clock never ticks by itself: it records when the running side's turn
//! began, and every reading subtracts the time since then. The live game
//! sleeps until [`Clock::deadline`] to notice a flag fall even when nobody
//! sends anything. Instants come from `tokio::time`, so tests can pause and
//! advance time.

use std::time::Duration;

use tokio::time::Instant;

use crate::protocol::{ClockSettings, ClockView, Side};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clock {
    increment: Duration,
    /// Sides that went berserk (an arena's rule): they get no increment.
    berserk: [bool; 2],
    /// Remaining time per side (white, black) when its current turn began.
    remaining: [Duration; 2],
    /// The side whose time is running and since when.
    running: Option<(Side, Instant)>,
}

impl Clock {
    pub fn new(settings: ClockSettings) -> Clock {
        let initial = Duration::from_millis(settings.initial_ms);
        Clock {
            increment: Duration::from_millis(settings.increment_ms),
            berserk: [false, false],
            remaining: [initial, initial],
            running: None,
        }
    }

    /// A clock with given remaining times (restoring a stored game).
    pub fn with_remaining(settings: ClockSettings, white_ms: u64, black_ms: u64) -> Clock {
        Clock {
            increment: Duration::from_millis(settings.increment_ms),
            berserk: [false, false],
            remaining: [
                Duration::from_millis(white_ms),
                Duration::from_millis(black_ms),
            ],
            running: None,
        }
    }

    /// What the database keeps of the clock: each side's remaining time when
    /// the current turn began, and the running side with the instant its turn
    /// began.
    pub fn turn_start(&self) -> ([Duration; 2], Option<(Side, Instant)>) {
        (self.remaining, self.running)
    }

    pub fn running(&self) -> Option<Side> {
        self.running.map(|(side, _)| side)
    }

    /// Starts `side`'s time (its turn begins). Stops the other side without
    /// charging it: use [`Clock::press`] to end a turn.
    pub fn start(&mut self, side: Side, now: Instant) {
        self.running = Some((side, now));
    }

    /// Stops the running side, charging it the time since its turn began.
    pub fn stop(&mut self, now: Instant) {
        if let Some((side, since)) = self.running.take() {
            let spent = now.saturating_duration_since(since);
            self.remaining[side.index()] = self.remaining[side.index()].saturating_sub(spent);
        }
    }

    /// The mover completes a move: charge its time, add the increment, and
    /// start the opponent's time. Works from a stopped clock too (the mover
    /// was already charged by [`Clock::stop`]), which is how the server keeps
    /// the pacing pause of AI v AI games off the clock.
    pub fn press(&mut self, mover: Side, now: Instant) {
        self.stop(now);
        if !self.berserk[mover.index()] {
            self.remaining[mover.index()] += self.increment;
        }
        self.running = Some((mover.other(), now));
    }

    /// `side` goes berserk (an arena's rule, before its first move): half
    /// its remaining time (its whole clock then) is gone, and so is its
    /// increment for the rest of the game.
    pub fn berserk(&mut self, side: Side) {
        let remaining = &mut self.remaining[side.index()];
        *remaining /= 2;
        self.berserk[side.index()] = true;
    }

    /// Marks the sides that went berserk, without touching their times (a
    /// restored clock's stored times are already halved).
    pub fn restore_berserk(&mut self, berserk: [bool; 2]) {
        self.berserk = berserk;
    }

    /// Time left for `side` at `now`.
    pub fn remaining(&self, side: Side, now: Instant) -> Duration {
        let stored = self.remaining[side.index()];
        match self.running {
            Some((running, since)) if running == side => {
                stored.saturating_sub(now.saturating_duration_since(since))
            }
            _ => stored,
        }
    }

    /// When the running side's flag falls, if a side is running.
    pub fn deadline(&self) -> Option<Instant> {
        self.running
            .map(|(side, since)| since + self.remaining[side.index()])
    }

    /// The side whose flag has fallen at `now`, if any.
    pub fn flagged(&self, now: Instant) -> Option<Side> {
        let (side, _) = self.running?;
        (self.remaining(side, now).is_zero()).then_some(side)
    }

    pub fn view(&self, now: Instant) -> ClockView {
        ClockView {
            white_ms: millis(self.remaining(Side::White, now)),
            black_ms: millis(self.remaining(Side::Black, now)),
            increment_ms: millis(self.increment),
            // The live game fills it in from its settings.
            initial_ms: 0,
            running: self.running(),
        }
    }
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ClockSettings {
        ClockSettings {
            initial_ms: 60_000,
            increment_ms: 2_000,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn press_charges_the_mover_and_adds_the_increment() {
        let mut clock = Clock::new(settings());
        let t0 = Instant::now();
        clock.start(Side::White, t0);
        tokio::time::advance(Duration::from_secs(5)).await;
        let t1 = Instant::now();
        assert_eq!(clock.remaining(Side::White, t1), Duration::from_secs(55));
        assert_eq!(clock.remaining(Side::Black, t1), Duration::from_secs(60));
        clock.press(Side::White, t1);
        assert_eq!(clock.remaining(Side::White, t1), Duration::from_secs(57));
        assert_eq!(clock.running(), Some(Side::Black));
        tokio::time::advance(Duration::from_secs(10)).await;
        let view = clock.view(Instant::now());
        assert_eq!(view.white_ms, 57_000);
        assert_eq!(view.black_ms, 50_000);
        assert_eq!(view.increment_ms, 2_000);
        assert_eq!(view.running, Some(Side::Black));
    }

    #[tokio::test(start_paused = true)]
    async fn the_flag_falls_at_the_deadline_and_not_before() {
        let mut clock = Clock::new(ClockSettings {
            initial_ms: 3_000,
            increment_ms: 0,
        });
        let t0 = Instant::now();
        clock.start(Side::White, t0);
        assert_eq!(clock.deadline(), Some(t0 + Duration::from_secs(3)));
        tokio::time::advance(Duration::from_millis(2_999)).await;
        assert_eq!(clock.flagged(Instant::now()), None);
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(clock.flagged(Instant::now()), Some(Side::White));
        assert_eq!(clock.view(Instant::now()).white_ms, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stopped_clock_does_not_run() {
        let mut clock = Clock::new(settings());
        clock.start(Side::Black, Instant::now());
        tokio::time::advance(Duration::from_secs(1)).await;
        clock.stop(Instant::now());
        assert_eq!(clock.running(), None);
        assert_eq!(clock.deadline(), None);
        tokio::time::advance(Duration::from_secs(100)).await;
        assert_eq!(
            clock.remaining(Side::Black, Instant::now()),
            Duration::from_secs(59)
        );
        // A press from the stopped clock adds the increment and starts white.
        clock.press(Side::Black, Instant::now());
        assert_eq!(
            clock.remaining(Side::Black, Instant::now()),
            Duration::from_secs(61)
        );
        assert_eq!(clock.running(), Some(Side::White));
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleep_until_the_deadline_sees_the_flag() {
        let mut clock = Clock::new(ClockSettings {
            initial_ms: 500,
            increment_ms: 0,
        });
        clock.start(Side::White, Instant::now());
        let deadline = clock.deadline().unwrap();
        tokio::time::sleep_until(deadline).await;
        assert_eq!(clock.flagged(Instant::now()), Some(Side::White));
    }
}

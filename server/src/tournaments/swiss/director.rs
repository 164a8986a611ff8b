//! One director per running Swiss: a task that pairs each round, starts
//! its games, records their results and starts the next round.
//!
//! The director holds no state of its own that matters: each step reads
//! the tournament back from the database ([`Loaded::load`]) and decides
//! from it alone, so a director started after a restart (or on another
//! node after a takeover) picks up exactly where the last one stopped.
//! Every change it makes is a conditional write (the round it expects, its
//! lease in a cluster), so two directors of one tournament cannot pair a
//! round twice.
//!
//! A step:
//! 1. the current round's games that have finished get their results
//!    (read from the games table);
//! 2. once every game of the round has one, the round ends: the next is
//!    set for `round_interval` later (or left for a leader to start), or
//!    the tournament finishes after its last round;
//! 3. when the next round's time has come, it is paired
//!    (`rookery_swiss::pair_next_round`, on a blocking thread), its games
//!    are stored with the pairings in one transaction, then put live and
//!    told to their players (`gameStart`).
//!
//! Between steps the director sleeps until the next round's time, a nudge
//! (a leader's schedule, a join) or the poll of running games' results.

use std::time::Duration;

use rookery_swiss::{pair_next_round, Pairing, PairingError};
use tokio::sync::Notify;
use tokio::time::Instant;
use uuid::Uuid;

use super::record::{bye_text, Loaded, Model};
use super::Directors;
use crate::domain::{ClockSettings, SeatKind, Side};
use crate::live::game::LiveGame;
use crate::store::swiss::{DirectorFence, PairingRow, SwissWrite};
use crate::store::{now_ms, StoredGame};

/// How often a director looks at its round's games while they are played.
pub const POLL: Duration = Duration::from_millis(250);
/// How long a director waits after a failed step (the database down).
const RETRY: Duration = Duration::from_secs(1);

/// What a step leaves the director waiting for.
enum Next {
    /// The tournament is over (or gone): the director ends.
    Done,
    /// Games are being played: look again after [`POLL`].
    Poll,
    /// Nothing to do before this time (ms since the epoch), or a nudge.
    At(Option<i64>),
}

/// How a finished game counts in the tournament: its result, or, for a
/// game aborted because a side never moved, a forfeit against that side.
pub fn counted_result(result: Option<&str>, plies: i64) -> &'static str {
    match result {
        Some("1-0") => "1-0",
        Some("0-1") => "0-1",
        Some("1/2-1/2") => "1/2-1/2",
        // White never moved: white forfeits. Black never answered: black.
        _ if plies == 0 => "-+",
        _ if plies == 1 => "+-",
        _ => "--",
    }
}

pub(super) struct Director {
    pub directors: Directors,
    pub id: String,
    pub fence: Option<DirectorFence>,
    pub nudge: std::sync::Arc<Notify>,
    /// The round whose end this director has written (so a round started
    /// by hand is not ended again at every step).
    ended: Option<i64>,
}

impl Director {
    pub fn new(
        directors: Directors,
        id: String,
        fence: Option<DirectorFence>,
        nudge: std::sync::Arc<Notify>,
    ) -> Director {
        Director {
            directors,
            id,
            fence,
            nudge,
            ended: None,
        }
    }

    /// The director's loop, until the tournament finishes, the service
    /// stops or (in a cluster) the lease is lost.
    pub async fn run(mut self) {
        let mut shutdown = self.directors.registry().shutdown_signal();
        let lease = self.directors.lease();
        // In a cluster: when the lease is next renewed.
        let mut renew_at = lease.map(|lease| Instant::now() + lease / 5);
        tracing::info!(swiss = %self.id, "director started");
        loop {
            if *shutdown.borrow() {
                break;
            }
            let wake = match self.step().await {
                Ok(Next::Done) => break,
                Ok(Next::Poll) => Instant::now() + POLL,
                Ok(Next::At(at)) => {
                    let far = Instant::now() + Duration::from_secs(3600);
                    at.map_or(far, |at| {
                        let wait = u64::try_from(at - now_ms()).unwrap_or(0);
                        Instant::now() + Duration::from_millis(wait).min(Duration::from_secs(3600))
                    })
                }
                Err(err) => {
                    tracing::warn!(swiss = %self.id, %err, "director step failed");
                    Instant::now() + RETRY
                }
            };
            let wake = renew_at.map_or(wake, |renew| wake.min(renew));
            tokio::select! {
                _ = tokio::time::sleep_until(wake) => {}
                _ = self.nudge.notified() => {}
                _ = shutdown.changed() => {}
            }
            if let (Some(fence), Some(lease)) = (&self.fence, lease) {
                if renew_at.is_some_and(|renew| Instant::now() >= renew) {
                    let ttl = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
                    match self
                        .directors
                        .store()
                        .renew_swiss_lease(&self.id, fence, ttl)
                        .await
                    {
                        Ok(true) => renew_at = Some(Instant::now() + lease / 5),
                        Ok(false) => {
                            tracing::info!(swiss = %self.id, "director lease lost");
                            break;
                        }
                        Err(err) => err.log(),
                    }
                }
            }
        }
        if let Some(fence) = &self.fence {
            if let Err(err) = self
                .directors
                .store()
                .release_swiss_lease(&self.id, fence)
                .await
            {
                err.log();
            }
        }
        self.directors.forget(&self.id);
        tracing::info!(swiss = %self.id, "director stopped");
    }

    async fn step(&mut self) -> Result<Next, super::SwissError> {
        let store = self.directors.store().clone();
        let Some(loaded) = Loaded::load(&store, &self.id).await? else {
            return Ok(Next::Done);
        };
        if loaded.row.status == "finished" {
            return Ok(Next::Done);
        }
        let round = loaded.row.round;
        if round > 0 && !loaded.round_complete(round) {
            let open = store.swiss_open_games(&self.id, round).await?;
            let results: Vec<(i64, &'static str)> = open
                .iter()
                .filter(|g| g.status == "finished")
                .map(|g| (g.board, counted_result(g.result.as_deref(), g.plies)))
                .collect();
            if results.is_empty() {
                return Ok(Next::Poll);
            }
            let all_in = results.len() == open.len();
            store
                .write_swiss(SwissWrite::Results {
                    swiss_id: self.id.clone(),
                    round,
                    results,
                    fence: self.fence.clone(),
                })
                .await?;
            self.directors.publish(&self.id).await;
            if !all_in {
                return Ok(Next::Poll);
            }
            // Every result is in: end the round on the next step, from
            // what is stored.
            return self
                .end_round(
                    round,
                    loaded.row.rounds_planned,
                    loaded.row.round_interval_ms,
                )
                .await;
        }
        if round > 0 && self.ended != Some(round) && loaded.row.next_round_at.is_none() {
            return self
                .end_round(
                    round,
                    loaded.row.rounds_planned,
                    loaded.row.round_interval_ms,
                )
                .await;
        }
        match loaded.row.next_round_at {
            Some(at) if at <= now_ms() => self.start_round(loaded).await,
            at => Ok(Next::At(at)),
        }
    }

    /// Round `round` is over: the next is due after the interval (or when
    /// a leader starts it), or the tournament is finished.
    async fn end_round(
        &mut self,
        round: i64,
        planned: i64,
        interval: Option<i64>,
    ) -> Result<Next, super::SwissError> {
        let finished = round >= planned;
        let next_round_at = if finished {
            None
        } else {
            interval.map(|ms| now_ms() + ms)
        };
        self.directors
            .store()
            .write_swiss(SwissWrite::EndRound {
                swiss_id: self.id.clone(),
                round,
                next_round_at,
                finished,
                fence: self.fence.clone(),
            })
            .await?;
        self.ended = Some(round);
        if finished {
            tracing::info!(swiss = %self.id, "tournament finished");
        }
        self.directors.publish(&self.id).await;
        Ok(if finished {
            Next::Done
        } else {
            Next::At(next_round_at)
        })
    }

    /// Ends the tournament before its planned rounds (too few players, or
    /// no legal pairing left).
    async fn finish_early(&mut self, round: i64, why: &str) -> Result<Next, super::SwissError> {
        tracing::info!(swiss = %self.id, round, why, "tournament finished early");
        self.directors
            .store()
            .write_swiss(SwissWrite::EndRound {
                swiss_id: self.id.clone(),
                round,
                next_round_at: None,
                finished: true,
                fence: self.fence.clone(),
            })
            .await?;
        self.directors.publish(&self.id).await;
        Ok(Next::Done)
    }

    /// Pairs and starts the round after the current one.
    async fn start_round(&mut self, mut loaded: Loaded) -> Result<Next, super::SwissError> {
        let round = loaded.row.round + 1;
        let numbers = loaded.new_numbers();
        loaded.number(&numbers);
        let model = loaded.model(loaded.row.round, false);
        let present = model.tournament.present_next();
        if present.len() < 2 {
            return self
                .finish_early(loaded.row.round, "fewer than two players to pair")
                .await;
        }
        // Pairing is fast, but it is CPU work: off the async threads.
        let tournament = model.tournament.clone();
        let paired = tokio::task::spawn_blocking(move || pair_next_round(&tournament, &present))
            .await
            .map_err(|err| super::SwissError::Internal(err.to_string()))?;
        let pairing = match paired {
            Ok(pairing) => pairing,
            Err(PairingError::NoLegalPairing) => {
                return self
                    .finish_early(loaded.row.round, "no legal pairing is left")
                    .await
            }
            Err(err) => return Err(super::SwissError::Internal(err.to_string())),
        };
        let games = self.games(&loaded, &model, &pairing, round).await?;
        let pairings = rows(&model, &pairing, &games, round);
        let stored: Vec<StoredGame> = games
            .iter()
            .map(|live| StoredGame::of(&live.record(), Instant::now(), now_ms()))
            .collect();
        let started = self
            .directors
            .store()
            .write_swiss(SwissWrite::StartRound {
                swiss_id: self.id.clone(),
                round,
                numbers,
                pairings,
                games: stored,
                fence: self.fence.clone(),
            })
            .await?;
        if !started {
            // Another director paired it, or the lease is gone: read again.
            return Ok(Next::Poll);
        }
        tracing::info!(swiss = %self.id, round, games = games.len(), "round paired");
        let registry = self.directors.registry().clone();
        for live in games {
            let mut told = live.event_games("swiss");
            for (_, game) in &mut told {
                game["swissId"] = serde_json::Value::String(self.id.clone());
            }
            if let Err(err) = registry.insert(live).await {
                // Stored: the registry loads it on its first request (and
                // resumes its clock at the next start).
                tracing::warn!(swiss = %self.id, %err, "a round's game is not live yet");
            }
            registry.events().game_started(&told);
        }
        self.directors.publish(&self.id).await;
        Ok(Next::Poll)
    }

    /// The round's games, seats taken by the paired players.
    async fn games(
        &self,
        loaded: &Loaded,
        model: &Model,
        pairing: &Pairing,
        round: i64,
    ) -> Result<Vec<LiveGame>, super::SwissError> {
        let clock = ClockSettings {
            initial_ms: u64::try_from(loaded.row.clock_initial_ms)
                .unwrap_or(0)
                .max(1),
            increment_ms: u64::try_from(loaded.row.clock_increment_ms).unwrap_or(0),
        };
        let mut games = Vec::with_capacity(pairing.pairs.len());
        for &(white, black) in &pairing.pairs {
            let mut live = LiveGame::new(
                Uuid::new_v4(),
                now_ms(),
                [SeatKind::Human, SeatKind::Human],
                Some(clock),
                crate::domain::Variant::Standard,
                None,
            )
            .map_err(|err| super::SwissError::Internal(err.to_string()))?;
            let now = Instant::now();
            for (side, player) in [(Side::White, white), (Side::Black, black)] {
                let id = model
                    .id_of(player)
                    .ok_or_else(|| super::SwissError::Internal(format!("no player {player}")))?;
                let player = loaded
                    .players
                    .iter()
                    .find(|p| p.player.id == id)
                    .map(|p| p.player.clone())
                    .ok_or_else(|| super::SwissError::Internal(format!("no player {id}")))?;
                // Minted as for any seat and never shown: both players act
                // through their accounts.
                let token = crate::token::mint()
                    .map_err(|err| super::SwissError::Internal(err.to_string()))?;
                live.take_seat(side, token.hash, Some(player), now)
                    .map_err(|err| super::SwissError::Internal(err.to_string()))?;
            }
            let rated = loaded.row.rated && live.is_rated();
            let visibility = live.visibility();
            live.restore_terms(rated, visibility, None);
            tracing::debug!(swiss = %self.id, round, game = %live.id, "game paired");
            games.push(live);
        }
        Ok(games)
    }
}

/// The round's rows: the games by board, then the pairing-allocated bye,
/// then the requested byes.
fn rows(model: &Model, pairing: &Pairing, games: &[LiveGame], round: i64) -> Vec<PairingRow> {
    let id = |player| model.id_of(player).unwrap_or_default().to_string();
    let mut rows: Vec<PairingRow> = pairing
        .pairs
        .iter()
        .zip(games)
        .map(|(&(white, black), live)| PairingRow {
            round,
            board: 0,
            white_id: id(white),
            black_id: Some(id(black)),
            game_id: Some(live.id.to_string()),
            bye: None,
            result: None,
        })
        .collect();
    let byes = pairing
        .bye
        .map(|player| (player, rookery_swiss::ByeKind::PairingAllocated))
        .into_iter()
        .chain(
            model
                .tournament
                .next_round_byes
                .iter()
                .map(|bye| (bye.player, bye.kind)),
        );
    for (player, kind) in byes {
        rows.push(PairingRow {
            round,
            board: 0,
            white_id: id(player),
            black_id: None,
            game_id: None,
            bye: Some(bye_text(kind).to_string()),
            result: None,
        });
    }
    for (board, row) in rows.iter_mut().enumerate() {
        row.board = board as i64 + 1;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::counted_result;

    #[test]
    fn unplayed_games_are_forfeits_of_the_side_that_never_moved() {
        assert_eq!(counted_result(Some("1-0"), 40), "1-0");
        assert_eq!(counted_result(Some("1/2-1/2"), 3), "1/2-1/2");
        assert_eq!(counted_result(None, 0), "-+");
        assert_eq!(counted_result(None, 1), "+-");
        assert_eq!(counted_result(None, 7), "--");
    }
}

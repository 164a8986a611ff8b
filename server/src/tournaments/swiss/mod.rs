//! Swiss tournaments of a team (issue 39): created by a team's leader,
//! joined by its members, paired round by round by the FIDE Dutch system
//! (the `rookery-swiss` crate; see swiss/README.md for the rules it
//! implements), played as ordinary games.
//!
//! - this file: [`SwissError`], the rules of creating, joining, leaving,
//!   asking for a bye and scheduling a round, and [`Directors`], which runs
//!   one director per tournament and pushes each change to the
//!   tournament page's sockets;
//! - [`director`]: the director's loop (pair, start games, record results,
//!   next round);
//! - [`record`]: the stored tournament as the pairing library's model;
//! - [`view`]: the tournament in lichess's shapes (and Rookery's additions).
//!
//! Tables: `store/swiss.rs`. HTTP: `http/api/swiss.rs`.

pub mod director;
pub mod record;
pub mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{broadcast, Notify};

use self::director::Director;
use self::record::Loaded;
use crate::domain::PlayerRef;
use crate::live::Registry;
use crate::store::swiss::{DirectorFence, NewSwiss, SwissRow, SwissWrite};
use crate::store::{now_ms, Store, StoreError};
use crate::teams::{self, TeamError};

/// Why a Swiss action was refused, in the floor's own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SwissError {
    #[error("{0}")]
    NotFound(String),
    /// Not a leader, not a member, an entry condition not met.
    #[error("{0}")]
    Forbidden(String),
    /// Terms the rules refuse.
    #[error("{0}")]
    Invalid(String),
    /// The change contradicts the tournament as it is (finished, a round
    /// being played).
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Team(#[from] TeamError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Our fault (a pairing the library refused, a game not made): logged.
    #[error("{0}")]
    Internal(String),
}

/// lichess's `roundInterval` that means "rounds started by hand".
pub const MANUAL_ROUNDS: i64 = 99_999_999;
/// Name lengths (lichess's).
pub const NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=30;
/// Rounds a tournament may announce (lichess's).
pub const ROUNDS: std::ops::RangeInclusive<i64> = 3..=100;
/// A week: the longest pause between rounds.
pub const MAX_INTERVAL_S: i64 = 604_800;
/// Round 1 starts this long after creation unless told otherwise.
pub const DEFAULT_START_MS: i64 = 10 * 60 * 1000;

/// What a new tournament is given (already read from the request).
#[derive(Debug, Clone, Default)]
pub struct SwissTerms {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Seconds.
    pub clock_limit: i64,
    pub clock_increment: i64,
    pub rounds: i64,
    /// Seconds; `None` or -1: picked from the clock; [`MANUAL_ROUNDS`]: by hand.
    pub round_interval: Option<i64>,
    /// Ms since the epoch.
    pub starts_at: Option<i64>,
    pub rated: Option<bool>,
    pub min_rating: Option<i64>,
    pub min_rated_games: Option<i64>,
    /// A requested bye's score, in half points (0, 1 or 2).
    pub bye_points: Option<i64>,
}

fn invalid(message: impl Into<String>) -> SwissError {
    SwissError::Invalid(message.into())
}

/// The tournament `id`, or `NotFound`.
pub async fn swiss(store: &Store, id: &str) -> Result<SwissRow, SwissError> {
    store
        .swiss(id)
        .await?
        .ok_or_else(|| SwissError::NotFound(format!("no such Swiss tournament: {id}")))
}

/// A new tournament id: 8 letters and digits, as lichess's.
fn new_id() -> Result<String, SwissError> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|err| SwissError::Internal(err.to_string()))?;
    Ok(bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect())
}

/// A leader of `team_id` creates a tournament for the team.
pub async fn create(
    store: &Store,
    leader: &PlayerRef,
    team_id: &str,
    terms: SwissTerms,
) -> Result<SwissRow, SwissError> {
    let team = teams::led_by(store, team_id, leader).await?;
    let name = match terms.name.map(|n| n.trim().to_string()) {
        Some(name) if !name.is_empty() => name,
        _ => format!("{} Swiss", team.name).chars().take(30).collect(),
    };
    if !NAME_CHARS.contains(&name.chars().count()) {
        return Err(invalid("a tournament's name has 2 to 30 characters"));
    }
    let description = terms.description.unwrap_or_default().trim().to_string();
    if description.chars().count() > teams::MAX_DESCRIPTION_CHARS {
        return Err(invalid(format!(
            "a description has at most {} characters",
            teams::MAX_DESCRIPTION_CHARS
        )));
    }
    if !(0..=10_800).contains(&terms.clock_limit) || !(0..=120).contains(&terms.clock_increment) {
        return Err(invalid(
            "clock.limit is 0 to 10800 seconds and clock.increment 0 to 120",
        ));
    }
    if terms.clock_limit + terms.clock_increment == 0 {
        return Err(invalid("clock.limit + clock.increment must be more than 0"));
    }
    if !ROUNDS.contains(&terms.rounds) {
        return Err(invalid("nbRounds is 3 to 100"));
    }
    let round_interval_ms = match terms.round_interval {
        None | Some(-1) => {
            // lichess picks "a sensible value": a pause that grows with
            // the clock.
            let estimate = terms.clock_limit + 40 * terms.clock_increment;
            Some(if estimate < 300 { 30_000 } else { 60_000 })
        }
        Some(MANUAL_ROUNDS) => None,
        Some(s) if (0..=MAX_INTERVAL_S).contains(&s) => Some(s * 1000),
        Some(_) => {
            return Err(invalid(format!(
                "roundInterval is 0 to {MAX_INTERVAL_S} seconds, -1 (automatic) or {MANUAL_ROUNDS} (by hand)"
            )))
        }
    };
    if terms.min_rating.is_some_and(|r| !(0..=4000).contains(&r)) {
        return Err(invalid("conditions.minRating.rating is 0 to 4000"));
    }
    if terms
        .min_rated_games
        .is_some_and(|n| !(0..=200).contains(&n))
    {
        return Err(invalid("conditions.nbRatedGame.nb is 0 to 200"));
    }
    let bye_points = terms.bye_points.unwrap_or(1);
    if !(0..=2).contains(&bye_points) {
        return Err(invalid("byePoints is 0, 0.5 or 1"));
    }
    let now = now_ms();
    let id = new_id()?;
    store
        .write_swiss(SwissWrite::Create(NewSwiss {
            id: id.clone(),
            team_id: team.id,
            name,
            description,
            created_by: leader.id.clone(),
            clock_initial_ms: terms.clock_limit * 1000,
            clock_increment_ms: terms.clock_increment * 1000,
            rounds_planned: terms.rounds,
            round_interval_ms,
            rated: terms.rated.unwrap_or(true),
            min_rating: terms.min_rating,
            min_rated_games: terms.min_rated_games.filter(|n| *n > 0),
            bye_points,
            starts_at: terms.starts_at.unwrap_or(now + DEFAULT_START_MS).max(now),
            created_at: now,
        }))
        .await?;
    swiss(store, &id).await
}

/// What keeps `person` out of the tournament, if anything: each entry
/// condition with whether it is met (lichess's verdicts).
pub async fn verdicts(
    store: &Store,
    row: &SwissRow,
    person: &PlayerRef,
) -> Result<Vec<(String, bool)>, SwissError> {
    let mut list = vec![(
        format!("Member of the team {}", row.team_id),
        store.membership(&row.team_id, &person.id).await?.is_some(),
    )];
    if let Some(min) = row.min_rating {
        list.push((format!("Rating ≥ {min}"), person.rating.rating >= min));
    }
    if let Some(nb) = row.min_rated_games {
        let played = store.rated_games_of(&person.id).await?;
        list.push((format!("≥ {nb} rated games"), played >= nb));
    }
    Ok(list)
}

fn not_finished(row: &SwissRow) -> Result<(), SwissError> {
    if row.status == "finished" {
        Err(SwissError::Conflict("this tournament is finished".into()))
    } else {
        Ok(())
    }
}

/// `person` enters the tournament (again, after withdrawing): a member of
/// its team who meets its conditions. Paired from the next round on.
pub async fn join(store: &Store, person: &PlayerRef, id: &str) -> Result<(), SwissError> {
    let row = swiss(store, id).await?;
    not_finished(&row)?;
    if let Some((condition, _)) = verdicts(store, &row, person)
        .await?
        .into_iter()
        .find(|(_, ok)| !ok)
    {
        return Err(SwissError::Forbidden(format!(
            "you cannot join this tournament: {condition}"
        )));
    }
    let joined = store
        .write_swiss(SwissWrite::Join {
            swiss_id: row.id,
            player_id: person.id.clone(),
            rating: person.rating.rating,
            at: now_ms(),
        })
        .await?;
    if joined {
        Ok(())
    } else {
        Err(SwissError::Conflict("this tournament is finished".into()))
    }
}

/// `person` withdraws: not paired in later rounds (a game being played
/// goes on).
pub async fn withdraw(store: &Store, person: &PlayerRef, id: &str) -> Result<(), SwissError> {
    let row = swiss(store, id).await?;
    not_finished(&row)?;
    let done = store
        .write_swiss(SwissWrite::Withdraw {
            swiss_id: row.id,
            player_id: person.id.clone(),
        })
        .await?;
    if done {
        Ok(())
    } else {
        Err(SwissError::NotFound(
            "you are not in this tournament".into(),
        ))
    }
}

/// `person` asks to sit out the next round (a requested bye, scored as the
/// tournament says), or takes the request back.
pub async fn absent(
    store: &Store,
    person: &PlayerRef,
    id: &str,
    absent: bool,
) -> Result<(), SwissError> {
    let row = swiss(store, id).await?;
    not_finished(&row)?;
    let done = store
        .write_swiss(SwissWrite::Absent {
            swiss_id: row.id,
            player_id: person.id.clone(),
            absent,
        })
        .await?;
    if done {
        Ok(())
    } else {
        Err(SwissError::NotFound(
            "you are not playing in this tournament".into(),
        ))
    }
}

/// A leader of the team sets when the next round starts (`at`, ms since
/// the epoch; the past means now): the way to run rounds by hand.
pub async fn schedule(
    store: &Store,
    leader: &PlayerRef,
    id: &str,
    at: i64,
) -> Result<(), SwissError> {
    let row = swiss(store, id).await?;
    teams::led_by(store, &row.team_id, leader).await?;
    not_finished(&row)?;
    let done = store
        .write_swiss(SwissWrite::Schedule {
            swiss_id: row.id,
            at: at.max(now_ms()),
        })
        .await?;
    if done {
        Ok(())
    } else {
        Err(SwissError::Conflict(
            "a round is being played: the next can be scheduled once its games are over".into(),
        ))
    }
}

/// Runs one director per unfinished tournament (on this node, or, in a
/// cluster, where its lease is), and tells the tournament's page sockets
/// of every change.
#[derive(Clone)]
pub struct Directors {
    inner: Arc<DirectorsInner>,
}

struct DirectorsInner {
    registry: Registry,
    /// In a cluster: this node's name and the lease time.
    cluster: Option<(Arc<str>, Duration)>,
    /// The directors running here, with the nudge that wakes each.
    running: Mutex<HashMap<String, Arc<Notify>>>,
    /// The tournament pages' sockets, per tournament.
    watchers: Mutex<HashMap<String, broadcast::Sender<Arc<str>>>>,
}

/// Changes a slow page socket may fall behind before it skips ahead.
const WATCH_CAPACITY: usize = 16;

impl Directors {
    pub fn new(registry: Registry, cluster: Option<(Arc<str>, Duration)>) -> Directors {
        Directors {
            inner: Arc::new(DirectorsInner {
                registry,
                cluster,
                running: Mutex::default(),
                watchers: Mutex::default(),
            }),
        }
    }

    pub fn store(&self) -> &Store {
        self.inner.registry.store()
    }

    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    fn lease(&self) -> Option<Duration> {
        self.inner.cluster.as_ref().map(|(_, lease)| *lease)
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        // One insert, lookup or remove at a time: a poisoned map is valid.
        self.inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn watchers(&self) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<Arc<str>>>> {
        self.inner
            .watchers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Directs every unfinished tournament: at once on one node; in a
    /// cluster, each whose lease is free, looking again every fifth of the
    /// lease (a node that died leaves its tournaments to the others).
    pub fn start_background(&self) {
        let directors = self.clone();
        tokio::spawn(async move {
            let mut shutdown = directors.registry().shutdown_signal();
            let period = directors
                .lease()
                .map_or(Duration::from_secs(3600), |lease| lease / 5);
            loop {
                match directors.store().unfinished_swiss().await {
                    Ok(ids) => {
                        for id in ids {
                            directors.direct(&id).await;
                        }
                    }
                    Err(err) => err.log(),
                }
                if directors.lease().is_none() {
                    // One node: every later tournament is directed from
                    // its creation on.
                    break;
                }
                tokio::select! {
                    _ = tokio::time::sleep(period) => {}
                    _ = shutdown.changed() => break,
                }
            }
        });
    }

    /// Starts the director of `id` here, unless one runs here already (or,
    /// in a cluster, another node holds its lease).
    pub async fn direct(&self, id: &str) {
        if self.running().contains_key(id) {
            return;
        }
        let fence = match &self.inner.cluster {
            None => None,
            Some((node, lease)) => {
                let ttl = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
                match self.store().acquire_swiss_lease(id, node, ttl).await {
                    Ok(Some(epoch)) => Some(DirectorFence {
                        owner: node.to_string(),
                        epoch,
                    }),
                    Ok(None) => return,
                    Err(err) => {
                        err.log();
                        return;
                    }
                }
            }
        };
        let nudge = Arc::new(Notify::new());
        {
            let mut running = self.running();
            if running.contains_key(id) {
                return;
            }
            running.insert(id.to_string(), nudge.clone());
        }
        let director = Director::new(self.clone(), id.to_string(), fence, nudge);
        tokio::spawn(director.run());
    }

    /// Wakes the director of `id` (a round scheduled, a player joined) and
    /// tells the page's sockets.
    pub async fn changed(&self, id: &str) {
        let nudge = self.running().get(id).cloned();
        match nudge {
            Some(nudge) => nudge.notify_one(),
            None => self.direct(id).await,
        }
        self.publish(id).await;
    }

    fn forget(&self, id: &str) {
        self.running().remove(id);
    }

    /// The changes of tournament `id`, as the page's socket sends them.
    pub fn watch(&self, id: &str) -> broadcast::Receiver<Arc<str>> {
        let mut watchers = self.watchers();
        watchers.retain(|_, sender| sender.receiver_count() > 0);
        watchers
            .entry(id.to_string())
            .or_insert_with(|| broadcast::channel(WATCH_CAPACITY).0)
            .subscribe()
    }

    /// Sends the tournament as it now stands to its page's sockets, if any
    /// is open on this node.
    pub async fn publish(&self, id: &str) {
        let Some(sender) = self.watchers().get(id).cloned() else {
            return;
        };
        if sender.receiver_count() == 0 {
            return;
        }
        match Loaded::load(self.store(), id).await {
            Ok(Some(loaded)) => {
                let text = view::page_message(&loaded).to_string();
                // No socket left: nobody to tell.
                drop(sender.send(Arc::from(text)));
            }
            Ok(None) => {}
            Err(err) => err.log(),
        }
    }
}

//! What the partition tests' clients did and saw (every request, every
//! answer, every state a spectator was shown, with times), the nemesis's
//! fault windows, and the checker over those records and the database's
//! final histories (issue 42; tests/partitions.rs).
//!
//! The checker's properties: every acknowledged move is in the final
//! history at its ply; no ply was acknowledged twice with different moves;
//! every history anyone was shown is a prefix of the final one (no fork,
//! even briefly), and a spectator's connection never sees it go back;
//! clocks never run backwards (along each game's stored moves, its
//! acknowledged answers and each spectator's states); at most one node
//! wrote a game's moves in any lease epoch, and epochs never go back along
//! a game's plies. It also tabulates availability during each fault.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

/// Where a shown history came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The 200 answer to a move.
    Answer,
    /// A read of the game (`GET /api/games/{id}`).
    Read,
    /// A spectator's WebSocket (its connection's number).
    Spectator(u64),
}

/// A history shown to a client.
#[derive(Debug, Clone)]
pub struct Shown {
    pub game: String,
    pub node: usize,
    pub source: Source,
    /// Seconds since the run began: when it was asked (spectators: when
    /// it arrived) and when it arrived.
    pub asked: f64,
    pub at: f64,
    /// The moves, space-separated.
    pub moves: String,
    pub plies: usize,
    /// (white, black) milliseconds left, if the game has a clock.
    pub clock: Option<(u64, u64)>,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An HTTP status and, for an error, its code.
    Status(u16, String),
    /// No HTTP answer (refused, reset, timed out).
    Network(String),
}

/// One move request.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub game: String,
    pub ply: usize,
    pub uci: String,
    pub node: usize,
    pub sent: f64,
    pub answered: f64,
    pub outcome: Outcome,
}

/// A move that was played: acknowledged (a 200 to it), or found in the
/// game by a read after an answer that did not say.
#[derive(Debug, Clone)]
pub struct Played {
    pub game: String,
    pub ply: usize,
    pub uci: String,
    pub first_sent: f64,
    pub done: f64,
    pub acknowledged: bool,
    pub node: usize,
}

/// A fault the nemesis made, and when.
#[derive(Debug, Clone)]
pub struct Window {
    pub fault: String,
    pub target: String,
    pub start: f64,
    pub end: f64,
}

/// A stored move, as the checker reads it back.
#[derive(Debug, Clone)]
pub struct StoredMove {
    pub uci: String,
    pub white_ms: Option<i64>,
    pub black_ms: Option<i64>,
    pub owner: Option<String>,
    pub epoch: Option<i64>,
}

/// Everything recorded during a run.
pub struct Records {
    began: Instant,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    shown: Vec<Shown>,
    attempts: Vec<Attempt>,
    played: Vec<Played>,
    windows: Vec<Window>,
    /// What a client found that cannot be (seen at once, not afterwards).
    anomalies: Vec<String>,
}

impl Records {
    pub fn new() -> Records {
        Records {
            began: Instant::now(),
            inner: Mutex::default(),
        }
    }

    /// Seconds since the run began.
    pub fn now(&self) -> f64 {
        self.began.elapsed().as_secs_f64()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut self.inner.lock().expect("the records"))
    }

    /// Records the history shown in `state` (a GameState).
    pub fn shown(&self, game: &str, node: usize, source: Source, asked: f64, state: &Value) {
        let moves: Vec<&str> = state["moves"]
            .as_array()
            .map(|moves| moves.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let clock = state["clock"]["white_ms"]
            .as_u64()
            .zip(state["clock"]["black_ms"].as_u64());
        let shown = Shown {
            game: game.to_string(),
            node,
            source,
            asked,
            at: self.now(),
            plies: moves.len(),
            moves: moves.join(" "),
            clock,
        };
        self.with(|inner| inner.shown.push(shown));
    }

    pub fn attempt(&self, attempt: Attempt) {
        self.with(|inner| inner.attempts.push(attempt));
    }

    pub fn played(&self, played: Played) {
        self.with(|inner| inner.played.push(played));
    }

    pub fn window(&self, window: Window) {
        self.with(|inner| inner.windows.push(window));
    }

    pub fn anomaly(&self, what: String) {
        eprintln!("ANOMALY {what}");
        self.with(|inner| inner.anomalies.push(what));
    }

    pub fn counts(&self) -> (usize, usize, usize) {
        self.with(|inner| (inner.attempts.len(), inner.played.len(), inner.shown.len()))
    }

    /// Checks the records against the stored histories (game id → moves in
    /// ply order).
    pub fn check(&self, stored: &HashMap<String, Vec<StoredMove>>) -> Verdict {
        self.with(|inner| inner.check(stored))
    }
}

impl Default for Records {
    fn default() -> Records {
        Records::new()
    }
}

/// The checker's findings.
pub struct Verdict {
    pub violations: Vec<String>,
    pub table: String,
    pub summary: String,
}

/// Whether `shown` (space-separated moves) is a prefix of `line`.
fn is_prefix(shown: &str, line: &str) -> bool {
    shown.is_empty()
        || line == shown
        || line.starts_with(shown) && line.as_bytes().get(shown.len()) == Some(&b' ')
}

impl Inner {
    fn check(&self, stored: &HashMap<String, Vec<StoredMove>>) -> Verdict {
        let mut violations = self.anomalies.clone();
        let lines: HashMap<&str, String> = stored
            .iter()
            .map(|(game, moves)| {
                let line: Vec<&str> = moves.iter().map(|m| m.uci.as_str()).collect();
                (game.as_str(), line.join(" "))
            })
            .collect();
        let empty = Vec::new();
        // 1. Every acknowledged move is in the final history at its ply;
        // 2. no ply acknowledged twice with different moves.
        let mut acknowledged: HashMap<(&str, usize), HashSet<&str>> = HashMap::new();
        for played in self.played.iter().filter(|p| p.acknowledged) {
            acknowledged
                .entry((&played.game, played.ply))
                .or_default()
                .insert(&played.uci);
            let history = stored.get(&played.game).unwrap_or(&empty);
            match history.get(played.ply) {
                Some(mv) if mv.uci == played.uci => {}
                found => violations.push(format!(
                    "LOST: game {} ply {} {} acknowledged at {:.2}s through n{}; the final \
                     history has {} there",
                    played.game,
                    played.ply,
                    played.uci,
                    played.done,
                    played.node,
                    found.map_or("nothing", |mv| mv.uci.as_str())
                )),
            }
        }
        for ((game, ply), moves) in &acknowledged {
            if moves.len() > 1 {
                violations.push(format!(
                    "TWICE: game {game} ply {ply} acknowledged as each of {moves:?}"
                ));
            }
        }
        // 3. One line: everything shown is a prefix of the final history,
        // and a spectator's connection never goes back.
        let mut last_of_connection: HashMap<u64, &Shown> = HashMap::new();
        for shown in &self.shown {
            let line = lines.get(shown.game.as_str()).map_or("", String::as_str);
            if !is_prefix(&shown.moves, line) {
                violations.push(format!(
                    "FORK: game {} shown by n{} ({:?}) at {:.2}s: [{}], not a prefix of the \
                     final [{}]",
                    shown.game, shown.node, shown.source, shown.at, shown.moves, line
                ));
            }
            if let Source::Spectator(connection) = shown.source {
                if let Some(before) = last_of_connection.insert(connection, shown) {
                    if shown.plies < before.plies {
                        violations.push(format!(
                            "BACK: a spectator of game {} on n{} was shown {} plies at {:.2}s \
                             after {} at {:.2}s",
                            shown.game, shown.node, shown.plies, shown.at, before.plies, before.at
                        ));
                    }
                    if let Some(back) = clock_back(before.clock, shown.clock) {
                        violations.push(format!(
                            "CLOCK: a spectator of game {} on n{} saw a clock go back {back} ms \
                             at {:.2}s",
                            shown.game, shown.node, shown.at
                        ));
                    }
                }
            }
        }
        // 4. Clocks: along the acknowledged answers of a game, in ply order
        // (each later in time), and along its stored moves.
        let mut answers: BTreeMap<(&str, usize), &Shown> = BTreeMap::new();
        for shown in self.shown.iter().filter(|s| s.source == Source::Answer) {
            answers.entry((&shown.game, shown.plies)).or_insert(shown);
        }
        let mut previous: Option<&Shown> = None;
        for ((game, _), shown) in &answers {
            if let Some(before) = previous.filter(|before| before.game == *game) {
                if let Some(back) = clock_back(before.clock, shown.clock) {
                    violations.push(format!(
                        "CLOCK: game {game}: the answer at ply {} (n{}) shows a clock {back} ms \
                         above the answer at ply {} (n{})",
                        shown.plies, shown.node, before.plies, before.node
                    ));
                }
            }
            previous = Some(shown);
        }
        for (game, moves) in stored {
            for side in 0..2 {
                let times: Vec<(usize, i64)> = moves
                    .iter()
                    .enumerate()
                    .filter_map(|(ply, mv)| {
                        if side == 0 { mv.white_ms } else { mv.black_ms }.map(|ms| (ply, ms))
                    })
                    .collect();
                for pair in times.windows(2) {
                    if pair[1].1 > pair[0].1 {
                        violations.push(format!(
                            "CLOCK: game {game} stored {} ms for {} at ply {}, {} at ply {}",
                            pair[1].1,
                            ["white", "black"][side],
                            pair[1].0,
                            pair[0].1,
                            pair[0].0
                        ));
                    }
                }
            }
            // 5. One writer per epoch; epochs never go back.
            let mut owners: HashMap<i64, &str> = HashMap::new();
            let mut last_epoch: Option<(usize, i64)> = None;
            for (ply, mv) in moves.iter().enumerate() {
                let (Some(owner), Some(epoch)) = (&mv.owner, mv.epoch) else {
                    continue;
                };
                if let Some(other) = owners.insert(epoch, owner).filter(|o| o != owner) {
                    violations.push(format!(
                        "EPOCH: game {game} epoch {epoch} was written by two nodes ({other} and \
                         {owner}, ply {ply})"
                    ));
                }
                if let Some((before, last)) = last_epoch.filter(|(_, last)| epoch < *last) {
                    violations.push(format!(
                        "EPOCH: game {game} ply {ply} written under epoch {epoch} after ply \
                         {before} under epoch {last}"
                    ));
                }
                last_epoch = Some((ply, epoch));
            }
        }
        Verdict {
            violations,
            table: self.table(),
            summary: format!(
                "{} games, {} moves in the database, {} move requests, {} moves played ({} \
                 acknowledged), {} histories shown ({} to spectators)",
                stored.len(),
                stored.values().map(Vec::len).sum::<usize>(),
                self.attempts.len(),
                self.played.len(),
                self.played.iter().filter(|p| p.acknowledged).count(),
                self.shown.len(),
                self.shown
                    .iter()
                    .filter(|s| matches!(s.source, Source::Spectator(_)))
                    .count()
            ),
        }
    }

    /// Availability during each fault (and outside them): the share of
    /// move requests sent then that were answered 200, and the longest a
    /// move first sent then waited until it was played.
    fn table(&self) -> String {
        let mut rows: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for window in &self.windows {
            let name = window.fault.clone();
            match rows.iter_mut().find(|(fault, _)| *fault == name) {
                Some((_, spans)) => spans.push((window.start, window.end)),
                None => rows.push((name, vec![(window.start, window.end)])),
            }
        }
        let inside = |t: f64, spans: &[(f64, f64)]| spans.iter().any(|(s, e)| t >= *s && t < *e);
        let every: Vec<(f64, f64)> = self.windows.iter().map(|w| (w.start, w.end)).collect();
        let mut table = String::from(
            "| fault | times | move requests | answered 200 | other answers | no answer | longest wait for a move |\n\
             |---|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut row = |name: &str, times: usize, pick: &dyn Fn(f64) -> bool| {
            let attempts: Vec<&Attempt> = self.attempts.iter().filter(|a| pick(a.sent)).collect();
            let ok = attempts
                .iter()
                .filter(|a| a.outcome == Outcome::Status(200, String::new()))
                .count();
            let silent = attempts
                .iter()
                .filter(|a| matches!(a.outcome, Outcome::Network(_)))
                .count();
            let mut others: BTreeMap<String, usize> = BTreeMap::new();
            for attempt in &attempts {
                if let Outcome::Status(status, code) = &attempt.outcome {
                    if *status != 200 {
                        *others.entry(format!("{status} {code}")).or_default() += 1;
                    }
                }
            }
            let longest = self
                .played
                .iter()
                .filter(|p| pick(p.first_sent))
                .map(|p| p.done - p.first_sent)
                .fold(0.0, f64::max);
            let share = if attempts.is_empty() {
                "-".to_string()
            } else {
                format!("{:.1}%", 100.0 * ok as f64 / attempts.len() as f64)
            };
            let others = others
                .iter()
                .map(|(what, n)| format!("{n}× {what}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                table,
                "| {name} | {times} | {} | {share} | {} | {silent} | {longest:.2} s |",
                attempts.len(),
                if others.is_empty() {
                    "-".into()
                } else {
                    others
                },
            );
        };
        row("none (between faults)", 0, &|t| !inside(t, &every));
        for (name, spans) in &rows {
            row(name, spans.len(), &|t| inside(t, spans));
        }
        table
    }
}

/// How much a clock went up from `before` to `after` (either side), if
/// it did.
fn clock_back(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<u64> {
    let ((w0, b0), (w1, b1)) = before.zip(after)?;
    let back = w1.saturating_sub(w0).max(b1.saturating_sub(b0));
    (back > 0).then_some(back)
}

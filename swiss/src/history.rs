//! What the pairing rules need to know about a player, derived from the
//! record: score, opponents met, colours of the games actually played, the
//! colour preference those colours give, floats, byes.

use std::collections::BTreeSet;

use crate::model::{ByeKind, Colour, Entry, PlayerId, Score, Tournament};

/// How strongly a player wants a colour (C.04.3, 1.6 / A.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    /// Colour difference 0: alternate from the last game.
    Mild,
    /// Colour difference ±1.
    Strong,
    /// Colour difference beyond ±1, or the same colour in the last two
    /// played games: two such players may not meet (criterion C3).
    Absolute,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preference {
    pub colour: Colour,
    pub strength: Strength,
}

/// A float received in a round (C.04.3, 1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Float {
    None,
    Down,
    Up,
}

#[derive(Clone, Debug)]
pub struct PlayerHistory {
    pub id: PlayerId,
    pub score: Score,
    /// Opponents of games played over the board (criterion C1).
    pub met: BTreeSet<PlayerId>,
    /// Colours of the games played, oldest first; unplayed rounds leave no
    /// trace (FIDE C.04.2: colours of unplayed games are not considered).
    pub colours: Vec<Colour>,
    /// Has had a pairing-allocated bye or a point without playing (a
    /// forfeit win or a full-point bye): no PAB again (criterion C2).
    pub bye_barred: bool,
    /// Rounds in which no game was played.
    pub unplayed: u32,
    /// Floats of the last round and the round before it.
    pub float_last: Float,
    pub float_before_last: Float,
}

impl PlayerHistory {
    pub fn colour_difference(&self) -> i32 {
        self.colours
            .iter()
            .map(|c| if *c == Colour::White { 1 } else { -1 })
            .sum()
    }

    /// The colour preference the played games give (None before any game).
    pub fn preference(&self) -> Option<Preference> {
        let last = *self.colours.last()?;
        let cd = self.colour_difference();
        let n = self.colours.len();
        let last_two_same = n >= 2 && self.colours[n - 2] == last;
        let (colour, strength) = if cd > 1 {
            (Colour::Black, Strength::Absolute)
        } else if cd < -1 {
            (Colour::White, Strength::Absolute)
        } else if last_two_same {
            (last.opposite(), Strength::Absolute)
        } else if cd == 1 {
            (Colour::Black, Strength::Strong)
        } else if cd == -1 {
            (Colour::White, Strength::Strong)
        } else {
            (last.opposite(), Strength::Mild)
        };
        Some(Preference { colour, strength })
    }
}

/// The history of every player after all recorded rounds.
pub fn histories(t: &Tournament) -> Vec<PlayerHistory> {
    let n_rounds = t.rounds.len();
    // Scores before each round, for the float of each round.
    let mut before: Vec<Vec<Score>> = vec![vec![Score::ZERO; t.players.len()]; n_rounds + 1];
    for (r, round) in t.rounds.iter().enumerate() {
        for p in &t.players {
            let i = p.id.index();
            before[r + 1][i] = before[r][i] + t.points_in(round, p.id);
        }
    }
    t.players
        .iter()
        .map(|p| {
            let i = p.id.index();
            let mut h = PlayerHistory {
                id: p.id,
                score: before[n_rounds][i],
                met: BTreeSet::new(),
                colours: Vec::new(),
                bye_barred: false,
                unplayed: 0,
                float_last: Float::None,
                float_before_last: Float::None,
            };
            let mut floats = Vec::with_capacity(n_rounds);
            for (r, round) in t.rounds.iter().enumerate() {
                let float = match round.entry(p.id) {
                    Entry::Game {
                        opponent,
                        colour,
                        result,
                    } => {
                        if result.played() {
                            h.met.insert(opponent);
                            h.colours.push(colour);
                            let mine = before[r][i];
                            let theirs =
                                before[r].get(opponent.index()).copied().unwrap_or_default();
                            if mine > theirs {
                                Float::Down
                            } else if mine < theirs {
                                Float::Up
                            } else {
                                Float::None
                            }
                        } else {
                            h.unplayed += 1;
                            let won = t.points_in(round, p.id) == Score::ONE;
                            h.bye_barred |= won;
                            if won {
                                Float::Down
                            } else {
                                Float::None
                            }
                        }
                    }
                    Entry::Bye(kind) => {
                        h.unplayed += 1;
                        h.bye_barred |= matches!(kind, ByeKind::PairingAllocated | ByeKind::Full);
                        if t.bye_points(kind) > Score::ZERO {
                            Float::Down
                        } else {
                            Float::None
                        }
                    }
                    Entry::Absent => {
                        h.unplayed += 1;
                        Float::None
                    }
                };
                floats.push(float);
            }
            h.float_last = floats.last().copied().unwrap_or(Float::None);
            h.float_before_last = if floats.len() >= 2 {
                floats[floats.len() - 2]
            } else {
                Float::None
            };
            h
        })
        .collect()
}

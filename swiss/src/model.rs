//! The tournament as recorded: players in their initial order, and the
//! rounds with what happened to each player.
//!
//! Everything the pairing and the tie-breaks need is *derived* from this
//! record (see [`crate::history`]), never stored twice, so a result entered
//! late cannot leave a stale score or colour preference behind.

use std::fmt;

/// A player's pairing number (TPN): 1 for the top of the initial ranking.
///
/// Pairing numbers are dense (`1..=players.len()`), which lets the library
/// index per-player data by `id - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlayerId(pub u32);

impl PlayerId {
    /// The index of this player in [`Tournament::players`].
    pub fn index(self) -> usize {
        (self.0 as usize).saturating_sub(1)
    }
}

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Colour {
    White,
    Black,
}

impl Colour {
    pub fn opposite(self) -> Colour {
        match self {
            Colour::White => Colour::Black,
            Colour::Black => Colour::White,
        }
    }
}

/// A score in half points: the FIDE point system (win 1, draw ½, loss 0)
/// never needs anything finer, and integers compare exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Score(pub u32);

impl Score {
    pub const ZERO: Score = Score(0);
    pub const HALF: Score = Score(1);
    pub const ONE: Score = Score(2);
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{}",
            self.0 / 2,
            if self.0 % 2 == 1 { "5" } else { "0" }
        )
    }
}

impl std::ops::Add for Score {
    type Output = Score;
    fn add(self, rhs: Score) -> Score {
        Score(self.0 + rhs.0)
    }
}

impl std::ops::AddAssign for Score {
    fn add_assign(&mut self, rhs: Score) {
        self.0 += rhs.0;
    }
}

/// One entrant, as the initial ranking list knows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Player {
    pub id: PlayerId,
    pub name: String,
    /// FIDE (or the service's own) rating; 0 for unrated.
    pub rating: u16,
    /// FIDE title as TRF writes it (`g`, `m`, `f`, `c`, `wg`, ...), if any.
    pub title: Option<String>,
    /// The TRF's optional identity fields, kept only so an imported file
    /// is written back as it came.
    pub sex: Option<char>,
    pub federation: Option<String>,
    pub fide_id: Option<String>,
    pub birth_date: Option<String>,
    /// A withdrawn player is never paired again ([`Tournament::present_next`]).
    pub withdrawn: bool,
}

impl Player {
    pub fn new(id: u32, name: impl Into<String>, rating: u16) -> Player {
        Player {
            id: PlayerId(id),
            name: name.into(),
            rating,
            title: None,
            sex: None,
            federation: None,
            fide_id: None,
            birth_date: None,
            withdrawn: false,
        }
    }
}

/// How a game between two paired players ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    WhiteWins,
    Draw,
    BlackWins,
    /// Black did not show up: white scores a win, but no game was played
    /// (it counts for neither colours nor "have met", as bbpPairings and
    /// JaVaFo read FIDE's rules).
    WhiteWinsByForfeit,
    BlackWinsByForfeit,
    /// Neither showed up: both score zero, nothing was played.
    DoubleForfeit,
}

impl GameResult {
    /// Whether the game was actually played over the board.
    pub fn played(self) -> bool {
        matches!(
            self,
            GameResult::WhiteWins | GameResult::Draw | GameResult::BlackWins
        )
    }

    /// The points of white and of black.
    pub fn scores(self) -> (Score, Score) {
        match self {
            GameResult::WhiteWins | GameResult::WhiteWinsByForfeit => (Score::ONE, Score::ZERO),
            GameResult::Draw => (Score::HALF, Score::HALF),
            GameResult::BlackWins | GameResult::BlackWinsByForfeit => (Score::ZERO, Score::ONE),
            GameResult::DoubleForfeit => (Score::ZERO, Score::ZERO),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Game {
    pub white: PlayerId,
    pub black: PlayerId,
    pub result: GameResult,
}

/// A round without a game for this player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByeKind {
    /// The pairing-allocated bye (odd number of players): scores
    /// [`Tournament::pab_score`] and bars the player from another one.
    PairingAllocated,
    /// A requested half-point bye.
    Half,
    /// A requested full-point bye (rare; some tournaments grant it).
    Full,
    /// A requested zero-point bye, or simply absent (withdrawn players too).
    Zero,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bye {
    pub player: PlayerId,
    pub kind: ByeKind,
}

/// A finished round. A player in neither list did not take part (zero
/// points, as a [`ByeKind::Zero`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub games: Vec<Game>,
    pub byes: Vec<Bye>,
}

/// What one round meant for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Game {
        opponent: PlayerId,
        colour: Colour,
        result: GameResult,
    },
    Bye(ByeKind),
    /// Not listed in the round at all.
    Absent,
}

impl Round {
    /// The entry of `player` in this round.
    pub fn entry(&self, player: PlayerId) -> Entry {
        for game in &self.games {
            if game.white == player {
                return Entry::Game {
                    opponent: game.black,
                    colour: Colour::White,
                    result: game.result,
                };
            }
            if game.black == player {
                return Entry::Game {
                    opponent: game.white,
                    colour: Colour::Black,
                    result: game.result,
                };
            }
        }
        self.byes
            .iter()
            .find(|bye| bye.player == player)
            .map_or(Entry::Absent, |bye| Entry::Bye(bye.kind))
    }
}

/// A Swiss tournament: the initial ranking list and the finished rounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tournament {
    pub name: String,
    /// The number of rounds announced: the last round relaxes the colour
    /// rule for topscorers (C.04.3, "topscorers").
    pub rounds_planned: u32,
    /// The colour the top pairing number gets in round 1 (the "initial
    /// colour" drawn by lot; TRF `XXC white1` / `XXC black1`).
    pub initial_colour: Colour,
    /// Points for the pairing-allocated bye (a win by default).
    pub pab_score: Score,
    /// Indexed by `PlayerId::index()`.
    pub players: Vec<Player>,
    pub rounds: Vec<Round>,
    /// Requested byes already known for the next, not yet paired round
    /// (TRF writes them as entries in the next round's column).
    pub next_round_byes: Vec<Bye>,
}

impl Tournament {
    pub fn new(name: impl Into<String>, rounds_planned: u32, players: Vec<Player>) -> Tournament {
        Tournament {
            name: name.into(),
            rounds_planned,
            initial_colour: Colour::White,
            pab_score: Score::ONE,
            players,
            rounds: Vec::new(),
            next_round_byes: Vec::new(),
        }
    }

    pub fn player(&self, id: PlayerId) -> Option<&Player> {
        self.players.get(id.index()).filter(|p| p.id == id)
    }

    /// Points scored by `player` in `round`.
    pub fn points_in(&self, round: &Round, player: PlayerId) -> Score {
        match round.entry(player) {
            Entry::Game { colour, result, .. } => {
                let (w, b) = result.scores();
                if colour == Colour::White {
                    w
                } else {
                    b
                }
            }
            Entry::Bye(kind) => self.bye_points(kind),
            Entry::Absent => Score::ZERO,
        }
    }

    pub fn bye_points(&self, kind: ByeKind) -> Score {
        match kind {
            ByeKind::PairingAllocated => self.pab_score,
            ByeKind::Half => Score::HALF,
            ByeKind::Full => Score::ONE,
            ByeKind::Zero => Score::ZERO,
        }
    }

    /// Score of `player` after the first `rounds` rounds.
    pub fn score_after(&self, player: PlayerId, rounds: usize) -> Score {
        self.rounds[..rounds.min(self.rounds.len())]
            .iter()
            .map(|round| self.points_in(round, player))
            .fold(Score::ZERO, |a, b| a + b)
    }

    /// The players to pair next round: not withdrawn and without a
    /// requested bye for it.
    pub fn present_next(&self) -> Vec<PlayerId> {
        self.players
            .iter()
            .filter(|p| !p.withdrawn)
            .filter(|p| !self.next_round_byes.iter().any(|b| b.player == p.id))
            .map(|p| p.id)
            .collect()
    }

    /// Record a finished round; the pending requested byes become part of it.
    pub fn push_round(&mut self, mut round: Round) {
        for bye in self.next_round_byes.drain(..) {
            if !round.byes.iter().any(|b| b.player == bye.player) {
                round.byes.push(bye);
            }
        }
        self.rounds.push(round);
    }
}

/// An entrant before pairing numbers exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entrant {
    pub name: String,
    pub rating: u16,
    pub title: Option<String>,
}

/// FIDE titles from strongest to weakest, as TRF spells them: the initial
/// ranking breaks rating ties by title (C.04.2, "Initial order").
const TITLE_ORDER: [&str; 8] = ["g", "m", "wg", "f", "wm", "c", "wf", "wc"];

fn title_rank(title: &Option<String>) -> usize {
    title
        .as_deref()
        .map(|t| t.trim().to_ascii_lowercase())
        .and_then(|t| TITLE_ORDER.iter().position(|x| *x == t))
        .unwrap_or(TITLE_ORDER.len())
}

/// The initial ranking list: rating (highest first), then title, then name
/// alphabetically; pairing numbers are given in that order.
pub fn initial_ranking(mut entrants: Vec<Entrant>) -> Vec<Player> {
    entrants.sort_by(|a, b| {
        b.rating
            .cmp(&a.rating)
            .then(title_rank(&a.title).cmp(&title_rank(&b.title)))
            .then(a.name.cmp(&b.name))
    });
    entrants
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let mut p = Player::new(i as u32 + 1, e.name, e.rating);
            p.title = e.title;
            p
        })
        .collect()
}

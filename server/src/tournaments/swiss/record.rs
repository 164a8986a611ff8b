//! A Swiss as stored, turned into the pairing library's model
//! (`rookery_swiss::Tournament`) and back.
//!
//! Pairing numbers are given by the director when a player is first paired
//! (round 1: the initial ranking by rating, then name; a late entrant after
//! everyone numbered before), so they are dense, as the library wants, and
//! never change. A late entrant's earlier rounds are absences (zero).

use rookery_swiss::{
    initial_ranking, Bye, ByeKind, Entrant, Game, GameResult, Player, PlayerId, Round, Score,
    Tournament,
};

use crate::store::swiss::{PairingRow, SwissPlayerRow, SwissRow};
use crate::store::{Store, StoreError};

/// A tournament with its players and pairings, read at one moment.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub row: SwissRow,
    pub players: Vec<SwissPlayerRow>,
    pub pairings: Vec<PairingRow>,
}

/// The library's model of a [`Loaded`] tournament, and who each pairing
/// number is.
#[derive(Debug, Clone)]
pub struct Model {
    pub tournament: Tournament,
    /// The player id of pairing number `i + 1`.
    pub ids: Vec<String>,
}

impl Model {
    pub fn id_of(&self, player: PlayerId) -> Option<&str> {
        self.ids.get(player.index()).map(String::as_str)
    }
}

/// A stored result (TRF's forfeit signs included) as the library's.
pub fn game_result(text: &str) -> Option<GameResult> {
    Some(match text {
        "1-0" => GameResult::WhiteWins,
        "0-1" => GameResult::BlackWins,
        "1/2-1/2" => GameResult::Draw,
        "+-" => GameResult::WhiteWinsByForfeit,
        "-+" => GameResult::BlackWinsByForfeit,
        "--" => GameResult::DoubleForfeit,
        _ => return None,
    })
}

/// The stored kind of a bye.
pub fn bye_text(kind: ByeKind) -> &'static str {
    match kind {
        ByeKind::PairingAllocated => "pab",
        ByeKind::Half => "half",
        ByeKind::Full => "full",
        ByeKind::Zero => "zero",
    }
}

fn bye_kind(text: &str) -> ByeKind {
    match text {
        "pab" => ByeKind::PairingAllocated,
        "half" => ByeKind::Half,
        "full" => ByeKind::Full,
        _ => ByeKind::Zero,
    }
}

/// The kind of bye a tournament gives a player who asked to be absent,
/// from its points (half points).
pub fn requested_bye(bye_points: i64) -> ByeKind {
    match bye_points {
        2 => ByeKind::Full,
        1 => ByeKind::Half,
        _ => ByeKind::Zero,
    }
}

/// Points of a score, as lichess writes them (`1.5`).
pub fn points(score: Score) -> f64 {
    f64::from(score.0) / 2.0
}

impl Loaded {
    pub async fn load(store: &Store, id: &str) -> Result<Option<Loaded>, StoreError> {
        let Some(row) = store.swiss(id).await? else {
            return Ok(None);
        };
        let players = store.swiss_players(id).await?;
        let pairings = store.swiss_pairings(id).await?;
        Ok(Some(Loaded {
            row,
            players,
            pairings,
        }))
    }

    pub fn round_pairings(&self, round: i64) -> impl Iterator<Item = &PairingRow> {
        self.pairings.iter().filter(move |p| p.round == round)
    }

    /// Whether every game of `round` has its result.
    pub fn round_complete(&self, round: i64) -> bool {
        self.round_pairings(round)
            .all(|p| p.bye.is_some() || p.result.is_some())
    }

    /// Games of the current round still being played.
    pub fn ongoing(&self) -> usize {
        self.round_pairings(self.row.round)
            .filter(|p| p.bye.is_none() && p.result.is_none())
            .count()
    }

    /// The rounds whose results are all in.
    pub fn complete_rounds(&self) -> i64 {
        if self.round_complete(self.row.round) {
            self.row.round
        } else {
            self.row.round - 1
        }
    }

    /// Pairing numbers for the entrants who have none yet (and have not
    /// withdrawn), after the highest given: `(player id, number)`.
    pub fn new_numbers(&self) -> Vec<(String, i64)> {
        let highest = self
            .players
            .iter()
            .filter_map(|p| p.pairing_number)
            .max()
            .unwrap_or(0);
        let newcomers: Vec<&SwissPlayerRow> = self
            .players
            .iter()
            .filter(|p| p.pairing_number.is_none() && !p.withdrawn)
            .collect();
        let ranked = initial_ranking(
            newcomers
                .iter()
                .map(|p| Entrant {
                    name: p.player.name.clone(),
                    rating: rating16(p.rating),
                    title: None,
                })
                .collect(),
        );
        ranked
            .into_iter()
            .filter_map(|ranked| {
                let row = newcomers.iter().find(|p| p.player.name == ranked.name)?;
                Some((row.player.id.clone(), highest + i64::from(ranked.id.0)))
            })
            .collect()
    }

    /// Gives the numbers of [`Loaded::new_numbers`] in memory.
    pub fn number(&mut self, numbers: &[(String, i64)]) {
        for (id, number) in numbers {
            if let Some(p) = self.players.iter_mut().find(|p| p.player.id == *id) {
                p.pairing_number = Some(*number);
            }
        }
    }

    /// The library's model with rounds `1..=rounds`; with `partial`, the
    /// round after them too, with only its results so far (live standings).
    /// Requests for a bye become the next round's requested byes.
    pub fn model(&self, rounds: i64, partial: bool) -> Model {
        let mut numbered: Vec<&SwissPlayerRow> = self
            .players
            .iter()
            .filter(|p| p.pairing_number.is_some())
            .collect();
        numbered.sort_by_key(|p| p.pairing_number);
        let ids: Vec<String> = numbered.iter().map(|p| p.player.id.clone()).collect();
        let number = |id: &str| -> Option<PlayerId> {
            ids.iter()
                .position(|x| x == id)
                .map(|i| PlayerId(i as u32 + 1))
        };
        let players: Vec<Player> = numbered
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut player =
                    Player::new(i as u32 + 1, p.player.name.clone(), rating16(p.rating));
                player.withdrawn = p.withdrawn;
                player
            })
            .collect();
        let mut tournament = Tournament::new(
            self.row.name.clone(),
            u32::try_from(self.row.rounds_planned).unwrap_or(0),
            players,
        );
        let last = if partial { rounds + 1 } else { rounds };
        for round in 1..=last.min(self.row.round) {
            let mut games = Vec::new();
            let mut byes = Vec::new();
            for p in self.round_pairings(round) {
                let Some(white) = number(&p.white_id) else {
                    continue;
                };
                match (&p.bye, p.black_id.as_deref().and_then(number)) {
                    (Some(kind), _) => byes.push(Bye {
                        player: white,
                        kind: bye_kind(kind),
                    }),
                    (None, Some(black)) => {
                        if let Some(result) = p.result.as_deref().and_then(game_result) {
                            games.push(Game {
                                white,
                                black,
                                result,
                            });
                        }
                    }
                    (None, None) => {}
                }
            }
            tournament.push_round(Round { games, byes });
        }
        let kind = requested_bye(self.row.bye_points);
        tournament.next_round_byes = self
            .players
            .iter()
            .filter(|p| p.absent_next && !p.withdrawn)
            .filter_map(|p| number(&p.player.id))
            .map(|player| Bye { player, kind })
            .collect();
        Model { tournament, ids }
    }
}

/// A rating as the library holds it.
fn rating16(rating: i64) -> u16 {
    u16::try_from(rating.max(0)).unwrap_or(u16::MAX)
}

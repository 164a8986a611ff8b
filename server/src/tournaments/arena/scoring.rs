//! An arena player's score sheet, lichess's rules (its arena `Sheet`), as a
//! pure function of the player's finished games in the order they were
//! paired:
//!
//! - a win scores 2, a draw 1, a loss 0;
//! - **the fire**: after two wins in a row, every game scores double (a win
//!   4, a draw 2) until a game is not won (when the arena is streakable);
//! - **early draws**: a draw of fewer than [`QUICK_DRAW_PLIES`] half-moves
//!   (10 moves) scores nothing;
//! - **draw streaks**: a draw right after another draw (losses between do
//!   not count) scores nothing, unless the game was long (at least
//!   [`LONG_GAME_PLIES`] half-moves, 30 moves) or the player is on fire;
//! - **berserk**: a berserk player's win of at least
//!   [`BERSERK_MIN_PLIES`] half-moves (7 moves) scores one point more.
//!
//! Aborted games are not in a sheet at all.

/// Draws shorter than this (in half-moves) score nothing (lichess: 20).
pub const QUICK_DRAW_PLIES: u32 = 20;
/// A berserk win counts its extra point from this many half-moves (14).
pub const BERSERK_MIN_PLIES: u32 = 14;
/// A draw of this many half-moves scores even in a draw streak (60).
pub const LONG_GAME_PLIES: u32 = 60;

/// A game's result for the player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// One finished game of the player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Game {
    pub outcome: Outcome,
    /// Half-moves played.
    pub plies: u32,
    /// Whether this player went berserk in it.
    pub berserk: bool,
}

/// How a game counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    pub outcome: Outcome,
    /// Points, bonus included.
    pub points: u32,
    /// Scored on fire (doubled).
    pub doubled: bool,
    /// An early draw (nothing scored).
    pub early_draw: bool,
    /// The berserk point was earned.
    pub berserk_point: bool,
}

/// A player's sheet: every game's score, oldest first, and the totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sheet {
    pub scores: Vec<Score>,
    pub total: u32,
}

impl Sheet {
    /// The sheet of `games`, oldest first. `streakable`: the arena has the
    /// fire.
    pub fn of(games: &[Game], streakable: bool) -> Sheet {
        let mut sheet = Sheet::default();
        for game in games {
            let score = sheet.score_of(game, streakable);
            sheet.total += score.points;
            sheet.scores.push(score);
        }
        sheet
    }

    /// Whether the last two games were wins: the next one scores double.
    pub fn on_fire(&self) -> bool {
        let mut last = self.scores.iter().rev();
        matches!(
            (last.next(), last.next()),
            (Some(a), Some(b)) if a.outcome == Outcome::Win && b.outcome == Outcome::Win
        )
    }

    /// Whether the latest game that was not a loss was a draw.
    fn in_draw_streak(&self) -> bool {
        self.scores
            .iter()
            .rev()
            .find(|score| score.outcome != Outcome::Loss)
            .is_some_and(|score| score.outcome == Outcome::Draw)
    }

    fn score_of(&self, game: &Game, streakable: bool) -> Score {
        let fire = streakable && self.on_fire();
        let berserk_point =
            game.berserk && game.outcome == Outcome::Win && game.plies >= BERSERK_MIN_PLIES;
        let mut score = Score {
            outcome: game.outcome,
            points: 0,
            doubled: false,
            early_draw: false,
            berserk_point,
        };
        match game.outcome {
            Outcome::Loss => {}
            Outcome::Win => {
                score.doubled = fire;
                score.points = if fire { 4 } else { 2 };
            }
            Outcome::Draw if game.plies < QUICK_DRAW_PLIES => score.early_draw = true,
            Outcome::Draw if fire => {
                score.doubled = true;
                score.points = 2;
            }
            Outcome::Draw if game.plies < LONG_GAME_PLIES && self.in_draw_streak() => {}
            Outcome::Draw => score.points = 1,
        }
        score.points += u32::from(berserk_point);
        score
    }

    /// lichess's `sheet.scores`: each game's points as one digit, oldest
    /// first.
    pub fn digits(&self) -> String {
        self.scores
            .iter()
            .map(|score| char::from_digit(score.points.min(9), 10).unwrap_or('9'))
            .collect()
    }

    pub fn wins(&self) -> usize {
        self.scores
            .iter()
            .filter(|score| score.outcome == Outcome::Win)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(outcome: Outcome, plies: u32) -> Game {
        Game {
            outcome,
            plies,
            berserk: false,
        }
    }

    fn points(games: &[Game]) -> Vec<u32> {
        Sheet::of(games, true)
            .scores
            .iter()
            .map(|s| s.points)
            .collect()
    }

    use Outcome::{Draw, Loss, Win};

    #[test]
    fn two_wins_light_the_fire_until_a_game_is_not_won() {
        let games = [
            game(Win, 40),
            game(Win, 40),
            game(Win, 40),
            game(Draw, 40),
            game(Win, 40),
            game(Loss, 40),
        ];
        assert_eq!(points(&games), vec![2, 2, 4, 2, 2, 0]);
        assert_eq!(Sheet::of(&games, true).total, 12);
        // No fire in an arena without streaks.
        assert_eq!(Sheet::of(&games, false).total, 9);
    }

    #[test]
    fn early_draws_score_nothing_and_break_the_fire() {
        let games = [game(Draw, 19), game(Draw, 20)];
        // The second draw follows a draw: a streak, nothing either.
        assert_eq!(points(&games), vec![0, 0]);
        assert_eq!(points(&[game(Draw, 20)]), vec![1]);
        assert_eq!(
            points(&[game(Win, 30), game(Win, 30), game(Draw, 10), game(Win, 30)]),
            vec![2, 2, 0, 2]
        );
    }

    #[test]
    fn a_second_draw_in_a_row_scores_only_when_long() {
        assert_eq!(
            points(&[game(Draw, 30), game(Loss, 30), game(Draw, 30)]),
            vec![1, 0, 0]
        );
        assert_eq!(points(&[game(Draw, 30), game(Draw, 60)]), vec![1, 1]);
        assert_eq!(
            points(&[game(Draw, 30), game(Win, 30), game(Draw, 30)]),
            vec![1, 2, 1]
        );
    }

    #[test]
    fn berserk_wins_of_seven_moves_score_one_more() {
        let berserk = |outcome, plies| Game {
            outcome,
            plies,
            berserk: true,
        };
        assert_eq!(points(&[berserk(Win, 14)]), vec![3]);
        assert_eq!(points(&[berserk(Win, 13)]), vec![2]);
        assert_eq!(points(&[berserk(Draw, 40)]), vec![1]);
        assert_eq!(points(&[berserk(Loss, 40)]), vec![0]);
        // On fire: 4 + 1.
        assert_eq!(
            points(&[game(Win, 30), game(Win, 30), berserk(Win, 30)]),
            vec![2, 2, 5]
        );
        assert_eq!(Sheet::of(&[berserk(Win, 30)], true).digits(), "3");
    }
}

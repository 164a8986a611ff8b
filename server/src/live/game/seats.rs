//! Who sits where and who watches: the seats ([`GameSeat`], [`PlayerRef`]),
//! joining and taking a seat (with a private game's invite), the terms fixed
//! at creation (rated, visibility), and the open connections counted for
//! each seat and for spectators.

use crate::domain::{GameSeat, PlayerRef};
use tokio::time::Instant;

use super::{GameError, LiveGame};
use crate::protocol::{Side, Status, Visibility};
use crate::token::TokenHash;

impl LiveGame {
    pub fn seat(&self, side: Side) -> &GameSeat {
        &self.seats[side.index()]
    }

    /// The seat whose token hashes to `token`.
    pub fn side_of(&self, token: &TokenHash) -> Option<Side> {
        Side::BOTH
            .into_iter()
            .find(|side| self.seat(*side).token() == Some(token))
    }

    /// The seat the registered player `player_id` holds, with its token's
    /// hash. A player holds at most one seat of a game (see [`Self::join`]).
    pub fn seat_of_player(&self, player_id: &str) -> Option<(Side, TokenHash)> {
        Side::BOTH.into_iter().find_map(|side| {
            let seat = self.seat(side);
            let token = seat.token()?;
            (seat.player()?.id == player_id).then(|| (side, token.clone()))
        })
    }

    /// Takes the free human seat for the holder of `token`. A private game
    /// needs its invite secret (`invite` is the hash of the one sent), and a
    /// registered player cannot take the seat opposite their own.
    pub fn join(
        &mut self,
        token: TokenHash,
        player: Option<PlayerRef>,
        invite: Option<&TokenHash>,
        now: Instant,
    ) -> Result<Side, GameError> {
        let free = Side::BOTH
            .into_iter()
            .find(|side| self.seat(*side).is_free());
        let Some(side) = free else {
            return Err(GameError::SeatTaken);
        };
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        if self.visibility == Visibility::Private {
            // Hashes are compared, not secrets: the comparison's timing
            // tells nothing about the secret.
            match (self.invite.as_ref(), invite) {
                (Some(expected), Some(given)) if expected == given => {}
                (_, None) => return Err(GameError::InviteRequired),
                _ => return Err(GameError::WrongInvite),
            }
        }
        let other = self.seat(side.other()).player();
        if let (Some(joining), Some(holding)) = (player.as_ref(), other) {
            if joining.id == holding.id {
                return Err(GameError::SamePlayer);
            }
        }
        self.take_seat(side, token, player, now)?;
        Ok(side)
    }

    /// Gives the free human seat `side` to the holder of `token`.
    pub fn take_seat(
        &mut self,
        side: Side,
        token: TokenHash,
        player: Option<PlayerRef>,
        now: Instant,
    ) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        if !self.seat(side).is_free() {
            return Err(GameError::SeatTaken);
        }
        self.seats[side.index()] = GameSeat::Human {
            token: Some(token),
            player,
            connections: 0,
        };
        self.creator_gone_since = None;
        if self.status() == Status::Active {
            self.start_clock(now);
        }
        Ok(())
    }

    /// The AI level to move now, if the side to move is a computer seat and
    /// the game is on.
    pub fn ai_to_move(&self) -> Option<u8> {
        if self.status() != Status::Active {
            return None;
        }
        self.seat(self.turn()).ai_level()
    }

    /// The game's kind, for metrics: `ai_v_ai`, `human_v_ai` or
    /// `human_v_human`.
    pub fn kind(&self) -> &'static str {
        match self
            .seats
            .iter()
            .filter(|seat| seat.ai_level().is_some())
            .count()
        {
            2 => "ai_v_ai",
            1 => "human_v_ai",
            _ => "human_v_human",
        }
    }

    pub fn is_ai_vs_ai(&self) -> bool {
        self.seats.iter().all(|seat| seat.ai_level().is_some())
    }

    /// Makes a new game private: its free seat goes only to the holder of
    /// the invite secret hashing to `invite` (`None`: to nobody, for a game
    /// created without a free seat).
    pub fn make_private(&mut self, invite: Option<TokenHash>) {
        self.visibility = Visibility::Private;
        self.invite = invite;
    }

    /// Sets the terms fixed at creation, as stored, on a restored game.
    pub fn restore_terms(
        &mut self,
        rated: bool,
        visibility: Visibility,
        invite: Option<TokenHash>,
    ) {
        self.rated = rated;
        self.visibility = visibility;
        self.invite = invite;
    }

    /// Makes a new game casual, as its creator chose: its result moves no
    /// rating and counts only in the scoreboard's `casual` tally.
    pub fn make_casual(&mut self) {
        self.rated = false;
    }

    pub fn is_rated(&self) -> bool {
        self.rated
    }

    pub fn visibility(&self) -> Visibility {
        self.visibility
    }

    pub fn invite(&self) -> Option<&TokenHash> {
        self.invite.as_ref()
    }

    /// Waiting for an opponent, and open to anyone: an open seek.
    pub fn is_joinable(&self) -> bool {
        self.status() == Status::Waiting && self.visibility == Visibility::Open
    }

    /// Read-only WebSocket connections watching now.
    pub fn spectators(&self) -> u32 {
        self.spectators
    }

    /// Counts a WebSocket connection for a seat, or a spectator. When the
    /// last connection of an open seek's creator closes, the seek's grace
    /// starts (see [`Self::check_flag`]); a new one stops it.
    pub fn connect(&mut self, side: Option<Side>, delta: i32, now: Instant) {
        let apply = |count: &mut u32| {
            *count = if delta >= 0 {
                count.saturating_add(delta.unsigned_abs())
            } else {
                count.saturating_sub(delta.unsigned_abs())
            };
        };
        match side {
            None => apply(&mut self.spectators),
            Some(side) => {
                if let GameSeat::Human { connections, .. } = &mut self.seats[side.index()] {
                    apply(connections);
                    let gone = *connections == 0;
                    if !gone {
                        self.creator_gone_since = None;
                    } else if delta < 0 && self.is_joinable() {
                        self.creator_gone_since = Some(now);
                    }
                }
            }
        }
    }

    /// Takes over `other`'s open connections and spectators (counted only in
    /// memory), after reloading this game from the database.
    pub fn keep_presence_of(&mut self, other: &LiveGame) {
        self.spectators = other.spectators;
        for side in Side::BOTH {
            if let (
                GameSeat::Human { connections, .. },
                GameSeat::Human {
                    connections: before,
                    ..
                },
            ) = (&mut self.seats[side.index()], other.seat(side))
            {
                *connections = *before;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{human_game, seated};
    use super::*;
    use crate::protocol::{SeatRating, SeatView};
    use crate::token::mint;

    #[tokio::test(start_paused = true)]
    async fn waiting_until_both_seats_are_taken() {
        let mut live = human_game(None, None);
        let now = Instant::now();
        assert_eq!(live.status(), Status::Waiting);
        assert_eq!(
            live.join(mint().unwrap().hash, None, None, now).unwrap(),
            Side::White
        );
        assert!(matches!(
            live.play(Side::White, "e2e4", now),
            Err(GameError::NotStarted)
        ));
        assert_eq!(
            live.join(mint().unwrap().hash, None, None, now).unwrap(),
            Side::Black
        );
        assert_eq!(live.status(), Status::Active);
        assert!(matches!(
            live.join(mint().unwrap().hash, None, None, now),
            Err(GameError::SeatTaken)
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn private_seats_and_one_player_per_game() {
        let now = Instant::now();
        let alice = PlayerRef {
            id: "a".into(),
            name: "alice".into(),
            rating: SeatRating::of(1500.0, 350.0),
        };
        let invite = mint().unwrap();
        let mut live = human_game(None, None);
        live.take_seat(Side::White, mint().unwrap().hash, Some(alice.clone()), now)
            .unwrap();
        live.make_private(Some(invite.hash.clone()));
        assert!(!live.is_joinable());
        let wrong = mint().unwrap().hash;
        for given in [None, Some(&wrong)] {
            assert!(matches!(
                live.join(mint().unwrap().hash, None, given, now),
                Err(GameError::InviteRequired | GameError::WrongInvite)
            ));
        }
        assert!(matches!(
            live.join(mint().unwrap().hash, Some(alice), Some(&invite.hash), now),
            Err(GameError::SamePlayer)
        ));
        assert_eq!(live.status(), Status::Waiting, "refusals change nothing");
        let side = live
            .join(mint().unwrap().hash, None, Some(&invite.hash), now)
            .unwrap();
        assert_eq!(side, Side::Black);
        assert_eq!(live.status(), Status::Active);
    }

    #[tokio::test(start_paused = true)]
    async fn connections_are_counted() {
        let mut live = seated(human_game(None, None));
        live.connect(Some(Side::White), 1, Instant::now());
        live.connect(None, 1, Instant::now());
        live.connect(None, 1, Instant::now());
        let state = live.state(Instant::now());
        assert!(matches!(
            state.white,
            SeatView::Human {
                connected: true,
                ..
            }
        ));
        assert!(matches!(
            state.black,
            SeatView::Human {
                connected: false,
                ..
            }
        ));
        assert_eq!(state.spectators, 2);
        live.connect(Some(Side::White), -1, Instant::now());
        live.connect(None, -5, Instant::now());
        let state = live.state(Instant::now());
        assert!(matches!(
            state.white,
            SeatView::Human {
                connected: false,
                ..
            }
        ));
        assert_eq!(state.spectators, 0);
    }
}

//! Rematches of a finished game: offering, accepting (the new game, with
//! the colours swapped), declining and withdrawing.

use crate::domain::Rematch;
use tokio::time::Instant;
use uuid::Uuid;

use super::offers::drop_offer;
use super::{Answer, GameError, GameSeat, LiveGame};
use crate::protocol::{OfferKind, OfferOutcome, SeatKind, Side, Visibility};
use crate::token::TokenHash;

/// What [`LiveGame::offer_rematch`] did.
#[derive(Debug)]
pub enum RematchStep {
    /// Nothing new (the caller's own standing offer, or an agreed rematch
    /// asked for again): nothing to write.
    Unchanged,
    Offered,
    /// Agreed now: the new game, to store with this one.
    Agreed(Box<LiveGame>),
}

impl LiveGame {
    pub fn rematch(&self) -> Option<&Rematch> {
        self.rematch.as_ref()
    }

    /// Offers a rematch of a finished game, or accepts the opponent's
    /// offer; against the computer the rematch starts at once. `game` is
    /// the new game's id ([`Rematch::game`] once one is offered) and
    /// `token` the hash of `side`'s seat token in it. The new game swaps
    /// the colours and keeps the start position, clock and visibility.
    pub fn offer_rematch(
        &mut self,
        side: Side,
        game: Uuid,
        token: TokenHash,
        created_at: i64,
        now: Instant,
    ) -> Result<RematchStep, GameError> {
        if !self.is_finished() {
            return Err(GameError::NoRematch("the game is not over yet".into()));
        }
        if let Some(rematch) = &self.rematch {
            if rematch.agreed || rematch.offered_by == side {
                return Ok(RematchStep::Unchanged);
            }
            let mut tokens = [None, None];
            tokens[rematch.offered_by.index()] = Some(rematch.offerer_token.clone());
            tokens[side.index()] = Some(token);
            let offerer = rematch.offered_by;
            let new = self.new_game_for_rematch(rematch.game, tokens, created_at, now)?;
            if let Some(rematch) = &mut self.rematch {
                rematch.agreed = true;
            }
            self.answer_offer(OfferKind::Rematch, offerer, OfferOutcome::Accepted);
            return Ok(RematchStep::Agreed(Box::new(new)));
        }
        let opponent = self.seat(side.other());
        if opponent.ai_level().is_none() && opponent.token().is_none() {
            return Err(GameError::NoRematch(
                "nobody took the other seat of this game".into(),
            ));
        }
        let against_ai = opponent.ai_level().is_some();
        let mut tokens = [None, None];
        tokens[side.index()] = Some(token.clone());
        let new = if against_ai {
            Some(self.new_game_for_rematch(game, tokens, created_at, now)?)
        } else {
            None
        };
        self.rematch = Some(Rematch {
            game,
            offered_by: side,
            offerer_token: token,
            agreed: against_ai,
        });
        Ok(match new {
            Some(new) => RematchStep::Agreed(Box::new(new)),
            None => RematchStep::Offered,
        })
    }

    /// Declines or withdraws a rematch offer (see [`Self::drop_draw_offer`]).
    /// An agreed rematch cannot be undone: `Ok(false)`.
    pub fn drop_rematch_offer(&mut self, side: Side, answer: Answer) -> Result<bool, GameError> {
        let Some(rematch) = &self.rematch else {
            return Ok(false);
        };
        let offerer = rematch.offered_by;
        let mut offer = (!rematch.agreed).then_some(offerer);
        if !drop_offer(&mut offer, side, answer) {
            return Ok(false);
        }
        self.rematch = None;
        self.answer_offer(OfferKind::Rematch, offerer, answer.outcome());
        Ok(true)
    }

    /// The new game of a rematch: the seats swap colours (`tokens` are the
    /// human players' new seat token hashes, by their colour in this game).
    fn new_game_for_rematch(
        &self,
        id: Uuid,
        tokens: [Option<TokenHash>; 2],
        created_at: i64,
        now: Instant,
    ) -> Result<LiveGame, GameError> {
        let kind = |seat: &GameSeat| match seat.ai_level() {
            Some(level) => SeatKind::Ai { level },
            None => SeatKind::Human,
        };
        let old = |side: Side| self.seat(side.other());
        let fen = self.game.initial_position().to_fen();
        let mut new = LiveGame::new(
            id,
            created_at,
            [kind(old(Side::White)), kind(old(Side::Black))],
            self.clock_settings,
            self.variant(),
            Some(&fen),
        )?;
        for side in Side::BOTH {
            if let (Some(token), GameSeat::Human { player, .. }) =
                (&tokens[side.other().index()], old(side))
            {
                new.take_seat(side, token.clone(), player.clone(), now)?;
            }
        }
        if self.visibility == Visibility::Private {
            new.make_private(None);
        }
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{human_game, seated};
    use super::*;
    use crate::protocol::{ClockSettings, Status};
    use crate::token::mint;

    #[tokio::test(start_paused = true)]
    async fn rematch_offer_accept_swaps_the_seats() {
        let now = Instant::now();
        let clock = Some(ClockSettings {
            initial_ms: 120_000,
            increment_ms: 1_000,
        });
        let mut live = seated(human_game(clock, None));
        live.make_private(None);
        assert!(matches!(
            live.offer_rematch(Side::White, Uuid::new_v4(), mint().unwrap().hash, 0, now),
            Err(GameError::NoRematch(_))
        ));
        live.resign(Side::White, now).unwrap();
        let id = Uuid::new_v4();
        let white_next = mint().unwrap().hash;
        let black_next = mint().unwrap().hash;
        assert!(matches!(
            live.offer_rematch(Side::White, id, white_next.clone(), 0, now),
            Ok(RematchStep::Offered)
        ));
        assert_eq!(live.state(now).rematch_offer, Some(Side::White));
        assert!(matches!(
            live.offer_rematch(Side::White, id, white_next.clone(), 0, now),
            Ok(RematchStep::Unchanged)
        ));
        let mut declined = live.clone();
        assert!(declined
            .drop_rematch_offer(Side::Black, Answer::Decline)
            .unwrap());
        assert_eq!(declined.rematch(), None);
        let Ok(RematchStep::Agreed(new)) =
            live.offer_rematch(Side::Black, id, black_next.clone(), 1, now)
        else {
            panic!("the rematch is agreed");
        };
        let state = live.state(now);
        assert_eq!(state.rematch.as_deref(), Some(id.to_string().as_str()));
        assert_eq!(state.rematch_offer, None);
        assert!(!live
            .drop_rematch_offer(Side::White, Answer::Withdraw)
            .unwrap());
        assert_eq!(new.id, id);
        assert_eq!(new.side_of(&white_next), Some(Side::Black));
        assert_eq!(new.side_of(&black_next), Some(Side::White));
        assert_eq!(new.status(), Status::Active);
        assert_eq!(new.clock_settings(), clock);
        assert_eq!(new.visibility(), Visibility::Private);
    }
}

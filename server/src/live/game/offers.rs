//! Offers between the players: draw offers and their answers, and what every
//! offer (draw, takeback, rematch) became, told to its maker once.

use tokio::time::Instant;

use rookery_engine::game::Termination;

use super::{Ending, GameError, LiveGame};
use crate::protocol::{OfferAnswer, OfferKind, OfferOutcome, Side};

/// What a player does with a standing offer they do not accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The opponent's offer: refuse it.
    Decline,
    /// One's own offer: take it back.
    Withdraw,
}

impl Answer {
    pub(super) fn outcome(self) -> OfferOutcome {
        match self {
            Answer::Decline => OfferOutcome::Declined,
            Answer::Withdraw => OfferOutcome::Withdrawn,
        }
    }
}

/// Clears `offer` if `side` may drop it with `answer`; whether it did.
pub(super) fn drop_offer(offer: &mut Option<Side>, side: Side, answer: Answer) -> bool {
    let allowed = match answer {
        Answer::Decline => side.other(),
        Answer::Withdraw => side,
    };
    if *offer == Some(allowed) {
        *offer = None;
        true
    } else {
        false
    }
}

impl LiveGame {
    /// What became of an offer in the last change, if anything.
    pub fn offer_answer(&self) -> Option<OfferAnswer> {
        self.offer_answer
    }

    /// Forgets the last change's offer answer (once its state is sent).
    pub fn clear_offer_answer(&mut self) {
        self.offer_answer = None;
    }

    pub(super) fn answer_offer(&mut self, offer: OfferKind, by: Side, answer: OfferOutcome) {
        self.offer_answer = Some(OfferAnswer { offer, by, answer });
    }

    pub fn draw_offer(&self) -> Option<Side> {
        self.draw_offer
    }

    /// Offers a draw, or accepts the opponent's standing offer. Offering
    /// again changes nothing (`Ok(false)`).
    pub fn draw(&mut self, side: Side, now: Instant) -> Result<bool, GameError> {
        self.ensure_playing()?;
        match self.draw_offer {
            Some(offerer) if offerer == side.other() => {
                self.finish(
                    Ending {
                        winner: None,
                        termination: Termination::Agreement,
                    },
                    now,
                );
                self.answer_offer(OfferKind::Draw, offerer, OfferOutcome::Accepted);
            }
            Some(_) => return Ok(false),
            None => self.draw_offer = Some(side),
        }
        Ok(true)
    }

    /// Declines the opponent's draw offer (`answer: Decline`) or withdraws
    /// one's own (`Withdraw`). `Ok(false)`: there was no such offer, nothing
    /// changed.
    pub fn drop_draw_offer(&mut self, side: Side, answer: Answer) -> Result<bool, GameError> {
        self.ensure_playing()?;
        let offerer = self.draw_offer;
        let dropped = drop_offer(&mut self.draw_offer, side, answer);
        if let (true, Some(offerer)) = (dropped, offerer) {
            self.answer_offer(OfferKind::Draw, offerer, answer.outcome());
        }
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{human_game, seated};
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn draw_offer_accept_and_decline_by_moving() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        live.draw(Side::White, now).unwrap();
        assert_eq!(live.draw_offer(), Some(Side::White));
        live.play(Side::White, "e2e4", now).unwrap();
        // White's own offer stands while black thinks...
        assert_eq!(live.draw_offer(), Some(Side::White));
        // ...and black declines it by moving.
        live.play(Side::Black, "e7e5", now).unwrap();
        assert_eq!(live.draw_offer(), None);
        live.draw(Side::Black, now).unwrap();
        live.draw(Side::Black, now).unwrap();
        assert!(!live.is_finished());
        live.draw(Side::White, now).unwrap();
        let state = live.state(now);
        assert_eq!(state.result.as_deref(), Some("1/2-1/2"));
        assert_eq!(state.termination.as_deref(), Some("agreement"));
        assert_eq!(state.draw_offer, None);
    }

    #[tokio::test(start_paused = true)]
    async fn every_offer_tells_its_maker_what_became_of_it() {
        let answer = |live: &LiveGame| live.offer_answer().map(|a| (a.offer, a.by, a.answer));
        let now = Instant::now();
        let mut live = seated(human_game(None, None));
        live.draw(Side::White, now).unwrap();
        assert_eq!(answer(&live), None);
        live.drop_draw_offer(Side::Black, Answer::Decline).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Declined))
        );
        live.clear_offer_answer();
        live.draw(Side::White, now).unwrap();
        live.drop_draw_offer(Side::White, Answer::Withdraw).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Withdrawn))
        );
        live.draw(Side::White, now).unwrap();
        live.play(Side::White, "e2e4", now).unwrap();
        live.play(Side::Black, "e7e5", now).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Declined)),
            "a move declines the opponent's offer"
        );
        live.takeback(Side::White, now).unwrap();
        live.clear_offer_answer();
        live.drop_takeback_offer(Side::Black, Answer::Decline)
            .unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Takeback, Side::White, OfferOutcome::Declined))
        );
        live.takeback(Side::White, now).unwrap();
        live.play(Side::White, "g1f3", now).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Takeback, Side::White, OfferOutcome::Expired))
        );
        live.draw(Side::White, now).unwrap();
        live.draw(Side::Black, now).unwrap();
        assert_eq!(
            answer(&live),
            Some((OfferKind::Draw, Side::White, OfferOutcome::Accepted))
        );
        let state = live.state(now);
        assert_eq!(
            state.offer_answer.map(|a| a.answer),
            Some(OfferOutcome::Accepted)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn offers_are_declined_and_withdrawn_only_when_standing() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        for answer in [Answer::Decline, Answer::Withdraw] {
            assert!(!live.drop_draw_offer(Side::White, answer).unwrap());
            assert!(!live.drop_takeback_offer(Side::White, answer).unwrap());
        }
        assert!(live.draw(Side::White, now).unwrap());
        assert!(!live.draw(Side::White, now).unwrap(), "offering twice");
        // White cannot decline its own offer, black cannot withdraw it.
        assert!(!live.drop_draw_offer(Side::White, Answer::Decline).unwrap());
        assert!(!live.drop_draw_offer(Side::Black, Answer::Withdraw).unwrap());
        assert!(live.drop_draw_offer(Side::Black, Answer::Decline).unwrap());
        assert_eq!(live.draw_offer(), None);
        live.draw(Side::Black, now).unwrap();
        assert!(live.drop_draw_offer(Side::Black, Answer::Withdraw).unwrap());
        assert_eq!(live.draw_offer(), None);
        assert!(!live.is_finished());
    }
}

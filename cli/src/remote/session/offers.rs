//! The standing offers of a game (draw, takeback, rematch), what the
//! player is told about each, and the messages that answer them; and the
//! snapshot of a state that tells whether the server has answered an
//! action.

use crate::remote::client::GameState;

/// What a state must differ in to answer an action: its moves, its status,
/// its offers or its rematch. (Other states, such as a spectator arriving,
/// are not answers.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Snapshot {
    moves: Vec<String>,
    status: String,
    offers: Offers,
    rematch: Option<String>,
}

impl Snapshot {
    pub(super) fn of(state: &GameState) -> Snapshot {
        Snapshot {
            moves: state.moves.clone(),
            status: state.status.clone(),
            offers: Offers::of(state),
            rematch: state.rematch.clone(),
        }
    }
}

/// The standing offers of a game: the side making each, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Offers {
    draw: Option<String>,
    takeback: Option<String>,
    rematch: Option<String>,
}

impl Offers {
    pub(super) fn of(state: &GameState) -> Offers {
        Offers {
            draw: state.draw_offer.clone(),
            takeback: state.takeback_offer.clone(),
            rematch: state.rematch_offer.clone(),
        }
    }
}

/// The kinds of offer, with what the player is told about each.
#[derive(Debug, Clone, Copy)]
pub(super) enum Offer {
    Draw,
    Takeback,
    Rematch,
}

impl Offer {
    pub(super) const ALL: [Offer; 3] = [Offer::Draw, Offer::Takeback, Offer::Rematch];

    pub(super) fn side(self, offers: &Offers) -> Option<&str> {
        match self {
            Offer::Draw => offers.draw.as_deref(),
            Offer::Takeback => offers.takeback.as_deref(),
            Offer::Rematch => offers.rematch.as_deref(),
        }
    }

    pub(super) fn noun(self) -> &'static str {
        match self {
            Offer::Draw => "draw offer",
            Offer::Takeback => "takeback request",
            Offer::Rematch => "rematch offer",
        }
    }

    /// `white offers a draw`, as a sentence's start.
    pub(super) fn made_by(self, side: &str) -> String {
        match self {
            Offer::Draw => format!("{side} offers a draw"),
            Offer::Takeback => format!("{side} asks to take back their last move"),
            Offer::Rematch => format!("{side} offers a rematch"),
        }
    }

    /// How the opponent accepts.
    pub(super) fn accept_word(self) -> &'static str {
        match self {
            Offer::Draw => "draw",
            Offer::Takeback => "takeback",
            Offer::Rematch => "rematch",
        }
    }

    /// The WebSocket message that declines or withdraws this offer.
    pub(super) fn answer_type(self, decline: bool) -> &'static str {
        match (self, decline) {
            (Offer::Draw, true) => "draw_decline",
            (Offer::Draw, false) => "draw_withdraw",
            (Offer::Takeback, true) => "takeback_decline",
            (Offer::Takeback, false) => "takeback_withdraw",
            (Offer::Rematch, true) => "rematch_decline",
            (Offer::Rematch, false) => "rematch_withdraw",
        }
    }
}

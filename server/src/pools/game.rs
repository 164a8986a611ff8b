//! A game between two people paired by the server (a pool's wave, an
//! arena's): an ordinary game with both seats taken, started at once.

use tokio::time::Instant;
use uuid::Uuid;

use crate::domain::{ClockSettings, PlayerRef, SeatKind, Side};
use crate::live::error::LiveError;
use crate::live::game::LiveGame;
use crate::store::now_ms;
use crate::token;

/// A paired game, not yet stored, and each seat's token (white, black):
/// the secret an anonymous player acts with (an account's seat follows
/// the account anyway).
pub struct PairedGame {
    pub live: LiveGame,
    pub tokens: [String; 2],
}

/// The game of `white` against `black` (`None`: an anonymous player),
/// rated if `rated` and the clock allows it, listed publicly.
pub fn paired_game(
    white: Option<PlayerRef>,
    black: Option<PlayerRef>,
    clock: ClockSettings,
    rated: bool,
) -> Result<PairedGame, LiveError> {
    let mut live = LiveGame::new(
        Uuid::new_v4(),
        now_ms(),
        [SeatKind::Human, SeatKind::Human],
        Some(clock),
        crate::domain::Variant::Standard,
        None,
    )?;
    let now = Instant::now();
    let mut tokens = [String::new(), String::new()];
    for (side, player) in [(Side::White, white), (Side::Black, black)] {
        let minted = token::mint().map_err(LiveError::internal)?;
        live.take_seat(side, minted.hash, player, now)?;
        tokens[side.index()] = minted.secret;
    }
    let rated = rated && live.is_rated();
    live.restore_terms(rated, live.visibility(), None);
    Ok(PairedGame { live, tokens })
}

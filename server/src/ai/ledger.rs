//! The AI v AI admission ledger: the caps on live AI v AI games.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};

use uuid::Uuid;

use crate::http::error::ApiError;

/// Live AI v AI games and the client (address) that created each: what
/// `--max-ai-games` and `--max-ai-games-per-client` count. An AI v AI game
/// costs a search thread for as long as it runs and nobody has to be there,
/// so without caps one client could queue the whole machine.
///
/// Entries leave when their game is seen finished (the creation path sweeps
/// before counting) or an operator stops it. Games still unfinished when the
/// server starts (a restart) are counted again from the database towards
/// the server's cap; their creator's address is not stored, so they count
/// towards no client's cap (the owner is `None`).
#[derive(Debug, Default)]
pub struct AiGameLedger {
    games: Mutex<HashMap<Uuid, Option<IpAddr>>>,
}

impl AiGameLedger {
    fn lock(&self) -> MutexGuard<'_, HashMap<Uuid, Option<IpAddr>>> {
        // One insert or remove at a time: a poisoned lock is still whole.
        self.games.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The games counted now.
    pub fn ids(&self) -> Vec<Uuid> {
        self.lock().keys().copied().collect()
    }

    pub fn forget(&self, id: Uuid) {
        self.lock().remove(&id);
    }

    /// Counts games found unfinished at start-up, whose creator is unknown.
    pub fn count_resumed(&self, ids: impl IntoIterator<Item = Uuid>) {
        let mut games = self.lock();
        for id in ids {
            games.entry(id).or_insert(None);
        }
    }

    /// Counts game `id` for `client`, unless a cap is reached: then 429
    /// `rate_limited` saying which.
    pub fn reserve(
        &self,
        id: Uuid,
        client: IpAddr,
        max_total: usize,
        max_per_client: usize,
    ) -> Result<(), ApiError> {
        let mut games = self.lock();
        if games.len() >= max_total {
            return Err(ApiError::Limited(format!(
                "the server already runs {} AI v AI games, its limit: try again when one ends",
                games.len()
            )));
        }
        let mine = games
            .values()
            .filter(|owner| **owner == Some(client))
            .count();
        if mine >= max_per_client {
            return Err(ApiError::Limited(format!(
                "you already have {mine} live AI v AI games, the limit per client: \
                 wait for one to end"
            )));
        }
        games.insert(id, Some(client));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_caps_games_in_total_and_per_client() {
        let ledger = AiGameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let ids: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
        ledger.reserve(ids[0], a, 3, 2).unwrap();
        ledger.reserve(ids[1], a, 3, 2).unwrap();
        let refused = ledger.reserve(ids[2], a, 3, 2).unwrap_err();
        assert_eq!(refused.code(), "rate_limited");
        assert!(refused.message().contains("per client"), "{refused}");
        ledger.reserve(ids[2], b, 3, 2).unwrap();
        let refused = ledger.reserve(ids[3], b, 3, 2).unwrap_err();
        assert!(refused.message().contains("server"), "{refused}");
        ledger.forget(ids[0]);
        ledger.reserve(ids[3], a, 3, 2).unwrap();
        assert_eq!(ledger.ids().len(), 3);
    }

    #[test]
    fn resumed_games_count_for_the_server_not_for_a_client() {
        let ledger = AiGameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let resumed = [Uuid::new_v4(), Uuid::new_v4()];
        ledger.count_resumed(resumed);
        ledger.count_resumed(resumed);
        assert_eq!(ledger.ids().len(), 2);
        // Per client 2: the resumed games are nobody's.
        ledger.reserve(Uuid::new_v4(), a, 3, 2).unwrap();
        let refused = ledger.reserve(Uuid::new_v4(), a, 3, 2).unwrap_err();
        assert!(refused.message().contains("server"), "{refused}");
        ledger.forget(resumed[0]);
        ledger.reserve(Uuid::new_v4(), a, 3, 2).unwrap();
    }
}

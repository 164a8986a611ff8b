-- Offers between players (issue 11): takebacks and rematches. A draw offer
-- already has its column (0001); its decline and withdrawal only clear it.

-- 'white' | 'black': the side asking to take back its last move; NULL when
-- nobody asks. Cleared by a move, an answer or the end of the game.
ALTER TABLE games ADD COLUMN takeback_offer TEXT
    CHECK (takeback_offer IN ('white', 'black'));

-- Takebacks granted in the game. The taken-back plies are deleted from
-- `moves` in the same transaction that writes this count, so the moves
-- table always holds exactly the game's current moves.
ALTER TABLE games ADD COLUMN takebacks INTEGER NOT NULL DEFAULT 0
    CHECK (takebacks >= 0);

-- A rematch of this finished game, offered or agreed. Its id is chosen when
-- it is offered (NULL: none offered, or the offer was declined/withdrawn).
ALTER TABLE games ADD COLUMN rematch_id TEXT;
-- 'white' | 'black': who offered the rematch (NULL exactly when rematch_id is).
ALTER TABLE games ADD COLUMN rematch_offer TEXT
    CHECK (rematch_offer IN ('white', 'black'));
-- hex SHA-256 of the offerer's seat token in the rematch game (the token is
-- derived from their seat token here and the new id; never stored).
ALTER TABLE games ADD COLUMN rematch_token_hash TEXT;
-- 1: both players agreed and the game rematch_id exists (it is inserted in
-- the same transaction that sets this).
ALTER TABLE games ADD COLUMN rematch_agreed INTEGER NOT NULL DEFAULT 0
    CHECK (rematch_agreed IN (0, 1));

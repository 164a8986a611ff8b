-- Seats and the scoreboard (issue 8): who may take a free seat, and whether a
-- game's result counts on the main scoreboard. Both are decided when the game
-- is created and never change afterwards.

-- 'open': the free seat goes to anyone who asks with the game id (the
-- original contract's join; such games are the lobby's open seeks).
-- 'private': taking the free seat needs the invite secret the creator got.
-- Every game stored before this migration was joinable by id: 'open'.
ALTER TABLE games ADD COLUMN visibility TEXT NOT NULL DEFAULT 'open'
    CHECK (visibility IN ('open', 'private'));

-- hex SHA-256 of a private game's invite secret (NULL for open games, and for
-- private games created without a free seat). Like tokens, never the secret.
ALTER TABLE games ADD COLUMN invite_hash TEXT;

-- 1: the result counts on the main scoreboard (standard start position, and
-- no clock or an initial time of at least 60 s); 0: a casual game, counted
-- only in the scoreboard's separate `casual` tally.
ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 1
    CHECK (rated IN (0, 1));

-- Games stored before this migration get the same rule as new ones.
UPDATE games SET rated = 0
WHERE initial_fen != 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
   OR clock_initial_ms < 60000;

-- The lobby's open seeks: waiting open games, newest first, without sorting
-- the whole table.
CREATE INDEX games_open_seeks ON games (created_at DESC)
    WHERE status = 'waiting' AND visibility = 'open';

-- Ratings, player pages and records (issue 11).
--
-- Glicko-2 ratings for registered players, updated in the same transaction
-- that stores a game's result, and only when that transaction is the one in
-- which the game becomes finished: a result is counted exactly once, however
-- often the finished game is written again or the server restarts. Which
-- games are rated: a rated game (0003's `rated`) between two registered
-- players. Games against the computer and games with an anonymous seat do
-- not change a rating (see docs/API.md, "Ratings, player pages and records").

-- Every player starts at Glicko-2's defaults (1500, RD 350, volatility 0.06).
ALTER TABLE players ADD COLUMN rating REAL NOT NULL DEFAULT 1500.0;            -- Glicko-2 rating (Glicko scale)
ALTER TABLE players ADD COLUMN rating_deviation REAL NOT NULL DEFAULT 350.0;   -- RD: how uncertain the rating is
ALTER TABLE players ADD COLUMN rating_volatility REAL NOT NULL DEFAULT 0.06;   -- sigma: how erratic the player's results are
-- Consecutive wins in games that count on the scoreboard (rated games,
-- against anyone); a draw or a loss sets the current streak back to 0.
ALTER TABLE players ADD COLUMN win_streak INTEGER NOT NULL DEFAULT 0;          -- the current streak
ALTER TABLE players ADD COLUMN best_win_streak INTEGER NOT NULL DEFAULT 0;     -- the longest streak so far

-- One row per player per rated game: the rating before and after it.
CREATE TABLE rating_history (
    game_id           TEXT    NOT NULL REFERENCES games(id),    -- the rated game
    player_id         TEXT    NOT NULL REFERENCES players(id),  -- whose rating changed
    opponent_id       TEXT    NOT NULL REFERENCES players(id),  -- who they played
    score             REAL    NOT NULL CHECK (score IN (0.0, 0.5, 1.0)),  -- the player's points: 1 win, 0.5 draw, 0 loss
    rating_before     REAL    NOT NULL,                         -- rating, RD and volatility before the game
    deviation_before  REAL    NOT NULL,
    volatility_before REAL    NOT NULL,
    rating_after      REAL    NOT NULL,                         -- and after it
    deviation_after   REAL    NOT NULL,
    volatility_after  REAL    NOT NULL,
    rated_at          INTEGER NOT NULL,                         -- when the result was stored, ms since the Unix epoch
    PRIMARY KEY (game_id, player_id)
) WITHOUT ROWID;
-- A player's history in order (the player page's graph).
CREATE INDEX rating_history_player ON rating_history (player_id, rated_at);

-- The records of the scoreboard page, kept up to date by the transaction that
-- finishes a game: a new result that beats a record replaces it (a tie keeps
-- the older holder). `level` is the AI level of the per-level records, 0 for
-- the others, so (record, level) names one record.
CREATE TABLE records (
    record      TEXT    NOT NULL CHECK (record IN
                    ('fastest_checkmate', 'fastest_checkmate_vs_ai', 'longest_game',
                     'biggest_upset', 'longest_win_streak')),
    level       INTEGER NOT NULL DEFAULT 0,                     -- AI level 1-8 for fastest_checkmate_vs_ai, else 0
    value       REAL    NOT NULL,                               -- moves, rating points or wins (see docs/API.md)
    player_id   TEXT    NOT NULL REFERENCES players(id),        -- the holder
    game_id     TEXT    NOT NULL REFERENCES games(id),          -- the game that set it
    set_at      INTEGER NOT NULL,                               -- when it was set, ms since the Unix epoch
    PRIMARY KEY (record, level)
) WITHOUT ROWID;

-- A player's games, newest first (the player page, `GET /api/games?player=`):
-- one index per seat, read backwards from the page's cursor (created_at, id)
-- and merged, so a page never sorts or scans the games table.
CREATE INDEX games_white_player ON games (white_player_id, created_at, id)
    WHERE white_player_id IS NOT NULL;
CREATE INDEX games_black_player ON games (black_player_id, created_at, id)
    WHERE black_player_id IS NOT NULL;

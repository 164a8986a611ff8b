-- Rookery's second schema step: enough of the live state in the games row
-- that a list is one query and a restart charges the right clock, plus the
-- indexes the lists, the expiry sweep and the scoreboard read through.
--
-- Columns added to `games` are NULL for games written before this migration;
-- the server then falls back to replaying the moves (on a blocking thread).

-- The current position, so a list or a game read from the database needs no
-- replay of the moves.
ALTER TABLE games ADD COLUMN fen TEXT;                  -- FEN of the current position; NULL: written before 0002 (replay the moves)
-- The clock as it was when the current turn began. With turn_started_at this
-- is the whole clock: remaining(running side) = *_ms - (now - turn_started_at).
ALTER TABLE games ADD COLUMN white_ms INTEGER;          -- white's remaining time when the current turn began; NULL without a clock
ALTER TABLE games ADD COLUMN black_ms INTEGER;          -- black's remaining time when the current turn began; NULL without a clock
ALTER TABLE games ADD COLUMN turn_started_at INTEGER;   -- when the side to move's clock started running; NULL while no clock runs (waiting, finished, untimed)

-- When the server was last known to be running. The writer stamps it with
-- every batch it commits and, when idle, every two seconds. After a crash
-- the side to move is charged its thinking time up to this instant, not the
-- time the server was down.
CREATE TABLE heartbeat (
    id        INTEGER PRIMARY KEY CHECK (id = 1),   -- a single row
    alive_at  INTEGER NOT NULL                      -- last moment the server was running, ms since the Unix epoch
);
INSERT INTO heartbeat (id, alive_at) VALUES (1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));

-- The lists of games: newest first. Each index is ascending and read
-- backwards, which yields `created_at DESC, rowid DESC` (games created in the
-- same millisecond newest first) with no sort. 0001's descending index gave
-- `rowid ASC` on ties and is replaced.
DROP INDEX games_status_created;
CREATE INDEX games_status_created ON games (status, created_at);   -- one status
CREATE INDEX games_created ON games (created_at);                  -- every game
CREATE INDEX games_unfinished_created ON games (created_at) WHERE status != 'finished';  -- waiting or active
-- The expiry sweep: unfinished games by their last change.
CREATE INDEX games_unfinished_updated ON games (status, updated_at) WHERE status != 'finished';

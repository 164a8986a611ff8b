-- Post-game analysis (issue 11): the engine's evaluation of every position
-- of a finished game, its best move there, and what each played move cost.
-- A job is searched ply by ply on the AI's threads at the lowest priority;
-- each position's result is stored as it is found, so a restart resumes the
-- job where it stopped.

-- One analysis job per game.
CREATE TABLE analyses (
    game_id        TEXT    PRIMARY KEY NOT NULL REFERENCES games(id),
    status         TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    nodes_per_ply  INTEGER NOT NULL,   -- the search budget of every position (nodes): results depend on it alone
    positions      INTEGER NOT NULL,   -- positions to evaluate: the game's moves + 1
    acpl_white     INTEGER,            -- white's average centipawn loss, rounded; NULL until done (or white made no move)
    acpl_black     INTEGER,            -- as acpl_white, for black
    error          TEXT,               -- why a failed job failed (internal detail, not shown to clients)
    requested_at   INTEGER NOT NULL,   -- when the job was first asked for, ms since the Unix epoch
    finished_at    INTEGER             -- when it ended (done or failed)
);

-- Jobs to resume after a restart.
CREATE INDEX analyses_unfinished ON analyses (requested_at) WHERE status IN ('queued', 'running');

-- One row per evaluated position: position `ply` is the one after `ply`
-- moves (0: the start position). The move columns describe move `ply + 1`
-- of the game, the one played from this position; they are filled when the
-- next position has been evaluated (NULL for the last position).
CREATE TABLE analysis_positions (
    game_id     TEXT    NOT NULL REFERENCES analyses(game_id),
    ply         INTEGER NOT NULL,       -- positions after this many moves
    cp          INTEGER,                -- evaluation in centipawns from White's point of view; NULL when mate is
    mate        INTEGER,                -- mate in N moves from White's point of view (negative: Black mates); NULL otherwise
    best_uci    TEXT,                   -- the engine's best move here (UCI); NULL when the game is over here
    best_san    TEXT,                   -- the same move in SAN
    loss        INTEGER,                -- centipawns the played move lost against the best (capped evaluations, >= 0)
    judgement   TEXT CHECK (judgement IN ('inaccuracy', 'mistake', 'blunder')),  -- NULL: a good move (or not yet judged)
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;

-- Rookery's first schema: players, games and their moves.
--
-- Times are INTEGER milliseconds since the Unix epoch (UTC); clock values are
-- INTEGER milliseconds. Secrets are never stored: only the hex SHA-256 of a
-- token, so a leaked database does not let anyone move or sign in.

-- A registered player: a name on the scoreboard and a token that attributes
-- seats to them.
CREATE TABLE players (
    id          TEXT    PRIMARY KEY NOT NULL,   -- UUID, as text
    name        TEXT    NOT NULL,               -- as chosen (1-20 of A-Z a-z 0-9 _ -)
    name_key    TEXT    NOT NULL UNIQUE,        -- lower-cased name: uniqueness ignores case
    token_hash  TEXT    NOT NULL UNIQUE,        -- hex SHA-256 of the player token
    created_at  INTEGER NOT NULL                -- when the player registered
);

-- One game, live or finished. Each colour has a seat: a human (anonymous or a
-- registered player) or the computer at a level.
CREATE TABLE games (
    id                  TEXT    PRIMARY KEY NOT NULL,  -- UUID, as text
    white_kind          TEXT    NOT NULL CHECK (white_kind IN ('human', 'ai')),
    white_level         INTEGER,                       -- AI level 1-8, NULL for a human seat
    white_player_id     TEXT    REFERENCES players(id),-- registered player holding the seat, if any
    white_token_hash    TEXT    UNIQUE,                -- hex SHA-256 of the seat token; NULL while the seat is free (or AI)
    black_kind          TEXT    NOT NULL CHECK (black_kind IN ('human', 'ai')),
    black_level         INTEGER,                       -- as white_level
    black_player_id     TEXT    REFERENCES players(id),-- as white_player_id
    black_token_hash    TEXT    UNIQUE,                -- as white_token_hash
    initial_fen         TEXT    NOT NULL,              -- the start position (standard or custom)
    clock_initial_ms    INTEGER,                       -- NULL: the game has no clock
    clock_increment_ms  INTEGER,                       -- NULL exactly when clock_initial_ms is
    status              TEXT    NOT NULL CHECK (status IN ('waiting', 'active', 'finished')),
    result              TEXT,                          -- '1-0' | '0-1' | '1/2-1/2'; NULL until finished (and for aborted games)
    termination         TEXT,                          -- API termination name; NULL until finished
    draw_offer          TEXT,                          -- 'white' | 'black': the standing draw offer, if any
    created_at          INTEGER NOT NULL,              -- when the game was created
    updated_at          INTEGER NOT NULL,              -- last change (move, join, end)
    finished_at         INTEGER                        -- when the game ended
);

-- The lists of games: newest first, filtered by status.
CREATE INDEX games_status_created ON games (status, created_at DESC);

-- The moves of a game, one row per half-move, in order. A move is inserted
-- (and committed) before the server applies, acknowledges or broadcasts it.
CREATE TABLE moves (
    game_id     TEXT    NOT NULL REFERENCES games(id),
    ply         INTEGER NOT NULL,       -- 0 for the first move from the initial position
    uci         TEXT    NOT NULL,       -- the move in UCI notation (e2e4, e7e8q, e1g1)
    san         TEXT    NOT NULL,       -- the same move in SAN, as played (e4, e8=Q+, O-O)
    white_ms    INTEGER,                -- white's remaining clock after the move (increment added); NULL without a clock
    black_ms    INTEGER,                -- black's remaining clock after the move; NULL without a clock
    played_at   INTEGER NOT NULL,       -- when the server accepted the move
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;

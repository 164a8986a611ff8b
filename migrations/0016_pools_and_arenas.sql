-- Quick pairing and Arena tournaments (issue 38).
--
-- Pools (quick pairing by time control) keep their waiting players in
-- memory: a pool's games are ordinary games. What is stored here is the
-- arenas: each tournament, its players, and its pairings with their
-- results, so a restart (or another node taking over the director) loses
-- nothing.

-- Berserk in arena games (lichess's rule): 1 white, 2 black went berserk
-- (halved clock, no increment). 0 for every other game.
ALTER TABLE games ADD COLUMN berserk INTEGER NOT NULL DEFAULT 0;

-- An Arena tournament.
CREATE TABLE arenas (
    id                 TEXT    PRIMARY KEY NOT NULL,             -- 8 letters and digits, as lichess's
    name               TEXT    NOT NULL,                         -- 2-30 characters, as its creator wrote it
    created_by         TEXT    NOT NULL REFERENCES players(id),  -- the account that created it
    clock_initial_ms   INTEGER NOT NULL,                         -- the games' clock
    clock_increment_ms INTEGER NOT NULL,
    starts_at          INTEGER NOT NULL,                         -- ms since the epoch
    finishes_at        INTEGER NOT NULL,                         -- starts_at plus the duration; no pairing after it
    rated              INTEGER NOT NULL CHECK (rated IN (0, 1)),
    berserkable        INTEGER NOT NULL CHECK (berserkable IN (0, 1)),
    streakable         INTEGER NOT NULL CHECK (streakable IN (0, 1)),  -- the fire (double points) applies
    entry_code_hash    TEXT,                                     -- hex SHA-256 of the entry code; NULL: open to all
    min_rating         INTEGER,                                  -- to join: at least this rating (NULL: any)
    min_rated_games    INTEGER,                                  -- to join: at least this many rated games (NULL: any)
    bots_allowed       INTEGER NOT NULL CHECK (bots_allowed IN (0, 1)),
    status             TEXT    NOT NULL CHECK (status IN ('created', 'started', 'finished')),
    created_at         INTEGER NOT NULL,
    director           TEXT,                                     -- the node directing it (its lease), NULL: none yet
    director_until     INTEGER NOT NULL DEFAULT 0                -- the lease runs until then (ms since the epoch)
);
CREATE INDEX arenas_status ON arenas (status, starts_at);

-- A player of an arena, from their first join on (a withdrawn player
-- keeps their row and their points; joining again re-activates it).
CREATE TABLE arena_players (
    arena_id   TEXT    NOT NULL REFERENCES arenas(id),
    player_id  TEXT    NOT NULL REFERENCES players(id),
    joined_at  INTEGER NOT NULL,                                 -- the first join
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),        -- 1: to be paired; 0: paused or withdrawn
    PRIMARY KEY (arena_id, player_id)
);

-- A game of an arena. Its result is copied here once the game ends
-- (settled), so the standings read this table alone.
CREATE TABLE arena_pairings (
    game_id      TEXT    PRIMARY KEY NOT NULL,                   -- the game (no foreign key: the retention sweep may delete aborted games)
    arena_id     TEXT    NOT NULL REFERENCES arenas(id),
    white_id     TEXT    NOT NULL REFERENCES players(id),
    black_id     TEXT    NOT NULL REFERENCES players(id),
    white_rating INTEGER NOT NULL,                               -- ratings when paired (performance ratings)
    black_rating INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,                               -- when paired (the order of each player's games)
    settled      INTEGER NOT NULL DEFAULT 0 CHECK (settled IN (0, 1)),  -- 1: the game is over and its result below
    winner       TEXT    CHECK (winner IN ('white', 'black')),   -- NULL: a draw, or aborted
    aborted      INTEGER NOT NULL DEFAULT 0 CHECK (aborted IN (0, 1)),  -- aborted (nobody scores)
    plies        INTEGER NOT NULL DEFAULT 0,                     -- half-moves played
    berserk      INTEGER NOT NULL DEFAULT 0                      -- as games.berserk
);
CREATE INDEX arena_pairings_arena ON arena_pairings (arena_id, settled, created_at);

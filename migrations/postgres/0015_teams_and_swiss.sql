-- PostgreSQL edition of ../0015_teams_and_swiss.sql (which documents each
-- column). Flags are BOOLEANs here (0/1 in SQLite).

CREATE TABLE teams (
    id              TEXT    PRIMARY KEY NOT NULL,             -- the name as a slug (a-z 0-9 -), as lichess's team ids
    name            TEXT    NOT NULL,                         -- as chosen (2-60 characters)
    description     TEXT    NOT NULL,                         -- free text, at most 4000 characters
    open            BOOLEAN NOT NULL,  -- 1: anyone joins at once; 0: by request, a leader accepts
    password_hash   TEXT,                                     -- hex SHA-256 of the entry password; NULL: none
    created_by      TEXT    NOT NULL REFERENCES players(id),  -- the founder (a leader from the start)
    created_at      BIGINT NOT NULL
);

CREATE TABLE team_members (
    team_id         TEXT    NOT NULL REFERENCES teams(id),
    player_id       TEXT    NOT NULL REFERENCES players(id),
    leader          BOOLEAN NOT NULL,  -- 1: may accept, refuse, kick, appoint, create tournaments
    joined_at       BIGINT NOT NULL,
    PRIMARY KEY (team_id, player_id)
);
CREATE INDEX team_members_player ON team_members (player_id);

CREATE TABLE team_requests (
    team_id         TEXT    NOT NULL REFERENCES teams(id),
    player_id       TEXT    NOT NULL REFERENCES players(id),
    message         TEXT    NOT NULL,                            -- what the asker wrote to the leaders
    declined        BOOLEAN NOT NULL, -- 1: a leader refused it (kept, as lichess lists declined requests)
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (team_id, player_id)
);

CREATE TABLE swiss (
    id                  TEXT    PRIMARY KEY NOT NULL,              -- 8 letters and digits, as lichess's
    team_id             TEXT    NOT NULL REFERENCES teams(id),
    name                TEXT    NOT NULL,                          -- also the games' PGN [Event]
    description         TEXT    NOT NULL,
    created_by          TEXT    NOT NULL REFERENCES players(id),   -- the leader who created it
    clock_initial_ms    BIGINT NOT NULL,
    clock_increment_ms  BIGINT NOT NULL,
    rounds_planned      BIGINT NOT NULL,                          -- the number of rounds announced
    round_interval_ms   BIGINT,                                   -- pause between rounds; NULL: a leader starts each round by hand
    rated               BOOLEAN NOT NULL,
    min_rating          BIGINT,                                   -- entry condition: rating at least this; NULL: none
    min_rated_games     BIGINT,                                   -- entry condition: at least this many rated games; NULL: none
    bye_points          BIGINT NOT NULL CHECK (bye_points IN (0, 1, 2)),  -- a requested bye's score, in half points
    starts_at           BIGINT NOT NULL,                          -- when round 1 is paired (a leader may bring it forward)
    status              TEXT    NOT NULL CHECK (status IN ('created', 'started', 'finished')),
    round               BIGINT NOT NULL,                          -- rounds paired so far (the current one included)
    next_round_at       BIGINT,                                   -- when the next round is paired; NULL: by hand, during a round, or finished
    director            TEXT,                                      -- in a cluster: the node directing it; NULL: none (or one node)
    director_epoch      BIGINT NOT NULL,                          -- fencing epoch of the director's lease, incremented by each take
    director_expires_at BIGINT NOT NULL,                          -- the lease runs until then (ms since the Unix epoch)
    created_at          BIGINT NOT NULL
);
CREATE INDEX swiss_team ON swiss (team_id, created_at);
CREATE INDEX swiss_status ON swiss (status);

CREATE TABLE swiss_players (
    swiss_id        TEXT    NOT NULL REFERENCES swiss(id),
    player_id       TEXT    NOT NULL REFERENCES players(id),
    rating          BIGINT NOT NULL,                             -- the rating the initial ranking uses (at joining)
    pairing_number  BIGINT,                                      -- the TPN, given when first paired (round 1: by rating); NULL before
    withdrawn       BOOLEAN NOT NULL, -- 1: not paired in later rounds
    absent_next     BOOLEAN NOT NULL, -- 1: asked for a bye in the next round
    joined_at       BIGINT NOT NULL,
    PRIMARY KEY (swiss_id, player_id)
);
CREATE INDEX swiss_players_player ON swiss_players (player_id);

CREATE TABLE swiss_pairings (
    swiss_id        TEXT    NOT NULL REFERENCES swiss(id),
    round           BIGINT NOT NULL,                             -- 1 for the first
    board           BIGINT NOT NULL,                             -- 1 for the first board; byes after the games
    white_id        TEXT    NOT NULL REFERENCES players(id),      -- white, or the player with the bye
    black_id        TEXT    REFERENCES players(id),               -- NULL for a bye
    game_id         TEXT,                                         -- the game of a pairing (no reference: retention may delete old games)
    bye             TEXT    CHECK (bye IN ('pab', 'half', 'full', 'zero')),  -- a bye's kind: pairing-allocated, or requested with its score
    result          TEXT    CHECK (result IN ('1-0', '0-1', '1/2-1/2', '+-', '-+', '--')),  -- NULL while the game is played; forfeits as in TRF
    PRIMARY KEY (swiss_id, round, board)
);
CREATE INDEX swiss_pairings_game ON swiss_pairings (game_id);

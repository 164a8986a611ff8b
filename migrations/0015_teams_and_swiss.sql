-- Teams (clubs) and their Swiss tournaments (issue 39). A Swiss belongs
-- to a team; its rounds are paired by the rookery-swiss crate (the FIDE
-- Dutch system) and played as ordinary games. Everything a director needs
-- to go on after a restart is here: the tournament, its players with their
-- pairing numbers, and every round's pairings with their results.

-- A team: a club of accounts, led by its leaders.
CREATE TABLE teams (
    id              TEXT    PRIMARY KEY NOT NULL,             -- the name as a slug (a-z 0-9 -), as lichess's team ids
    name            TEXT    NOT NULL,                         -- as chosen (2-60 characters)
    description     TEXT    NOT NULL,                         -- free text, at most 4000 characters
    open            INTEGER NOT NULL CHECK (open IN (0, 1)),  -- 1: anyone joins at once; 0: by request, a leader accepts
    password_hash   TEXT,                                     -- hex SHA-256 of the entry password; NULL: none
    created_by      TEXT    NOT NULL REFERENCES players(id),  -- the founder (a leader from the start)
    created_at      INTEGER NOT NULL
);

-- Who belongs to a team, and who leads it.
CREATE TABLE team_members (
    team_id         TEXT    NOT NULL REFERENCES teams(id),
    player_id       TEXT    NOT NULL REFERENCES players(id),
    leader          INTEGER NOT NULL CHECK (leader IN (0, 1)),  -- 1: may accept, refuse, kick, appoint, create tournaments
    joined_at       INTEGER NOT NULL,
    PRIMARY KEY (team_id, player_id)
);
CREATE INDEX team_members_player ON team_members (player_id);

-- Requests to join a team that is not open.
CREATE TABLE team_requests (
    team_id         TEXT    NOT NULL REFERENCES teams(id),
    player_id       TEXT    NOT NULL REFERENCES players(id),
    message         TEXT    NOT NULL,                            -- what the asker wrote to the leaders
    declined        INTEGER NOT NULL CHECK (declined IN (0, 1)), -- 1: a leader refused it (kept, as lichess lists declined requests)
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (team_id, player_id)
);

-- A Swiss tournament of a team.
CREATE TABLE swiss (
    id                  TEXT    PRIMARY KEY NOT NULL,              -- 8 letters and digits, as lichess's
    team_id             TEXT    NOT NULL REFERENCES teams(id),
    name                TEXT    NOT NULL,                          -- also the games' PGN [Event]
    description         TEXT    NOT NULL,
    created_by          TEXT    NOT NULL REFERENCES players(id),   -- the leader who created it
    clock_initial_ms    INTEGER NOT NULL,
    clock_increment_ms  INTEGER NOT NULL,
    rounds_planned      INTEGER NOT NULL,                          -- the number of rounds announced
    round_interval_ms   INTEGER,                                   -- pause between rounds; NULL: a leader starts each round by hand
    rated               INTEGER NOT NULL CHECK (rated IN (0, 1)),
    min_rating          INTEGER,                                   -- entry condition: rating at least this; NULL: none
    min_rated_games     INTEGER,                                   -- entry condition: at least this many rated games; NULL: none
    bye_points          INTEGER NOT NULL CHECK (bye_points IN (0, 1, 2)),  -- a requested bye's score, in half points
    starts_at           INTEGER NOT NULL,                          -- when round 1 is paired (a leader may bring it forward)
    status              TEXT    NOT NULL CHECK (status IN ('created', 'started', 'finished')),
    round               INTEGER NOT NULL,                          -- rounds paired so far (the current one included)
    next_round_at       INTEGER,                                   -- when the next round is paired; NULL: by hand, during a round, or finished
    director            TEXT,                                      -- in a cluster: the node directing it; NULL: none (or one node)
    director_epoch      INTEGER NOT NULL,                          -- fencing epoch of the director's lease, incremented by each take
    director_expires_at INTEGER NOT NULL,                          -- the lease runs until then (ms since the Unix epoch)
    created_at          INTEGER NOT NULL
);
CREATE INDEX swiss_team ON swiss (team_id, created_at);
CREATE INDEX swiss_status ON swiss (status);

-- The entrants of a Swiss.
CREATE TABLE swiss_players (
    swiss_id        TEXT    NOT NULL REFERENCES swiss(id),
    player_id       TEXT    NOT NULL REFERENCES players(id),
    rating          INTEGER NOT NULL,                             -- the rating the initial ranking uses (at joining)
    pairing_number  INTEGER,                                      -- the TPN, given when first paired (round 1: by rating); NULL before
    withdrawn       INTEGER NOT NULL CHECK (withdrawn IN (0, 1)), -- 1: not paired in later rounds
    absent_next     INTEGER NOT NULL CHECK (absent_next IN (0, 1)), -- 1: asked for a bye in the next round
    joined_at       INTEGER NOT NULL,
    PRIMARY KEY (swiss_id, player_id)
);
CREATE INDEX swiss_players_player ON swiss_players (player_id);

-- Each round's pairings: a game (white and black) or a bye (black NULL).
CREATE TABLE swiss_pairings (
    swiss_id        TEXT    NOT NULL REFERENCES swiss(id),
    round           INTEGER NOT NULL,                             -- 1 for the first
    board           INTEGER NOT NULL,                             -- 1 for the first board; byes after the games
    white_id        TEXT    NOT NULL REFERENCES players(id),      -- white, or the player with the bye
    black_id        TEXT    REFERENCES players(id),               -- NULL for a bye
    game_id         TEXT,                                         -- the game of a pairing (no reference: retention may delete old games)
    bye             TEXT    CHECK (bye IN ('pab', 'half', 'full', 'zero')),  -- a bye's kind: pairing-allocated, or requested with its score
    result          TEXT    CHECK (result IN ('1-0', '0-1', '1/2-1/2', '+-', '-+', '--')),  -- NULL while the game is played; forfeits as in TRF
    PRIMARY KEY (swiss_id, round, board)
);
CREATE INDEX swiss_pairings_game ON swiss_pairings (game_id);

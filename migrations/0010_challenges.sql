-- Challenges by name (issue 21; lichess's challenge API, issue 24): one
-- player asks another for a game with given terms; accepted, it becomes a
-- game with both seats taken.
CREATE TABLE challenges (
    id              TEXT    PRIMARY KEY NOT NULL,             -- 8 letters and digits, as lichess's
    challenger_id   TEXT    NOT NULL REFERENCES players(id),  -- who asks
    dest_id         TEXT    NOT NULL REFERENCES players(id),  -- who is asked
    color           TEXT    NOT NULL CHECK (color IN ('white', 'black', 'random')),  -- the challenger's wish
    final_color     TEXT    NOT NULL CHECK (final_color IN ('white', 'black')),     -- the challenger's colour, drawn at creation
    clock_initial_ms   INTEGER,                               -- NULL: untimed
    clock_increment_ms INTEGER,
    rated           INTEGER NOT NULL CHECK (rated IN (0, 1)), -- asked for a rated game
    status          TEXT    NOT NULL CHECK (status IN ('created', 'accepted', 'declined', 'canceled', 'expired')),
    decline_reason  TEXT,                                     -- lichess's reason key, when declined
    game_id         TEXT,                                     -- the game, once accepted
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL                          -- unanswered by then: expired
);
CREATE INDEX challenges_dest ON challenges (dest_id, status);
CREATE INDEX challenges_challenger ON challenges (challenger_id, status);

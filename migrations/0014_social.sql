-- A community that keeps itself clean (issue 37): follows and blocks, who
-- may challenge whom, reports, moderators and what they did, notices told
-- to a person, chat timeouts, closed accounts.

-- Who may challenge this player: 'everyone', 'following' (only the people
-- they follow) or 'nobody'.
ALTER TABLE players ADD COLUMN challenge_policy TEXT NOT NULL DEFAULT 'everyone'
    CHECK (challenge_policy IN ('everyone', 'following', 'nobody'));
-- 1: a moderator (granted and revoked from the command line:
-- `rookery-server admin grant NAME moderator`).
ALTER TABLE players ADD COLUMN moderator INTEGER NOT NULL DEFAULT 0 CHECK (moderator IN (0, 1));
-- 1: marked as a cheater by a moderator (lichess's tosViolation): their
-- games count for no rating, and pools and tournaments leave them out.
ALTER TABLE players ADD COLUMN marked_cheater INTEGER NOT NULL DEFAULT 0 CHECK (marked_cheater IN (0, 1));
-- Until when (ms since the epoch) a moderator's timeout keeps the player
-- out of every chat; NULL: never timed out.
ALTER TABLE players ADD COLUMN chat_silenced_until INTEGER;
-- When the account was closed (by its owner or a moderator); NULL: open.
-- A closed account keeps its name and games, and nothing logs in as it.
ALTER TABLE players ADD COLUMN closed_at INTEGER;

-- One player's relation to another: at most one per ordered pair, as on
-- lichess (blocking someone ends following them).
CREATE TABLE relations (
    from_id     TEXT    NOT NULL REFERENCES players(id),  -- who follows or blocks
    to_id       TEXT    NOT NULL REFERENCES players(id),  -- whom
    kind        TEXT    NOT NULL CHECK (kind IN ('follow', 'block')),
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (from_id, to_id)
);
-- "Who blocks me", "who follows me": the reverse direction.
CREATE INDEX relations_to ON relations (to_id, kind);

-- A player reported to the moderators.
CREATE TABLE reports (
    id           TEXT    PRIMARY KEY NOT NULL,             -- UUID
    reporter_id  TEXT    NOT NULL REFERENCES players(id),  -- who reported
    suspect_id   TEXT    NOT NULL REFERENCES players(id),  -- whom
    reason       TEXT    NOT NULL CHECK (reason IN ('cheat', 'abuse', 'sandbag', 'other')),
    text         TEXT    NOT NULL,                         -- the reporter's words, 1-2000 characters
    game_id      TEXT,                                     -- the game it is about, if any (not a foreign key: games may be deleted by retention)
    created_at   INTEGER NOT NULL,
    closed_at    INTEGER,                                  -- NULL while open (in the moderators' queue)
    action_id    TEXT                                      -- the moderator action that closed it
);
CREATE INDEX reports_open ON reports (created_at) WHERE closed_at IS NULL;

-- The audit log: every moderator action and every role change.
CREATE TABLE mod_actions (
    id            TEXT    PRIMARY KEY NOT NULL,            -- UUID
    moderator_id  TEXT    REFERENCES players(id),          -- who acted; NULL: the operator, from the command line
    action        TEXT    NOT NULL,                        -- warn, timeout, cheater, uncheater, close, dismiss, grant, revoke
    target_id     TEXT    NOT NULL REFERENCES players(id), -- whom it was done to
    details       TEXT    NOT NULL,                        -- the warning's text, the timeout's minutes, the role
    report_id     TEXT,                                    -- the report it closed, if any
    created_at    INTEGER NOT NULL
);
CREATE INDEX mod_actions_time ON mod_actions (created_at);

-- Something a moderator told a person (a warning): shown on their next
-- page load and on their event stream until they dismiss it.
CREATE TABLE notices (
    id          TEXT    PRIMARY KEY NOT NULL,              -- UUID
    player_id   TEXT    NOT NULL REFERENCES players(id),   -- to whom
    text        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    seen_at     INTEGER                                    -- NULL until dismissed
);
CREATE INDEX notices_player ON notices (player_id, seen_at);

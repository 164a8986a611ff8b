-- PostgreSQL edition of ../0014_social.sql (which documents each column).
-- Flags are BOOLEANs and times BIGINTs here.
ALTER TABLE players ADD COLUMN challenge_policy TEXT NOT NULL DEFAULT 'everyone'
    CHECK (challenge_policy IN ('everyone', 'following', 'nobody'));
ALTER TABLE players ADD COLUMN moderator BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE players ADD COLUMN marked_cheater BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE players ADD COLUMN chat_silenced_until BIGINT;
ALTER TABLE players ADD COLUMN closed_at BIGINT;

CREATE TABLE relations (
    from_id     TEXT   NOT NULL REFERENCES players(id),
    to_id       TEXT   NOT NULL REFERENCES players(id),
    kind        TEXT   NOT NULL CHECK (kind IN ('follow', 'block')),
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (from_id, to_id)
);
CREATE INDEX relations_to ON relations (to_id, kind);

CREATE TABLE reports (
    id           TEXT   PRIMARY KEY NOT NULL,
    reporter_id  TEXT   NOT NULL REFERENCES players(id),
    suspect_id   TEXT   NOT NULL REFERENCES players(id),
    reason       TEXT   NOT NULL CHECK (reason IN ('cheat', 'abuse', 'sandbag', 'other')),
    text         TEXT   NOT NULL,
    game_id      TEXT,
    created_at   BIGINT NOT NULL,
    closed_at    BIGINT,
    action_id    TEXT
);
CREATE INDEX reports_open ON reports (created_at) WHERE closed_at IS NULL;

CREATE TABLE mod_actions (
    id            TEXT   PRIMARY KEY NOT NULL,
    moderator_id  TEXT   REFERENCES players(id),
    action        TEXT   NOT NULL,
    target_id     TEXT   NOT NULL REFERENCES players(id),
    details       TEXT   NOT NULL,
    report_id     TEXT,
    created_at    BIGINT NOT NULL
);
CREATE INDEX mod_actions_time ON mod_actions (created_at);

CREATE TABLE notices (
    id          TEXT   PRIMARY KEY NOT NULL,
    player_id   TEXT   NOT NULL REFERENCES players(id),
    text        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    seen_at     BIGINT
);
CREATE INDEX notices_player ON notices (player_id, seen_at);

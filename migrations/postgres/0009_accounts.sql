-- PostgreSQL edition of ../0009_accounts.sql (which documents each column).
ALTER TABLE players ADD COLUMN password_hash TEXT;

CREATE TABLE sessions (
    id            TEXT   PRIMARY KEY NOT NULL,
    player_id     TEXT   NOT NULL REFERENCES players(id),
    token_hash    TEXT   NOT NULL UNIQUE,
    device        TEXT   NOT NULL,
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL
);
CREATE INDEX sessions_player ON sessions (player_id);

CREATE TABLE api_tokens (
    id            TEXT   PRIMARY KEY NOT NULL,
    player_id     TEXT   NOT NULL REFERENCES players(id),
    token_hash    TEXT   NOT NULL UNIQUE,
    description   TEXT   NOT NULL,
    scopes        TEXT   NOT NULL,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT
);
CREATE INDEX api_tokens_player ON api_tokens (player_id);

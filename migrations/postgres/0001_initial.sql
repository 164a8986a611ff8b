-- Rookery's first schema, PostgreSQL edition: the same tables, columns and
-- meanings as ../0001_initial.sql (SQLite), which documents each column.
-- Differences: integers are BIGINT (sqlx reads them as i64, like SQLite's
-- INTEGER), and `games` has a `rowid` identity column standing for SQLite's
-- implicit rowid (the lists break ties of `created_at` by it).

CREATE TABLE players (
    id          TEXT   PRIMARY KEY NOT NULL,
    name        TEXT   NOT NULL,
    name_key    TEXT   NOT NULL UNIQUE,
    token_hash  TEXT   NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);

CREATE TABLE games (
    id                  TEXT   PRIMARY KEY NOT NULL,
    rowid               BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    white_kind          TEXT   NOT NULL CHECK (white_kind IN ('human', 'ai')),
    white_level         BIGINT,
    white_player_id     TEXT   REFERENCES players(id),
    white_token_hash    TEXT   UNIQUE,
    black_kind          TEXT   NOT NULL CHECK (black_kind IN ('human', 'ai')),
    black_level         BIGINT,
    black_player_id     TEXT   REFERENCES players(id),
    black_token_hash    TEXT   UNIQUE,
    initial_fen         TEXT   NOT NULL,
    clock_initial_ms    BIGINT,
    clock_increment_ms  BIGINT,
    status              TEXT   NOT NULL CHECK (status IN ('waiting', 'active', 'finished')),
    result              TEXT,
    termination         TEXT,
    draw_offer          TEXT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    finished_at         BIGINT
);

CREATE INDEX games_status_created ON games (status, created_at DESC);

CREATE TABLE moves (
    game_id     TEXT   NOT NULL REFERENCES games(id),
    ply         BIGINT NOT NULL,
    uci         TEXT   NOT NULL,
    san         TEXT   NOT NULL,
    white_ms    BIGINT,
    black_ms    BIGINT,
    played_at   BIGINT NOT NULL,
    PRIMARY KEY (game_id, ply)
);

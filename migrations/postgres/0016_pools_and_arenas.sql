-- PostgreSQL edition of ../0016_pools_and_arenas.sql (which documents each
-- column): integers as BIGINT, flags as BOOLEAN.
ALTER TABLE games ADD COLUMN berserk BIGINT NOT NULL DEFAULT 0;

CREATE TABLE arenas (
    id                 TEXT    PRIMARY KEY NOT NULL,
    name               TEXT    NOT NULL,
    created_by         TEXT    NOT NULL REFERENCES players(id),
    clock_initial_ms   BIGINT  NOT NULL,
    clock_increment_ms BIGINT  NOT NULL,
    starts_at          BIGINT  NOT NULL,
    finishes_at        BIGINT  NOT NULL,
    rated              BOOLEAN NOT NULL,
    berserkable        BOOLEAN NOT NULL,
    streakable         BOOLEAN NOT NULL,
    entry_code_hash    TEXT,
    min_rating         BIGINT,
    min_rated_games    BIGINT,
    bots_allowed       BOOLEAN NOT NULL,
    status             TEXT    NOT NULL CHECK (status IN ('created', 'started', 'finished')),
    created_at         BIGINT  NOT NULL,
    director           TEXT,
    director_until     BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX arenas_status ON arenas (status, starts_at);

CREATE TABLE arena_players (
    arena_id   TEXT    NOT NULL REFERENCES arenas(id),
    player_id  TEXT    NOT NULL REFERENCES players(id),
    joined_at  BIGINT  NOT NULL,
    active     BOOLEAN NOT NULL,
    PRIMARY KEY (arena_id, player_id)
);

CREATE TABLE arena_pairings (
    game_id      TEXT    PRIMARY KEY NOT NULL,
    arena_id     TEXT    NOT NULL REFERENCES arenas(id),
    white_id     TEXT    NOT NULL REFERENCES players(id),
    black_id     TEXT    NOT NULL REFERENCES players(id),
    white_rating BIGINT  NOT NULL,
    black_rating BIGINT  NOT NULL,
    created_at   BIGINT  NOT NULL,
    settled      BOOLEAN NOT NULL DEFAULT FALSE,
    winner       TEXT    CHECK (winner IN ('white', 'black')),
    aborted      BOOLEAN NOT NULL DEFAULT FALSE,
    plies        BIGINT  NOT NULL DEFAULT 0,
    berserk      BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX arena_pairings_arena ON arena_pairings (arena_id, settled, created_at);

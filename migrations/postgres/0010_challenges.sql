-- PostgreSQL edition of ../0010_challenges.sql (which documents each
-- column). `rated` is a BOOLEAN here (0/1 in SQLite).
CREATE TABLE challenges (
    id              TEXT    PRIMARY KEY NOT NULL,
    challenger_id   TEXT    NOT NULL REFERENCES players(id),
    dest_id         TEXT    NOT NULL REFERENCES players(id),
    color           TEXT    NOT NULL CHECK (color IN ('white', 'black', 'random')),
    final_color     TEXT    NOT NULL CHECK (final_color IN ('white', 'black')),
    clock_initial_ms   BIGINT,
    clock_increment_ms BIGINT,
    rated           BOOLEAN NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('created', 'accepted', 'declined', 'canceled', 'expired')),
    decline_reason  TEXT,
    game_id         TEXT,
    created_at      BIGINT  NOT NULL,
    expires_at      BIGINT  NOT NULL
);
CREATE INDEX challenges_dest ON challenges (dest_id, status);
CREATE INDEX challenges_challenger ON challenges (challenger_id, status);

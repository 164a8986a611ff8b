-- PostgreSQL edition of ../0002_clock_state_and_heartbeat.sql (which
-- documents each column): the live state in the games row, the heartbeat,
-- and the indexes of the lists and the expiry sweep.

ALTER TABLE games ADD COLUMN fen TEXT;
ALTER TABLE games ADD COLUMN white_ms BIGINT;
ALTER TABLE games ADD COLUMN black_ms BIGINT;
ALTER TABLE games ADD COLUMN turn_started_at BIGINT;

-- One row. With several nodes on one database it is the last moment any of
-- them committed (see docs/architecture.md).
CREATE TABLE heartbeat (
    id        BIGINT PRIMARY KEY CHECK (id = 1),
    alive_at  BIGINT NOT NULL
);
INSERT INTO heartbeat (id, alive_at)
VALUES (1, CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT));

-- Newest first, ties by rowid (PostgreSQL reads a B-tree backwards too).
DROP INDEX games_status_created;
CREATE INDEX games_status_created ON games (status, created_at, rowid);
CREATE INDEX games_created ON games (created_at, rowid);
CREATE INDEX games_unfinished_created ON games (created_at, rowid) WHERE status != 'finished';
CREATE INDEX games_unfinished_updated ON games (status, updated_at) WHERE status != 'finished';

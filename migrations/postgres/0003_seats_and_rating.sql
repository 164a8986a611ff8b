-- PostgreSQL edition of ../0003_seats_and_rating.sql (which documents each
-- column). `rated` is a BOOLEAN here (0/1 in SQLite); the store only uses
-- it as a condition, which reads the same in both.

ALTER TABLE games ADD COLUMN visibility TEXT NOT NULL DEFAULT 'open'
    CHECK (visibility IN ('open', 'private'));

ALTER TABLE games ADD COLUMN invite_hash TEXT;

ALTER TABLE games ADD COLUMN rated BOOLEAN NOT NULL DEFAULT TRUE;

UPDATE games SET rated = FALSE
WHERE initial_fen != 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
   OR clock_initial_ms < 60000;

CREATE INDEX games_open_seeks ON games (created_at DESC)
    WHERE status = 'waiting' AND visibility = 'open';

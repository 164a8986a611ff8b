-- PostgreSQL edition of ../0011_bots_and_chat.sql (which documents each
-- column). `bot` is a BOOLEAN here (0/1 in SQLite).
ALTER TABLE players ADD COLUMN bot BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE chat_lines (
    id          TEXT   PRIMARY KEY NOT NULL,
    game_id     TEXT   NOT NULL REFERENCES games(id),
    room        TEXT   NOT NULL CHECK (room IN ('player', 'spectator')),
    username    TEXT   NOT NULL,
    text        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX chat_lines_game ON chat_lines (game_id, created_at);

-- Bot accounts and game chat (issue 24, lichess's Bot API and chat).

-- 1: a bot account (lichess's title BOT): it plays through the Bot API
-- only. An account becomes one, for good, only while it has no games.
ALTER TABLE players ADD COLUMN bot INTEGER NOT NULL DEFAULT 0 CHECK (bot IN (0, 1));

-- One line of a game's chat.
CREATE TABLE chat_lines (
    id          TEXT    PRIMARY KEY NOT NULL,              -- UUID
    game_id     TEXT    NOT NULL REFERENCES games(id),     -- the game
    room        TEXT    NOT NULL CHECK (room IN ('player', 'spectator')),  -- the players' room, or the spectators'
    username    TEXT    NOT NULL,                          -- who wrote it (a player's name, "Anonymous")
    text        TEXT    NOT NULL,                          -- 1-140 characters
    created_at  INTEGER NOT NULL
);
CREATE INDEX chat_lines_game ON chat_lines (game_id, created_at);

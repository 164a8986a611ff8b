-- Accounts, sessions and personal API tokens (issue 21).
--
-- An account is a player with a password: a token-only player (created by
-- POST /api/players) claims their name by setting one, and their player
-- token keeps working. Like every secret, session and API tokens are kept
-- only as the hex SHA-256 of the token.

-- PHC string of the password's Argon2id hash (algorithm, parameters, salt
-- and hash); NULL: a player with no password (token only).
ALTER TABLE players ADD COLUMN password_hash TEXT;

-- A browser or device logged in to an account: the session cookie's token.
CREATE TABLE sessions (
    id            TEXT    PRIMARY KEY NOT NULL,              -- UUID, shown in the account's session list
    player_id     TEXT    NOT NULL REFERENCES players(id),   -- whose session
    token_hash    TEXT    NOT NULL UNIQUE,                   -- hex SHA-256 of the session token
    device        TEXT    NOT NULL,                          -- the User-Agent at login, cut to 200 characters
    created_at    INTEGER NOT NULL,                          -- login time
    last_seen_at  INTEGER NOT NULL                           -- last request (updated at most every minute)
);
CREATE INDEX sessions_player ON sessions (player_id);

-- A personal API token (the terminal client, a bot, a script): scoped.
CREATE TABLE api_tokens (
    id            TEXT    PRIMARY KEY NOT NULL,              -- UUID, to list and revoke it
    player_id     TEXT    NOT NULL REFERENCES players(id),   -- whose token
    token_hash    TEXT    NOT NULL UNIQUE,                   -- hex SHA-256 of the token
    description   TEXT    NOT NULL,                          -- what the owner called it
    scopes        TEXT    NOT NULL,                          -- space-separated: play challenge bot
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER                                    -- NULL until first used
);
CREATE INDEX api_tokens_player ON api_tokens (player_id);

-- Getting an account back (issue 36): an optional e-mail address, verified
-- by a link, and single-use links that verify it or reset the password.

-- The account's verified e-mail address (where reset links go); NULL: none.
ALTER TABLE players ADD COLUMN email TEXT;
-- Lower-cased `email`: one account per address, and the key the
-- "forgot password" form looks an address up by.
ALTER TABLE players ADD COLUMN email_key TEXT;
CREATE UNIQUE INDEX players_email_key ON players (email_key) WHERE email_key IS NOT NULL;

-- A link sent by mail: to verify an address, or to reset the password.
-- Like every secret, only the hex SHA-256 of the link's token is kept.
CREATE TABLE account_links (
    token_hash  TEXT    PRIMARY KEY NOT NULL,             -- hex SHA-256 of the link's token
    player_id   TEXT    NOT NULL REFERENCES players(id),  -- whose account
    purpose     TEXT    NOT NULL CHECK (purpose IN ('verify', 'reset')),
    email       TEXT,                                     -- 'verify': the address being verified
    created_at  BIGINT  NOT NULL,                         -- when it was sent (ms since the epoch)
    expires_at  BIGINT  NOT NULL,                         -- unusable from then on
    used_at     BIGINT                                    -- NULL until used (single use)
);
CREATE INDEX account_links_player ON account_links (player_id);

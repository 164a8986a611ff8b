-- PostgreSQL edition of ../0007_game_leases.sql (which documents each
-- column): the lease and fencing epoch of each live game of a cluster.
CREATE TABLE game_leases (
    game_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    epoch BIGINT NOT NULL CHECK (epoch > 0),
    expires_at BIGINT NOT NULL
);
CREATE INDEX game_leases_owner ON game_leases (owner);

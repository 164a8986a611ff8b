-- Which node of a cluster owns each live game (issue 13; see
-- docs/architecture.md). Used only by nodes started with --nats on
-- PostgreSQL; a single SQLite node never writes it, but the schema is the
-- same on both databases.
--
-- A node takes a lease with one statement that succeeds only when the game
-- has no lease or its lease has expired, and each take increments `epoch`:
-- the fencing token. Every write of a game by a cluster node first checks
-- `owner` and `epoch` in its own transaction, so a node that lost its lease
-- (a pause, a partition) cannot write the game any more, even before it
-- learns that it lost it. Owners renew `expires_at` (ms since the Unix
-- epoch) every fifth of the lease time.
CREATE TABLE game_leases (
    game_id TEXT PRIMARY KEY NOT NULL,
    owner TEXT NOT NULL,
    epoch INTEGER NOT NULL CHECK (epoch > 0),
    expires_at INTEGER NOT NULL
);
CREATE INDEX game_leases_owner ON game_leases (owner);

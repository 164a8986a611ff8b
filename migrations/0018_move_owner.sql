-- A cluster's proof of who wrote each move (issue 42): the node and the
-- lease epoch whose fence the move's write carried. The partition tests
-- check from these that at most one node wrote a game's moves in any
-- lease epoch, and that epochs never go back along a game's plies.
-- NULL on one node, and for moves written before this migration.

-- The node (its name in game_leases.owner) that wrote the move.
ALTER TABLE moves ADD COLUMN owner TEXT;
-- The lease epoch the move was written under.
ALTER TABLE moves ADD COLUMN epoch INTEGER;

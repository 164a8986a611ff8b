-- The first ply played in this game (issue 22). A game continued from an
-- imported PGN starts with that game's moves already in its move list;
-- `start_ply` is how many there were. The first-move rule (neither clock
-- runs until that side has made its first move in this game), abort and
-- takebacks count moves from here.
ALTER TABLE games ADD COLUMN start_ply INTEGER NOT NULL DEFAULT 0;

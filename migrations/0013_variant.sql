-- Chess960 (issue 40): the rules a game is played by. A FEN does not say
-- how castling is written (king takes rook in Chess960, the king's two
-- squares in standard chess), so the variant is stored beside it; every
-- game and challenge from before this migration is standard chess.

-- The game's rules: 'standard' or 'chess960' (its start is initial_fen).
ALTER TABLE games ADD COLUMN variant TEXT NOT NULL DEFAULT 'standard'
    CHECK (variant IN ('standard', 'chess960'));

-- The challenge's rules.
ALTER TABLE challenges ADD COLUMN variant TEXT NOT NULL DEFAULT 'standard'
    CHECK (variant IN ('standard', 'chess960'));
-- The start position of a Chess960 challenge, drawn (or given) when it is
-- made, so that both players can see it before the game; NULL: the
-- standard position.
ALTER TABLE challenges ADD COLUMN initial_fen TEXT;

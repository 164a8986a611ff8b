-- Bounded storage (issue 23): what the retention sweep looks for. Aborted
-- games in which at most one move was played are deleted after
-- `--aborted-game-retention-secs` (default a day); finished games with no
-- registered player are deleted after `--anonymous-game-retention-secs`
-- when an operator sets one (default: kept). Both find their candidates,
-- oldest first, through these partial indexes, so a sweep reads only the
-- rows it may delete, never the whole history.

-- Aborted games by when they ended.
CREATE INDEX games_aborted_finished ON games (finished_at)
    WHERE termination = 'aborted';

-- Finished games nobody registered played in, by when they ended.
CREATE INDEX games_anonymous_finished ON games (finished_at)
    WHERE status = 'finished' AND white_player_id IS NULL AND black_player_id IS NULL;

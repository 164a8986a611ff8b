-- PostgreSQL edition of ../0012_retention.sql (which says what these
-- indexes are for).
CREATE INDEX games_aborted_finished ON games (finished_at)
    WHERE termination = 'aborted';

CREATE INDEX games_anonymous_finished ON games (finished_at)
    WHERE status = 'finished' AND white_player_id IS NULL AND black_player_id IS NULL;

use super::*;

#[tokio::test]
async fn a_missing_database_and_its_directory_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new").join("deeper").join("rookery.db");
    let store = Store::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    store.close().await;
    assert!(path.exists());
    // A plain path too.
    let plain = dir.path().join("plain").join("x.db");
    let store = Store::open(plain.to_str().unwrap()).await.unwrap();
    store.close().await;
    assert!(plain.exists());
}

use crate::protocol::{ClockSettings, SeatKind, Side};
use crate::token::mint;
use rows::StoredMove;

/// A file database in a temporary directory (kept alive by the returned
/// directory).
pub(super) async fn file_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("t.db").to_str().unwrap())
        .await
        .unwrap();
    (dir, store)
}

/// A stored, started human game.
async fn stored_game(store: &Store) -> LiveGame {
    let mut live = LiveGame::new(
        Uuid::new_v4(),
        now_ms(),
        [SeatKind::Human, SeatKind::Human],
        Some(ClockSettings {
            initial_ms: 60_000,
            increment_ms: 0,
        }),
        crate::domain::Variant::Standard,
        None,
    )
    .unwrap();
    let now = Instant::now();
    live.join(mint().unwrap().hash, None, None, now).unwrap();
    live.join(mint().unwrap().hash, None, None, now).unwrap();
    store
        .insert_game(&live.record(), &live.history())
        .await
        .unwrap();
    live
}

/// `live` after `uci`, as the write the actor would make.
fn move_write(live: &mut LiveGame, uci: &str) -> Write {
    let now = Instant::now();
    let side = live.turn();
    let played = live.play(side, uci, now).unwrap();
    Write::UpdateGame {
        game: StoredGame::of(&live.record(), now, now_ms()),
        mv: Some(StoredMove::of(live.id, &played, now_ms())),
        taken_back_from: None,
        rematch: None,
        fence: None,
    }
}

/// [`move_write`] under a cluster node's lease.
fn fenced_move(live: &mut LiveGame, uci: &str, fence: &Fence) -> Write {
    match move_write(live, uci) {
        Write::UpdateGame {
            game,
            mv,
            taken_back_from,
            rematch,
            ..
        } => Write::UpdateGame {
            game,
            mv,
            taken_back_from,
            rematch,
            fence: Some(fence.clone()),
        },
        other => other,
    }
}

async fn stored_moves(store: &Store, id: Uuid) -> usize {
    crate::live::load_game(store, id, Instant::now())
        .await
        .unwrap()
        .unwrap()
        .game()
        .moves()
        .len()
}

#[tokio::test]
async fn queued_writes_of_many_games_share_one_commit() {
    let (_dir, store) = file_store().await;
    let mut games = Vec::new();
    for _ in 0..20 {
        games.push(stored_game(&store).await);
    }
    let before = store.writer_stats();
    // Queued without yielding: the writer finds all of them at once.
    let outcomes: Vec<_> = games
        .iter_mut()
        .map(|live| store.submit_now(move_write(live, "e2e4")))
        .collect();
    for outcome in outcomes {
        outcome.await.unwrap().unwrap();
    }
    let after = store.writer_stats();
    assert_eq!(after.writes - before.writes, 20);
    assert_eq!(after.batches - before.batches, 1, "{before:?} {after:?}");
    for live in &games {
        assert_eq!(stored_moves(&store, live.id).await, 1);
    }
    store.close().await;
}

/// A node's lease fences its writes: once another node has taken the game
/// (a higher epoch), the old owner's write is refused alone in its batch
/// and nothing of it is stored; the new owner's writes go on.
#[tokio::test]
async fn a_write_under_a_lost_lease_is_fenced_alone() {
    let (_dir, store) = file_store().await;
    let mut game = stored_game(&store).await;
    let mut other = stored_game(&store).await;
    let fence = |owner: &str, epoch| Fence {
        owner: Arc::from(owner),
        epoch,
    };
    let first = store.acquire_lease(game.id, "a", 60_000).await.unwrap();
    assert_eq!(first, Some(1));
    // A live lease is not taken by another node.
    assert_eq!(
        store.acquire_lease(game.id, "b", 60_000).await.unwrap(),
        None
    );
    store
        .write(fenced_move(&mut game, "e2e4", &fence("a", 1)))
        .await
        .unwrap();
    // The lease expires (a's node stopped renewing) and b takes it.
    assert_eq!(
        store.acquire_lease(game.id, "a", -1).await.unwrap(),
        Some(2)
    );
    assert_eq!(
        store.acquire_lease(game.id, "b", 60_000).await.unwrap(),
        Some(3)
    );
    let mut stale = game.clone();
    let outcomes = [
        store.submit_now(fenced_move(&mut stale, "e7e5", &fence("a", 1))),
        store.submit_now(move_write(&mut other, "d2d4")),
    ];
    let [stale_outcome, other_outcome] = outcomes;
    assert!(matches!(
        stale_outcome.await.unwrap(),
        Err(WriteError::Fenced)
    ));
    other_outcome.await.unwrap().unwrap();
    assert_eq!(stored_moves(&store, game.id).await, 1);
    assert_eq!(stored_moves(&store, other.id).await, 1);
    store
        .write(fenced_move(&mut game, "c7c5", &fence("b", 3)))
        .await
        .unwrap();
    assert_eq!(stored_moves(&store, game.id).await, 2);
    // Released, the game is free for anyone at once.
    store.release_lease(game.id, &fence("b", 3)).await.unwrap();
    assert_eq!(
        store.acquire_lease(game.id, "c", 60_000).await.unwrap(),
        Some(1)
    );
    store.close().await;
}

#[tokio::test]
async fn a_refused_write_fails_alone() {
    let (_dir, store) = file_store().await;
    let mut good = stored_game(&store).await;
    let mut bad = stored_game(&store).await;
    // A second move at ply 0 breaks the moves' primary key: refused.
    let mut twin = bad.clone();
    store.write(move_write(&mut twin, "d2d4")).await.unwrap();
    let outcomes = [
        store.submit_now(move_write(&mut good, "e2e4")),
        store.submit_now(move_write(&mut bad, "e2e4")),
    ];
    let [good_outcome, bad_outcome] = outcomes;
    good_outcome.await.unwrap().unwrap();
    assert!(matches!(
        bad_outcome.await.unwrap(),
        Err(WriteError::Rejected(_))
    ));
    assert_eq!(stored_moves(&store, good.id).await, 1);
    let twin_moves = crate::live::load_game(&store, bad.id, Instant::now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(twin_moves.game().moves()[0].to_uci(), "d2d4");
    store.close().await;
}

/// A full disk in the middle of a batch: every write of the batch fails and
/// none of them is stored, not even those before the one that hit the limit;
/// once there is room again, writes succeed.
#[tokio::test]
async fn a_failing_batch_fails_every_write_and_stores_none() {
    let (_dir, store) = file_store().await;
    let mut games = Vec::new();
    for _ in 0..5 {
        games.push(stored_game(&store).await);
    }
    // The writer's connection may not grow the file any more: SQLite's
    // own "database or disk is full".
    let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
        .fetch_one(store.inner.write_pool.sqlite())
        .await
        .unwrap();
    sqlx::query(&format!("PRAGMA max_page_count = {pages}"))
        .execute(store.inner.write_pool.sqlite())
        .await
        .unwrap();
    let mut writes: Vec<Write> = games
        .iter_mut()
        .map(|live| move_write(live, "e2e4"))
        .collect();
    // The last write of the batch needs far more room than is left.
    if let Some(Write::UpdateGame { mv: Some(mv), .. }) = writes.last_mut() {
        mv.san = "x".repeat(1 << 20);
    }
    let outcomes: Vec<_> = writes.into_iter().map(|w| store.submit_now(w)).collect();
    for outcome in outcomes {
        let result = outcome.await.unwrap();
        assert!(matches!(result, Err(WriteError::Failed(_))), "{result:?}");
    }
    assert_eq!(store.writer_stats().failed_batches, 1);
    for live in &games {
        assert_eq!(stored_moves(&store, live.id).await, 0);
    }
    // Room again: the same moves go through.
    sqlx::query("PRAGMA max_page_count = 1073741823")
        .execute(store.inner.write_pool.sqlite())
        .await
        .unwrap();
    for live in &mut games {
        let mut fresh = crate::live::load_game(&store, live.id, Instant::now())
            .await
            .unwrap()
            .unwrap();
        store.write(move_write(&mut fresh, "e2e4")).await.unwrap();
        assert_eq!(stored_moves(&store, live.id).await, 1);
    }
    store.close().await;
}

/// Every list and the expiry sweep read an index in order: no temporary
/// B-tree sorts the table.
#[tokio::test]
async fn lists_read_an_index_without_sorting() {
    let (_dir, store) = file_store().await;
    let lists: [&[Status]; 5] = [
        &[Status::Waiting, Status::Active, Status::Finished],
        &[Status::Waiting, Status::Active],
        &[Status::Waiting],
        &[Status::Active],
        &[Status::Finished],
    ];
    for statuses in lists {
        let sql = list_sql(Dialect::Sqlite, statuses).unwrap();
        let plan = query_plan(&store, &sql.replace("LIMIT $1", "LIMIT 20")).await;
        assert!(!plan.contains("TEMP B-TREE"), "{statuses:?}:\n{plan}");
        assert!(plan.contains("INDEX games_"), "{statuses:?}:\n{plan}");
    }
    let plan = query_plan(
        &store,
        &open_seeks_sql(Dialect::Sqlite).replace("LIMIT $1", "LIMIT 20"),
    )
    .await;
    assert!(!plan.contains("TEMP B-TREE"), "open seeks:\n{plan}");
    assert!(plan.contains("INDEX games_"), "open seeks:\n{plan}");
    let plan = query_plan(
        &store,
        "SELECT id FROM games WHERE status != 'finished' AND status = 'waiting' AND updated_at < 5",
    )
    .await;
    assert!(plan.contains("games_unfinished_updated"), "{plan}");
    store.close().await;
}

pub(super) async fn query_plan(store: &Store, sql: &str) -> String {
    let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!("EXPLAIN QUERY PLAN {sql}"))
        .fetch_all(store.inner.read.sqlite())
        .await
        .unwrap();
    rows.into_iter()
        .map(|(_, _, _, detail)| detail)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_list_is_the_games_state_without_replay() {
    let (_dir, store) = file_store().await;
    let mut live = stored_game(&store).await;
    for uci in ["e2e4", "e7e5", "g1f3"] {
        store.write(move_write(&mut live, uci)).await.unwrap();
    }
    let listed = store
        .list_games(&[Status::Waiting, Status::Active], 10)
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    let mut expected = live.state(Instant::now());
    let mut got = listed[0].clone();
    // The running clock reads a few milliseconds apart.
    let running = Side::Black;
    assert_eq!(got.clock.unwrap().running, Some(running));
    let gap = expected
        .clock
        .unwrap()
        .black_ms
        .abs_diff(got.clock.unwrap().black_ms);
    assert!(gap < 1_000, "{gap}");
    expected.clock = None;
    got.clock = None;
    assert_eq!(got, expected);
    store.close().await;
}

#[tokio::test]
async fn a_takeback_deletes_its_plies_with_the_game_row() {
    let (_dir, store) = file_store().await;
    let mut live = stored_game(&store).await;
    for uci in ["e2e4", "e7e5", "g1f3"] {
        store.write(move_write(&mut live, uci)).await.unwrap();
    }
    let now = Instant::now();
    live.takeback(Side::White, now).unwrap();
    live.takeback(Side::Black, now).unwrap();
    assert_eq!(live.game().moves().len(), 2);
    store
        .record_change(&live.record(), None, Some(2), None, None)
        .await
        .unwrap();
    let loaded = crate::live::load_game(&store, live.id, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(loaded.game().moves().len(), 2);
    assert_eq!(loaded.takebacks(), 1);
    // The freed ply takes another move.
    store.write(move_write(&mut live, "b1c3")).await.unwrap();
    let state = store.game_state(live.id).await.unwrap().unwrap();
    assert_eq!(state.san, ["e4", "e5", "Nc3"]);
    assert_eq!(state.takebacks, 1);
    store.close().await;
}

/// The downtime between two runs is left out of a turn once: a row the
/// previous run wrote counts its turn up to that run's last heartbeat; a
/// row this run wrote (a resumed clock, its earlier thinking folded into
/// a turn start before this run began) counts from its turn start.
#[tokio::test]
async fn thinking_time_leaves_out_the_downtime_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let url = path.to_str().unwrap();
    Store::open(url).await.unwrap().close().await;
    // The previous run was last alive 10 s ago.
    let alive = now_ms() - 10_000;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{url}"))
        .await
        .unwrap();
    sqlx::query("UPDATE heartbeat SET alive_at = ?")
        .bind(alive)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let store = Store::open(url).await.unwrap();
    let started = store.inner.started_at;
    assert_eq!(store.inner.previous_alive_at, alive);
    let now = started + 100;
    let ms = |d: Duration| d.as_millis();
    // Written by the previous run, its turn 1.5 s old at the stop.
    let before = store.thinking_time(alive - 1_500, alive - 1_000, now);
    assert_eq!(ms(before), 1_600);
    // The same turn as this run stored it on resuming: 1.5 s of thinking
    // folded in, so its start lies 1.5 s before this run's.
    let resumed = store.thinking_time(started - 1_500, started + 10, now);
    assert_eq!(ms(resumed), 1_600);
    // A turn begun in this run.
    assert_eq!(ms(store.thinking_time(started + 40, started + 40, now)), 60);
    store.close().await;
}

//! While the database fails, a game's own work (here an AI v AI game's
//! moves) is retried with a growing backoff, not in a tight loop, and the
//! game goes on once the database is back. The failed writes are counted
//! from the server's error log (this file holds one test, so the global log
//! subscriber is its own).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sqlx::Connection;
use support::*;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// Counts the error events of the store (each a failed write).
struct FailedWrites(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for FailedWrites {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        if *meta.level() == tracing::Level::ERROR
            && meta.target().starts_with("rookery_server::store")
        {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[tokio::test]
async fn failing_writes_are_retried_with_backoff() {
    let failed = Arc::new(AtomicUsize::new(0));
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(FailedWrites(failed.clone())),
    )
    .expect("the only subscriber");
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.storage.db_busy_timeout_ms = 20;
    let server = TestServer::start(config).await;
    let (game, _) = server
        .create_game(
            json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    server
        .wait_state(&id, "the first AI moves", |s| moves(s).len() >= 2)
        .await;

    let mut lock = sqlx::SqliteConnection::connect(&db.url()).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut lock)
        .await
        .unwrap();
    let stuck = moves(&server.state(&id).await).len();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = failed.load(Ordering::Relaxed);
    // Nothing moved while nothing could be stored.
    assert_eq!(moves(&server.state(&id).await).len(), stuck);
    sqlx::query("ROLLBACK").execute(&mut lock).await.unwrap();
    lock.close().await.unwrap();

    eprintln!("failed writes during the lock: {during}");
    // Retried (more than once), but backing off: 100 ms doubling gives about
    // five attempts in two seconds, where retrying at once would fail every
    // busy timeout (20 ms), some eighty times.
    assert!(during >= 2, "{during} failed writes: no retry?");
    assert!(during <= 15, "{during} failed writes in 2 s: no backoff");
    let state = server
        .wait_state(&id, "the game to go on", |s| {
            moves(s).len() > stuck || s["status"] == "finished"
        })
        .await;
    assert!(moves(&state).len() >= stuck);
    server.stop().await;
}

//! Operations (issue 25): readiness that tells a working node from one
//! whose database cannot take a write.

mod support;

use serde_json::json;
use support::*;

#[tokio::test]
async fn readiness_follows_the_database_write_path() {
    let db = TestDb::new_sqlite();
    let mut config = test_config(&db);
    config.db_busy_timeout_ms = 100;
    let server = TestServer::start(config).await;
    assert_eq!(
        server.get("/readyz").await,
        (200, json!({"status": "ready"}))
    );
    assert_eq!(server.get_text("/healthz").await.0, 200);

    // Another process holds the database's write lock: not ready (and
    // still alive), with the reason.
    let lock = Lock::take(&db).await;
    let (status, answer) = server.get("/readyz").await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["status"], "not ready");
    let reason = answer["reasons"][0].as_str().expect("a reason");
    assert!(reason.starts_with("database"), "{reason}");
    assert_eq!(
        server.get_text("/healthz").await.0,
        200,
        "alive all the same"
    );
    lock.release().await;
    assert_eq!(
        server.get("/readyz").await,
        (200, json!({"status": "ready"}))
    );
    server.stop().await;
}

//! Prometheus metrics (issue 25): `GET /metrics` in Prometheus's text
//! format, every name prefixed `rookery_`.
//!
//! Events are recorded where they happen, through the `metrics` facade
//! (a no-op until [`handle`] installs the recorder at start): HTTP requests
//! by route and status, WebSockets open, live games by kind, rate-limited
//! requests, AI queue wait and search time by class, move-to-broadcast
//! latency, commit batch size and time, leases taken over, NATS forward
//! latency. Levels read at scrape time (games in memory, AI queue lengths,
//! the writer's totals) are set just before rendering.
//!
//! The recorder is process-wide: servers started in one process (the
//! tests) share it. The scrape's route, its levels and the per-request
//! counts are the edge's (`http/metrics.rs`).

use std::sync::OnceLock;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Histogram buckets, in seconds: from a tenth of a millisecond (a
/// broadcast on loopback) to a minute (a long search).
const BUCKETS: &[f64] = &[
    0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    30.0, 60.0,
];

/// Buckets of the commit batch size (writes per transaction).
const BATCH_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

/// The recorder's handle, installing it on first use.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets(BUCKETS)
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    metrics_exporter_prometheus::Matcher::Full("rookery_db_batch_writes".into()),
                    BATCH_BUCKETS,
                )
            })
            .map(PrometheusBuilder::build_recorder)
            .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("a metrics recorder was already installed: /metrics may be empty");
        }
        describe();
        handle
    })
}

fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_counter!(
        "rookery_http_requests_total",
        "HTTP API requests by route, method and status"
    );
    describe_histogram!(
        "rookery_http_request_duration_seconds",
        Unit::Seconds,
        "HTTP API request time by route"
    );
    describe_gauge!(
        "rookery_websockets",
        "open WebSocket connections by kind (seat, spectator)"
    );
    describe_gauge!(
        "rookery_live_games",
        "games with an actor on this node, by kind"
    );
    describe_counter!(
        "rookery_rate_limited_total",
        "requests and messages refused by a per-client limit"
    );
    describe_histogram!(
        "rookery_ai_wait_seconds",
        Unit::Seconds,
        "time an AI search waited for a thread, by class"
    );
    describe_histogram!(
        "rookery_ai_search_seconds",
        Unit::Seconds,
        "AI search time, by class"
    );
    describe_histogram!(
        "rookery_move_broadcast_seconds",
        Unit::Seconds,
        "time from a change's start to its broadcast (durable commit included)"
    );
    describe_histogram!(
        "rookery_db_commit_seconds",
        Unit::Seconds,
        "time of one database transaction of the writer"
    );
    describe_histogram!(
        "rookery_db_batch_writes",
        "writes committed in one transaction"
    );
    describe_counter!(
        "rookery_games_deleted_total",
        "finished games the retention sweep deleted"
    );
    describe_counter!(
        "rookery_leases_taken_over_total",
        "cluster game leases this node took over"
    );
    describe_histogram!(
        "rookery_nats_forward_seconds",
        Unit::Seconds,
        "time of a command forwarded to another node over NATS"
    );
    describe_gauge!(
        "rookery_games_in_memory",
        "games in memory (actors and cluster proxies)"
    );
    describe_gauge!(
        "rookery_ai_queue",
        "AI searches waiting for a thread, by class"
    );
    describe_gauge!("rookery_ai_searches_running", "AI searches running");
    describe_gauge!("rookery_ai_threads", "AI searches that may run at once");
    describe_gauge!(
        "rookery_ai_v_ai_games",
        "AI v AI games counted against the caps"
    );
    describe_counter!(
        "rookery_db_transactions_total",
        "transactions the writer committed"
    );
    describe_counter!("rookery_db_writes_total", "writes the writer committed");
    describe_counter!(
        "rookery_db_failed_transactions_total",
        "writer transactions that failed"
    );
}

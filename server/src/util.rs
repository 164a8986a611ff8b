//! Small helpers every floor uses.

use tokio::time::Instant;

/// Sleeps until `deadline`, or forever without one: a `select!` branch for
/// a timer that may be off.
pub async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

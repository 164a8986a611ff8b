//! Operations on the database as a whole: the readiness check
//! (`GET /readyz`) and `rookery-server backup`.

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

use super::backend::{on_pool, Dialect};
use super::error::StoreError;
use super::writer::Write;
use super::{Store, MIGRATOR, POSTGRES_MIGRATOR};

impl Store {
    /// The readiness check (`GET /readyz`): a write goes through the writer
    /// (its batch stamps the heartbeat row, so a locked, read-only or full
    /// database fails it), and every migration this build knows is
    /// applied. `Ok(None)`: ready; `Ok(Some(reason))`: not ready.
    pub async fn readiness(&self) -> Result<Option<String>, StoreError> {
        if let Err(err) = self.write(Write::Probe).await {
            return Ok(Some(format!(
                "database write failed: {}",
                StoreError::from(err)
            )));
        }
        let known = match self.dialect() {
            Dialect::Sqlite => MIGRATOR.iter().count(),
            Dialect::Postgres => POSTGRES_MIGRATOR.iter().count(),
        };
        let applied: i64 = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM _sqlx_migrations WHERE success",
        )
        .fetch_one(pool)
        .await)?;
        if usize::try_from(applied).unwrap_or(0) < known {
            return Ok(Some(format!(
                "database migrations: {applied} of {known} applied"
            )));
        }
        Ok(None)
    }
}

/// `rookery-server backup` (issue 25): a consistent copy of a SQLite
/// database, made while a server writes to it. `VACUUM INTO` reads the
/// database in one read transaction (in WAL mode, writers go on meanwhile)
/// and writes a compact copy: every write committed before it began is in
/// the copy, none after. PostgreSQL databases are backed up with `pg_dump`
/// (the README says how).
pub async fn backup(url: &str, to: &std::path::Path) -> anyhow::Result<u64> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        anyhow::bail!("this is a PostgreSQL database: back it up with pg_dump (see the README)");
    }
    if to.exists() {
        anyhow::bail!(
            "{} exists already: a backup never overwrites a file",
            to.display()
        );
    }
    let target = to
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("the backup path must be UTF-8"))?
        .to_string();
    let url = if url.starts_with("sqlite:") {
        url.to_string()
    } else {
        format!("sqlite://{url}")
    };
    let options = SqliteConnectOptions::from_str(&url)?
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(30));
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .map_err(|err| anyhow::anyhow!("opening {url}: {err}"))?;
    let copied = sqlx::query("VACUUM INTO $1")
        .bind(&target)
        .execute(&pool)
        .await
        .map_err(|err| anyhow::anyhow!("copying {url} to {target}: {err}"));
    pool.close().await;
    copied?;
    Ok(std::fs::metadata(to)?.len())
}

//! The two databases behind one [`Store`](super::Store): SQLite (the
//! embedded default) and PostgreSQL (a cluster's shared state, issue 13).
//!
//! Every query is written once. Its text is portable SQL: `$1`-style
//! placeholders (SQLite reads `$N` as the N-th parameter too), `COUNT(*)
//! FILTER (WHERE …)` instead of summing booleans, a `rowid` column that
//! PostgreSQL's schema has as an identity column; the few phrases that
//! differ come from [`Dialect`]. The code that runs a query is written once
//! too: [`on_pool!`] expands the same expression for each driver's pool
//! (and [`on_conn!`] for a connection), so the compiler checks it against
//! both, and a new store function is one query in one place.

use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

/// A pool of either database.
#[derive(Clone, Debug)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A connection of either database, borrowed for one write.
pub enum Conn<'c> {
    Sqlite(&'c mut sqlx::SqliteConnection),
    Postgres(&'c mut sqlx::PgConnection),
}

impl<'c> Conn<'c> {
    /// The same connection for a shorter borrow (one statement of several).
    pub fn reborrow(&mut self) -> Conn<'_> {
        match self {
            Conn::Sqlite(conn) => Conn::Sqlite(conn),
            Conn::Postgres(conn) => Conn::Postgres(conn),
        }
    }
}

impl<'c> From<&'c mut sqlx::SqliteConnection> for Conn<'c> {
    fn from(conn: &'c mut sqlx::SqliteConnection) -> Conn<'c> {
        Conn::Sqlite(conn)
    }
}

impl<'c> From<&'c mut sqlx::PgConnection> for Conn<'c> {
    fn from(conn: &'c mut sqlx::PgConnection) -> Conn<'c> {
        Conn::Postgres(conn)
    }
}

/// Runs `$body` with `$pool` bound to the driver's own pool (`&SqlitePool`
/// or `&PgPool`): one expression, compiled for both drivers.
macro_rules! on_pool {
    ($pool:expr, $name:ident => $body:expr) => {
        match $pool {
            $crate::store::backend::Pool::Sqlite($name) => $body,
            $crate::store::backend::Pool::Postgres($name) => $body,
        }
    };
}

/// Runs `$body` with `$conn` bound to the driver's own connection.
macro_rules! on_conn {
    ($conn:expr, $name:ident => $body:expr) => {
        match $conn {
            $crate::store::backend::Conn::Sqlite($name) => $body,
            $crate::store::backend::Conn::Postgres($name) => $body,
        }
    };
}

pub(crate) use {on_conn, on_pool};

/// The phrases of SQL that differ between the two databases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Pool {
    pub fn dialect(&self) -> Dialect {
        match self {
            Pool::Sqlite(_) => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    pub async fn close(&self) {
        on_pool!(self, pool => pool.close().await)
    }

    /// The SQLite pool (the SQLite-only unit tests reach into it).
    #[cfg(test)]
    pub fn sqlite(&self) -> &SqlitePool {
        match self {
            Pool::Sqlite(pool) => pool,
            Pool::Postgres(_) => panic!("a SQLite store was expected"),
        }
    }
}

impl Dialect {
    /// Opens the writer's transaction. SQLite takes the write lock at once
    /// (a batch never fails half-way on a lock); PostgreSQL locks rows.
    pub fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// `column` of a game's moves joined by spaces, in ply order (a
    /// subquery, `g` being the game). SQLite keeps the order of the inner
    /// query (its primary key's); PostgreSQL is told.
    pub fn moves_joined(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!(
                "(SELECT group_concat({column}, ' ') FROM
                     (SELECT {column} FROM moves WHERE game_id = g.id ORDER BY ply) AS m)"
            ),
            Dialect::Postgres => format!(
                "(SELECT string_agg({column}, ' ' ORDER BY ply) FROM moves WHERE game_id = g.id)"
            ),
        }
    }
}

impl Dialect {
    /// Whether `err` is the database refusing one statement (a constraint)
    /// rather than the database failing. SQLite: primary result code 19
    /// (`SQLITE_CONSTRAINT`, the low byte of the extended code); PostgreSQL:
    /// SQLSTATE class 23 (integrity constraint violation).
    pub fn is_refusal(self, err: &sqlx::Error) -> bool {
        match err {
            sqlx::Error::RowNotFound => true,
            sqlx::Error::Database(db) => db.code().is_some_and(|code| match self {
                Dialect::Sqlite => code.parse::<i64>().is_ok_and(|code| code & 0xff == 19),
                Dialect::Postgres => code.starts_with("23"),
            }),
            _ => false,
        }
    }
}

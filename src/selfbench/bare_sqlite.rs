//! For `rqps bench harness`: point queries on SQLite in a bare loop that
//! calls rusqlite directly, with nothing around it (no worker, no driver
//! interface, no measurement but a count and one clock read every 64
//! queries). It is the yardstick the harness's cost is measured against.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::engine::sqlite::DEFAULT_PRAGMAS;
use crate::engine::{DbError, DbResult};

/// One connection that runs `sql` (one integer parameter, rows read and
/// their first column touched) in a bare loop, kept open across rounds so
/// that every round starts with the page cache the previous one left, as
/// the harness's worker does.
pub struct BareQueries {
    conn: Connection,
    sql: String,
}

fn err(context: &str) -> impl FnOnce(rusqlite::Error) -> DbError + '_ {
    move |e| DbError::fatal(format!("{context}: {e}"))
}

impl BareQueries {
    /// Opens `path` as rqps's SQLite driver opens it (flags and default
    /// PRAGMAs), so that only what runs around the query differs.
    pub fn open(path: &Path, sql: &str) -> DbResult<BareQueries> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags).map_err(err("opening the database"))?;
        for pragma in DEFAULT_PRAGMAS {
            conn.query_row(pragma, [], |_| Ok(()))
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(()),
                    e => Err(err("setting a PRAGMA")(e)),
                })?;
        }
        // Prepared once here; each round takes it from rusqlite's cache.
        conn.prepare_cached(sql).map_err(err("preparing"))?;
        Ok(BareQueries {
            conn,
            sql: sql.to_string(),
        })
    }

    /// Runs the statement with `next_id()` as its parameter for `secs`.
    /// Returns the queries done and the seconds they took.
    pub fn run(&mut self, secs: f64, mut next_id: impl FnMut() -> i64) -> DbResult<(u64, f64)> {
        let mut stmt = self
            .conn
            .prepare_cached(&self.sql)
            .map_err(err("preparing"))?;
        let start = Instant::now();
        let deadline = start + Duration::from_secs_f64(secs);
        let mut done = 0u64;
        let mut bytes = 0usize;
        loop {
            for _ in 0..64 {
                stmt.raw_bind_parameter(1, next_id())
                    .map_err(err("binding the id"))?;
                let mut rows = stmt.raw_query();
                while let Some(row) = rows.next().map_err(err("reading a row"))? {
                    // The bytes as a client gets them: no UTF-8 check, which
                    // rqps's driver does not do either (with it, the bare
                    // loop did work that rqps does not, and flattered rqps).
                    bytes += row
                        .get_ref(0)
                        .map_err(err("reading column 0"))?
                        .as_bytes()
                        .map(|s| s.len())
                        .unwrap_or(0);
                }
                done += 1;
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        std::hint::black_box(bytes);
        Ok((done, start.elapsed().as_secs_f64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bare_loop_reads_the_rows_it_is_asked_for_across_rounds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, c TEXT);
             INSERT INTO t VALUES (1, 'a'), (2, 'bb');",
        )
        .unwrap();
        let mut b = BareQueries::open(&path, "SELECT c FROM t WHERE id=?").unwrap();
        let mut ids = Vec::new();
        for _ in 0..2 {
            let (n, secs) = b
                .run(0.01, || {
                    ids.push(1 + (ids.len() % 2) as i64);
                    *ids.last().unwrap()
                })
                .unwrap();
            assert!(n >= 64 && n.is_multiple_of(64), "{n}");
            assert!(secs >= 0.01, "{secs}");
        }
        assert!(ids.len() >= 128);
        let e = BareQueries::open(&path, "SELECT nothing FROM nowhere")
            .err()
            .unwrap();
        assert!(e.message.starts_with("preparing: "), "{}", e.message);
    }
}

//! Initialisation as `pgbench -i` makes it: the four tables with pgbench's
//! columns (fillers included) and primary keys, declared as data so each
//! dialect renders them, filled at `--scale` with pgbench's row counts and
//! values (1 branch, 10 tellers and 100,000 accounts per unit of scale,
//! every balance 0, the account filler an empty fixed-length string, the
//! history empty), then the engine's settle statements (pgbench vacuums).
//! Then the user's `--init-script`, if any, run once by one client.
//!
//! Only the four tables rqps is about to create are dropped first, as
//! `pgbench -i` does; nothing else in the target is touched.

use std::sync::Arc;
use std::time::Instant;

use crate::engine::schema::{ColType, Column};
use crate::engine::{Conn, DbError, DbResult, Driver, KeyedTable, Param, PsMode};
use crate::error::Error;
use crate::harness::{Harness, LoadProgress};
use crate::results::LoadStats;

use super::params::Params;

/// Accounts per unit of scale.
pub const ACCOUNTS: u64 = 100_000;
/// Tellers per unit of scale.
pub const TELLERS: u64 = 10;
/// Rows per multi-row INSERT, fewer where the engine's parameter limit needs it.
const BATCH_ROWS: usize = 1000;
/// Rows per transaction.
const COMMIT_ROWS: u64 = 100_000;

fn int(name: &str) -> Column {
    Column::new(name, ColType::Int)
}

fn table(name: &str, columns: Vec<Column>, key: &[&str]) -> KeyedTable {
    KeyedTable {
        name: name.into(),
        columns,
        key: key.iter().map(|k| k.to_string()).collect(),
        indexes: vec![],
    }
}

/// The account ids' type: pgbench switches to 64 bits from scale 20,000.
fn aid_type(scale: u32) -> ColType {
    if scale >= 20_000 {
        ColType::BigInt
    } else {
        ColType::Int
    }
}

/// pgbench's four tables, in the order `pgbench -i` creates them.
pub fn tables(scale: u32) -> [KeyedTable; 4] {
    let aid = aid_type(scale);
    [
        table(
            "pgbench_history",
            vec![
                int("tid"),
                int("bid"),
                Column::new("aid", aid),
                int("delta"),
                Column::new("mtime", ColType::DateTime),
                Column::new("filler", ColType::Char(22)),
            ],
            &[],
        ),
        table(
            "pgbench_tellers",
            vec![
                int("tid").not_null(),
                int("bid"),
                int("tbalance"),
                Column::new("filler", ColType::Char(84)),
            ],
            &["tid"],
        ),
        table(
            "pgbench_accounts",
            vec![
                Column::new("aid", aid).not_null(),
                int("bid"),
                int("abalance"),
                Column::new("filler", ColType::Char(84)),
            ],
            &["aid"],
        ),
        table(
            "pgbench_branches",
            vec![
                int("bid").not_null(),
                int("bbalance"),
                Column::new("filler", ColType::Char(88)),
            ],
            &["bid"],
        ),
    ]
}

/// How many rows each table gets at `scale`: (table, rows).
pub fn row_counts(scale: u32) -> [(&'static str, u64); 4] {
    let s = u64::from(scale);
    [
        ("pgbench_branches", s),
        ("pgbench_tellers", TELLERS * s),
        ("pgbench_accounts", ACCOUNTS * s),
        ("pgbench_history", 0),
    ]
}

/// Why the initialisation stopped.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{0}")]
    Engine(#[from] DbError),
}

/// Makes the tables (unless the run keeps them) and runs the init script,
/// through the harness's load (which stores what it measured).
pub fn run(p: &Params, h: &mut Harness<'_>) -> Result<(), Error> {
    let expected: u64 = if p.init_tables {
        row_counts(p.scale).iter().map(|(_, n)| n).sum()
    } else {
        0
    };
    h.load(
        "init",
        expected,
        |driver, progress| init(p, driver, progress),
        |stats| match (&p.init_script, p.init_tables) {
            (_, true) => format!(
                "initialised scale {}: {} rows in {:.1} s ({:.0} rows/s)",
                p.scale, stats.rows, stats.secs, stats.rows_per_sec
            ),
            (Some((path, _)), false) => {
                format!("ran the init script {path} in {:.1} s", stats.secs)
            }
            (None, false) => "nothing to initialise".into(),
        },
    )?;
    Ok(())
}

/// The tables (filled, then settled) and the init script, timed.
fn init(p: &Params, driver: &Arc<dyn Driver>, progress: &LoadProgress) -> Result<LoadStats, Error> {
    let started = Instant::now();
    let mut rows = 0;
    let mut insert_secs = 0.0;
    if p.init_tables {
        rows = load(driver.as_ref(), p.scale, &mut |n| progress.done(n)).map_err(|source| {
            Error::Engine {
                context: "creating and filling the pgbench tables failed".into(),
                source,
            }
        })?;
        insert_secs = started.elapsed().as_secs_f64();
        let names: Vec<String> = tables(p.scale).iter().map(|t| t.name.clone()).collect();
        let (_, refused) =
            crate::harness::settle_tables(driver.as_ref(), &names, Default::default()).map_err(
                |source| Error::Engine {
                    context: "settling the pgbench tables failed".into(),
                    source,
                },
            )?;
        for r in refused {
            progress.say(&format!("init: the engine refused {r}"));
        }
    }
    if let Some((path, text)) = &p.init_script {
        super::client::run_once(driver.clone(), p, path, text).map_err(|e| Error::Engine {
            context: format!("the init script {path} failed"),
            source: e,
        })?;
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(LoadStats {
        rows,
        secs,
        insert_secs,
        index_secs: (secs - insert_secs).max(0.0),
        rows_per_sec: rows as f64 / secs.max(1e-9),
        hw: None,
    })
}

/// Drops and creates the four tables and fills them at `scale`; returns
/// the rows inserted. `progress` sees the running count.
pub fn load(driver: &dyn Driver, scale: u32, progress: &mut dyn FnMut(u64)) -> DbResult<u64> {
    let db = driver.require_sql()?;
    let d = db.dialect();
    let mut conn = db.connect()?;
    for t in tables(scale) {
        conn.query(&format!("DROP TABLE IF EXISTS {}", t.name))?;
        for sql in d.create_keyed_table(&t) {
            conn.query(&sql)?;
        }
    }
    let max_rows = (driver.caps().max_params / 2).clamp(1, BATCH_ROWS);
    let s = u64::from(scale);
    let mut done = 0u64;
    let mut l = Filler {
        conn: conn.as_mut(),
        begin: d.begin_write(),
        commit: d.commit(),
        in_txn: 0,
        done: &mut done,
        progress,
    };
    // pgbench's values: branches and tellers with a NULL filler, accounts
    // with an empty one (blank-padded by the fixed-length type).
    l.fill(
        "pgbench_branches (bid, bbalance)",
        "(?, 0)",
        s,
        1,
        max_rows,
        |_| 0,
    )?;
    l.fill(
        "pgbench_tellers (tid, bid, tbalance)",
        "(?, ?, 0)",
        TELLERS * s,
        2,
        max_rows,
        |i| (i - 1) / TELLERS as i64 + 1,
    )?;
    l.fill(
        "pgbench_accounts (aid, bid, abalance, filler)",
        "(?, ?, 0, '')",
        ACCOUNTS * s,
        2,
        max_rows,
        |i| (i - 1) / ACCOUNTS as i64 + 1,
    )?;
    l.end()?;
    Ok(done)
}

/// One connection inserting rows in batches, committing every
/// [`COMMIT_ROWS`].
struct Filler<'a> {
    conn: &'a mut dyn Conn,
    begin: &'static str,
    commit: &'static str,
    in_txn: u64,
    done: &'a mut u64,
    progress: &'a mut dyn FnMut(u64),
}

impl Filler<'_> {
    /// Inserts rows 1..=n of `into` (table and columns), each written as
    /// `tuple` with `params` placeholders: the id, then `second(id)`.
    fn fill(
        &mut self,
        into: &str,
        tuple: &str,
        n: u64,
        params: usize,
        max_rows: usize,
        second: impl Fn(i64) -> i64,
    ) -> DbResult<()> {
        let mut prepared: Option<(usize, crate::engine::StmtId)> = None;
        let mut values: Vec<Param<'static>> = Vec::with_capacity(max_rows * params);
        let mut next = 1u64;
        while next <= n {
            let rows = (n - next + 1).min(max_rows as u64) as usize;
            let stmt = match prepared {
                Some((r, s)) if r == rows => s,
                _ => {
                    let sql = format!("INSERT INTO {into} VALUES {}", vec![tuple; rows].join(", "));
                    let s = self.conn.prepare(&sql, PsMode::Auto)?;
                    prepared = Some((rows, s));
                    s
                }
            };
            values.clear();
            for id in next..next + rows as u64 {
                let id = id as i64;
                values.push(Param::Int(id));
                if params == 2 {
                    values.push(Param::Int(second(id)));
                }
            }
            if self.in_txn == 0 {
                self.conn.query(self.begin)?;
            }
            self.conn.execute(stmt, &values)?;
            next += rows as u64;
            *self.done += rows as u64;
            self.in_txn += rows as u64;
            (self.progress)(*self.done);
            if self.in_txn >= COMMIT_ROWS {
                self.conn.query(self.commit)?;
                self.in_txn = 0;
            }
            if crate::harness::runner::stop_requested() {
                return Err(DbError::fatal("stopped during the initialisation"));
            }
        }
        Ok(())
    }

    fn end(&mut self) -> DbResult<()> {
        if self.in_txn > 0 {
            self.conn.query(self.commit)?;
            self.in_txn = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_pgbenchs_columns_and_keys() {
        let t = tables(1);
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "pgbench_history",
                "pgbench_tellers",
                "pgbench_accounts",
                "pgbench_branches"
            ]
        );
        assert_eq!(t[2].column_list(), "aid, bid, abalance, filler");
        assert_eq!(t[2].columns[3].ty, ColType::Char(84));
        assert_eq!(t[3].columns[2].ty, ColType::Char(88));
        assert_eq!(t[0].columns[5].ty, ColType::Char(22));
        assert!(t[0].key.is_empty());
        assert_eq!(tables(20_000)[2].columns[0].ty, ColType::BigInt);
        assert_eq!(
            row_counts(2),
            [
                ("pgbench_branches", 2),
                ("pgbench_tellers", 20),
                ("pgbench_accounts", 200_000),
                ("pgbench_history", 0)
            ]
        );
    }
}

//! Creating and filling the `sbtest<i>` tables (reference §2): ids 1..N
//! assigned by the engine, `k` uniform in [1, N], `c` and `pad` digit
//! groups, multi-row inserts in large transactions, then the `k_<i>` index.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::engine::schema::Table;
use crate::engine::{Conn, DbResult, Driver, Param, PsMode, SqlAccess};
use crate::results::LoadStats;
use crate::suite::rand::Rng;

use super::schema;
use super::schema::table_name;

#[derive(Clone, Debug)]
pub struct LoadParams {
    pub tables: usize,
    pub table_size: u64,
    pub seed: u64,
}

/// Rows per multi-row INSERT, and rows per transaction.
const BATCH_ROWS: usize = 500;
const COMMIT_ROWS: u64 = 50_000;

/// Drops and creates the tables named by `p`, fills them and builds their
/// index. Tables load in parallel unless the engine has a single writer.
/// `progress` receives the number of rows inserted so far.
pub fn load(
    driver: &dyn Driver,
    p: &LoadParams,
    progress: &mut dyn FnMut(u64),
) -> DbResult<LoadStats> {
    let db = driver.require_sql()?;
    let started = Instant::now();
    let done = AtomicU64::new(0);
    let caps = driver.caps();
    let parallel = if caps.single_writer {
        1
    } else {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .min(p.tables)
            .max(1)
    };
    let next = AtomicU64::new(1);
    let index_nanos = AtomicU64::new(0);
    let result: DbResult<()> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parallel)
            .map(|_| {
                s.spawn(|| -> DbResult<()> {
                    let mut conn = db.connect()?;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        if i > p.tables {
                            return Ok(());
                        }
                        let t = schema::table(i);
                        load_table(db, conn.as_mut(), &t, p, i as u64, &done)?;
                        let ix = Instant::now();
                        for index in &t.indexes {
                            conn.query(&db.dialect().create_index(&t, index))?;
                        }
                        index_nanos.fetch_add(ix.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            progress(done.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_millis(100));
        }
        progress(done.load(Ordering::Relaxed));
        let mut first_err = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(crate::engine::DbError::fatal("a load thread panicked")));
            if first_err.is_ok() {
                first_err = r;
            }
        }
        first_err
    });
    result?;
    let secs = started.elapsed().as_secs_f64();
    let index_secs = index_nanos.load(Ordering::Relaxed) as f64 / 1e9 / parallel as f64;
    let rows = p.tables as u64 * p.table_size;
    Ok(LoadStats {
        rows,
        secs,
        insert_secs: secs - index_secs,
        index_secs,
        rows_per_sec: rows as f64 / secs.max(1e-9),
        hw: None,
    })
}

fn load_table(
    driver: &dyn SqlAccess,
    conn: &mut dyn Conn,
    table: &Table,
    p: &LoadParams,
    n: u64,
    done: &AtomicU64,
) -> DbResult<()> {
    let d = driver.dialect();
    conn.query(&d.drop_table(table))?;
    for sql in d.create_table(table) {
        conn.query(&sql)?;
    }
    let t = &table.name;
    let caps = driver.caps();
    let batch = if caps.multi_row_insert {
        BATCH_ROWS.min(caps.max_params / 3).max(1)
    } else {
        1
    };
    let insert_sql = |rows: usize| {
        format!(
            "INSERT INTO {t} (k, c, pad) VALUES {}",
            vec!["(?, ?, ?)"; rows].join(", ")
        )
    };
    let full = conn.prepare(&insert_sql(batch), PsMode::Auto)?;
    let begin = conn.prepare(d.begin_write(), PsMode::Auto)?;
    let commit = conn.prepare(d.commit(), PsMode::Auto)?;
    let mut rng = Rng::seeded(p.seed.wrapping_add(n.wrapping_mul(0x2545_F491_4F6C_DD1D)));
    let mut ks = vec![0i64; batch];
    let mut cs = vec![String::with_capacity(120); batch];
    let mut pads = vec![String::with_capacity(60); batch];
    let mut loaded = 0u64;
    let mut in_trx = 0u64;
    conn.execute(begin, &[])?;
    while loaded < p.table_size {
        let rows = (p.table_size - loaded).min(batch as u64) as usize;
        for r in 0..rows {
            ks[r] = rng.uniform(1, p.table_size as i64);
            rng.digit_groups(10, &mut cs[r]);
            rng.digit_groups(5, &mut pads[r]);
        }
        let mut params: Vec<Param<'_>> = Vec::with_capacity(rows * 3);
        for r in 0..rows {
            params.extend([
                Param::Int(ks[r]),
                Param::Text(&cs[r]),
                Param::Text(&pads[r]),
            ]);
        }
        if rows == batch {
            conn.execute(full, &params)?;
        } else {
            let tail = conn.prepare(&insert_sql(rows), PsMode::Auto)?;
            conn.execute(tail, &params)?;
        }
        loaded += rows as u64;
        in_trx += rows as u64;
        done.fetch_add(rows as u64, Ordering::Relaxed);
        if in_trx >= COMMIT_ROWS && loaded < p.table_size {
            conn.execute(commit, &[])?;
            conn.execute(begin, &[])?;
            in_trx = 0;
        }
    }
    conn.execute(commit, &[])?;
    Ok(())
}

/// Quiets the engine after the load and after the write-heavy block
/// (reference §1.6): the dialect's statements, then sleep out the rest of
/// `budget`. A statement the engine refuses (e.g. for lack of privileges)
/// does not stop the others. Returns how long it took and what was refused.
pub fn settle(
    driver: &dyn Driver,
    tables: usize,
    budget: Duration,
) -> DbResult<(Duration, Vec<String>)> {
    let names: Vec<String> = (1..=tables).map(table_name).collect();
    crate::harness::settle_tables(driver, &names, budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sqlite::SqliteDriver;

    #[test]
    fn load_fills_tables_with_sysbench_rows_and_index() {
        let dir = tempfile::tempdir().unwrap();
        let driver = SqliteDriver::new(&dir.path().join("sb.db"), vec![]);
        let n = 1234u64;
        let stats = load(
            &driver,
            &LoadParams {
                tables: 2,
                table_size: n,
                seed: 1,
            },
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(stats.rows, 2 * n);
        let mut c = driver.connect().unwrap();
        for t in 1..=2 {
            let q = |c: &mut Box<dyn Conn>, sql: String| c.query_scalar(&sql).unwrap().unwrap();
            assert_eq!(
                q(
                    &mut c,
                    format!("SELECT count(*) || ',' || min(id) || ',' || max(id) FROM sbtest{t}")
                ),
                format!("{n},1,{n}")
            );
            assert_eq!(
                q(
                    &mut c,
                    format!("SELECT min(k) >= 1 AND max(k) <= {n} FROM sbtest{t}")
                ),
                "1"
            );
            assert_eq!(
                q(
                    &mut c,
                    format!(
                        "SELECT min(length(c)) || ',' || max(length(c)) || ',' || min(length(pad)) || ',' || max(length(pad)) FROM sbtest{t}"
                    )
                ),
                "119,119,59,59"
            );
            assert_eq!(
                q(
                    &mut c,
                    format!(
                        "SELECT count(*) FROM sqlite_master WHERE type='index' AND name='k_{t}'"
                    )
                ),
                "1"
            );
        }
        // Loading again replaces the tables.
        load(
            &driver,
            &LoadParams {
                tables: 1,
                table_size: 10,
                seed: 2,
            },
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(
            c.query_scalar("SELECT count(*) FROM sbtest1")
                .unwrap()
                .unwrap(),
            "10"
        );
        settle(&driver, 1, Duration::ZERO).unwrap();
    }
}

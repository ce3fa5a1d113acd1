//! Dropping, creating and filling the nine tables (TPC-C 4.3.3): the item
//! catalogue, then each warehouse with its stock, districts, customers,
//! history, orders, order lines and new orders. Warehouses load in parallel
//! unless the engine has a single writer; secondary indexes are built after
//! all rows are in.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::engine::{
    Conn, DbError, DbResult, Driver, KeyedTable, Param, PsMode, SqlAccess, StmtId,
};
use crate::results::LoadStats;
use crate::suite::rand::Rng;

use super::draw::{self, CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER, ITEMS, ORDERS};
use super::schema;

/// Rows per multi-row INSERT (fewer when the engine's parameter limit needs it).
const BATCH_ROWS: usize = 200;
/// Rows per transaction.
const COMMIT_ROWS: u64 = 20_000;

/// Why a load ended early on Ctrl-C.
pub const STOPPED: &str = "stopped by Ctrl-C during the load";

/// One value of a row being loaded.
enum LoadValue {
    Int(i64),
    Text(String),
    /// The database's current time (`CURRENT_TIMESTAMP`).
    Now,
    Null,
}

/// Multi-row INSERTs into one table; rows of the same shape (which columns
/// are NULL or the current time) share one prepared statement.
struct Inserter<'t> {
    table: &'t KeyedTable,
    shape: String,
    rows: usize,
    values: Vec<LoadValue>,
    max_rows: usize,
    prepared: HashMap<(String, usize), StmtId>,
}

impl<'t> Inserter<'t> {
    fn new(table: &'t KeyedTable, max_params: usize) -> Self {
        let max_rows = (max_params / table.columns.len()).clamp(1, BATCH_ROWS);
        Inserter {
            table,
            shape: String::new(),
            rows: 0,
            values: Vec::new(),
            max_rows,
            prepared: HashMap::new(),
        }
    }

    fn row(&mut self, l: &mut Loader<'_>, row: Vec<LoadValue>) -> DbResult<()> {
        debug_assert_eq!(row.len(), self.table.columns.len());
        let shape: String = row
            .iter()
            .map(|v| match v {
                LoadValue::Now => 'n',
                LoadValue::Null => '0',
                _ => '?',
            })
            .collect();
        if self.rows > 0 && (shape != self.shape || self.rows >= self.max_rows) {
            self.flush(l)?;
        }
        self.shape = shape;
        self.values.extend(row);
        self.rows += 1;
        Ok(())
    }

    fn flush(&mut self, l: &mut Loader<'_>) -> DbResult<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let key = (self.shape.clone(), self.rows);
        let stmt = match self.prepared.get(&key) {
            Some(s) => *s,
            None => {
                let tuple: Vec<&str> = self
                    .shape
                    .chars()
                    .map(|c| match c {
                        'n' => "CURRENT_TIMESTAMP",
                        '0' => "NULL",
                        _ => "?",
                    })
                    .collect();
                let tuple = format!("({})", tuple.join(", "));
                let sql = format!(
                    "INSERT INTO {} ({}) VALUES {}",
                    self.table.name,
                    self.table.column_list(),
                    vec![tuple; self.rows].join(", ")
                );
                let s = l.conn.prepare(&sql, PsMode::Auto)?;
                self.prepared.insert(key, s);
                s
            }
        };
        let params: Vec<Param<'_>> = self
            .values
            .iter()
            .filter_map(|v| match v {
                LoadValue::Int(i) => Some(Param::Int(*i)),
                LoadValue::Text(s) => Some(Param::Text(s)),
                LoadValue::Now | LoadValue::Null => None,
            })
            .collect();
        l.conn.execute(stmt, &params)?;
        let n = self.rows as u64;
        self.values.clear();
        self.rows = 0;
        l.rows_done(n)
    }
}

/// One loading connection and its transaction.
struct Loader<'a> {
    conn: Box<dyn Conn>,
    db: &'a dyn SqlAccess,
    in_txn: u64,
    done: &'a AtomicU64,
}

impl Loader<'_> {
    fn rows_done(&mut self, n: u64) -> DbResult<()> {
        if crate::harness::runner::stop_requested() {
            return Err(DbError::fatal(STOPPED));
        }
        self.done.fetch_add(n, Ordering::Relaxed);
        self.in_txn += n;
        if self.in_txn >= COMMIT_ROWS {
            self.conn.query(self.db.dialect().commit())?;
            self.conn.query(self.db.dialect().begin_write())?;
            self.in_txn = 0;
        }
        Ok(())
    }
}

/// Rows the load writes for `warehouses` (order lines are drawn, so this is
/// their expected number).
pub fn expected_rows(warehouses: u32) -> u64 {
    let w = warehouses as u64;
    let per_district =
        3 * CUSTOMERS as u64 + (ORDERS - FIRST_NEW_ORDER + 1) as u64 + ORDERS as u64 * 10;
    ITEMS as u64 + w * (1 + ITEMS as u64 + DISTRICTS as u64 * (1 + per_district))
}

/// Drops and creates the nine tables and fills them for `warehouses`.
/// `progress` receives the rows inserted so far.
pub fn load(
    driver: &dyn Driver,
    warehouses: u32,
    seed: u64,
    progress: &mut dyn FnMut(u64),
) -> DbResult<LoadStats> {
    let db = driver.require_sql()?;
    let started = Instant::now();
    let tables = schema::all();
    {
        let mut c = db.connect()?;
        for t in tables.iter().rev() {
            c.query(&format!("DROP TABLE IF EXISTS {}", t.name))?;
        }
        for t in &tables {
            for sql in db.dialect().create_keyed_table(t) {
                c.query(&sql)?;
            }
        }
    }
    let caps = driver.caps();
    let parallel = if caps.single_writer {
        1
    } else {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .min(warehouses as usize + 1)
            .max(1)
    };
    // Job 0 is the item catalogue, job w the warehouse w.
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let result: DbResult<()> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parallel)
            .map(|_| {
                s.spawn(|| -> DbResult<()> {
                    let mut l = Loader {
                        conn: db.connect()?,
                        db,
                        in_txn: 0,
                        done: &done,
                    };
                    l.conn.query(db.dialect().begin_write())?;
                    loop {
                        let job = next.fetch_add(1, Ordering::Relaxed);
                        if job > warehouses as u64 {
                            break;
                        }
                        let mut rng = Rng::seeded(seed ^ job.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                        if job == 0 {
                            load_items(&mut l, &mut rng, caps.max_params)?;
                        } else {
                            load_warehouse(&mut l, &mut rng, job as i64, caps.max_params)?;
                        }
                    }
                    l.conn.query(db.dialect().commit())?;
                    Ok(())
                })
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            progress(done.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut first = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(DbError::fatal("a load thread panicked")));
            if first.is_ok() {
                first = r;
            }
        }
        first
    });
    result?;
    progress(done.load(Ordering::Relaxed));
    let insert_secs = started.elapsed().as_secs_f64();
    let ix = Instant::now();
    let mut c = db.connect()?;
    for t in &tables {
        for i in &t.indexes {
            c.query(&db.dialect().create_keyed_index(t, i))?;
        }
    }
    let index_secs = ix.elapsed().as_secs_f64();
    let rows = done.load(Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    Ok(LoadStats {
        rows,
        secs,
        insert_secs,
        index_secs,
        rows_per_sec: rows as f64 / secs.max(1e-9),
        hw: None,
    })
}

fn text(s: &str) -> LoadValue {
    LoadValue::Text(s.to_string())
}

fn load_items(l: &mut Loader<'_>, rng: &mut Rng, max_params: usize) -> DbResult<()> {
    let t = schema::item();
    let mut ins = Inserter::new(&t, max_params);
    let (mut name, mut data, mut price) = (String::new(), String::new(), String::new());
    for i in 1..=ITEMS {
        name.clear();
        draw::astring(rng, 14, 24, &mut name);
        draw::data_with_original(rng, 26, 50, &mut data);
        draw::money(rng.uniform(100, 10_000), &mut price);
        ins.row(
            l,
            vec![
                LoadValue::Int(i),
                LoadValue::Int(rng.uniform(1, 10_000)),
                text(&name),
                text(&price),
                text(&data),
            ],
        )?;
    }
    ins.flush(l)
}

/// Name, street 1 and 2, city, state, zip.
fn address(rng: &mut Rng, name_len: (i64, i64)) -> Vec<LoadValue> {
    let mut v = Vec::with_capacity(6);
    if name_len.1 > 0 {
        let mut s = String::new();
        draw::astring(rng, name_len.0, name_len.1, &mut s);
        v.push(LoadValue::Text(s));
    }
    for (lo, hi) in [(10, 20), (10, 20), (10, 20), (2, 2)] {
        let mut s = String::new();
        draw::astring(rng, lo, hi, &mut s);
        v.push(LoadValue::Text(s));
    }
    let mut z = String::new();
    draw::zip(rng, &mut z);
    v.push(LoadValue::Text(z));
    v
}

fn tax(rng: &mut Rng) -> LoadValue {
    LoadValue::Text(format!("0.{:04}", rng.uniform(0, 2000)))
}

/// Warehouse `w`'s stock: a row per item, drawn in item order (after the
/// warehouse row, before the districts: the load's draws stay in order).
fn load_stock(l: &mut Loader<'_>, rng: &mut Rng, w: i64, max_params: usize) -> DbResult<()> {
    let ts = schema::stock();
    let mut ins = Inserter::new(&ts, max_params);
    let mut data = String::new();
    for i in 1..=ITEMS {
        let mut row = vec![
            LoadValue::Int(i),
            LoadValue::Int(w),
            LoadValue::Int(rng.uniform(10, 100)),
        ];
        for _ in 0..10 {
            let mut s = String::new();
            draw::astring(rng, 24, 24, &mut s);
            row.push(LoadValue::Text(s));
        }
        draw::data_with_original(rng, 26, 50, &mut data);
        row.extend([
            LoadValue::Int(0),
            LoadValue::Int(0),
            LoadValue::Int(0),
            text(&data),
        ]);
        ins.row(l, row)?;
    }
    ins.flush(l)
}

/// Customer `c` of district `d` of warehouse `w` and its history row, as
/// the load draws them (`s`: the last name's buffer).
fn customer_rows(
    rng: &mut Rng,
    c: i64,
    d: i64,
    w: i64,
    s: &mut String,
) -> (Vec<LoadValue>, Vec<LoadValue>) {
    let n = if c <= 1000 {
        c - 1
    } else {
        draw::nurand(rng, 255, draw::C_LAST_LOAD, 0, 999)
    };
    draw::last_name(n, s);
    let mut first = String::new();
    draw::astring(rng, 8, 16, &mut first);
    let mut row = vec![
        LoadValue::Int(c),
        LoadValue::Int(d),
        LoadValue::Int(w),
        LoadValue::Text(first),
        text("OE"),
    ];
    row.push(text(s));
    row.extend(address(rng, (0, 0)));
    let mut phone = String::new();
    draw::nstring(rng, 16, 16, &mut phone);
    let credit = if rng.below(10) == 0 { "BC" } else { "GC" };
    let mut cdata = String::new();
    draw::astring(rng, 300, 500, &mut cdata);
    row.extend([
        LoadValue::Text(phone),
        LoadValue::Now,
        text(credit),
        text("50000.00"),
        LoadValue::Text(format!("0.{:04}", rng.uniform(0, 5000))),
        text("-10.00"),
        text("10.00"),
        LoadValue::Int(1),
        LoadValue::Int(0),
        LoadValue::Text(cdata),
    ]);
    let mut hdata = String::new();
    draw::astring(rng, 12, 24, &mut hdata);
    let history = vec![
        LoadValue::Int(c),
        LoadValue::Int(d),
        LoadValue::Int(w),
        LoadValue::Int(d),
        LoadValue::Int(w),
        LoadValue::Now,
        text("10.00"),
        LoadValue::Text(hdata),
    ];
    (row, history)
}

fn load_warehouse(l: &mut Loader<'_>, rng: &mut Rng, w: i64, max_params: usize) -> DbResult<()> {
    let tw = schema::warehouse();
    let mut ins = Inserter::new(&tw, max_params);
    let mut row = vec![LoadValue::Int(w)];
    row.extend(address(rng, (6, 10)));
    row.extend([tax(rng), text("300000.00")]);
    ins.row(l, row)?;
    ins.flush(l)?;

    load_stock(l, rng, w, max_params)?;

    let td = schema::district();
    let tc = schema::customer();
    let th = schema::history();
    let to = schema::orders();
    let tol = schema::order_line();
    let tno = schema::new_order();
    let mut ins_d = Inserter::new(&td, max_params);
    let mut ins_c = Inserter::new(&tc, max_params);
    let mut ins_h = Inserter::new(&th, max_params);
    let mut ins_o = Inserter::new(&to, max_params);
    let mut ins_ol = Inserter::new(&tol, max_params);
    let mut ins_no = Inserter::new(&tno, max_params);
    let mut s = String::new();
    for d in 1..=DISTRICTS {
        let mut row = vec![LoadValue::Int(d), LoadValue::Int(w)];
        row.extend(address(rng, (6, 10)));
        row.extend([tax(rng), text("30000.00"), LoadValue::Int(ORDERS + 1)]);
        ins_d.row(l, row)?;

        for c in 1..=CUSTOMERS {
            let (customer, history) = customer_rows(rng, c, d, w, &mut s);
            ins_c.row(l, customer)?;
            ins_h.row(l, history)?;
        }

        let customers = draw::permutation(rng, CUSTOMERS);
        for o in 1..=ORDERS {
            let delivered = o < FIRST_NEW_ORDER;
            let ol_cnt = rng.uniform(5, 15);
            ins_o.row(
                l,
                vec![
                    LoadValue::Int(o),
                    LoadValue::Int(d),
                    LoadValue::Int(w),
                    LoadValue::Int(customers[(o - 1) as usize]),
                    LoadValue::Now,
                    if delivered {
                        LoadValue::Int(rng.uniform(1, 10))
                    } else {
                        LoadValue::Null
                    },
                    LoadValue::Int(ol_cnt),
                    LoadValue::Int(1),
                ],
            )?;
            for n in 1..=ol_cnt {
                let mut dist = String::new();
                draw::astring(rng, 24, 24, &mut dist);
                let amount = if delivered {
                    "0.00".to_string()
                } else {
                    let mut a = String::new();
                    draw::money(rng.uniform(1, 999_999), &mut a);
                    a
                };
                ins_ol.row(
                    l,
                    vec![
                        LoadValue::Int(o),
                        LoadValue::Int(d),
                        LoadValue::Int(w),
                        LoadValue::Int(n),
                        LoadValue::Int(rng.uniform(1, ITEMS)),
                        LoadValue::Int(w),
                        if delivered {
                            LoadValue::Now
                        } else {
                            LoadValue::Null
                        },
                        LoadValue::Int(5),
                        LoadValue::Text(amount),
                        LoadValue::Text(dist),
                    ],
                )?;
            }
            if !delivered {
                ins_no.row(
                    l,
                    vec![LoadValue::Int(o), LoadValue::Int(d), LoadValue::Int(w)],
                )?;
            }
        }
    }
    for i in [
        &mut ins_d,
        &mut ins_c,
        &mut ins_h,
        &mut ins_o,
        &mut ins_ol,
        &mut ins_no,
    ] {
        i.flush(l)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_rows_add_up_per_warehouse() {
        // items + warehouse + stock + 10 × (district + 3000 customers +
        // 3000 history + 3000 orders + 900 new orders + ~30000 order lines)
        assert_eq!(
            expected_rows(1),
            100_000 + 1 + 100_000 + 10 * (1 + 3000 + 3000 + 3000 + 900 + 30_000)
        );
        assert_eq!(
            expected_rows(2) - expected_rows(1),
            expected_rows(1) - 100_000
        );
    }
}

//! A terminal: one connection bound to a home warehouse (and district, for
//! Stock-Level) that runs the five transactions in the 45/43/4/4/4 mix.
//!
//! A transaction that fails with a retryable error (deadlock, lock wait
//! timeout, serialization failure, busy) is rolled back and run again with
//! the same input; those retries are counted apart from errors, and the
//! transaction's response time includes them. 1 % of New-Orders name an
//! item that does not exist and roll back on purpose: they count as
//! completed New-Orders and as rollbacks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::engine::{
    Conn, DbError, DbResult, Dialect, Driver, ErrorClass, Param, PsMode, Rows, StmtId,
};
use crate::harness::measure::{Counts, new_histogram, now_ns};
use crate::harness::runner::Worker;
use crate::suite::rand::Rng;

use super::draw::{self, CUSTOMERS, DISTRICTS, ITEMS, KINDS};
use super::schema::dist_column;

/// Retries of one transaction before its error counts as a failure.
const MAX_RETRIES: u32 = 100;

/// What one terminal counted per transaction kind while measuring.
#[derive(Clone, Debug)]
pub struct KindTally {
    pub retries: u64,
    pub rollbacks: u64,
    /// Response times (nanoseconds) of completed transactions, retries
    /// included, keying and think time excluded.
    pub hist: Histogram<u64>,
}

impl Default for KindTally {
    fn default() -> Self {
        KindTally {
            retries: 0,
            rollbacks: 0,
            hist: new_histogram(),
        }
    }
}

/// What a terminal is told when it starts.
pub struct TerminalConfig {
    pub warehouses: i64,
    pub home_w: i64,
    pub home_d: i64,
    pub seed: u64,
    pub keying: bool,
    /// `SET ... ISOLATION LEVEL` for the session, if any.
    pub isolation_sql: Option<String>,
    pub ps_mode: PsMode,
    /// Held around every write transaction when the engine has a single writer.
    pub writer: Option<Arc<Mutex<()>>>,
    /// Set when the measured interval starts: counters before it are not kept.
    pub measuring: Arc<AtomicBool>,
    /// Run only this transaction (an index of [`draw::KINDS`]) instead of
    /// drawing each from the mix: `rqps compat` checks them one by one.
    pub only: Option<usize>,
}

struct Stmts {
    begin_read: StmtId,
    begin_write: StmtId,
    commit: StmtId,
    rollback: StmtId,
    // New-Order
    /// The customer and its warehouse's tax, in one join.
    no_customer: StmtId,
    no_district: StmtId,
    no_district_next: StmtId,
    no_insert_order: StmtId,
    no_insert_new_order: StmtId,
    /// By line count − [`MIN_LINES`]: every line's item in one `IN` list.
    no_items: Vec<StmtId>,
    /// By line count − [`MIN_LINES`]: every line's stock row, locked, in
    /// key order.
    no_stocks: Vec<StmtId>,
    no_update_stock: StmtId,
    /// By line count − [`MIN_LINES`]: every order line in one insert; a
    /// one-row insert alone where the engine has no multi-row insert.
    no_insert_lines: Vec<StmtId>,
    // Payment
    pay_warehouse_ytd: StmtId,
    pay_warehouse: StmtId,
    pay_district_ytd: StmtId,
    pay_district: StmtId,
    customer_by_name: StmtId,
    pay_customer: StmtId,
    pay_customer_data: StmtId,
    pay_update_customer: StmtId,
    pay_update_customer_data: StmtId,
    pay_history: StmtId,
    // Order-Status
    os_customer: StmtId,
    os_customer_by_name: StmtId,
    os_last_order: StmtId,
    os_lines: StmtId,
    // Delivery
    dl_oldest: StmtId,
    dl_delete: StmtId,
    dl_order_customer: StmtId,
    dl_carrier: StmtId,
    dl_lines: StmtId,
    dl_sum: StmtId,
    dl_customer: StmtId,
    // Stock-Level
    sl_next: StmtId,
    sl_count: StmtId,
}

impl Stmts {
    fn prepare(
        c: &mut dyn Conn,
        d: &dyn Dialect,
        mode: PsMode,
        multi_row_insert: bool,
    ) -> DbResult<Self> {
        let fu = d.for_update();
        let mut p = |sql: &str| c.prepare(sql, mode);
        Ok(Stmts {
            begin_read: p(d.begin_read())?,
            begin_write: p(d.begin_write())?,
            commit: p(d.commit())?,
            rollback: p(d.rollback())?,
            no_customer: p(
                "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
                 WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
            )?,
            no_district: p(&format!(
                "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ?{fu}"
            ))?,
            no_district_next: p("UPDATE district SET d_next_o_id = d_next_o_id + 1 \
                 WHERE d_w_id = ? AND d_id = ?")?,
            no_insert_order: p(
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, \
                 o_carrier_id, o_ol_cnt, o_all_local) \
                 VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
            )?,
            no_insert_new_order: p(
                "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
            )?,
            no_items: (MIN_LINES..=MAX_LINES)
                .map(|n| p(&items_sql(n)))
                .collect::<DbResult<_>>()?,
            no_stocks: (MIN_LINES..=MAX_LINES)
                .map(|n| p(&stock_sql(n, fu)))
                .collect::<DbResult<_>>()?,
            no_update_stock: p("UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, \
                 s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? \
                 WHERE s_w_id = ? AND s_i_id = ?")?,
            no_insert_lines: if multi_row_insert {
                (MIN_LINES..=MAX_LINES)
                    .map(|n| p(&order_lines_sql(n)))
                    .collect::<DbResult<_>>()?
            } else {
                vec![p(&order_lines_sql(1))?]
            },
            pay_warehouse_ytd: p("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?")?,
            pay_warehouse: p(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip \
                 FROM warehouse WHERE w_id = ?",
            )?,
            pay_district_ytd: p("UPDATE district SET d_ytd = d_ytd + ? \
                 WHERE d_w_id = ? AND d_id = ?")?,
            pay_district: p(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip \
                 FROM district WHERE d_w_id = ? AND d_id = ?",
            )?,
            customer_by_name: p("SELECT c_id FROM customer \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")?,
            pay_customer: p(&format!(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, \
                 c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since \
                 FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{fu}"
            ))?,
            pay_customer_data: p("SELECT c_data FROM customer \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")?,
            pay_update_customer: p("UPDATE customer SET c_balance = c_balance - ?, \
                 c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")?,
            pay_update_customer_data: p("UPDATE customer SET c_balance = c_balance - ?, \
                 c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, \
                 c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")?,
            pay_history: p(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, \
                 h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
            )?,
            os_customer: p("SELECT c_balance, c_first, c_middle, c_last FROM customer \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")?,
            os_customer_by_name: p("SELECT c_id, c_balance, c_first, c_middle FROM customer \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")?,
            os_last_order: p("SELECT o_id, o_carrier_id, o_entry_d FROM orders \
                 WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1")?,
            os_lines: p(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
                 FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            )?,
            dl_oldest: p(&format!(
                "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? \
                 ORDER BY no_o_id LIMIT 1{fu}"
            ))?,
            dl_delete: p("DELETE FROM new_order \
                 WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?")?,
            dl_order_customer: p("SELECT o_c_id FROM orders \
                 WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")?,
            dl_carrier: p("UPDATE orders SET o_carrier_id = ? \
                 WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")?,
            dl_lines: p("UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP \
                 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")?,
            dl_sum: p("SELECT SUM(ol_amount) FROM order_line \
                 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")?,
            dl_customer: p("UPDATE customer SET c_balance = c_balance + ?, \
                 c_delivery_cnt = c_delivery_cnt + 1 \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")?,
            sl_next: p("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")?,
            sl_count: p("SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock \
                 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? \
                 AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?")?,
        })
    }
}

/// Fewest and most lines of a New-Order (TPC-C 2.4.1.3).
const MIN_LINES: usize = 5;
const MAX_LINES: usize = 15;

// New-Order reads its items and its stock rows with one statement each and
// inserts its order lines with one, as go-tpc does, instead of one round
// trip per line (tpcc-mysql, BenchBase): a 10-line New-Order is 20
// statements instead of 48. Every statement is a round trip that costs the
// client and the server a send, a receive and a wake-up each way; see
// `bench/tpcc-client.sh` in the README for what that saved.

/// The price of each item named in `n` placeholders (duplicates allowed:
/// an item comes back once however often it is named).
fn items_sql(n: usize) -> String {
    format!(
        "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({})",
        vec!["?"; n].join(", ")
    )
}

/// The stock rows of `n` (warehouse, item) pairs, locked with `fu`, in key
/// order; the first placeholder is the district whose `s_dist_xx` is read.
///
/// Locks are taken in key order on both servers whatever order the pairs
/// are bound in: PostgreSQL locks rows after the sort (LockRows above
/// Sort), InnoDB reads the primary key's ranges in order. So two New-Orders
/// cannot deadlock on stock rows. The pairs are an OR of equalities, not
/// the row-value `(s_w_id, s_i_id) IN ((?, ?), ...)`: MariaDB 10.11 and
/// PostgreSQL 15 plan both the same (a range on the primary key; a
/// BitmapOr of its index), while SQLite 3.40 scans the whole table for the
/// row-value IN and searches the key once per pair for the OR.
///
/// The district is `? + 0` so that PostgreSQL types the placeholder as an
/// integer (alone in `CASE ?` it would be text, and text = integer fails).
fn stock_sql(n: usize, for_update: &str) -> String {
    let dist: String = (1..=DISTRICTS)
        .map(|d| format!(" WHEN {d} THEN {}", dist_column(d)))
        .collect();
    format!(
        "SELECT s_w_id, s_i_id, s_quantity, s_data, CASE ? + 0{dist} END FROM stock WHERE {} \
         ORDER BY s_w_id, s_i_id{for_update}",
        vec!["(s_w_id = ? AND s_i_id = ?)"; n].join(" OR ")
    )
}

/// An insert of `n` order lines.
fn order_lines_sql(n: usize) -> String {
    format!(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
         ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES {}",
        vec!["(?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"; n].join(", ")
    )
}

/// What a New-Order keeps between its statements, reused from one to the next.
#[derive(Default)]
struct NewOrderScratch {
    /// (original index, line), in lock order.
    order: Vec<(usize, Line)>,
    /// (item, price in cents) as the item query returned them.
    prices: Vec<(i64, i64)>,
    /// Per line (original index): its amount and its district's stock info.
    amounts: Vec<String>,
    dists: Vec<String>,
}

/// One order line of a New-Order's input.
#[derive(Clone, Copy, Debug)]
struct Line {
    item: i64,
    supply_w: i64,
    qty: i64,
}

/// A transaction's input, drawn once and kept for its retries.
#[derive(Clone, Debug)]
enum Input {
    NewOrder {
        d: i64,
        c: i64,
        lines: Vec<Line>,
        all_local: bool,
    },
    Payment {
        d: i64,
        c_w: i64,
        c_d: i64,
        customer: Customer,
        cents: i64,
    },
    OrderStatus {
        d: i64,
        customer: Customer,
    },
    Delivery {
        carrier: i64,
    },
    StockLevel {
        threshold: i64,
    },
}

#[derive(Clone, Debug)]
enum Customer {
    Id(i64),
    Name(String),
}

/// How a transaction ended when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Committed,
    /// The New-Order with an unknown item, rolled back on purpose.
    RolledBack,
}

pub struct Terminal {
    driver: Arc<dyn Driver>,
    cfg: TerminalConfig,
    conn: Box<dyn Conn>,
    st: Stmts,
    rows: Rows,
    no: NewOrderScratch,
    rng: Rng,
    kind: usize,
    pub tally: [KindTally; 5],
    /// Delivery's order total as text, reused from one district to the next.
    sum: String,
}

impl Terminal {
    pub fn new(driver: Arc<dyn Driver>, cfg: TerminalConfig) -> DbResult<Self> {
        let (conn, st) = Self::open(driver.as_ref(), &cfg)?;
        let rng = Rng::seeded(cfg.seed);
        Ok(Terminal {
            driver,
            cfg,
            conn,
            st,
            rows: Rows::default(),
            no: NewOrderScratch::default(),
            rng,
            kind: 0,
            tally: Default::default(),
            sum: String::new(),
        })
    }

    fn open(driver: &dyn Driver, cfg: &TerminalConfig) -> DbResult<(Box<dyn Conn>, Stmts)> {
        let db = driver.require_sql()?;
        let mut conn = db.connect()?;
        if let Some(sql) = &cfg.isolation_sql {
            conn.query(sql)?;
        }
        let multi = driver.caps().multi_row_insert;
        let st = Stmts::prepare(conn.as_mut(), db.dialect(), cfg.ps_mode, multi)?;
        Ok((conn, st))
    }

    fn ex(&mut self, s: StmtId, p: &[Param<'_>], c: &mut Counts) -> DbResult<u64> {
        let o = self.conn.execute(s, p)?;
        c.record(o);
        Ok(match o {
            crate::engine::Outcome::Affected(n) | crate::engine::Outcome::Rows(n) => n,
        })
    }

    fn fetch(&mut self, s: StmtId, p: &[Param<'_>], c: &mut Counts) -> DbResult<usize> {
        let o = self.conn.fetch(s, p, &mut self.rows)?;
        c.record(o);
        Ok(self.rows.len())
    }

    /// The id of the customer `who` in (w, d): by id, or the one in the
    /// middle (⌈n/2⌉) of those with that last name ordered by first name.
    fn find_customer(
        &mut self,
        stmt: StmtId,
        w: i64,
        d: i64,
        who: &Customer,
        c: &mut Counts,
    ) -> DbResult<i64> {
        match who {
            Customer::Id(id) => Ok(*id),
            Customer::Name(name) => {
                let n = self.fetch(stmt, &[Param::Int(w), Param::Int(d), Param::Text(name)], c)?;
                if n == 0 {
                    return Err(DbError::fatal(format!(
                        "no customer named {name} in warehouse {w} district {d}: the tables were not loaded by this suite"
                    )));
                }
                self.rows.int(n.div_ceil(2) - 1, 0)
            }
        }
    }

    fn run(&mut self, input: &Input, c: &mut Counts) -> DbResult<End> {
        let w = self.cfg.home_w;
        match input {
            Input::NewOrder {
                d,
                c: cid,
                lines,
                all_local,
            } => self.new_order(w, *d, *cid, lines, *all_local, c),
            Input::Payment {
                d,
                c_w,
                c_d,
                customer,
                cents,
            } => self.payment(w, *d, *c_w, *c_d, customer, *cents, c),
            Input::OrderStatus { d, customer } => self.order_status(w, *d, customer, c),
            Input::Delivery { carrier } => self.delivery(w, *carrier, c),
            Input::StockLevel { threshold } => self.stock_level(w, *threshold, c),
        }
    }

    fn new_order(
        &mut self,
        w: i64,
        d: i64,
        cid: i64,
        lines: &[Line],
        all_local: bool,
        c: &mut Counts,
    ) -> DbResult<End> {
        let mut sc = std::mem::take(&mut self.no);
        let r = self.new_order_with(&mut sc, w, d, cid, lines, all_local, c);
        self.no = sc;
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn new_order_with(
        &mut self,
        sc: &mut NewOrderScratch,
        w: i64,
        d: i64,
        cid: i64,
        lines: &[Line],
        all_local: bool,
        c: &mut Counts,
    ) -> DbResult<End> {
        let n = lines.len();
        if !(MIN_LINES..=MAX_LINES).contains(&n) {
            return Err(DbError::fatal(format!(
                "a New-Order has {MIN_LINES} to {MAX_LINES} lines, not {n}"
            )));
        }
        let k = n - MIN_LINES;
        let st = &self.st;
        let (begin, q_cust, q_dist, u_dist, i_ord, i_no, q_items, q_stock, u_stock, commit) = (
            st.begin_write,
            st.no_customer,
            st.no_district,
            st.no_district_next,
            st.no_insert_order,
            st.no_insert_new_order,
            st.no_items[k],
            st.no_stocks[k],
            st.no_update_stock,
            st.commit,
        );
        let rollback = st.rollback;
        let multi_row = st.no_insert_lines.len() > 1;
        let i_lines = st.no_insert_lines[if multi_row { k } else { 0 }];
        self.ex(begin, &[], c)?;
        if self.fetch(q_cust, &[Param::Int(w), Param::Int(d), Param::Int(cid)], c)? != 1 {
            return Err(DbError::fatal(format!(
                "customer {cid} of warehouse {w} district {d} is missing"
            )));
        }
        if self.fetch(q_dist, &[Param::Int(w), Param::Int(d)], c)? != 1 {
            return Err(DbError::fatal(format!(
                "district {d} of warehouse {w} is missing"
            )));
        }
        let o_id = self.rows.int(0, 0)?;
        self.ex(u_dist, &[Param::Int(w), Param::Int(d)], c)?;
        self.ex(
            i_ord,
            &[
                Param::Int(o_id),
                Param::Int(d),
                Param::Int(w),
                Param::Int(cid),
                Param::Int(n as i64),
                Param::Int(all_local as i64),
            ],
            c,
        )?;
        self.ex(i_no, &[Param::Int(o_id), Param::Int(d), Param::Int(w)], c)?;

        // The items, all at once; one that is not there (1 % of
        // New-Orders name one on purpose) rolls the order back.
        let mut ps = [Param::Int(0); 9 * MAX_LINES];
        for (p, l) in ps.iter_mut().zip(lines) {
            *p = Param::Int(l.item);
        }
        let found = self.fetch(q_items, &ps[..n], c)?;
        sc.prices.clear();
        for r in 0..found {
            let price = (self.rows.num(r, 1)? * 100.0).round() as i64;
            sc.prices.push((self.rows.int(r, 0)?, price));
        }
        if lines
            .iter()
            .any(|l| !sc.prices.iter().any(|&(i, _)| i == l.item))
        {
            self.ex(rollback, &[], c)?;
            return Ok(End::RolledBack);
        }

        self.new_order_stock(sc, w, d, lines, q_stock, u_stock, c)?;

        // The order lines, numbered in the order they were entered.
        for (i, l) in lines.iter().enumerate() {
            let at = if multi_row { 9 * i } else { 0 };
            ps[at..at + 9].copy_from_slice(&[
                Param::Int(o_id),
                Param::Int(d),
                Param::Int(w),
                Param::Int(i as i64 + 1),
                Param::Int(l.item),
                Param::Int(l.supply_w),
                Param::Int(l.qty),
                Param::Text(&sc.amounts[i]),
                Param::Text(&sc.dists[i]),
            ]);
            if !multi_row {
                self.ex(i_lines, &ps[..9], c)?;
            }
        }
        if multi_row {
            self.ex(i_lines, &ps[..9 * n], c)?;
        }
        self.ex(commit, &[], c)?;
        Ok(End::Committed)
    }

    /// New-Order's stock part: the stock rows of every line, locked, read
    /// at once, then each updated with the quantity its line leaves and the
    /// line's amount and district info kept in `sc` for the order lines.
    #[allow(clippy::too_many_arguments)]
    fn new_order_stock(
        &mut self,
        sc: &mut NewOrderScratch,
        w: i64,
        d: i64,
        lines: &[Line],
        q_stock: StmtId,
        u_stock: StmtId,
        c: &mut Counts,
    ) -> DbResult<()> {
        let n = lines.len();
        // The stock rows, locked, all at once. Lines go in (supply
        // warehouse, item) order, the order the rows come back in.
        sc.order.clear();
        sc.order.extend(lines.iter().copied().enumerate());
        sc.order.sort_by_key(|(_, l)| (l.supply_w, l.item));
        let mut ps = [Param::Int(0); 1 + 2 * MAX_LINES];
        ps[0] = Param::Int(d);
        for (j, (_, l)) in sc.order.iter().enumerate() {
            ps[1 + 2 * j] = Param::Int(l.supply_w);
            ps[2 + 2 * j] = Param::Int(l.item);
        }
        let rows = self.fetch(q_stock, &ps[..1 + 2 * n], c)?;
        sc.amounts.resize_with(n, String::new);
        sc.dists.resize_with(n, String::new);
        // The row of the line before (an item may be ordered twice: its
        // second line sees the quantity the first left) and its quantity.
        let (mut row, mut key, mut q) = (0, None, 0);
        for j in 0..n {
            let (i, l) = sc.order[j];
            if key != Some((l.supply_w, l.item)) {
                if row >= rows
                    || self.rows.int(row, 0)? != l.supply_w
                    || self.rows.int(row, 1)? != l.item
                {
                    return Err(DbError::fatal(format!(
                        "no stock row for item {} in warehouse {}: the tables were not loaded by this suite",
                        l.item, l.supply_w
                    )));
                }
                q = self.rows.int(row, 2)?;
                sc.dists[i].clear();
                sc.dists[i].push_str(self.rows.get(row, 4).unwrap_or(""));
                key = Some((l.supply_w, l.item));
                row += 1;
            } else {
                // The same row as the line before: the same stock info.
                let prev = std::mem::take(&mut sc.dists[sc.order[j - 1].0]);
                sc.dists[i].clone_from(&prev);
                sc.dists[sc.order[j - 1].0] = prev;
            }
            let new_q = if q >= l.qty + 10 {
                q - l.qty
            } else {
                q - l.qty + 91
            };
            q = new_q;
            let price = sc
                .prices
                .iter()
                .find(|&&(it, _)| it == l.item)
                .map_or(0, |p| p.1);
            draw::money(price * l.qty, &mut sc.amounts[i]);
            self.ex(
                u_stock,
                &[
                    Param::Int(new_q),
                    Param::Int(l.qty),
                    Param::Int((l.supply_w != w) as i64),
                    Param::Int(l.supply_w),
                    Param::Int(l.item),
                ],
                c,
            )?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn payment(
        &mut self,
        w: i64,
        d: i64,
        c_w: i64,
        c_d: i64,
        who: &Customer,
        cents: i64,
        c: &mut Counts,
    ) -> DbResult<End> {
        let st = &self.st;
        let (begin, u_w, q_w, u_d, q_d, by_name, q_c, q_cdata, u_c, u_cdata, i_h, commit) = (
            st.begin_write,
            st.pay_warehouse_ytd,
            st.pay_warehouse,
            st.pay_district_ytd,
            st.pay_district,
            st.customer_by_name,
            st.pay_customer,
            st.pay_customer_data,
            st.pay_update_customer,
            st.pay_update_customer_data,
            st.pay_history,
            st.commit,
        );
        let mut amount = String::new();
        draw::money(cents, &mut amount);
        self.ex(begin, &[], c)?;
        self.ex(u_w, &[Param::Text(&amount), Param::Int(w)], c)?;
        self.fetch(q_w, &[Param::Int(w)], c)?;
        let w_name = self.rows.get(0, 0).unwrap_or("").to_string();
        self.ex(
            u_d,
            &[Param::Text(&amount), Param::Int(w), Param::Int(d)],
            c,
        )?;
        self.fetch(q_d, &[Param::Int(w), Param::Int(d)], c)?;
        let d_name = self.rows.get(0, 0).unwrap_or("").to_string();
        let cid = self.find_customer(by_name, c_w, c_d, who, c)?;
        if self.fetch(q_c, &[Param::Int(c_w), Param::Int(c_d), Param::Int(cid)], c)? != 1 {
            return Err(DbError::fatal(format!(
                "customer {cid} of warehouse {c_w} district {c_d} is missing"
            )));
        }
        let key = [Param::Int(c_w), Param::Int(c_d), Param::Int(cid)];
        if self.rows.get(0, 9) == Some("BC") {
            self.fetch(q_cdata, &key, c)?;
            let mut data = format!("{cid} {c_d} {c_w} {d} {w} {amount} | ");
            data.push_str(self.rows.get(0, 0).unwrap_or(""));
            let cut = data.char_indices().nth(500).map_or(data.len(), |(i, _)| i);
            data.truncate(cut);
            self.ex(
                u_cdata,
                &[
                    Param::Text(&amount),
                    Param::Text(&amount),
                    Param::Text(&data),
                    key[0],
                    key[1],
                    key[2],
                ],
                c,
            )?;
        } else {
            self.ex(
                u_c,
                &[
                    Param::Text(&amount),
                    Param::Text(&amount),
                    key[0],
                    key[1],
                    key[2],
                ],
                c,
            )?;
        }
        let h_data = format!("{w_name}    {d_name}");
        self.ex(
            i_h,
            &[
                Param::Int(cid),
                Param::Int(c_d),
                Param::Int(c_w),
                Param::Int(d),
                Param::Int(w),
                Param::Text(&amount),
                Param::Text(&h_data),
            ],
            c,
        )?;
        self.ex(commit, &[], c)?;
        Ok(End::Committed)
    }

    fn order_status(&mut self, w: i64, d: i64, who: &Customer, c: &mut Counts) -> DbResult<End> {
        let st = &self.st;
        let (begin, q_c, by_name, q_o, q_l, commit) = (
            st.begin_read,
            st.os_customer,
            st.os_customer_by_name,
            st.os_last_order,
            st.os_lines,
            st.commit,
        );
        self.ex(begin, &[], c)?;
        let cid = self.find_customer(by_name, w, d, who, c)?;
        if matches!(who, Customer::Id(_)) {
            self.fetch(q_c, &[Param::Int(w), Param::Int(d), Param::Int(cid)], c)?;
        }
        if self.fetch(q_o, &[Param::Int(w), Param::Int(d), Param::Int(cid)], c)? == 1 {
            let o_id = self.rows.int(0, 0)?;
            self.fetch(q_l, &[Param::Int(w), Param::Int(d), Param::Int(o_id)], c)?;
        }
        self.ex(commit, &[], c)?;
        Ok(End::Committed)
    }

    fn delivery(&mut self, w: i64, carrier: i64, c: &mut Counts) -> DbResult<End> {
        let st = &self.st;
        let (begin, q_old, del, q_oc, u_car, u_lines, q_sum, u_c, commit) = (
            st.begin_write,
            st.dl_oldest,
            st.dl_delete,
            st.dl_order_customer,
            st.dl_carrier,
            st.dl_lines,
            st.dl_sum,
            st.dl_customer,
            st.commit,
        );
        self.ex(begin, &[], c)?;
        for d in 1..=DISTRICTS {
            let key = [Param::Int(w), Param::Int(d)];
            if self.fetch(q_old, &key, c)? == 0 {
                continue;
            }
            let o_id = self.rows.int(0, 0)?;
            let okey = [Param::Int(w), Param::Int(d), Param::Int(o_id)];
            // Another terminal delivered it while this one waited for the lock.
            if self.ex(del, &okey, c)? == 0 {
                continue;
            }
            self.fetch(q_oc, &okey, c)?;
            let cid = self.rows.int(0, 0)?;
            self.ex(u_car, &[Param::Int(carrier), okey[0], okey[1], okey[2]], c)?;
            self.ex(u_lines, &okey, c)?;
            self.fetch(q_sum, &okey, c)?;
            let mut sum = std::mem::take(&mut self.sum);
            sum.clear();
            sum.push_str(self.rows.get(0, 0).unwrap_or("0"));
            let r = self.ex(
                u_c,
                &[
                    Param::Text(&sum),
                    Param::Int(w),
                    Param::Int(d),
                    Param::Int(cid),
                ],
                c,
            );
            self.sum = sum;
            r?;
        }
        self.ex(commit, &[], c)?;
        Ok(End::Committed)
    }

    fn stock_level(&mut self, w: i64, threshold: i64, c: &mut Counts) -> DbResult<End> {
        let d = self.cfg.home_d;
        let st = &self.st;
        let (begin, q_next, q_count, commit) = (st.begin_read, st.sl_next, st.sl_count, st.commit);
        self.ex(begin, &[], c)?;
        self.fetch(q_next, &[Param::Int(w), Param::Int(d)], c)?;
        let next = self.rows.int(0, 0)?;
        self.fetch(
            q_count,
            &[
                Param::Int(w),
                Param::Int(d),
                Param::Int(next),
                Param::Int(next - 20),
                Param::Int(w),
                Param::Int(threshold),
            ],
            c,
        )?;
        self.ex(commit, &[], c)?;
        Ok(End::Committed)
    }

    /// Keying and think time: the terminal waits `secs`.
    fn wait_secs(secs: f64) {
        if secs > 0.0 {
            crate::harness::wait::sleep(Duration::from_secs_f64(secs));
        }
    }
}

/// The input of the next transaction of `kind` for a terminal of home
/// warehouse `w` among `warehouses`.
fn draw_input(r: &mut Rng, kind: usize, w: i64, warehouses: i64) -> Input {
    let customer = |r: &mut Rng| {
        if r.uniform(1, 100) <= 60 {
            let mut s = String::new();
            draw::run_last_name(r, &mut s);
            Customer::Name(s)
        } else {
            Customer::Id(draw::nurand(r, 1023, draw::C_ID, 1, CUSTOMERS))
        }
    };
    match kind {
        draw::NEW_ORDER => {
            let n = r.uniform(MIN_LINES as i64, MAX_LINES as i64);
            let rollback = r.uniform(1, 100) == 1;
            let mut all_local = true;
            let lines = (1..=n)
                .map(|i| {
                    let item = if rollback && i == n {
                        ITEMS + 1
                    } else {
                        draw::nurand(r, 8191, draw::C_ITEM, 1, ITEMS)
                    };
                    let supply_w = if warehouses > 1 && r.uniform(1, 100) == 1 {
                        all_local = false;
                        other_warehouse(r, w, warehouses)
                    } else {
                        w
                    };
                    Line {
                        item,
                        supply_w,
                        qty: r.uniform(1, 10),
                    }
                })
                .collect();
            Input::NewOrder {
                d: r.uniform(1, DISTRICTS),
                c: draw::nurand(r, 1023, draw::C_ID, 1, CUSTOMERS),
                lines,
                all_local,
            }
        }
        draw::PAYMENT => {
            let d = r.uniform(1, DISTRICTS);
            let (c_w, c_d) = if warehouses == 1 || r.uniform(1, 100) <= 85 {
                (w, d)
            } else {
                (other_warehouse(r, w, warehouses), r.uniform(1, DISTRICTS))
            };
            Input::Payment {
                d,
                c_w,
                c_d,
                customer: customer(r),
                cents: r.uniform(100, 500_000),
            }
        }
        draw::ORDER_STATUS => Input::OrderStatus {
            d: r.uniform(1, DISTRICTS),
            customer: customer(r),
        },
        draw::DELIVERY => Input::Delivery {
            carrier: r.uniform(1, 10),
        },
        _ => Input::StockLevel {
            threshold: r.uniform(10, 20),
        },
    }
}

fn other_warehouse(r: &mut Rng, w: i64, warehouses: i64) -> i64 {
    let o = r.uniform(1, warehouses - 1);
    if o >= w { o + 1 } else { o }
}

impl Worker for Terminal {
    /// The terminals tally their transactions from the warm-up's end on.
    fn warmed_up(&mut self) {
        self.cfg.measuring.store(true, Ordering::Relaxed);
    }

    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        let kind = match self.cfg.only {
            Some(k) => k,
            None => draw::pick(&mut self.rng),
        };
        self.kind = kind;
        if self.cfg.keying {
            Self::wait_secs(draw::KEYING_SECS[kind]);
        }
        let input = draw_input(&mut self.rng, kind, self.cfg.home_w, self.cfg.warehouses);
        let writes = matches!(kind, draw::NEW_ORDER | draw::PAYMENT | draw::DELIVERY);
        let writer = self.cfg.writer.clone().filter(|_| writes);
        let t0 = now_ns();
        let mut retries = 0u32;
        let end = loop {
            let guard = writer
                .as_ref()
                .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
            let r = self.run(&input, c);
            if r.is_err() {
                // Leave no transaction open behind an error; a lost
                // connection is the runner's to handle.
                let _ = self.conn.execute(self.st.rollback, &[]);
            }
            drop(guard);
            match r {
                Ok(end) => break end,
                Err(e) if e.class == ErrorClass::Retry && retries < MAX_RETRIES => {
                    retries += 1;
                }
                Err(e) => {
                    if self.cfg.measuring.load(Ordering::Relaxed) {
                        self.tally[kind].retries += retries as u64;
                    }
                    return Err(e);
                }
            }
        };
        let took = now_ns() - t0;
        if self.cfg.measuring.load(Ordering::Relaxed) {
            let t = &mut self.tally[kind];
            t.retries += retries as u64;
            t.rollbacks += (end == End::RolledBack) as u64;
            let _ = t.hist.record(took.max(1));
        }
        if self.cfg.keying {
            let mean = draw::THINK_SECS[kind];
            let secs = draw::think(&mut self.rng, mean);
            Self::wait_secs(secs);
        }
        Ok(())
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        match err.class {
            ErrorClass::Retry => {
                let _ = self.conn.execute(self.st.rollback, &[]);
                Ok(())
            }
            ErrorClass::Reconnect => {
                let (conn, st) = Self::open(self.driver.as_ref(), &self.cfg)?;
                self.conn = conn;
                self.st = st;
                Ok(())
            }
            ErrorClass::Fatal => Err(err.clone()),
        }
    }

    fn kinds(&self) -> &'static [&'static str] {
        &KINDS
    }

    fn kind(&self) -> usize {
        self.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_follow_the_specification_shares() {
        let mut r = Rng::seeded(21);
        let n = 100_000;
        let (mut rollbacks, mut lines, mut remote_lines, mut remote_orders) = (0, 0, 0, 0);
        for _ in 0..n {
            let Input::NewOrder {
                d,
                c,
                lines: l,
                all_local,
            } = draw_input(&mut r, draw::NEW_ORDER, 2, 3)
            else {
                panic!("not a New-Order");
            };
            assert!((1..=DISTRICTS).contains(&d) && (1..=CUSTOMERS).contains(&c));
            assert!((5..=15).contains(&l.len()), "{}", l.len());
            // Only the last line may name the unknown item.
            assert!(l[..l.len() - 1].iter().all(|x| x.item <= ITEMS));
            rollbacks += (l.last().unwrap().item == ITEMS + 1) as u32;
            lines += l.len();
            let remote = l.iter().filter(|x| x.supply_w != 2).count();
            assert!(
                l.iter()
                    .all(|x| (1..=10).contains(&x.qty) && (1..=3).contains(&x.supply_w))
            );
            remote_lines += remote;
            remote_orders += (!all_local) as u32;
            assert_eq!(all_local, remote == 0);
        }
        let pct = |a: f64, b: f64| a * 100.0 / b;
        let rb = pct(rollbacks as f64, n as f64);
        assert!((0.8..=1.2).contains(&rb), "rollbacks {rb} %");
        let rl = pct(remote_lines as f64, lines as f64);
        assert!((0.85..=1.15).contains(&rl), "remote lines {rl} %");
        assert!(remote_orders > 0);
        // One warehouse: nothing is remote.
        for _ in 0..1000 {
            if let Input::NewOrder { all_local, .. } = draw_input(&mut r, draw::NEW_ORDER, 1, 1) {
                assert!(all_local);
            }
        }
        let (mut remote, mut by_name) = (0, 0);
        for _ in 0..n {
            let Input::Payment {
                d,
                c_w,
                c_d,
                customer,
                cents,
            } = draw_input(&mut r, draw::PAYMENT, 1, 4)
            else {
                panic!("not a Payment");
            };
            assert!((100..=500_000).contains(&cents) && (1..=DISTRICTS).contains(&d));
            if c_w != 1 {
                remote += 1;
            } else {
                assert_eq!(c_d, d);
            }
            by_name += matches!(customer, Customer::Name(_)) as u32;
        }
        let rp = pct(remote as f64, n as f64);
        assert!((14.0..=16.0).contains(&rp), "remote payments {rp} %");
        let bn = pct(by_name as f64, n as f64);
        assert!((59.0..=61.0).contains(&bn), "payments by name {bn} %");
        for _ in 0..1000 {
            match draw_input(&mut r, draw::STOCK_LEVEL, 1, 1) {
                Input::StockLevel { threshold } => assert!((10..=20).contains(&threshold)),
                i => panic!("{i:?}"),
            }
            match draw_input(&mut r, draw::DELIVERY, 1, 1) {
                Input::Delivery { carrier } => assert!((1..=10).contains(&carrier)),
                i => panic!("{i:?}"),
            }
        }
    }

    /// A terminal of warehouse 1 on a SQLite database holding only the
    /// rows a New-Order of items 1..=3 reads: two warehouses, district
    /// (1, 1) at order 3001, customer (1, 1, 1), items 1..=3 at 1.00, 2.00
    /// and 3.00, and stock rows (1, 1..=3) and (2, 2).
    fn new_order_fixture(multi_row_insert: bool) -> (tempfile::TempDir, Terminal) {
        use crate::engine::sqlite::SqliteDriver;
        struct NoMultiRow(SqliteDriver);
        impl Driver for NoMultiRow {
            fn engine(&self) -> &'static str {
                self.0.engine()
            }
            fn sql(&self) -> Option<&dyn crate::engine::SqlAccess> {
                self.0.sql()
            }
            fn version(&self) -> DbResult<String> {
                self.0.version()
            }
            fn caps(&self) -> crate::engine::Caps {
                crate::engine::Caps {
                    multi_row_insert: false,
                    ..self.0.caps()
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let sqlite = SqliteDriver::new(&dir.path().join("tpcc.db"), vec![]);
        let driver: Arc<dyn Driver> = if multi_row_insert {
            Arc::new(sqlite)
        } else {
            Arc::new(NoMultiRow(sqlite))
        };
        let db = driver.require_sql().unwrap();
        let mut c = db.connect().unwrap();
        for t in super::super::schema::all() {
            for sql in db.dialect().create_keyed_table(&t) {
                c.query(&sql).unwrap();
            }
        }
        let dists: String = (1..=DISTRICTS).map(|d| format!(", 'w{{}}d{d}'")).collect();
        for sql in [
            "INSERT INTO warehouse (w_id, w_tax, w_ytd) VALUES (1, 0.1, 0), (2, 0.1, 0)".into(),
            "INSERT INTO district (d_id, d_w_id, d_tax, d_ytd, d_next_o_id) \
             VALUES (1, 1, 0.1, 0, 3001)"
                .into(),
            "INSERT INTO customer (c_id, c_d_id, c_w_id, c_discount, c_last, c_credit, \
             c_payment_cnt, c_delivery_cnt) VALUES (1, 1, 1, 0.1, 'BAR', 'GC', 1, 0)"
                .into(),
            "INSERT INTO item (i_id, i_im_id, i_name, i_price, i_data) \
             VALUES (1, 1, 'a', 1.00, 'x'), (2, 2, 'b', 2.00, 'y'), (3, 3, 'c', 3.00, 'z')"
                .into(),
            format!(
                "INSERT INTO stock (s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, \
                 s_remote_cnt, s_data{}) VALUES (1, 1, 50, 0, 0, 0, 'd'{}), \
                 (1, 2, 50, 0, 0, 0, 'd'{}), (1, 3, 12, 0, 0, 0, 'd'{}), \
                 (2, 2, 50, 0, 0, 0, 'd'{})",
                (1..=DISTRICTS)
                    .map(|d| format!(", {}", dist_column(d)))
                    .collect::<String>(),
                dists.replace("{}", "1"),
                dists.replace("{}", "1"),
                dists.replace("{}", "1"),
                dists.replace("{}", "2"),
            ),
        ] {
            c.query(&sql).unwrap();
        }
        let t = Terminal::new(
            driver,
            TerminalConfig {
                warehouses: 2,
                home_w: 1,
                home_d: 1,
                seed: 1,
                keying: false,
                isolation_sql: None,
                ps_mode: PsMode::Auto,
                writer: None,
                measuring: Arc::new(AtomicBool::new(true)),
                only: None,
            },
        )
        .unwrap();
        (dir, t)
    }

    /// `sql`'s rows, each as its values joined by `|`.
    fn rows_of(t: &mut Terminal, sql: &str) -> Vec<String> {
        let s = t.conn.prepare(sql, PsMode::Auto).unwrap();
        let mut rows = Rows::default();
        t.conn.fetch(s, &[], &mut rows).unwrap();
        (0..rows.len())
            .map(|r| {
                (0..rows.width())
                    .map(|c| rows.get(r, c).unwrap_or("NULL").to_string())
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect()
    }

    fn line(item: i64, supply_w: i64, qty: i64) -> Line {
        Line {
            item,
            supply_w,
            qty,
        }
    }

    #[test]
    fn a_batched_new_order_updates_each_stock_row_once_per_line_and_numbers_lines_as_entered() {
        for multi_row_insert in [true, false] {
            let (_dir, mut t) = new_order_fixture(multi_row_insert);
            // Item 2 twice from warehouse 1 (the second line sees what the
            // first left), once from warehouse 2, entered out of key order.
            let lines = [
                line(2, 1, 4),
                line(3, 1, 3),
                line(2, 1, 5),
                line(2, 2, 1),
                line(1, 1, 2),
            ];
            let mut c = Counts::default();
            let end = t.new_order(1, 1, 1, &lines, false, &mut c).unwrap();
            assert_eq!(end, End::Committed);
            assert_eq!(
                rows_of(
                    &mut t,
                    "SELECT s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt \
                     FROM stock ORDER BY s_w_id, s_i_id"
                ),
                [
                    "1|1|48|2|1|0",
                    // 50 - 4 = 46, then 46 - 5 = 41.
                    "1|2|41|9|2|0",
                    // 12 < 3 + 10: 12 - 3 + 91.
                    "1|3|100|3|1|0",
                    "2|2|49|1|1|1",
                ]
            );
            let ol = rows_of(
                &mut t,
                "SELECT ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, \
                 ol_amount, ol_dist_info FROM order_line ORDER BY ol_number",
            );
            let amounts: Vec<f64> = ol
                .iter()
                .map(|r| r.split('|').nth(5).unwrap().parse().unwrap())
                .collect();
            assert_eq!(amounts, [8.0, 9.0, 10.0, 2.0, 2.0], "{ol:?}");
            let rest: Vec<String> = ol
                .iter()
                .map(|r| {
                    let f: Vec<&str> = r.split('|').collect();
                    [&f[..5], &f[6..]].concat().join("|")
                })
                .collect();
            assert_eq!(
                rest,
                [
                    "3001|1|2|1|4|w1d1",
                    "3001|2|3|1|3|w1d1",
                    "3001|3|2|1|5|w1d1",
                    "3001|4|2|2|1|w2d1",
                    "3001|5|1|1|2|w1d1",
                ]
            );
            assert_eq!(
                rows_of(&mut t, "SELECT o_id, o_ol_cnt, o_all_local FROM orders"),
                ["3001|5|0"]
            );
            assert_eq!(
                rows_of(&mut t, "SELECT d_next_o_id FROM district"),
                ["3002"]
            );
            let per_line = if multi_row_insert { 0 } else { 4 };
            // BEGIN, customer, district, its update, order, new order,
            // items, stock, 5 stock updates, the lines, COMMIT.
            assert_eq!(
                c.reads + c.writes + c.other,
                15 + per_line,
                "{multi_row_insert}"
            );
        }
    }

    #[test]
    fn a_new_order_naming_an_unknown_item_rolls_back_before_locking_stock() {
        let (_dir, mut t) = new_order_fixture(true);
        let lines = [
            line(1, 1, 1),
            line(2, 1, 1),
            line(3, 1, 1),
            line(1, 1, 1),
            line(ITEMS + 1, 1, 1),
        ];
        let mut c = Counts::default();
        let end = t.new_order(1, 1, 1, &lines, true, &mut c).unwrap();
        assert_eq!(end, End::RolledBack);
        assert_eq!(rows_of(&mut t, "SELECT count(*) FROM orders"), ["0"]);
        assert_eq!(rows_of(&mut t, "SELECT count(*) FROM new_order"), ["0"]);
        assert_eq!(rows_of(&mut t, "SELECT sum(s_order_cnt) FROM stock"), ["0"]);
        assert_eq!(
            rows_of(&mut t, "SELECT d_next_o_id FROM district"),
            ["3001"]
        );
        // Every item named: 3 distinct ones found, so all is well when
        // the unknown one is dropped.
        let end = t
            .new_order(
                1,
                1,
                1,
                &lines[..4]
                    .iter()
                    .chain(&lines[..1])
                    .copied()
                    .collect::<Vec<_>>(),
                true,
                &mut c,
            )
            .unwrap();
        assert_eq!(end, End::Committed);
    }

    #[test]
    fn other_warehouses_are_uniform_and_never_home() {
        let mut r = Rng::seeded(9);
        let mut seen = [0u32; 5];
        for _ in 0..5000 {
            let o = other_warehouse(&mut r, 3, 4);
            assert!((1..=4).contains(&o) && o != 3, "{o}");
            seen[o as usize] += 1;
        }
        assert!(
            seen[1] > 1400 && seen[2] > 1400 && seen[4] > 1400,
            "{seen:?}"
        );
    }
}

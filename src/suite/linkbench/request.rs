//! One requester (spec A5): a read-write connection for the operations that
//! change the graph (explicit transactions) and a read-only one for reads
//! (autocommit), drawing each request from the mix.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::dist::{
    self, Graph, IdDists, LINK_DATA, LINK_UNIQUENESS, Mix, Motif, NODE_DATA, NODE_UNIQUENESS, OPS,
    lognormal_len, multiget_size,
};
use super::load::Clock;
use super::schema::{self, NODE_TYPE};
use crate::engine::{
    Conn, DbError, DbResult, Driver, ErrorClass, Outcome, Param, PsMode, SetTo, StmtId,
};
use crate::harness::measure::{Counts, now_ns};
use crate::harness::runner::{Worker, stop_requested};
use crate::suite::rand::Rng;

/// What every requester of a step shares.
pub struct RequestSetup {
    pub graph: Graph,
    pub ids: IdDists,
    pub mix: Mix,
    /// Most rows one list scan returns (spec: 10,000).
    pub list_limit: usize,
    /// Requests per second per requester; 0: as fast as it can.
    pub rate: f64,
    /// Measured requests each requester makes before it stops (None: until the step's end).
    pub requests: Option<u64>,
    /// Failed requests after which a requester gives up.
    pub max_failures: u64,
    /// Tries of one request through deadlocks and serialization failures.
    pub max_retries: u32,
    /// Where the times of links, nodes and counts come from.
    pub clock: Clock,
    /// Make only this operation (an index of [`dist::OPS`]) instead of
    /// drawing each from the mix: `rqps compat` checks them one by one.
    pub only: Option<usize>,
}

/// A requester's own figures over the measured interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ReqStats {
    /// Requests that completed.
    pub requests: u64,
    /// Requests that failed (the requester reconnected after each).
    pub failures: u64,
    /// Deadlocks and serialization failures a request was run again after.
    pub retries: u64,
    /// List scans, the rows they returned, and how many hit the limit.
    pub list_scans: u64,
    pub list_rows: u64,
    pub list_full: u64,
    /// List scans that asked for the next page of an earlier full one.
    pub list_pages: u64,
    /// Rows multigets returned.
    pub multiget_rows: u64,
    /// ADD_LINK that found the link already there and took the update path.
    pub add_existing: u64,
}

impl ReqStats {
    pub fn add(&mut self, o: &ReqStats) {
        self.requests += o.requests;
        self.failures += o.failures;
        self.retries += o.retries;
        self.list_scans += o.list_scans;
        self.list_rows += o.list_rows;
        self.list_full += o.list_full;
        self.list_pages += o.list_pages;
        self.multiget_rows += o.multiget_rows;
        self.add_existing += o.add_existing;
    }
}

/// Statements prepared on the read-write connection.
struct WriteStmts {
    begin: StmtId,
    commit: StmtId,
    rollback: StmtId,
    link_insert: StmtId,
    link_show: StmtId,
    link_touch: StmtId,
    link_hide: StmtId,
    count_inc: StmtId,
    count_dec: StmtId,
    node_insert: StmtId,
    node_update: StmtId,
    node_delete: StmtId,
}

/// Statements prepared on the read-only connection (multigets by size, as needed).
struct ReadStmts {
    get_node: StmtId,
    count_link: StmtId,
    list: StmtId,
    multiget: HashMap<usize, StmtId>,
}

const LINK_COLS: &str = "id1, id2, link_type, visibility, data, time, version";
const LINK_KEY: &str = "link_type = ? AND id1 = ? AND id2 = ?";

fn prepare_rw(driver: &dyn Driver, conn: &mut dyn Conn) -> DbResult<WriteStmts> {
    let db = driver.require_sql()?;
    let d = db.dialect();
    let link = schema::link();
    let count = schema::count();
    let node = schema::node();
    let mut p = |sql: &str| conn.prepare(sql, PsMode::Auto);
    Ok(WriteStmts {
        begin: p(d.begin_write())?,
        commit: p(d.commit())?,
        rollback: p(d.rollback())?,
        link_insert: p(&d.insert_ignore(&link, 1))?,
        link_show: p(&format!(
            "UPDATE {} SET visibility = 1, data = ?, time = ?, version = version + 1 \
             WHERE {LINK_KEY} AND visibility = 0",
            link.name
        ))?,
        link_touch: p(&format!(
            "UPDATE {} SET data = ?, time = ?, version = version + 1 \
             WHERE {LINK_KEY} AND visibility = 1",
            link.name
        ))?,
        link_hide: p(&format!(
            "UPDATE {} SET visibility = 0, time = ?, version = version + 1 \
             WHERE {LINK_KEY} AND visibility = 1",
            link.name
        ))?,
        count_inc: p(&d.upsert(
            &count,
            1,
            &[
                ("count", SetTo::Add(1)),
                ("time", SetTo::New),
                ("version", SetTo::Add(1)),
            ],
        ))?,
        count_dec: p(&format!(
            "UPDATE {} SET count = CASE WHEN count > 0 THEN count - 1 ELSE 0 END, \
             time = ?, version = version + 1 WHERE id = ? AND link_type = ?",
            count.name
        ))?,
        node_insert: p(&format!("{}?, ?, ?, ?)", d.insert_auto_id_prefix(&node)))?,
        node_update: p(&format!(
            "UPDATE {} SET version = version + 1, time = ?, data = ? WHERE id = ? AND type = {NODE_TYPE}",
            node.name
        ))?,
        node_delete: p(&format!(
            "DELETE FROM {} WHERE id = ? AND type = {NODE_TYPE}",
            node.name
        ))?,
    })
}

fn prepare_ro(conn: &mut dyn Conn, list_limit: usize) -> DbResult<ReadStmts> {
    Ok(ReadStmts {
        get_node: conn.prepare(
            &format!(
                "SELECT id, type, version, time, data FROM {} WHERE id = ?",
                schema::NODE
            ),
            PsMode::Auto,
        )?,
        count_link: conn.prepare(
            &format!(
                "SELECT count FROM {} WHERE id = ? AND link_type = ?",
                schema::COUNT
            ),
            PsMode::Auto,
        )?,
        list: conn.prepare(
            &format!(
                "SELECT {LINK_COLS} FROM {} WHERE id1 = ? AND link_type = ? \
                 AND time >= ? AND time <= ? AND visibility = 1 \
                 ORDER BY time DESC LIMIT {list_limit} OFFSET ?",
                schema::LINK
            ),
            PsMode::Auto,
        )?,
        multiget: HashMap::new(),
    })
}

/// Lists whose last scan filled a page, remembered for a later "next page"
/// request: at most this many (id1, type) pairs, each once (the reference's
/// history cache and its limit).
const PAGES_KEPT: usize = 2048;
/// Share of list scans that ask for the next page of a full one (spec A4).
const NEXT_PAGE_SHARE: f64 = 0.003;
/// Hit probabilities of drawn id2s (spec A4: id2 = id1 + U[0, ⌈n / p⌉)).
const P_ADD: f64 = 0.05;
const P_UPDATE: f64 = 0.9;
const P_GET: f64 = 0.5;

/// One requester.
pub struct Requester {
    driver: Arc<dyn Driver>,
    shared: Arc<RequestSetup>,
    rw: Box<dyn Conn>,
    ro: Box<dyn Conn>,
    rws: WriteStmts,
    ros: ReadStmts,
    rng: Rng,
    kind: usize,
    in_trx: bool,
    measuring: bool,
    pub stats: ReqStats,
    /// Failed requests over the whole step (warm-up included).
    failures: u64,
    pub gave_up: bool,
    /// The last error that failed a request.
    pub last_error: Option<String>,
    /// When the next request is due (rate-limited requesters), ns.
    next_due: f64,
    /// (id1, type, offset of the last full page) per remembered list.
    pages: Vec<(i64, i64, i64)>,
    data: String,
    link_motif: Motif,
    node_motif: Motif,
    id2s: Vec<i64>,
    params: Vec<Param<'static>>,
}

impl Requester {
    pub fn new(driver: Arc<dyn Driver>, shared: Arc<RequestSetup>, seed: u64) -> DbResult<Self> {
        let db = driver.require_sql()?;
        let mut rw = db.connect()?;
        let mut ro = db.connect()?;
        let rws = prepare_rw(driver.as_ref(), rw.as_mut())?;
        let ros = prepare_ro(ro.as_mut(), shared.list_limit)?;
        let mut rng = Rng::seeded(seed);
        let link_motif = Motif::new(&mut rng, LINK_UNIQUENESS);
        let node_motif = Motif::new(&mut rng, NODE_UNIQUENESS);
        Ok(Requester {
            driver,
            rws,
            ros,
            rw,
            ro,
            rng,
            kind: 0,
            in_trx: false,
            measuring: false,
            stats: ReqStats::default(),
            failures: 0,
            gave_up: false,
            last_error: None,
            next_due: now_ns() as f64,
            pages: Vec::new(),
            data: String::new(),
            link_motif,
            node_motif,
            id2s: Vec::new(),
            params: Vec::new(),
            shared,
        })
    }

    fn reconnect(&mut self) -> DbResult<()> {
        let db = self.driver.require_sql()?;
        let mut rw = db.connect()?;
        let mut ro = db.connect()?;
        self.rws = prepare_rw(self.driver.as_ref(), rw.as_mut())?;
        self.ros = prepare_ro(ro.as_mut(), self.shared.list_limit)?;
        self.rw = rw;
        self.ro = ro;
        self.in_trx = false;
        Ok(())
    }

    /// An id1 for a link read or write: mostly Zipf spread over the ids,
    /// sometimes Zipf over the ids ordered by out-degree (correlated).
    fn link_id1(&mut self, write: bool) -> (u64, usize) {
        let sh = &self.shared;
        let g = &sh.graph;
        let id1 = if self.rng.unit() < sh.ids.correlated {
            let z = if write {
                &sh.ids.link_write_corr
            } else {
                &sh.ids.link_read
            };
            g.by_degree(z.draw(&mut self.rng))
        } else {
            g.start + sh.ids.spread.apply(sh.ids.link_read.draw(&mut self.rng))
        };
        (id1, self.rng.below(g.link_types.len()))
    }

    /// An id2 for (id1, type): id1 + U[0, ⌈n / p⌉).
    fn id2(&mut self, id1: u64, t: usize, p: f64) -> i64 {
        let n = self.shared.graph.nlinks_of(id1, t);
        let range = ((n as f64 / p).ceil() as i64).max(1);
        id1 as i64 + self.rng.uniform(0, range - 1)
    }

    fn link_data(&mut self) {
        let len = lognormal_len(&mut self.rng, LINK_DATA.0, 1.0, LINK_DATA.1);
        self.link_motif.fill(&mut self.rng, len, &mut self.data);
    }

    fn node_data(&mut self) {
        let len = lognormal_len(&mut self.rng, NODE_DATA.0, 1.0, NODE_DATA.1);
        self.node_motif.fill(&mut self.rng, len, &mut self.data);
    }

    fn begin(&mut self, c: &mut Counts) -> DbResult<()> {
        c.record(self.rw.execute(self.rws.begin, &[])?);
        self.in_trx = true;
        Ok(())
    }

    fn commit(&mut self, c: &mut Counts) -> DbResult<()> {
        c.record(self.rw.execute(self.rws.commit, &[])?);
        self.in_trx = false;
        Ok(())
    }

    fn exec_rw(&mut self, c: &mut Counts, s: StmtId, params: &[Param<'_>]) -> DbResult<u64> {
        let o = self.rw.execute(s, params)?;
        c.record(o);
        Ok(match o {
            Outcome::Affected(n) => n,
            Outcome::Rows(n) => n,
        })
    }

    /// Adds one to the count of (id1, type), making the row if needed.
    fn count_up(&mut self, c: &mut Counts, id1: i64, ty: i64, now: i64) -> DbResult<()> {
        let s = self.rws.count_inc;
        self.exec_rw(
            c,
            s,
            &[
                Param::Int(id1),
                Param::Int(ty),
                Param::Int(1),
                Param::Int(now),
                Param::Int(0),
            ],
        )
        .map(|_| ())
    }

    /// Makes link (id1, type, id2) visible with new data, or refreshes a
    /// visible one; the count follows a change of visibility. Returns
    /// whether the link exists. Inside a transaction.
    fn update_path(&mut self, c: &mut Counts, id1: i64, ty: i64, id2: i64) -> DbResult<bool> {
        let now = (self.shared.clock)();
        let key = [
            Param::Text(&self.data),
            Param::Int(now),
            Param::Int(ty),
            Param::Int(id1),
            Param::Int(id2),
        ];
        let o = self.rw.execute(self.rws.link_show, &key)?;
        c.record(o);
        if o == Outcome::Affected(1) {
            self.count_up(c, id1, ty, now)?;
            return Ok(true);
        }
        let key = [
            Param::Text(&self.data),
            Param::Int(now),
            Param::Int(ty),
            Param::Int(id1),
            Param::Int(id2),
        ];
        let o = self.rw.execute(self.rws.link_touch, &key)?;
        c.record(o);
        Ok(o == Outcome::Affected(1))
    }

    fn add_link(&mut self, c: &mut Counts) -> DbResult<()> {
        let (id1, t) = self.link_id1(true);
        let id2 = self.id2(id1, t, P_ADD);
        let ty = self.shared.graph.link_types[t];
        self.link_data();
        let id1 = id1 as i64;
        let now = (self.shared.clock)();
        self.begin(c)?;
        let o = self.rw.execute(
            self.rws.link_insert,
            &[
                Param::Int(id1),
                Param::Int(id2),
                Param::Int(ty),
                Param::Int(1),
                Param::Text(&self.data),
                Param::Int(now),
                Param::Int(0),
            ],
        )?;
        c.record(o);
        if o == Outcome::Affected(1) {
            self.count_up(c, id1, ty, now)?;
        } else {
            if self.measuring {
                self.stats.add_existing += 1;
            }
            self.update_path(c, id1, ty, id2)?;
        }
        self.commit(c)
    }

    fn update_link(&mut self, c: &mut Counts) -> DbResult<()> {
        let (id1, t) = self.link_id1(true);
        let id2 = self.id2(id1, t, P_UPDATE);
        let ty = self.shared.graph.link_types[t];
        self.link_data();
        self.begin(c)?;
        self.update_path(c, id1 as i64, ty, id2)?;
        self.commit(c)
    }

    fn delete_link(&mut self, c: &mut Counts) -> DbResult<()> {
        let (id1, t) = self.link_id1(true);
        let id2 = self.id2(id1, t, P_UPDATE);
        let ty = self.shared.graph.link_types[t];
        let id1 = id1 as i64;
        let now = (self.shared.clock)();
        self.begin(c)?;
        let s = self.rws.link_hide;
        let hidden = self.exec_rw(
            c,
            s,
            &[
                Param::Int(now),
                Param::Int(ty),
                Param::Int(id1),
                Param::Int(id2),
            ],
        )?;
        if hidden == 1 {
            let s = self.rws.count_dec;
            self.exec_rw(c, s, &[Param::Int(now), Param::Int(id1), Param::Int(ty)])?;
        }
        self.commit(c)
    }

    fn list(&mut self, c: &mut Counts) -> DbResult<()> {
        let limit = self.shared.list_limit as i64;
        // As the reference: a remembered list drawn at random; its entry
        // moves on to the page read, or goes once a page comes back short.
        let from_history = (!self.pages.is_empty() && self.rng.unit() < NEXT_PAGE_SHARE)
            .then(|| self.rng.below(self.pages.len()));
        let (id1, ty, offset) = if let Some(i) = from_history {
            let (id1, ty, offset) = self.pages[i];
            if self.measuring {
                self.stats.list_pages += 1;
            }
            (id1, ty, offset + limit)
        } else {
            let (id1, t) = self.link_id1(false);
            (id1 as i64, self.shared.graph.link_types[t], 0)
        };
        let o = self.ro.execute(
            self.ros.list,
            &[
                Param::Int(id1),
                Param::Int(ty),
                Param::Int(0),
                Param::Int(i64::MAX),
                Param::Int(offset),
            ],
        )?;
        c.record(o);
        let rows = match o {
            Outcome::Rows(n) => n,
            Outcome::Affected(_) => 0,
        };
        let full = rows as i64 >= limit;
        match from_history {
            Some(i) if full => self.pages[i].2 = offset,
            Some(i) => {
                self.pages.swap_remove(i);
            }
            None if full && !self.pages.iter().any(|p| (p.0, p.1) == (id1, ty)) => {
                if self.pages.len() < PAGES_KEPT {
                    self.pages.push((id1, ty, offset));
                } else {
                    let i = self.rng.below(self.pages.len());
                    self.pages[i] = (id1, ty, offset);
                }
            }
            None => {}
        }
        if self.measuring {
            self.stats.list_scans += 1;
            self.stats.list_rows += rows;
            self.stats.list_full += u64::from(rows as i64 >= limit);
        }
        Ok(())
    }

    fn count_link(&mut self, c: &mut Counts) -> DbResult<()> {
        let (id1, t) = self.link_id1(false);
        let ty = self.shared.graph.link_types[t];
        let o = self.ro.execute(
            self.ros.count_link,
            &[Param::Int(id1 as i64), Param::Int(ty)],
        )?;
        c.record(o);
        Ok(())
    }

    fn multiget(&mut self, c: &mut Counts) -> DbResult<()> {
        let (id1, t) = self.link_id1(false);
        let ty = self.shared.graph.link_types[t];
        let n = self.shared.graph.nlinks_of(id1, t);
        let range = ((n as f64 / P_GET).ceil() as i64).max(1);
        let k = multiget_size(&mut self.rng);
        self.id2s.clear();
        if range as usize <= k {
            // As the reference: a range no wider than the request asks for
            // id1 .. id1 + k − 1, all of it.
            self.id2s.extend((0..k as i64).map(|j| id1 as i64 + j));
        }
        while self.id2s.len() < k {
            let id2 = id1 as i64 + self.rng.uniform(0, range - 1);
            if !self.id2s.contains(&id2) {
                self.id2s.push(id2);
            }
        }
        let stmt = match self.ros.multiget.get(&k) {
            Some(&s) => s,
            None => {
                let sql = format!(
                    "SELECT {LINK_COLS} FROM {} WHERE id1 = ? AND link_type = ? AND id2 IN ({})",
                    schema::LINK,
                    vec!["?"; k].join(", ")
                );
                let s = self.ro.prepare(&sql, PsMode::Auto)?;
                self.ros.multiget.insert(k, s);
                s
            }
        };
        // Reused: no allocation per request once it has grown.
        self.params.clear();
        self.params.push(Param::Int(id1 as i64));
        self.params.push(Param::Int(ty));
        self.params.extend(self.id2s.iter().map(|&v| Param::Int(v)));
        let o = self.ro.execute(stmt, &self.params)?;
        c.record(o);
        if self.measuring
            && let Outcome::Rows(r) = o
        {
            self.stats.multiget_rows += r;
        }
        Ok(())
    }

    fn get_node(&mut self, c: &mut Counts) -> DbResult<()> {
        let sh = &self.shared;
        let id = sh.graph.start
            + sh.ids
                .node_spread
                .apply(sh.ids.get_node.draw(&mut self.rng));
        let o = self
            .ro
            .execute(self.ros.get_node, &[Param::Int(id as i64)])?;
        c.record(o);
        Ok(())
    }

    fn add_node(&mut self, c: &mut Counts) -> DbResult<()> {
        self.node_data();
        self.begin(c)?;
        let o = self.rw.execute(
            self.rws.node_insert,
            &[
                Param::Int(NODE_TYPE),
                Param::Int(1),
                Param::Int((self.shared.clock)() / 1000),
                Param::Text(&self.data),
            ],
        )?;
        c.record(o);
        self.commit(c)
    }

    fn update_node(&mut self, c: &mut Counts) -> DbResult<()> {
        let id = {
            let sh = &self.shared;
            sh.graph.start
                + sh.ids
                    .node_spread
                    .apply(sh.ids.update_node.draw(&mut self.rng))
        };
        self.node_data();
        self.begin(c)?;
        let o = self.rw.execute(
            self.rws.node_update,
            &[
                Param::Int((self.shared.clock)() / 1000),
                Param::Text(&self.data),
                Param::Int(id as i64),
            ],
        )?;
        c.record(o);
        self.commit(c)
    }

    fn delete_node(&mut self, c: &mut Counts) -> DbResult<()> {
        let g = &self.shared.graph;
        let id = self.rng.uniform(g.start as i64, (g.start + g.n) as i64 - 1);
        self.begin(c)?;
        let s = self.rws.node_delete;
        self.exec_rw(c, s, &[Param::Int(id)])?;
        self.commit(c)
    }

    fn run_op(&mut self, c: &mut Counts) -> DbResult<()> {
        match self.kind {
            dist::GET_LINKS_LIST => self.list(c),
            dist::GET_NODE => self.get_node(c),
            dist::ADD_LINK => self.add_link(c),
            dist::UPDATE_LINK => self.update_link(c),
            dist::UPDATE_NODE => self.update_node(c),
            dist::COUNT_LINK => self.count_link(c),
            dist::DELETE_LINK => self.delete_link(c),
            dist::ADD_NODE => self.add_node(c),
            dist::DELETE_NODE => self.delete_node(c),
            _ => self.multiget(c),
        }
    }

    fn rollback(&mut self) {
        if self.in_trx {
            self.in_trx = false;
            // The engine may already have rolled back; a failing ROLLBACK is fine.
            let _ = self.rw.execute(self.rws.rollback, &[]);
        }
    }

    /// Whether this requester has nothing more to do.
    pub fn done(&self) -> bool {
        self.gave_up
            || self
                .shared
                .requests
                .is_some_and(|n| self.measuring && self.stats.requests >= n)
    }
}

impl Worker for Requester {
    fn event(&mut self, c: &mut Counts) -> DbResult<()> {
        self.kind = match self.shared.only {
            Some(k) => k,
            None => self.shared.mix.draw(&mut self.rng),
        };
        let mut tries = 0;
        loop {
            match self.run_op(c) {
                Ok(()) => {
                    if self.measuring {
                        self.stats.requests += 1;
                    }
                    return Ok(());
                }
                Err(e) if e.class == ErrorClass::Retry && tries + 1 < self.shared.max_retries => {
                    self.rollback();
                    tries += 1;
                    if self.measuring {
                        self.stats.retries += 1;
                    }
                }
                Err(mut e) => {
                    self.rollback();
                    // Any other failure: counted, and the requester reconnects;
                    // after too many it gives up (spec A5).
                    self.failures += 1;
                    self.last_error = Some(e.to_string());
                    if self.measuring {
                        self.stats.failures += 1;
                    }
                    if self.failures >= self.shared.max_failures {
                        self.gave_up = true;
                    }
                    if e.class == ErrorClass::Fatal {
                        e.class = ErrorClass::Reconnect;
                    }
                    return Err(e);
                }
            }
        }
    }

    fn recover(&mut self, err: &DbError) -> DbResult<()> {
        if self.gave_up {
            return Ok(());
        }
        match err.class {
            ErrorClass::Retry => {
                self.rollback();
                Ok(())
            }
            _ => self.reconnect(),
        }
    }

    fn kinds(&self) -> &'static [&'static str] {
        &OPS
    }

    #[inline]
    fn kind(&self) -> usize {
        self.kind
    }

    fn pause(&mut self, deadline_ns: u64, _stop: &dyn Fn() -> bool) -> bool {
        let rate = self.shared.rate;
        if rate <= 0.0 {
            return false;
        }
        // Poisson arrivals: exponential gaps with mean 1 / rate. A requester
        // more than a second behind its schedule (a stall, or the time
        // between its start and the step's) gives up the missed arrivals
        // rather than sending them in a burst.
        let gap = -(1.0 - self.rng.unit()).ln() / rate * 1e9;
        let behind = now_ns() as f64 - self.next_due;
        if behind > 1e9 {
            self.next_due += behind;
        }
        let due = self.next_due;
        self.next_due = due + gap;
        let mut slept = false;
        loop {
            let now = now_ns();
            let until = (due as u64).min(deadline_ns);
            if now >= until || stop_requested() {
                return slept;
            }
            crate::harness::wait::sleep(std::time::Duration::from_nanos(
                (until - now).min(100_000_000),
            ));
            slept = true;
        }
    }

    fn finished(&self) -> bool {
        self.done()
    }

    fn warmed_up(&mut self) {
        self.measuring = true;
        self.stats = ReqStats::default();
    }
}

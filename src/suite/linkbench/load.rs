//! The load (spec A2): the tables made afresh, nodes from one thread, links
//! and their counts from `loaders` threads taking chunks of 2048 id1s, each
//! batch one multi-row statement in its own transaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::dist::{
    Graph, LINK_DATA, LINK_UNIQUENESS, Motif, NODE_DATA, NODE_UNIQUENESS, lognormal_len,
};
use super::schema::{self, ID1_TYPE, NODE_TYPE};
use crate::engine::{Conn, DbError, DbResult, Driver, ErrorClass, Param, PsMode, SetTo, SqlAccess};
use crate::harness::runner::stop_requested;
use crate::suite::rand::Rng;

/// Rows per insert (fewer where the engine takes fewer parameters).
pub const BATCH_ROWS: usize = 1024;
/// id1s a link loader takes at a time.
pub const CHUNK_IDS: u64 = 2048;
/// Times a batch is tried again after a deadlock or busy error.
const BATCH_TRIES: usize = 20;

/// What the load did.
#[derive(Clone, Debug, Default)]
pub struct LoadOut {
    pub nodes: u64,
    pub links: u64,
    pub counts: u64,
    /// Seconds the node loader and the link loaders took (they overlap
    /// unless the engine takes one writer at a time).
    pub node_secs: f64,
    pub link_secs: f64,
    pub secs: f64,
    /// Seconds building the secondary index after the load (when asked).
    pub index_secs: Option<f64>,
    pub retries: u64,
}

/// Drops and creates the three tables; the `id1_type` index now unless it
/// is to be built after the load.
pub fn create_tables(db: &dyn SqlAccess, index_now: bool) -> DbResult<()> {
    let d = db.dialect();
    let mut conn = db.connect()?;
    for name in schema::names() {
        conn.query(&format!("DROP TABLE IF EXISTS {name}"))?;
    }
    let mut ddl = d.create_table(&schema::node());
    ddl.extend(d.create_keyed_table(&schema::link()));
    ddl.extend(d.create_keyed_table(&schema::count()));
    if index_now {
        ddl.push(index_sql(db));
    }
    for sql in ddl {
        conn.query(&sql)?;
    }
    Ok(())
}

/// The statement that builds the covering index.
pub fn index_sql(db: &dyn SqlAccess) -> String {
    let link = schema::link();
    let idx = link
        .index(ID1_TYPE)
        .cloned()
        .unwrap_or_else(|| unreachable!());
    db.dialect().create_keyed_index(&link, &idx)
}

/// Rows of `cols` parameters one statement may carry.
fn batch_rows(db: &dyn SqlAccess, cols: usize) -> usize {
    let caps = db.caps();
    if !caps.multi_row_insert {
        return 1;
    }
    BATCH_ROWS.min(caps.max_params / cols).max(1)
}

/// Runs `body` in a write transaction, again after a retryable error.
fn in_trx(
    conn: &mut dyn Conn,
    db: &dyn SqlAccess,
    retries: &AtomicU64,
    mut body: impl FnMut(&mut dyn Conn) -> DbResult<()>,
) -> DbResult<()> {
    let d = db.dialect();
    let mut tries = 0;
    loop {
        let r = conn
            .query(d.begin_write())
            .and_then(|_| body(conn))
            .and_then(|_| conn.query(d.commit()).map(|_| ()));
        match r {
            Ok(()) => return Ok(()),
            Err(e) if e.class == ErrorClass::Retry && tries < BATCH_TRIES => {
                let _ = conn.query(d.rollback());
                retries.fetch_add(1, Ordering::Relaxed);
                tries += 1;
            }
            Err(e) => {
                let _ = conn.query(d.rollback());
                return Err(e);
            }
        }
    }
}

/// Where loads and requests read the time in milliseconds: the wall clock
/// ([`wall_clock`]) in runs; `rqps compat` gives every engine the same
/// times, so that rows stamped with them compare.
pub type Clock = std::sync::Arc<dyn Fn() -> i64 + Send + Sync>;

/// The wall clock, [`now_ms`].
pub fn wall_clock() -> Clock {
    std::sync::Arc::new(now_ms)
}

/// Current time in milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Loads `graph.n` nodes (one thread).
fn load_nodes(
    db: &dyn SqlAccess,
    graph: &Graph,
    seed: u64,
    done: &AtomicU64,
    retries: &AtomicU64,
    stop: &AtomicBool,
    clock: &Clock,
) -> DbResult<()> {
    let table = schema::node();
    let d = db.dialect();
    let prefix = d.insert_auto_id_prefix(&table);
    // The opening of every row after the first: what the prefix opens its row with.
    let row_open = prefix
        .rfind("VALUES ")
        .map(|i| prefix[i + 7..].to_string())
        .unwrap_or_else(|| "(".into());
    let rows = batch_rows(db, 4);
    let mut conn = db.connect()?;
    let mut rng = Rng::seeded(seed);
    let mut motif = Motif::new(&mut rng, NODE_UNIQUENESS);
    let now_s = clock() / 1000;
    let mut stmts = std::collections::HashMap::new();
    let mut left = graph.n;
    let mut data: Vec<String> = Vec::new();
    while left > 0 {
        if stop.load(Ordering::Relaxed) || stop_requested() {
            return Ok(());
        }
        let k = (left as usize).min(rows);
        data.resize(k, String::new());
        for s in data.iter_mut().take(k) {
            let len = lognormal_len(&mut rng, NODE_DATA.0, 1.0, NODE_DATA.1);
            motif.fill(&mut rng, len, s);
        }
        let id = match stmts.get(&k) {
            Some(&id) => id,
            None => {
                let mut sql = prefix.clone();
                sql.push_str("?, ?, ?, ?)");
                for _ in 1..k {
                    sql.push_str(", ");
                    sql.push_str(&row_open);
                    sql.push_str("?, ?, ?, ?)");
                }
                let id = conn.prepare(&sql, PsMode::Auto)?;
                stmts.insert(k, id);
                id
            }
        };
        let mut params = Vec::with_capacity(k * 4);
        for s in data.iter().take(k) {
            params.extend([
                Param::Int(NODE_TYPE),
                Param::Int(1),
                Param::Int(now_s),
                Param::Text(s),
            ]);
        }
        in_trx(conn.as_mut(), db, retries, |c| {
            c.execute(id, &params).map(|_| ())
        })?;
        left -= k as u64;
        done.fetch_add(k as u64, Ordering::Relaxed);
    }
    Ok(())
}

/// Loads links and counts for chunks of id1s taken from `next`.
#[allow(clippy::too_many_arguments)]
fn load_links(
    db: &dyn SqlAccess,
    graph: &Graph,
    seed: u64,
    next: &AtomicU64,
    links_done: &AtomicU64,
    counts_done: &AtomicU64,
    retries: &AtomicU64,
    stop: &AtomicBool,
    clock: &Clock,
) -> DbResult<()> {
    let d = db.dialect();
    let link = schema::link();
    let count = schema::count();
    let link_rows = batch_rows(db, link.columns.len());
    let count_rows = batch_rows(db, count.columns.len());
    let mut conn = db.connect()?;
    let mut rng = Rng::seeded(seed);
    let mut motif = Motif::new(&mut rng, LINK_UNIQUENESS);
    let mut link_stmts = std::collections::HashMap::new();
    let mut count_stmts = std::collections::HashMap::new();
    let end = graph.start + graph.n;
    // One pending batch of each: (id1, id2, type, data, time) and (id, type, count).
    let mut links: Vec<(i64, i64, i64, String, i64)> = Vec::with_capacity(link_rows);
    let mut counts: Vec<(i64, i64, i64)> = Vec::with_capacity(count_rows);
    let mut flush_links = |conn: &mut dyn Conn, links: &mut Vec<_>| -> DbResult<()> {
        if links.is_empty() {
            return Ok(());
        }
        let k = links.len();
        let id = match link_stmts.get(&k) {
            Some(&id) => id,
            None => {
                let sql = d.upsert(&link, k, &[("visibility", SetTo::New)]);
                let id = conn.prepare(&sql, PsMode::Auto)?;
                link_stmts.insert(k, id);
                id
            }
        };
        let rows: &Vec<(i64, i64, i64, String, i64)> = links;
        let mut params = Vec::with_capacity(k * 7);
        for (id1, id2, t, data, time) in rows {
            params.extend([
                Param::Int(*id1),
                Param::Int(*id2),
                Param::Int(*t),
                Param::Int(1),
                Param::Text(data),
                Param::Int(*time),
                Param::Int(0),
            ]);
        }
        in_trx(conn, db, retries, |c| c.execute(id, &params).map(|_| ()))?;
        links_done.fetch_add(k as u64, Ordering::Relaxed);
        links.clear();
        Ok(())
    };
    let mut flush_counts = |conn: &mut dyn Conn, counts: &mut Vec<(i64, i64, i64)>| {
        if counts.is_empty() {
            return Ok(());
        }
        let k = counts.len();
        let id = match count_stmts.get(&k) {
            Some(&id) => id,
            None => {
                let sql = d.upsert(
                    &count,
                    k,
                    &[
                        ("count", SetTo::New),
                        ("time", SetTo::New),
                        ("version", SetTo::New),
                    ],
                );
                let id = conn.prepare(&sql, PsMode::Auto)?;
                count_stmts.insert(k, id);
                id
            }
        };
        let now = clock();
        let mut params = Vec::with_capacity(k * 5);
        for &(id1, t, n) in counts.iter() {
            params.extend([
                Param::Int(id1),
                Param::Int(t),
                Param::Int(n),
                Param::Int(now),
                Param::Int(0),
            ]);
        }
        in_trx(conn, db, retries, |c| c.execute(id, &params).map(|_| ()))?;
        counts_done.fetch_add(k as u64, Ordering::Relaxed);
        counts.clear();
        Ok::<(), DbError>(())
    };
    loop {
        if stop.load(Ordering::Relaxed) || stop_requested() {
            return Ok(());
        }
        let first = next.fetch_add(CHUNK_IDS, Ordering::Relaxed);
        if first >= end {
            break;
        }
        let last = (first + CHUNK_IDS).min(end);
        let now = clock();
        for id1 in first..last {
            for (t, &ty) in graph.link_types.iter().enumerate() {
                let n = graph.nlinks_of(id1, t);
                for j in 0..n {
                    let len = lognormal_len(&mut rng, LINK_DATA.0, 1.0, LINK_DATA.1);
                    let mut data = String::new();
                    motif.fill(&mut rng, len, &mut data);
                    let time = now - (1i64 << 31) + rng.uniform(i32::MIN as i64, i32::MAX as i64);
                    links.push((id1 as i64, (id1 + j) as i64, ty, data, time));
                    if links.len() == link_rows {
                        flush_links(conn.as_mut(), &mut links)?;
                    }
                }
                if n > 0 {
                    counts.push((id1 as i64, ty, n as i64));
                    if counts.len() == count_rows {
                        // Links first, so a count never runs ahead of its links.
                        flush_links(conn.as_mut(), &mut links)?;
                        flush_counts(conn.as_mut(), &mut counts)?;
                    }
                }
            }
        }
    }
    flush_links(conn.as_mut(), &mut links)?;
    flush_counts(conn.as_mut(), &mut counts)?;
    Ok(())
}

/// Progress of a load, read while it runs.
#[derive(Default)]
pub struct Progress {
    pub nodes: AtomicU64,
    pub links: AtomicU64,
    pub counts: AtomicU64,
}

/// Why the load stopped.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{what}: {source}")]
    Engine {
        what: &'static str,
        #[source]
        source: DbError,
    },
    #[error("{0} panicked")]
    Panicked(&'static str),
}

impl LoadError {
    fn engine(what: &'static str) -> impl FnOnce(DbError) -> LoadError {
        move |source| LoadError::Engine { what, source }
    }
}

/// Loads the graph: nodes and links in parallel (one after the other where
/// the engine takes one writer at a time), then the index if asked.
pub fn load(
    driver: &Arc<dyn Driver>,
    graph: &Graph,
    loaders: usize,
    seed: u64,
    progress: &Progress,
    clock: &Clock,
) -> Result<LoadOut, LoadError> {
    let db = driver
        .require_sql()
        .map_err(LoadError::engine("opening the engine"))?;
    let single = db.caps().single_writer;
    let loaders = if single { 1 } else { loaders.max(1) };
    let retries = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let next = AtomicU64::new(graph.start);
    let started = Instant::now();
    let mut node_secs = 0.0;
    let mut link_secs = 0.0;
    let run_nodes = || {
        let t = Instant::now();
        let r = load_nodes(db, graph, seed, &progress.nodes, &retries, &stop, clock);
        if r.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        (r, t.elapsed().as_secs_f64())
    };
    let run_links = |i: usize| {
        let t = Instant::now();
        let r = load_links(
            db,
            graph,
            seed ^ (i as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            &next,
            &progress.links,
            &progress.counts,
            &retries,
            &stop,
            clock,
        );
        if r.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        (r, t.elapsed().as_secs_f64())
    };
    let mut errors: Vec<LoadError> = Vec::new();
    if single {
        let (r, s) = run_nodes();
        node_secs = s;
        if let Err(e) = r {
            errors.push(LoadError::Engine {
                what: "loading nodes",
                source: e,
            });
        } else {
            let (r, s) = run_links(0);
            link_secs = s;
            if let Err(e) = r {
                errors.push(LoadError::Engine {
                    what: "loading links",
                    source: e,
                });
            }
        }
    } else {
        std::thread::scope(|s| {
            let nodes = s.spawn(run_nodes);
            let links: Vec<_> = (0..loaders)
                .map(|i| s.spawn(move || run_links(i)))
                .collect();
            match nodes.join() {
                Ok((r, secs)) => {
                    node_secs = secs;
                    if let Err(e) = r {
                        errors.push(LoadError::Engine {
                            what: "loading nodes",
                            source: e,
                        });
                    }
                }
                Err(_) => errors.push(LoadError::Panicked("the node loader")),
            }
            for h in links {
                match h.join() {
                    Ok((r, secs)) => {
                        link_secs = f64::max(link_secs, secs);
                        if let Err(e) = r {
                            errors.push(LoadError::Engine {
                                what: "loading links",
                                source: e,
                            });
                        }
                    }
                    Err(_) => errors.push(LoadError::Panicked("a link loader")),
                }
            }
        });
    }
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    Ok(LoadOut {
        nodes: progress.nodes.load(Ordering::Relaxed),
        links: progress.links.load(Ordering::Relaxed),
        counts: progress.counts.load(Ordering::Relaxed),
        node_secs,
        link_secs,
        secs: started.elapsed().as_secs_f64(),
        index_secs: None,
        retries: retries.load(Ordering::Relaxed),
    })
}

/// Builds the covering index on the loaded links; returns its seconds.
pub fn build_index(db: &dyn SqlAccess) -> DbResult<f64> {
    let t = Instant::now();
    db.connect()?.query(&index_sql(db))?;
    Ok(t.elapsed().as_secs_f64())
}

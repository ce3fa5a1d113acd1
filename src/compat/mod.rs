//! `rqps compat`: how compatible each target engine is with a reference
//! (upstream MySQL or PostgreSQL), at three levels: **protocol** (the
//! client connects and runs statements), **syntax** (the engine parses
//! what the reference parses) and **semantics** (it gives the reference's
//! answers and behaviour).
//!
//! Every engine gets the same data from the same seed, loaded by each
//! suite's own load, and then the suite's tests, each a few events of the
//! suite's own worker on one connection ([`crate::suite::CompatPlan`]).
//! A recording driver ([`trace`]) keeps every statement and its answer;
//! the engines run in lock step, test by test, and each target's answers
//! are compared with the reference's ([`compare`]). After a test that
//! writes, its tables are read whole on every engine and compared; when
//! they differ, every engine's tables are loaded again, so one difference
//! does not make every later test differ. Then the suite's workers run
//! concurrently and its invariants are checked (TPC-C's consistency
//! conditions, LinkBench's and pgbench's). Last, [`probes`] checks the
//! connection, two-session isolation and error classes.
//!
//! The record ([`crate::results::compat`]) is kept in the results
//! directory, where `rqps report` and `rqps compare` read it to leave out of
//! a cross-engine comparison the tests whose statements differ in
//! semantics; [`crate::report::compat`] renders it in every format.
//!
//! Names no suite and no engine: suites come from the registry, engines
//! through `plan::open`.

pub mod compare;
pub mod probes;
pub mod trace;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::{Driver, ErrorClass, Face};
use crate::error::{Error, failed, usage};
use crate::harness::measure::Counts;
use crate::plan::open::Opened;
use crate::plan::options::EngineArgs;
use crate::results::EngineInfo;
use crate::results::compat::{
    CompatRecord, ConditionResult, Difference, EngineCompat, EngineId, Level, StatementCompat,
    SuiteInfo, SuiteVerdict, TestCompat,
};
use crate::suite::{CompatPlan, CompatTest};
use trace::{Recorder, Sent};

/// One engine to check: the name to show it by (`None`: made from its
/// engine and version) and how to open it.
#[derive(Clone, Debug)]
pub struct EngineChoice {
    pub label: Option<String>,
    pub args: EngineArgs,
}

/// What `rqps compat` checks, and where it keeps the record.
#[derive(Clone, Debug)]
pub struct CompatRequest {
    pub reference: EngineChoice,
    pub targets: Vec<EngineChoice>,
    pub results: PathBuf,
    /// Only these suites (default: every SQL suite that takes part).
    pub suites: Option<Vec<String>>,
    /// Only these tests (by stored name, of any suite).
    pub tests: Option<Vec<String>>,
    /// Leave out the concurrent runs and the suites' invariants.
    pub no_concurrent: bool,
    /// How long a statement may go without a word from the engine.
    pub stmt_timeout: std::time::Duration,
    pub seed: u64,
    /// The command line, credentials redacted.
    pub command_line: Vec<String>,
}

/// The suites' profile `rqps compat` plans them with: small tables,
/// seconds of work.
pub const PROFILE: &str = "ci";

/// How many connections a check opens on a server at most at once: the
/// suites' concurrent runs and the two-session probes.
const CONNECTIONS: usize = 8;

/// The longest statement a record keeps whole (a 1,000-value IN list
/// is about 6,000 characters): enough to paste it into a client.
const STATEMENT_CHARS: usize = 16_000;

/// One engine while it is checked.
struct Side {
    opened: Option<Opened>,
    rec: Arc<Recorder>,
    out: EngineCompat,
    /// Statements by (suite, text), in the order first sent.
    stats: BTreeMap<(String, String), (usize, StatementCompat)>,
    /// Why the current suite cannot go on on this engine.
    broken: Option<String>,
    /// Whether `broken` is the link's failure (its tests are not checked).
    broken_link: bool,
}

impl Side {
    fn driver(&self) -> Arc<dyn Driver> {
        self.rec.clone()
    }

    fn raw(&self) -> Arc<dyn Driver> {
        self.rec.inner().clone()
    }

    fn stat(&mut self, suite: &str, test: &str, sql: &str, level: Level) {
        let n = self.stats.len();
        let (_, s) = self
            .stats
            .entry((suite.to_string(), sql.to_string()))
            .or_insert_with(|| {
                (
                    n,
                    StatementCompat {
                        suite: suite.into(),
                        test: test.into(),
                        sql: sql.into(),
                        level: Level::Semantics,
                        sent: 0,
                        matched: 0,
                    },
                )
            });
        s.sent += 1;
        if level == Level::Semantics {
            s.matched += 1;
        }
        s.level = s.level.max(level);
    }
}

/// Why an engine cannot be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    #[error(transparent)]
    Open(#[from] Error),
    #[error("{kind} offers no SQL access")]
    NoSql { kind: &'static str },
    #[error("cannot read its version: {0}")]
    Version(#[source] crate::engine::DbError),
}

/// Opens one engine.
fn open(
    choice: &EngineChoice,
    plans: &[&dyn crate::suite::Plan],
    stmt_timeout: std::time::Duration,
) -> Result<(Opened, EngineId), Unusable> {
    // An engine that stops answering (a lock it never grants) fails its
    // statement after this, rather than after a benchmark's ten minutes.
    let options = crate::plan::options::RunOptions {
        stmt_timeout: Some(
            crate::suite::bounds::Timeout::new(stmt_timeout.as_secs_f64())
                .map_err(|e| Unusable::Open(usage(e)))?,
        ),
        ..Default::default()
    };
    let checked = crate::plan::open::check(&choice.args, &options, plans)
        .map_err(|r| Unusable::Open(r.into()))?
        .with_need(crate::engine::capacity::Need {
            connections: CONNECTIONS,
            prepared: 4000,
            who: "rqps compat".into(),
            fewer: "give the server more connections".into(),
        });
    let opened = crate::plan::open::open(&checked, &mut |l| eprintln!("compat: {l}"))?;
    let driver = opened.driver.clone();
    if driver.sql().is_none() {
        let kind = driver.engine();
        opened.close(&mut |_| {});
        return Err(Unusable::NoSql { kind });
    }
    let version = match driver.version() {
        Ok(v) => v,
        Err(e) => {
            opened.close(&mut |_| {});
            return Err(Unusable::Version(e));
        }
    };
    let id = EngineId {
        label: choice
            .label
            .clone()
            .unwrap_or_else(|| crate::plan::session::default_name(driver.engine(), &version)),
        engine: EngineInfo {
            name: driver.engine().to_string(),
            version,
            auth: driver.auth(),
        },
        target: opened.shown.clone(),
    };
    Ok((opened, id))
}

fn empty(id: EngineId, left_out: Option<String>) -> EngineCompat {
    EngineCompat {
        id,
        left_out,
        statements: Vec::new(),
        tests: Vec::new(),
        differences: Vec::new(),
        probes: Vec::new(),
        conditions: Vec::new(),
        suites: Vec::new(),
    }
}

/// Runs `test` on one engine through its recorder: the worker's events,
/// each failure recovered from as the harness would, and what was sent.
/// The statements `test` sent on `side`, and the link's failure when its
/// worker could not even start (its connection failed): then it sent
/// nothing, and that says nothing about the engine.
fn run_test(side: &Side, test: &CompatTest) -> (Vec<Sent>, Option<String>) {
    let _ = side.rec.take();
    let mut link = None;
    match (test.worker)(&side.driver()) {
        Err(e) if link_error(&e) => {
            link = Some(format!(
                "not checked: the link failed ({}): {}",
                e.meaning().key(),
                compare::cut(e.message.lines().next().unwrap_or(""), 160)
            ));
        }
        Err(_) => {}
        Ok(mut w) => {
            let mut c = Counts::default();
            for _ in 0..test.events {
                if w.finished() {
                    break;
                }
                if let Err(e) = w.event(&mut c) {
                    let recovered = match e.class {
                        ErrorClass::Retry | ErrorClass::Reconnect => w.recover(&e).is_ok(),
                        ErrorClass::Fatal => false,
                    };
                    if !recovered {
                        break;
                    }
                }
            }
        }
    }
    (side.rec.take(), link)
}

/// A load that failed, and the statement that failed it when the
/// recorder saw one.
struct LoadFailed {
    error: crate::engine::DbError,
    /// Boxed: a recorded statement is large, and a load rarely fails.
    failing: Option<Box<Sent>>,
}

/// Loads the suite's tables on one engine (through its recorder when
/// `recorded`, so that a failing statement is known).
fn load(side: &Side, plan: &CompatPlan, recorded: bool) -> Result<(), LoadFailed> {
    let _ = side.rec.take();
    let driver = if recorded { side.driver() } else { side.raw() };
    let r = (plan.load)(&driver);
    let sent = side.rec.take();
    r.map_err(|error| LoadFailed {
        error,
        failing: sent
            .into_iter()
            .rev()
            .find(|s| matches!(s.answer, trace::Answer::Error { .. }))
            .map(Box::new),
    })
}

/// Reads `table` whole (its compared columns).
fn read_table(
    driver: &Arc<dyn Driver>,
    t: &crate::suite::CompatTable,
) -> crate::engine::DbResult<crate::engine::Rows> {
    let mut c = driver.require_sql()?.connect()?;
    let mut rows = crate::engine::Rows::default();
    c.query_into(&select_all(t), &mut rows)?;
    Ok(rows)
}

/// What differs between two reads of a table; `None`: the same rows.
fn table_difference(want: &crate::engine::Rows, got: &crate::engine::Rows) -> Option<String> {
    if compare::row_hashes(want) == compare::row_hashes(got) {
        return None;
    }
    compare::compare_tables(&trace::rows_of(want), &trace::rows_of(got))
}

fn select_all(t: &crate::suite::CompatTable) -> String {
    format!("SELECT {} FROM {}", t.columns.join(", "), t.name)
}

/// A suite's plan (what the engines are checked against) and its part of
/// the check.
type SuitePlan = (Box<dyn crate::suite::Plan>, CompatPlan);

/// A suite's plan as `rqps compat` runs it: its [`PROFILE`], the seed.
fn plan_of(suite: &'static dyn crate::suite::Suite, seed: u64) -> Result<Option<SuitePlan>, Error> {
    if suite.face() != Face::Sql {
        return Ok(None);
    }
    let common = crate::suite::RunBasics {
        profile: PROFILE.into(),
        seed,
        part: None,
    };
    let m = suite
        .args(clap::Command::new("compat"))
        .try_get_matches_from(["compat"])
        .map_err(|e| failed(format!("suite {}: {e}", suite.name())))?;
    let plan = suite.plan_cli(&common, &m)?;
    Ok(plan.compat().map(|c| (plan, c)))
}

/// The suites of the registry that take part in the check, in its order.
fn taking_part(seed: u64) -> Vec<&'static str> {
    crate::suite::registry()
        .iter()
        .filter(|s| matches!(plan_of(**s, seed), Ok(Some(_))))
        .map(|s| s.name())
        .collect()
}

/// Runs the check and stores its record; returns the record and where it is.
pub fn run(req: &CompatRequest) -> Result<(CompatRecord, PathBuf), Error> {
    crate::results::check_writable(&req.results).map_err(usage)?;
    crate::plan::signals::install_at_once();
    run_set(req)
}

fn run_set(req: &CompatRequest) -> Result<(CompatRecord, PathBuf), Error> {
    let suites: Vec<&'static dyn crate::suite::Suite> = match &req.suites {
        None => crate::suite::registry().to_vec(),
        Some(names) => names
            .iter()
            .map(|n| crate::suite::find(n))
            .collect::<Result<_, _>>()?,
    };
    // Each suite's plan (the engines are checked against them: faces,
    // space) and its part of the check.
    let (suite_plans, plans): (Vec<Box<dyn crate::suite::Plan>>, Vec<_>) = suites
        .iter()
        .map(|s| Ok(plan_of(*s, req.seed)?.map(|(plan, c)| (plan, (*s, c)))))
        .collect::<Result<Vec<_>, Error>>()?
        .into_iter()
        .flatten()
        .unzip();
    let plans: Vec<(&'static dyn crate::suite::Suite, CompatPlan)> = plans;
    let suite_plans: Vec<&dyn crate::suite::Plan> =
        suite_plans.iter().map(|p| p.as_ref()).collect();
    if plans.is_empty() {
        return Err(usage(format!(
            "none of the suites asked for takes part in rqps compat: choose SQL suites ({})",
            taking_part(req.seed).join(", ")
        )));
    }
    if let Some(tests) = &req.tests {
        let known: Vec<&str> = plans
            .iter()
            .flat_map(|(_, p)| p.tests.iter())
            .flat_map(|t| std::iter::once(t.name.as_str()).chain(t.also.iter().map(String::as_str)))
            .collect();
        let unknown: Vec<&String> = tests
            .iter()
            .filter(|t| !known.contains(&t.as_str()))
            .collect();
        if !unknown.is_empty() {
            return Err(usage(format!(
                "--tests: no suite asked for has a test named {}",
                unknown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let started = crate::util::now_rfc3339();

    let (ref_opened, ref_id) =
        open(&req.reference, &suite_plans, req.stmt_timeout).map_err(|why| match why {
            Unusable::Open(e) if e.is_usage() => e,
            why => failed(format!("cannot open the reference engine: {why}")),
        })?;
    eprintln!(
        "compat: reference {} ({} {})",
        ref_id.label, ref_id.engine.name, ref_id.engine.version
    );
    let mut sides = vec![Side {
        rec: Recorder::new(ref_opened.driver.clone()),
        opened: Some(ref_opened),
        out: empty(ref_id, None),
        stats: BTreeMap::new(),
        broken: None,
        broken_link: false,
    }];
    let mut left_out = Vec::new();
    for t in &req.targets {
        match open(t, &suite_plans, req.stmt_timeout) {
            Ok((opened, id)) => {
                eprintln!(
                    "compat: target {} ({} {})",
                    id.label, id.engine.name, id.engine.version
                );
                sides.push(Side {
                    rec: Recorder::new(opened.driver.clone()),
                    opened: Some(opened),
                    out: empty(id, None),
                    stats: BTreeMap::new(),
                    broken: None,
                    broken_link: false,
                })
            }
            Err(why) => {
                let label = t.label.clone().unwrap_or_else(|| describe(&t.args));
                eprintln!("compat: target {label} left out: {why}");
                left_out.push(empty(
                    EngineId {
                        label,
                        engine: EngineInfo {
                            name: String::new(),
                            version: String::new(),
                            auth: None,
                        },
                        target: describe(&t.args),
                    },
                    Some(why.to_string()),
                ));
            }
        }
    }
    let result = check(req, &plans, &mut sides);
    for s in &mut sides {
        if let Some(o) = s.opened.take() {
            o.close(&mut |l| eprintln!("compat: {l}"));
        }
    }
    let suite_infos = result?;
    let mut engines: Vec<EngineCompat> = sides
        .into_iter()
        .map(|mut s| {
            let mut stats: Vec<(usize, StatementCompat)> =
                std::mem::take(&mut s.stats).into_values().collect();
            stats.sort_by_key(|(n, _)| *n);
            s.out.statements = stats.into_iter().map(|(_, st)| st).collect();
            s.out
        })
        .collect();
    let reference = engines.remove(0);
    engines.extend(left_out);
    let record = CompatRecord {
        rqps_version: env!("CARGO_PKG_VERSION").into(),
        started,
        finished: crate::util::now_rfc3339(),
        command_line: crate::engine::target::redact_args(&req.command_line),
        seed: req.seed,
        suites: suite_infos,
        rules: compare::RULES.iter().map(|r| r.to_string()).collect(),
        reference,
        targets: engines,
    };
    // A signal's thread is removing the servers' files and will exit: a
    // check it cut short is not a record.
    if crate::harness::runner::stop_requested() {
        return Err(failed("stopped by a signal: no record stored"));
    }
    let path = crate::results::compat::store(&req.results, &record)?;
    Ok((record, path))
}

/// How an engine choice is shown before it is open.
fn describe(a: &EngineArgs) -> String {
    match (&a.server, &a.target) {
        (Some(s), _) => s.server_arg().unwrap_or_else(|| s.kind.name.to_string()),
        (None, Some(t)) => t.display(),
        (None, None) => "sqlite".into(),
    }
}

/// Every suite on every side, then the probes.
fn check(
    req: &CompatRequest,
    plans: &[(&'static dyn crate::suite::Suite, CompatPlan)],
    sides: &mut [Side],
) -> Result<Vec<SuiteInfo>, Error> {
    let mut infos = Vec::new();
    for (suite, plan) in plans {
        let name = suite.name();
        let tests: Vec<&CompatTest> = plan
            .tests
            .iter()
            .filter(|t| {
                req.tests.as_ref().is_none_or(|only| {
                    only.iter()
                        .any(|n| *n == t.name || t.also.iter().any(|a| a == n))
                })
            })
            .collect();
        if tests.is_empty() && req.tests.is_some() {
            continue;
        }
        eprintln!(
            "compat: {name}: loading {} on {} engine(s)",
            plan.load_what,
            sides.len()
        );
        infos.push(SuiteInfo {
            suite: name.into(),
            load: plan.load_what.clone(),
            tests: tests.len(),
            left_out: None,
        });
        for side in sides.iter_mut() {
            side.broken = None;
            side.broken_link = false;
            let t = std::time::Instant::now();
            let loaded = load(side, plan, true);
            eprintln!(
                "compat: {name}: loaded on {} in {:.1} s{}",
                side.out.id.label,
                t.elapsed().as_secs_f64(),
                if loaded.is_err() { " (failed)" } else { "" }
            );
            if let Err(LoadFailed { error, failing }) = loaded {
                side.broken = Some(format!("the load failed: {}", reason(&error)));
                side.broken_link = link_error(&error);
                if let Some(s) = failing {
                    let level =
                        compare::compare(&s.sql, &trace::Answer::Affected(0), &s.answer).level;
                    side.stat(name, "load", &s.sql, level);
                    side.out.differences.push(Difference {
                        suite: name.into(),
                        test: "load".into(),
                        level,
                        what: "the load failed".into(),
                        statement: compare::cut_statement(&s.literal(), STATEMENT_CHARS),
                        reference: "ran".into(),
                        target: compare::show(&s.answer),
                    });
                }
            }
        }
        if let Some(why) = &sides[0].broken {
            return Err(failed(format!(
                "suite {name}: the reference engine {} could not load its tables: {why}",
                sides[0].out.id.label
            )));
        }
        for test in &tests {
            let t = std::time::Instant::now();
            run_one(name, plan, test, sides);
            eprintln!(
                "compat: {name}: {} ({:.1} s)",
                test.name,
                t.elapsed().as_secs_f64()
            );
        }
        for side in sides.iter_mut() {
            if let Some(why) = side.broken.clone() {
                for test in &tests {
                    if side.out.test(name, &test.name).is_none() {
                        side.out.tests.push(TestCompat {
                            suite: name.into(),
                            test: test.name.clone(),
                            also: test.also.clone(),
                            level: Level::None,
                            statements: 0,
                            not_checked: side
                                .broken_link
                                .then(|| format!("not checked: the link failed: {why}")),
                            reason: Some(why.clone()),
                        });
                    }
                }
            }
        }
        if let (Some(c), false) = (&plan.concurrent, req.no_concurrent) {
            eprintln!("compat: {name}: concurrent run ({})", c.what);
            for side in sides.iter_mut() {
                if side.broken.is_some() {
                    continue;
                }
                if let Err(f) = load(side, plan, false) {
                    side.broken = Some(format!("the load failed: {}", reason(&f.error)));
                    side.broken_link = link_error(&f.error);
                    continue;
                }
                let conditions = concurrent(side, c);
                side.out
                    .conditions
                    .extend(conditions.into_iter().map(|c| ConditionResult {
                        suite: name.into(),
                        name: c.name,
                        holds: c.holds,
                        detail: c.detail,
                    }));
            }
        }
        verdicts(name, &tests, sides);
    }
    // The probes' connections wait as long as every other (--stmt-timeout,
    // 60 s by default): a two-session probe an engine never resolves (a
    // deadlock it does not detect) fails after it.
    for side in sides.iter_mut() {
        eprintln!("compat: probes on {}", side.out.id.label);
        side.out.probes = probes::run(&side.raw());
    }
    let (reference, targets) = sides.split_at_mut(1);
    for t in targets {
        probes::mark_same(&mut t.out.probes, &reference[0].out.probes);
    }
    Ok(infos)
}

/// A difference's `what`, with what ran at once in the test, if anything.
fn noted(what: String, test: &CompatTest) -> String {
    match &test.at_once {
        Some(n) => format!("{what} ({n})"),
        None => what,
    }
}

/// One test on every side, compared, then its tables.
fn run_one(suite: &str, plan: &CompatPlan, test: &CompatTest, sides: &mut [Side]) {
    let traces = traces_of(test, sides);
    let Some((reference, ref_link)) = traces[0].clone() else {
        return;
    };
    // The reference's own link failed: no target's answers can be judged.
    let ref_link = ref_link.or_else(|| link_failure(&reference));
    for s in &reference {
        sides[0].stat(suite, &test.name, &s.sql, Level::Semantics);
    }
    sides[0].out.tests.push(TestCompat {
        suite: suite.into(),
        test: test.name.clone(),
        also: test.also.clone(),
        level: Level::Semantics,
        statements: reference.len() as u64,
        reason: None,
        not_checked: ref_link.clone(),
    });
    for (side, trace) in sides.iter_mut().zip(&traces).skip(1) {
        let Some((trace, link)) = trace else { continue };
        match ref_link
            .clone()
            .or_else(|| link.clone())
            .or_else(|| link_failure(trace))
        {
            Some(why) => side.out.tests.push(TestCompat {
                suite: suite.into(),
                test: test.name.clone(),
                also: test.also.clone(),
                level: Level::None,
                statements: trace.len() as u64,
                reason: Some(why.clone()),
                not_checked: Some(why),
            }),
            None => compare_traces(suite, test, &reference, trace, side),
        }
    }
    if !test.writes.is_empty() {
        compare_tables(suite, plan, test, sides);
    }
}

/// Each side's statements for `test` (`None`: the side is broken),
/// connection by connection, without bare prepares, and the link's failure
/// that kept its worker from starting, if one did.
fn traces_of(test: &CompatTest, sides: &[Side]) -> Vec<Option<(Vec<Sent>, Option<String>)>> {
    sides
        .iter()
        .map(|s| s.broken.is_none().then(|| run_test(s, test)))
        .map(|t| {
            // Connection by connection, each in the order it sent: a test
            // whose worker drives several connections at once (the Insert
            // Benchmark's inserter and deleter) sends each one's statements
            // in the same order on every engine, though not interleaved
            // alike.
            t.map(|(mut t, link)| {
                t.sort_by_key(|s| s.conn);
                // A statement prepared is no answer yet (a failed prepare
                // is): engines whose clients take different paths to run
                // one statement (PostgreSQL's unnamed statements, a
                // prepare elsewhere) line up by what was run.
                t.retain(|s| s.answer != trace::Answer::Prepared);
                (t, link)
            })
        })
        .collect()
}

/// Why a trace says nothing about its engine, if it does not: an answer
/// that is the link's failure (the connection broke, a reply could not be
/// read), not the engine's.
fn link_failure(trace: &[Sent]) -> Option<String> {
    trace.iter().find_map(|s| match &s.answer {
        trace::Answer::Error {
            meaning: m @ (crate::engine::Meaning::Connection | crate::engine::Meaning::Protocol),
            message,
            ..
        } => Some(format!(
            "not checked: the link failed ({}): {}",
            m.key(),
            compare::cut(message.lines().next().unwrap_or(""), 160)
        )),
        _ => None,
    })
}

/// A target's trace against the reference's, statement by statement: its
/// test's level and first difference.
fn compare_traces(
    suite: &str,
    test: &CompatTest,
    reference: &[Sent],
    trace: &[Sent],
    side: &mut Side,
) {
    let mut level = Level::Semantics;
    let mut first: Option<Difference> = None;
    let difference = |level, what: String, stmt: &Sent, r: String, t: String| Difference {
        suite: suite.into(),
        test: test.name.clone(),
        level,
        what,
        statement: compare::cut_statement(&stmt.literal(), STATEMENT_CHARS),
        reference: r,
        target: t,
    };
    for i in 0..reference.len().max(trace.len()) {
        let (l, diff) = match (reference.get(i), trace.get(i)) {
            (Some(r), Some(t)) => {
                let v = compare::compare(&t.sql, &r.answer, &t.answer);
                side.stat(suite, &test.name, &t.sql, v.level);
                let d = (v.level != Level::Semantics).then(|| {
                    let (rs, ts) = (compare::show(&r.answer), compare::show(&t.answer));
                    difference(v.level, v.what, t, rs, ts)
                });
                (v.level, d)
            }
            (Some(r), None) => {
                side.stat(suite, &test.name, &r.sql, Level::None);
                let what = "not sent: the target's worker stopped before it".into();
                let d = difference(
                    Level::None,
                    what,
                    r,
                    compare::show(&r.answer),
                    "not sent".into(),
                );
                (Level::None, Some(d))
            }
            (None, Some(t)) => {
                side.stat(suite, &test.name, &t.sql, Level::Syntax);
                let what = "sent only on the target: its worker went another way".into();
                let d = difference(
                    Level::Syntax,
                    what,
                    t,
                    "not sent".into(),
                    compare::show(&t.answer),
                );
                (Level::Syntax, Some(d))
            }
            (None, None) => break,
        };
        level = level.max(l);
        if first.is_none() {
            first = diff;
        }
    }
    side.out.tests.push(TestCompat {
        suite: suite.into(),
        test: test.name.clone(),
        also: test.also.clone(),
        level,
        statements: trace.len() as u64,
        reason: first
            .as_ref()
            .map(|d| format!("{}: {}", d.what, cut_sql(&d.statement))),
        not_checked: None,
    });
    if let Some(mut d) = first {
        d.what = noted(d.what, test);
        side.out.differences.push(d);
    }
}

/// The tables `test` wrote, on every engine, against the reference's; when
/// any differ, every engine's are loaded again.
fn compare_tables(suite: &str, plan: &CompatPlan, test: &CompatTest, sides: &mut [Side]) {
    let tables: Vec<&crate::suite::CompatTable> = plan
        .tables
        .iter()
        .filter(|t| test.writes.contains(&t.name))
        .collect();
    let mut reload = false;
    let read_started = std::time::Instant::now();
    let reference: Vec<crate::engine::DbResult<crate::engine::Rows>> = tables
        .iter()
        .map(|t| read_table(&sides[0].raw(), t))
        .collect();
    for side in sides.iter_mut().skip(1) {
        if side.broken.is_some() {
            continue;
        }
        for (t, want) in tables.iter().zip(&reference) {
            let Ok(want) = want else { continue };
            let got = read_table(&side.raw(), t);
            let what = match &got {
                Ok(got) => table_difference(want, got),
                Err(e) => Some(format!(
                    "cannot read it: {}",
                    compare::cut(&e.to_string(), 160)
                )),
            };
            let Some(what) = what else { continue };
            reload = true;
            let entry = side
                .out
                .tests
                .iter_mut()
                .rev()
                .find(|x| x.suite == suite && x.test == test.name);
            if let Some(x) = entry
                && x.not_checked.is_none()
            {
                x.level = x.level.max(Level::Syntax);
                if x.reason.is_none() {
                    x.reason = Some(format!("table {} differs after the test: {what}", t.name));
                }
            }
            side.out.differences.push(Difference {
                suite: suite.into(),
                test: test.name.clone(),
                level: Level::Syntax,
                what: noted(format!("table {} differs after the test", t.name), test),
                statement: select_all(t),
                reference: format!("{} rows", want.len()),
                target: what,
            });
        }
    }
    eprintln!(
        "compat: {suite}: {} read on every engine after {} in {:.1} s",
        tables.len(),
        test.name,
        read_started.elapsed().as_secs_f64()
    );
    if reload {
        eprintln!(
            "compat: {suite}: tables differ after {}; loading them again everywhere",
            test.name
        );
        for side in sides.iter_mut() {
            if side.broken.is_some() {
                continue;
            }
            if let Err(f) = load(side, plan, false) {
                side.broken = Some(format!(
                    "loading the tables again failed: {}",
                    reason(&f.error)
                ));
                side.broken_link = link_error(&f.error);
            }
        }
    }
}

/// Whether an error is the link's (the connection, the protocol), not the
/// engine's answer.
fn link_error(e: &crate::engine::DbError) -> bool {
    matches!(
        e.meaning(),
        crate::engine::Meaning::Connection | crate::engine::Meaning::Protocol
    )
}

/// An error as a one-line reason: its first line, cut (an engine's message
/// may carry the whole statement, H2's 100 kB of a multi-row INSERT, on
/// lines of its own).
fn reason(e: &impl std::fmt::Display) -> String {
    let e = e.to_string();
    let mut lines = e.lines();
    let first = lines.next().unwrap_or("");
    let more = if lines.next().is_some() { " ..." } else { "" };
    format!("{}{more}", compare::cut(first, 200))
}

/// The first line of a statement, cut, for a one-line reason.
fn cut_sql(s: &str) -> String {
    compare::cut(s.lines().next().unwrap_or(""), 120)
}

/// The suite's workers on threads of their own, then its conditions.
fn concurrent(side: &Side, c: &crate::suite::CompatConcurrent) -> Vec<crate::suite::Condition> {
    let driver = side.raw();
    let workers = match (c.workers)(&driver) {
        Ok(w) => w,
        Err(e) => {
            return vec![crate::suite::Condition {
                name: "the concurrent run starts".into(),
                holds: false,
                detail: Some(reason(&e)),
            }];
        }
    };
    let events = c.events;
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|mut w| {
                s.spawn(move || -> Option<String> {
                    let mut counts = Counts::default();
                    for _ in 0..events {
                        if w.finished() {
                            break;
                        }
                        if let Err(e) = w.event(&mut counts) {
                            // A lost connection ends the worker: here it is
                            // most likely the statement timeout, an engine
                            // that stopped answering, and another try would
                            // wait as long again.
                            let ok = match e.class {
                                ErrorClass::Retry => w.recover(&e).is_ok(),
                                ErrorClass::Reconnect | ErrorClass::Fatal => false,
                            };
                            if !ok {
                                return Some(reason(&e));
                            }
                        }
                    }
                    None
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap_or(Some("a worker panicked".into())))
            .collect()
    });
    let mut out = vec![crate::suite::Condition {
        name: "every worker finished its events".into(),
        holds: failures.is_empty(),
        detail: failures.first().cloned(),
    }];
    match (c.check)(&driver) {
        Ok(cs) => out.extend(cs),
        Err(e) => out.push(crate::suite::Condition {
            name: "the invariants could be read".into(),
            holds: false,
            detail: Some(reason(&e)),
        }),
    }
    out
}

/// Whether each target's results of `suite` can be set beside the
/// reference's, in one line.
fn verdicts(suite: &str, tests: &[&CompatTest], sides: &mut [Side]) {
    let (reference, targets) = sides.split_at_mut(1);
    let ref_conditions: Vec<ConditionResult> = reference[0]
        .out
        .conditions
        .iter()
        .filter(|c| c.suite == suite)
        .cloned()
        .collect();
    let n = tests.len();
    reference[0].out.suites.push(SuiteVerdict {
        suite: suite.into(),
        comparable: true,
        reason: "the reference".into(),
    });
    for side in targets {
        let mine: Vec<&TestCompat> = side.out.tests.iter().filter(|t| t.suite == suite).collect();
        let differ: Vec<&&TestCompat> = mine
            .iter()
            .filter(|t| t.level != Level::Semantics)
            .collect();
        let broken_conditions: Vec<&ConditionResult> = side
            .out
            .conditions
            .iter()
            // One that fails on the target and not on the reference (a
            // check that could not even be read counts).
            .filter(|c| {
                c.suite == suite
                    && !c.holds
                    && !ref_conditions.iter().any(|r| r.name == c.name && !r.holds)
            })
            .collect();
        let verdict = if let Some(why) = &side.broken {
            SuiteVerdict {
                suite: suite.into(),
                comparable: false,
                reason: why.clone(),
            }
        } else if let Some(t) = differ.first() {
            SuiteVerdict {
                suite: suite.into(),
                comparable: false,
                reason: format!(
                    "{} of {n} tests differ in semantics; first {}: {}",
                    differ.len(),
                    t.test,
                    t.reason.clone().unwrap_or_default()
                ),
            }
        } else if let Some(c) = broken_conditions.first() {
            SuiteVerdict {
                suite: suite.into(),
                comparable: false,
                reason: format!(
                    "after a concurrent run, '{}' does not hold: {}",
                    c.name,
                    c.detail.clone().unwrap_or_default()
                ),
            }
        } else {
            let held = side
                .out
                .conditions
                .iter()
                .filter(|c| c.suite == suite && c.holds)
                .count();
            SuiteVerdict {
                suite: suite.into(),
                comparable: true,
                reason: format!(
                    "all {n} tests gave the reference's answers{}",
                    if held > 0 {
                        format!("; {held} invariants hold after a concurrent run")
                    } else {
                        String::new()
                    }
                ),
            }
        };
        side.out.suites.push(verdict);
    }
}

#[cfg(test)]
mod tests {
    use super::reason;

    #[test]
    fn the_suites_taking_part_are_the_registrys_sql_suites_with_a_compat_plan() {
        let taking = super::taking_part(1);
        assert_eq!(
            taking,
            [
                "sysbench",
                "ibench",
                "select1",
                "linkbench",
                "tpcc",
                "pgbench"
            ]
        );
        assert!(!taking.contains(&"dbbench"), "dbbench is key-value");
    }

    #[test]
    fn a_reason_is_one_short_line_however_long_the_engine_s_message() {
        let sql = format!("INSERT INTO t VALUES {}", vec!["($1)"; 30_000].join(", "));
        let e = crate::engine::DbError::fatal(format!(
            "Syntax error in SQL statement \"{sql}\"; SQL statement:\n{sql} [42000-252]"
        ));
        let r = reason(&e);
        assert!(!r.contains('\n') && r.chars().count() < 220, "{r}");
        assert!(
            r.starts_with("Syntax error in SQL statement") && r.ends_with(" ..."),
            "{r}"
        );
        assert_eq!(reason(&"refused"), "refused");
    }
}

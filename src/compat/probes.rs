//! The checks outside the suites, the same on every engine: what the
//! connection offers (protocol), what two sessions see of each other
//! (isolation), and which error a statement that must fail gets (errors).
//! Each is a few statements on a two-row table of its own, `rqps_compat`,
//! written with the engine's dialect; each says what it saw in a few words
//! (the part before ` (` is what is compared with the reference) and which
//! statements show it, to try by hand.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::{Conn, DbError, DbResult, Driver, Outcome, Param, PsMode, Rows};
use crate::results::compat::ProbeResult;

/// The probes' table.
pub const TABLE: &str = "rqps_compat";

/// How long the second session's statement may take before it counts as
/// blocked.
const BLOCKED_AFTER: Duration = Duration::from_millis(700);

/// How long the lock-wait probe's first session holds its row lock: past
/// the second's one-second timeout (InnoDB counts whole seconds).
const LOCK_HELD: Duration = Duration::from_millis(3000);

/// A probe's finding: what is compared, a detail, and the statements.
struct Finding {
    key: String,
    detail: String,
    how: String,
}

impl Finding {
    fn new(key: impl Into<String>, detail: impl Into<String>, how: &[&str]) -> Finding {
        Finding {
            key: key.into(),
            detail: detail.into(),
            how: how.join("; "),
        }
    }
}

fn result(area: &str, name: &str, s: Finding) -> ProbeResult {
    ProbeResult {
        area: area.into(),
        name: name.into(),
        seen: if s.detail.is_empty() {
            s.key
        } else {
            format!("{} ({})", s.key, s.detail)
        },
        same: true,
        how: s.how,
        // An error of the link seen since the last probe's result: what
        // this one saw is the link's, not the engine's.
        not_checked: LINK
            .take()
            .map(|why| format!("not checked: the link failed: {why}")),
    }
}

thread_local! {
    /// The first error of the link (the connection broke, or could not be
    /// made) seen since the last probe's result, noted where the probes
    /// turn errors into words ([`err_text`], [`read_v`]).
    static LINK: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Notes `e` when it is the link's failure, not the engine's answer.
fn note_link(e: &DbError) {
    if matches!(
        e.meaning(),
        crate::engine::Meaning::Connection | crate::engine::Meaning::Protocol
    ) {
        LINK.with_borrow_mut(|l| {
            l.get_or_insert_with(|| {
                super::compare::cut(e.message.lines().next().unwrap_or(""), 160)
            });
        });
    }
}

/// What is compared of a probe's `seen`.
pub fn key(seen: &str) -> &str {
    seen.split(" (").next().unwrap_or(seen)
}

fn err_text(e: &DbError) -> String {
    note_link(e);
    let first = e.message.lines().next().unwrap_or("");
    match &e.code {
        Some(c) => format!("{c}: {}", super::compare::cut(first, 100)),
        None => super::compare::cut(first, 100),
    }
}

fn rows(c: &mut dyn Conn, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
    let mut r = Rows::default();
    c.query_into(sql, &mut r)?;
    Ok(super::trace::rows_of(&r))
}

fn value(c: &mut dyn Conn, sql: &str) -> DbResult<String> {
    Ok(rows(c, sql)?
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .unwrap_or_else(|| "NULL".into()))
}

/// Creates the probes' table with rows (1, 10) and (2, 20).
fn reset(c: &mut dyn Conn, driver: &dyn Driver) -> DbResult<()> {
    use crate::engine::schema::{ColType, Column, KeyedTable};
    let db = driver.require_sql()?;
    let t = KeyedTable {
        name: TABLE.into(),
        columns: vec![
            Column::new("id", ColType::Int).not_null(),
            Column::new("v", ColType::Int).not_null(),
        ],
        key: vec!["id".into()],
        indexes: Vec::new(),
    };
    c.query(&format!("DROP TABLE IF EXISTS {TABLE}"))?;
    for sql in db.dialect().create_keyed_table(&t) {
        c.query(&sql)?;
    }
    c.query(&format!(
        "INSERT INTO {TABLE} (id, v) VALUES (1, 10), (2, 20)"
    ))?;
    Ok(())
}

/// Every probe on `driver`, in order. A probe that cannot run says why
/// in what it saw.
pub fn run(driver: &Arc<dyn Driver>) -> Vec<ProbeResult> {
    LINK.take();
    let mut out = Vec::new();
    let db = match driver.require_sql() {
        Ok(db) => db,
        Err(e) => {
            out.push(result(
                "protocol",
                "connect",
                Finding::new("no", err_text(&e), &[]),
            ));
            return out;
        }
    };
    let mut a = match db.connect() {
        Ok(c) => {
            out.push(result("protocol", "connect", Finding::new("yes", "", &[])));
            c
        }
        Err(e) => {
            out.push(result(
                "protocol",
                "connect",
                Finding::new("no", err_text(&e), &[]),
            ));
            return out;
        }
    };
    out.push(result(
        "protocol",
        "authentication",
        match driver.auth() {
            Some(m) => Finding::new(m, "", &[]),
            None => Finding::new("not reported by rqps's client", "", &[]),
        },
    ));
    out.push(result(
        "protocol",
        "TLS",
        match driver.tls() {
            Some(t) => Finding::new("yes", t.to_string(), &[]),
            None => Finding::new("no", "", &[]),
        },
    ));
    if let Err(e) = reset(a.as_mut(), driver.as_ref()) {
        out.push(result(
            "protocol",
            "probe table",
            Finding::new("refused", err_text(&e), &[]),
        ));
        return out;
    }
    protocol(a.as_mut(), &mut out);
    let second = db.connect();
    let mut b = match second {
        Ok(b) => b,
        Err(e) => {
            out.push(result(
                "protocol",
                "second connection",
                Finding::new("no", err_text(&e), &[]),
            ));
            errors_one_session(a.as_mut(), &mut out);
            let _ = a.query(&format!("DROP TABLE IF EXISTS {TABLE}"));
            return out;
        }
    };
    out.push(result(
        "protocol",
        "second connection",
        Finding::new("yes", "", &[]),
    ));
    isolation(driver, a.as_mut(), b.as_mut(), &mut out);
    errors_one_session(a.as_mut(), &mut out);
    let _ = reset(a.as_mut(), driver.as_ref());
    out.push(result("errors", "deadlock", deadlock(driver)));
    let _ = reset(a.as_mut(), driver.as_ref());
    out.push(result("errors", "lock wait", lock_wait(driver)));
    let _ = a.query(&format!("DROP TABLE IF EXISTS {TABLE}"));
    out
}

fn protocol(a: &mut dyn Conn, out: &mut Vec<ProbeResult>) {
    let sql = format!("SELECT v FROM {TABLE} WHERE id = ?");
    let literal = format!("SELECT v FROM {TABLE} WHERE id = 2");
    for (name, mode) in [
        ("server-side prepared statement", PsMode::Auto),
        ("client-side parameters (text)", PsMode::Disable),
    ] {
        let mut r = Rows::default();
        let seen = a
            .prepare(&sql, mode)
            .and_then(|s| a.fetch(s, &[Param::Int(2)], &mut r));
        out.push(result(
            "protocol",
            name,
            match seen {
                Ok(_) => Finding::new(
                    "yes",
                    format!("value {}", r.get(0, 0).unwrap_or("NULL")),
                    &[&literal],
                ),
                Err(e) => Finding::new("no", err_text(&e), &[&literal]),
            },
        ));
    }
    let mut r = Rows::default();
    out.push(result(
        "protocol",
        "unnamed statement with parameters",
        match a.execute_unprepared(&sql, &[Param::Int(2)], Some(&mut r)) {
            None => Finding::new("not on this protocol", "", &[]),
            Some(Ok(_)) => Finding::new(
                "yes",
                format!("value {}", r.get(0, 0).unwrap_or("NULL")),
                &[&literal],
            ),
            Some(Err(e)) => Finding::new("no", err_text(&e), &[&literal]),
        },
    ));
    let multi = format!("SELECT v FROM {TABLE} WHERE id = 1; SELECT v FROM {TABLE} WHERE id = 2");
    out.push(result(
        "protocol",
        "several statements in one message",
        match rows(a, &multi) {
            // The values are part of the answer: an engine (or a client)
            // that keeps only one statement's rows does not give the
            // reference's.
            Ok(r) => Finding::new(
                format!(
                    "yes, values {}",
                    r.iter()
                        .map(|r| r.first().cloned().flatten().unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "",
                &[&multi],
            ),
            Err(e) => Finding::new("no", err_text(&e), &[&multi]),
        },
    ));
    let meta = format!("SELECT id, v AS w, v + 1 FROM {TABLE} WHERE id = 1");
    out.push(result(
        "protocol",
        "column names",
        match a.column_names(&meta) {
            None => Finding::new("not read by rqps's client", "", &[&meta]),
            Some(Ok(names)) => Finding::new(names.join(", "), "", &[&meta]),
            Some(Err(e)) => Finding::new("no", err_text(&e), &[&meta]),
        },
    ));
}

/// `c` reads `v` of row `id` (an error as `error ...`).
fn read_v(c: &mut dyn Conn, id: i64, for_update: &str) -> String {
    match value(
        c,
        &format!("SELECT v FROM {TABLE} WHERE id = {id}{for_update}"),
    ) {
        Ok(v) => v,
        Err(e) => {
            note_link(&e);
            format!("error {}", e.meaning().key())
        }
    }
}

fn isolation(
    driver: &Arc<dyn Driver>,
    a: &mut dyn Conn,
    b: &mut dyn Conn,
    out: &mut Vec<ProbeResult>,
) {
    let Ok(db) = driver.require_sql() else { return };
    let d = db.dialect();
    let level = match d.only_isolation() {
        Some(l) => l.to_string(),
        None => d
            .isolation_sql()
            .iter()
            .find_map(|q| a.query_scalar(q).ok().flatten())
            .unwrap_or_else(|| "not reported".into()),
    };
    out.push(result(
        "isolation",
        "default level",
        Finding::new(
            level.to_ascii_lowercase().replace(['-', '_'], " "),
            "",
            d.isolation_sql(),
        ),
    ));
    let (begin, commit) = (d.begin_read(), d.commit());
    // Non-repeatable read: a reads row 1, b changes it and commits, a reads it again.
    let steps = [
        format!("A: {begin}"),
        format!("A: SELECT v FROM {TABLE} WHERE id = 1"),
        format!("B: UPDATE {TABLE} SET v = 11 WHERE id = 1"),
        format!("A: SELECT v FROM {TABLE} WHERE id = 1"),
        format!("A: {commit}"),
    ];
    let how: Vec<&str> = steps.iter().map(String::as_str).collect();
    let seen = (|| -> DbResult<Finding> {
        a.query(begin)?;
        let first = read_v(a, 1, "");
        let upd = b.query(&format!("UPDATE {TABLE} SET v = 11 WHERE id = 1"));
        let second = read_v(a, 1, "");
        a.query(commit)?;
        Ok(match upd {
            Err(e) => Finding::new("the update failed", err_text(&e), &how),
            Ok(_) if first == second => {
                Finding::new("repeatable", format!("{first} then {second}"), &how)
            }
            Ok(_) => Finding::new("not repeatable", format!("{first} then {second}"), &how),
        })
    })();
    let _ = a.query(d.rollback());
    out.push(result(
        "isolation",
        "read of a row another session changed",
        seen.unwrap_or_else(|e| Finding::new("could not run", err_text(&e), &how)),
    ));
    // Lost update: both read row 2, both write read + 1.
    let bw = d.begin_write();
    let steps = [
        format!("A: {bw}"),
        format!("A: SELECT v FROM {TABLE} WHERE id = 2"),
        format!("B: {bw}"),
        format!("B: SELECT v FROM {TABLE} WHERE id = 2"),
        format!("A: UPDATE {TABLE} SET v = 21 WHERE id = 2"),
        format!("A: {commit}"),
        format!("B: UPDATE {TABLE} SET v = 21 WHERE id = 2"),
        format!("B: {commit}"),
        format!("SELECT v FROM {TABLE} WHERE id = 2"),
    ];
    let how: Vec<&str> = steps.iter().map(String::as_str).collect();
    let seen = if d.only_isolation().is_some() {
        // One writer at a time (SQLite): B cannot begin while A writes.
        Finding::new("one writer at a time", "", &[])
    } else {
        (|| -> DbResult<Finding> {
            a.query(bw)?;
            let ra = read_v(a, 2, "");
            b.query(bw)?;
            let rb = read_v(b, 2, "");
            a.query(&format!("UPDATE {TABLE} SET v = 21 WHERE id = 2"))?;
            a.query(commit)?;
            let ub = b.query(&format!("UPDATE {TABLE} SET v = 21 WHERE id = 2"));
            let cb = ub.as_ref().ok().map(|_| b.query(commit));
            let _ = b.query(d.rollback());
            let last = read_v(a, 2, "");
            Ok(match (ub, cb) {
                (Err(e), _) | (Ok(_), Some(Err(e))) => Finding::new(
                    format!("prevented: {}", e.meaning().key()),
                    err_text(&e),
                    &how,
                ),
                _ => Finding::new(
                    "lost",
                    format!("both read {ra}/{rb}, the row holds {last}"),
                    &how,
                ),
            })
        })()
        .unwrap_or_else(|e| Finding::new("could not run", err_text(&e), &how))
    };
    let _ = a.query(d.rollback());
    let _ = b.query(d.rollback());
    out.push(result("isolation", "lost update", seen));
    out.push(result("isolation", "FOR UPDATE", for_update(driver)));
}

/// What the second session of a [`while_held`] probe saw: how long its
/// statements took, and the first that failed (its index and error).
type Second = (Duration, Option<(usize, DbError)>);

/// Runs `hold` on one connection, then `second` on another in a thread,
/// and commits the first after `hold_for`; says how long the second's
/// statements took and which failed.
fn while_held(
    driver: &Arc<dyn Driver>,
    hold: &[String],
    second: &[String],
    hold_for: Duration,
) -> DbResult<Second> {
    let db = driver.require_sql()?;
    let d = db.dialect();
    let mut a = db.connect()?;
    let mut b = db.connect()?;
    for s in hold {
        a.query(s)?;
    }
    let second = second.to_vec();
    let commit = d.commit().to_string();
    let rollback = d.rollback().to_string();
    Ok(std::thread::scope(|s| {
        let h = s.spawn(move || {
            let t = Instant::now();
            let mut failed = None;
            for (i, q) in second.iter().enumerate() {
                if let Err(e) = b.query(q) {
                    failed = Some((i, e));
                    break;
                }
            }
            let took = t.elapsed();
            let _ = b.query(&rollback);
            (took, failed)
        });
        std::thread::sleep(hold_for);
        let _ = a.query(&commit);
        h.join().unwrap_or_else(|_| {
            (
                Duration::ZERO,
                Some((0, DbError::fatal("a probe thread panicked"))),
            )
        })
    }))
}

fn for_update(driver: &Arc<dyn Driver>) -> Finding {
    let Ok(db) = driver.require_sql() else {
        return Finding::new("could not run", "", &[]);
    };
    let d = db.dialect();
    let fu = d.for_update();
    let hold = vec![
        d.begin_write().to_string(),
        format!("SELECT v FROM {TABLE} WHERE id = 1{fu}"),
    ];
    let second = vec![
        d.begin_write().to_string(),
        format!("SELECT v FROM {TABLE} WHERE id = 1{fu}"),
    ];
    let steps: Vec<String> = hold
        .iter()
        .map(|s| format!("A: {s}"))
        .chain(second.iter().map(|s| format!("B: {s}")))
        .chain([format!("A: {}", d.commit())])
        .collect();
    let how: Vec<&str> = steps.iter().map(String::as_str).collect();
    match while_held(
        driver,
        &hold,
        &second,
        BLOCKED_AFTER + Duration::from_millis(300),
    ) {
        Err(e) => Finding::new("could not run", err_text(&e), &how),
        Ok((took, None)) if took < BLOCKED_AFTER => Finding::new(
            "does not block",
            format!("B read the row in {} ms", took.as_millis()),
            &how,
        ),
        Ok((took, None)) => Finding::new(
            "blocks",
            format!("B waited {} ms, until A committed", took.as_millis()),
            &how,
        ),
        Ok((_, Some((_, e)))) => Finding::new(
            format!("blocks, then {}", e.meaning().key()),
            err_text(&e),
            &how,
        ),
    }
}

fn deadlock(driver: &Arc<dyn Driver>) -> Finding {
    let Ok(db) = driver.require_sql() else {
        return Finding::new("could not run", "", &[]);
    };
    let d = db.dialect();
    let bw = d.begin_write();
    let up = |id: i64| format!("UPDATE {TABLE} SET v = v + 1 WHERE id = {id}");
    let how = [
        format!("A: {bw}"),
        format!("A: {}", up(1)),
        format!("B: {bw}"),
        format!("B: {}", up(2)),
        format!("A: {} (waits for B)", up(2)),
        format!("B: {}", up(1)),
    ];
    let how: Vec<&str> = how.iter().map(String::as_str).collect();
    if d.only_isolation().is_some() {
        return Finding::new("one writer at a time", "", &how);
    }
    let run = || -> DbResult<(Result<Outcome, DbError>, Result<Outcome, DbError>)> {
        let mut a = db.connect()?;
        let mut b = db.connect()?;
        a.query(bw)?;
        a.query(&up(1))?;
        b.query(bw)?;
        b.query(&up(2))?;
        let rollback = d.rollback().to_string();
        Ok(std::thread::scope(|s| {
            let up2 = up(2);
            let rb = rollback.clone();
            let h = s.spawn(move || {
                let r = a.query(&up2);
                let _ = a.query(&rb);
                r
            });
            std::thread::sleep(Duration::from_millis(300));
            let rb_b = b.query(&up(1));
            let _ = b.query(&rollback);
            let ra = h
                .join()
                .unwrap_or_else(|_| Err(DbError::fatal("a probe thread panicked")));
            (ra, rb_b)
        }))
    };
    match run() {
        Err(e) => Finding::new("could not run", err_text(&e), &how),
        Ok((ra, rb)) => {
            let failed: Vec<&DbError> = [ra.as_ref().err(), rb.as_ref().err()]
                .into_iter()
                .flatten()
                .collect();
            match failed.as_slice() {
                [] => Finding::new("not detected", "both updates went through", &how),
                [e] => Finding::new(
                    format!("one session gets: {}", e.meaning().key()),
                    err_text(e),
                    &how,
                ),
                [e, f] => Finding::new(
                    format!("both fail: {}, {}", e.meaning().key(), f.meaning().key()),
                    err_text(e),
                    &how,
                ),
                _ => unreachable!(),
            }
        }
    }
}

fn lock_wait(driver: &Arc<dyn Driver>) -> Finding {
    let Ok(db) = driver.require_sql() else {
        return Finding::new("could not run", "", &[]);
    };
    let d = db.dialect();
    let Some(timeout) = d.lock_wait_timeout(1000) else {
        return Finding::new("no lock timeout setting", "", &[]);
    };
    let bw = d.begin_write().to_string();
    let hold = vec![
        bw.clone(),
        format!("UPDATE {TABLE} SET v = v + 1 WHERE id = 1"),
    ];
    let second = vec![
        timeout.clone(),
        bw,
        format!("UPDATE {TABLE} SET v = v + 1 WHERE id = 1"),
    ];
    let steps: Vec<String> = hold
        .iter()
        .map(|s| format!("A: {s}"))
        .chain(second.iter().map(|s| format!("B: {s}")))
        .collect();
    let how: Vec<&str> = steps.iter().map(String::as_str).collect();
    // A holds the row well past B's timeout (InnoDB counts whole seconds).
    match while_held(driver, &hold, &second, LOCK_HELD) {
        Err(e) => Finding::new("could not run", err_text(&e), &how),
        Ok((took, None)) => Finding::new(
            "no error",
            format!(
                "B's update went through after {} ms, when A committed",
                took.as_millis()
            ),
            &how,
        ),
        Ok((_, Some((0, e)))) => Finding::new("the timeout cannot be set", err_text(&e), &how),
        Ok((took, Some((_, e)))) => Finding::new(
            e.meaning().key(),
            format!("after {} ms: {}", took.as_millis(), err_text(&e)),
            &how,
        ),
    }
}

fn errors_one_session(a: &mut dyn Conn, out: &mut Vec<ProbeResult>) {
    for (name, sql) in [
        (
            "duplicate key",
            format!("INSERT INTO {TABLE} (id, v) VALUES (1, 0)"),
        ),
        ("syntax error", format!("SELEC v FROM {TABLE}")),
        (
            "unknown table",
            "SELECT v FROM rqps_no_such_table".to_string(),
        ),
        (
            "unknown column",
            format!("SELECT no_such_column FROM {TABLE}"),
        ),
    ] {
        out.push(result(
            "errors",
            name,
            match a.query(&sql) {
                Ok(_) => Finding::new("no error", "", &[&sql]),
                Err(e) => Finding::new(e.meaning().key(), err_text(&e), &[&sql]),
            },
        ));
    }
}

/// Sets whether each of `engine`'s probes saw what the reference's did.
/// A probe not checked, on either side, is no difference (and not the same):
/// it shows as not checked.
pub fn mark_same(engine: &mut [ProbeResult], reference: &[ProbeResult]) {
    for p in engine {
        let r = reference
            .iter()
            .find(|r| r.area == p.area && r.name == p.name);
        if let Some(why) = r.and_then(|r| r.not_checked.clone()) {
            p.not_checked.get_or_insert(why);
        }
        p.same = p.not_checked.is_none() && r.is_some_and(|r| key(&r.seen) == key(&p.seen));
    }
}

//! A compatibility record ([`crate::results::compat`]) for people and
//! tools, in every report format: per engine, the share of statements at
//! each level, whether each suite's results compare with upstream's, the
//! first differences (statement, the reference's answer, the target's),
//! the protocol, isolation and error probes, the invariants after the
//! concurrent runs, and the rules of the comparison. Term, md and html
//! render one [`Block`] document; csv is one record per engine and test
//! (then one per probe); tsv the same as tables; json the record itself.

use super::doc::{Block, DataTable, Shade, TCell, Table, Val};
use super::export::Format;
use crate::results::compat::{CompatRecord, EngineCompat, Level};

/// Differences shown per engine in the readable formats (all are in the
/// record, and in json).
pub const SHOWN_DIFFERENCES: usize = 12;

/// Characters of a statement the readable formats show (json has up to
/// 16,000, its start and its end).
const STATEMENT_SHOWN: usize = 300;

/// Its start and its end: what an engine refuses is often at the end of
/// a long statement (a multi-row INSERT's `ON CONFLICT ...`).
fn shown_statement(s: &str) -> String {
    let len = s.chars().count();
    if len <= STATEMENT_SHOWN {
        return s.to_string();
    }
    let tail = STATEMENT_SHOWN / 3;
    let head: String = s.chars().take(STATEMENT_SHOWN - tail).collect();
    let end: String = s.chars().skip(len - tail).collect();
    format!("{head} ... {end} (more in the record)")
}

fn pct(n: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.0} %", 100.0 * n as f64 / of as f64)
    }
}

/// What is compared of a probe's finding: the words before ` (`.
fn probe_key(seen: &str) -> &str {
    seen.split(" (").next().unwrap_or(seen)
}

/// A table of two key columns, then one column per engine in `cols`, all
/// left-aligned (the cells are words, not figures).
fn per_engine_table(keys: [&str; 2], cols: &[&EngineCompat]) -> Table {
    Table {
        header: keys
            .into_iter()
            .map(String::from)
            .chain(cols.iter().map(|e| e.id.label.clone()))
            .collect(),
        rows: Vec::new(),
        left: 2 + cols.len(),
    }
}

fn engines(r: &CompatRecord) -> impl Iterator<Item = &EngineCompat> {
    std::iter::once(&r.reference).chain(&r.targets)
}

fn checked(r: &CompatRecord) -> impl Iterator<Item = &EngineCompat> {
    r.targets.iter().filter(|t| t.left_out.is_none())
}

fn engine_title(e: &EngineCompat) -> String {
    if e.id.engine.version.is_empty() {
        e.id.label.clone()
    } else {
        format!(
            "{} ({} {})",
            e.id.label, e.id.engine.name, e.id.engine.version
        )
    }
}

/// The readable document: term, md and html render it.
pub fn document(r: &CompatRecord) -> Vec<Block> {
    let mut d = vec![Block::Heading(
        1,
        format!("Compatibility with {}", engine_title(&r.reference)),
    )];
    intro(r, &mut d);
    left_out(r, &mut d);
    levels(r, &mut d);
    suites(r, &mut d);
    differences(r, &mut d);
    probes(r, &mut d);
    conditions(r, &mut d);
    d.push(Block::Heading(2, "How answers were compared".into()));
    d.push(Block::Bullets(r.rules.clone()));
    d.push(Block::Para(format!(
        "Command: {}",
        r.command_line.join(" ")
    )));
    d
}

/// What was checked, how, and when.
fn intro(r: &CompatRecord, d: &mut Vec<Block>) {
    d.push(Block::Para(format!(
        "Every engine loaded the same tables from seed {} and ran each suite's tests as its own workers run them, a few events each on one connection; each statement's answer was compared with the reference's. Levels: protocol (the client connects and runs statements), syntax (the engine parses the statement), semantics (it gives the reference's answers). Checked {} to {}: {}.",
        r.seed,
        r.started,
        r.finished,
        r.suites
            .iter()
            .map(|s| format!("{} ({} tests; {})", s.suite, s.tests, s.load))
            .collect::<Vec<_>>()
            .join(", ")
    )));
}

/// The engines left out, and the tests the link failed in.
fn left_out(r: &CompatRecord, d: &mut Vec<Block>) {
    let left: Vec<String> = r
        .targets
        .iter()
        .filter_map(|t| {
            t.left_out
                .as_ref()
                .map(|why| format!("{} ({}): {why}", t.id.label, t.id.target))
        })
        .collect();
    if !left.is_empty() {
        d.push(Block::Heading(2, "Left out".into()));
        d.push(Block::Bullets(left));
    }
    let mut unchecked: Vec<String> = engines(r)
        .filter(|e| e.left_out.is_none() && e.unchecked().next().is_some())
        .map(|e| {
            let names: Vec<String> = e
                .unchecked()
                .map(|t| format!("{} {}", t.suite, t.test))
                .collect();
            format!(
                "{}: {} of {} test(s) ({}), {}",
                e.id.label,
                names.len(),
                e.tests.len(),
                names.join(", "),
                e.unchecked()
                    .next()
                    .and_then(|t| t.not_checked.as_deref())
                    .unwrap_or("")
            )
        })
        .collect();
    unchecked.extend(
        engines(r)
            .filter(|e| e.left_out.is_none() && e.unchecked_probes().next().is_some())
            .map(|e| {
                let names: Vec<&str> = e.unchecked_probes().map(|p| p.name.as_str()).collect();
                format!(
                    "{}: {} of {} probe(s) ({}), {}",
                    e.id.label,
                    names.len(),
                    e.probes.len(),
                    names.join(", "),
                    e.unchecked_probes()
                        .next()
                        .and_then(|p| p.not_checked.as_deref())
                        .unwrap_or("")
                )
            }),
    );
    if !unchecked.is_empty() {
        d.push(Block::Heading(2, "Not checked".into()));
        d.push(Block::Para(
            "The link to an engine failed in these tests or probes (the connection broke, could not be made, or a reply could not be read): their answers say nothing about the engine, so they have no level, and the record leaves no test out of a report or a gate.".into(),
        ));
        d.push(Block::Bullets(unchecked));
    }
}

/// Statements at each level, per engine.
fn levels(r: &CompatRecord, d: &mut Vec<Block>) {
    d.push(Block::Heading(2, "Statements at each level".into()));
    let mut t = Table {
        header: [
            "engine",
            "statements",
            "semantics",
            "syntax",
            "protocol",
            "none",
            "tests at semantics",
            "suites comparable",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
        left: 1,
    };
    for e in engines(r).filter(|e| e.left_out.is_none()) {
        let c = e.counts();
        let n: u64 = c.iter().sum();
        let tests_ok = e
            .tests
            .iter()
            .filter(|t| t.level == Level::Semantics && t.not_checked.is_none())
            .count();
        let not_checked = e.unchecked().count();
        let suites_ok = e.suites.iter().filter(|s| s.comparable).count();
        let mut row: Vec<TCell> = vec![engine_title(e).into(), Val::Int(n as i64).into()];
        for (i, v) in c.iter().enumerate() {
            let shade = (i > 0 && *v > 0).then_some(Shade::Red);
            row.push(TCell::shaded(pct(*v, n), shade));
        }
        row.push(TCell::shaded(
            match not_checked {
                0 => format!("{tests_ok} of {}", e.tests.len()),
                n => format!("{tests_ok} of {} ({n} not checked)", e.tests.len()),
            },
            (not_checked > 0).then_some(Shade::Red),
        ));
        row.push(TCell::shaded(
            format!("{suites_ok} of {}", e.suites.len()),
            (suites_ok < e.suites.len()).then_some(Shade::Red),
        ));
        t.rows.push(row);
    }
    d.push(Block::Table(t));
}

/// Whether each suite's results compare with the reference's.
fn suites(r: &CompatRecord, d: &mut Vec<Block>) {
    d.push(Block::Heading(
        2,
        "Can each suite's results be compared with the reference's?".into(),
    ));
    let mut t = Table {
        header: ["engine", "suite", "comparable", "why"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
        left: 4,
    };
    for e in checked(r) {
        for s in &e.suites {
            t.rows.push(vec![
                e.id.label.as_str().into(),
                s.suite.as_str().into(),
                TCell::shaded(
                    if s.comparable { "yes" } else { "no" },
                    Some(if s.comparable {
                        Shade::Green
                    } else {
                        Shade::Red
                    }),
                ),
                s.reason.as_str().into(),
            ]);
        }
    }
    d.push(Block::Table(t));
}

/// Each target's first differences.
fn differences(r: &CompatRecord, d: &mut Vec<Block>) {
    for e in checked(r) {
        d.push(Block::Heading(
            2,
            format!("First differences: {}", e.id.label),
        ));
        if e.differences.is_empty() {
            d.push(Block::Para(
                "None: every statement gave the reference's answer.".into(),
            ));
            continue;
        }
        for x in e.differences.iter().take(SHOWN_DIFFERENCES) {
            d.push(Block::Heading(
                3,
                format!("{} {} ({}): {}", x.suite, x.test, x.level.key(), x.what),
            ));
            d.push(Block::Bullets(vec![
                format!("statement: {}", shown_statement(&x.statement)),
                format!("{} answered: {}", r.reference.id.label, x.reference),
                format!("{} answered: {}", e.id.label, x.target),
            ]));
        }
        if e.differences.len() > SHOWN_DIFFERENCES {
            d.push(Block::Para(format!(
                "and {} more (every one is in the record: `rqps compat --show --format json`).",
                e.differences.len() - SHOWN_DIFFERENCES
            )));
        }
    }
}

/// The probes: protocol, isolation and errors.
fn probes(r: &CompatRecord, d: &mut Vec<Block>) {
    if engines(r).any(|e| !e.probes.is_empty()) {
        d.push(Block::Heading(2, "Protocol, isolation and errors".into()));
        d.push(Block::Para(
            "The same few statements on every engine, on a two-row table rqps_compat: what the reference saw, and for each target \"same\" or, in red, what it saw instead (in full below).".into(),
        ));
        let cols: Vec<&EngineCompat> = engines(r).filter(|e| e.left_out.is_none()).collect();
        let mut t = per_engine_table(["area", "probe"], &cols);
        for p in &r.reference.probes {
            let mut row: Vec<TCell> = vec![p.area.as_str().into(), p.name.as_str().into()];
            for (i, e) in cols.iter().enumerate() {
                let q = e
                    .probes
                    .iter()
                    .find(|q| q.area == p.area && q.name == p.name);
                // The reference's column says what it saw; a target's says
                // "same", or in red what it saw instead.
                row.push(match q {
                    Some(q) if q.not_checked.is_some() => {
                        TCell::shaded("not checked", Some(Shade::Red))
                    }
                    Some(q) if i == 0 => probe_key(&q.seen).into(),
                    Some(q) if q.same => "same".into(),
                    Some(q) => TCell::shaded(probe_key(&q.seen), Some(Shade::Red)),
                    None => "-".into(),
                });
            }
            t.rows.push(row);
        }
        d.push(Block::Table(t));
        let details: Vec<String> = cols
            .iter()
            .flat_map(|e| {
                e.probes
                    .iter()
                    .filter(|q| q.seen.len() > probe_key(&q.seen).len())
                    .map(move |q| format!("{} {}: {}", e.id.label, q.name, q.seen))
            })
            .collect();
        d.push(Block::Folded(
            "What each engine answered, in full".into(),
            vec![Block::Bullets(details)],
        ));
        let how: Vec<String> = r
            .reference
            .probes
            .iter()
            .filter(|p| !p.how.is_empty())
            .map(|p| format!("{}: {}", p.name, p.how))
            .collect();
        d.push(Block::Folded(
            "The statements of each probe".into(),
            vec![Block::Bullets(how)],
        ));
    }
}

/// The suites' invariants after their concurrent runs.
fn conditions(r: &CompatRecord, d: &mut Vec<Block>) {
    if engines(r).any(|e| !e.conditions.is_empty()) {
        d.push(Block::Heading(
            2,
            "Invariants after a concurrent run".into(),
        ));
        let cols: Vec<&EngineCompat> = engines(r).filter(|e| e.left_out.is_none()).collect();
        let mut t = per_engine_table(["suite", "condition"], &cols);
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for c in engines(r).flat_map(|e| e.conditions.iter()) {
            if seen.contains(&(c.suite.as_str(), c.name.as_str())) {
                continue;
            }
            seen.push((&c.suite, &c.name));
            let mut row: Vec<TCell> = vec![c.suite.as_str().into(), c.name.as_str().into()];
            for e in &cols {
                row.push(
                    match e
                        .conditions
                        .iter()
                        .find(|x| x.suite == c.suite && x.name == c.name)
                    {
                        Some(x) if x.holds => TCell::shaded("holds", Some(Shade::Green)),
                        Some(x) => TCell::shaded(
                            format!("violated: {}", x.detail.clone().unwrap_or_default()),
                            Some(Shade::Red),
                        ),
                        None => "-".into(),
                    },
                );
            }
            t.rows.push(row);
        }
        d.push(Block::Table(t));
    }
}

/// The csv and tsv rows: one per engine and test, then one per probe and
/// condition.
fn data(r: &CompatRecord) -> DataTable {
    let mut rows = Vec::new();
    for e in engines(r) {
        let base = |kind: &str| -> Vec<Val> {
            vec![
                e.id.label.as_str().into(),
                e.id.engine.name.as_str().into(),
                e.id.engine.version.as_str().into(),
                kind.into(),
            ]
        };
        if let Some(why) = &e.left_out {
            let mut row = base("left-out");
            row.extend([
                Val::Empty,
                Val::Empty,
                Val::Empty,
                Val::Empty,
                why.as_str().into(),
            ]);
            rows.push(row);
            continue;
        }
        for t in &e.tests {
            let mut row = base("test");
            row.extend([
                t.suite.as_str().into(),
                t.test.as_str().into(),
                if t.not_checked.is_some() {
                    "not-checked".into()
                } else {
                    t.level.key().into()
                },
                Val::Int(t.statements as i64),
                t.reason.clone().unwrap_or_default().into(),
            ]);
            rows.push(row);
        }
        for s in &e.suites {
            let mut row = base("suite");
            row.extend([
                s.suite.as_str().into(),
                Val::Empty,
                if s.comparable {
                    "comparable"
                } else {
                    "not comparable"
                }
                .into(),
                Val::Empty,
                s.reason.as_str().into(),
            ]);
            rows.push(row);
        }
        for p in &e.probes {
            let mut row = base(&p.area);
            row.extend([
                Val::Empty,
                p.name.as_str().into(),
                if p.not_checked.is_some() {
                    "not-checked"
                } else if p.same {
                    "same"
                } else {
                    "differs"
                }
                .into(),
                Val::Empty,
                p.seen.as_str().into(),
            ]);
            rows.push(row);
        }
        for c in &e.conditions {
            let mut row = base("invariant");
            row.extend([
                c.suite.as_str().into(),
                c.name.as_str().into(),
                if c.holds { "holds" } else { "violated" }.into(),
                Val::Empty,
                c.detail.clone().unwrap_or_default().into(),
            ]);
            rows.push(row);
        }
    }
    DataTable {
        title: None,
        header: [
            "engine",
            "engine_name",
            "version",
            "kind",
            "suite",
            "test",
            "level",
            "statements",
            "detail",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// The record's data table, one line a row, fields joined by `sep` after
/// `field` made each safe for the format (`na` for a missing value).
fn delimited(r: &CompatRecord, sep: &str, field: fn(&str) -> String, na: &str) -> String {
    let t = data(r);
    let mut out = String::new();
    let mut line = |v: Vec<String>| {
        out.push_str(&v.join(sep));
        out.push('\n');
    };
    line(t.header.iter().map(|h| field(h)).collect());
    for row in t.rows {
        line(row.iter().map(|v| field(&v.text(na))).collect());
    }
    out
}

/// The record in `format`.
pub fn render(r: &CompatRecord, format: Format, colour: bool) -> String {
    let mut out = String::new();
    match format {
        Format::Term => {
            for b in document(r) {
                super::export::term::block(&b, colour, &mut out);
            }
        }
        Format::Md => {
            for b in document(r) {
                super::export::md::block(&b, &mut out);
            }
            out.truncate(out.trim_end().len());
            out.push('\n');
        }
        Format::Html => out = super::export::html::page(&document(r)),
        Format::Csv => out = delimited(r, ",", super::export::csv::field, ""),
        Format::Tsv => out = delimited(r, "\t", super::export::tsv::clean, "NA"),
        Format::Json => {
            out = serde_json::to_string_pretty(r).unwrap_or_default();
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::shown_statement;

    #[test]
    fn a_long_statement_shows_its_start_and_its_end() {
        let sql = format!(
            "INSERT INTO t (a) VALUES {} ON CONFLICT (a) DO NOTHING",
            vec!["(?)"; 500].join(", ")
        );
        let s = shown_statement(&sql);
        assert!(s.starts_with("INSERT INTO t (a) VALUES (?)"), "{s}");
        assert!(
            s.ends_with("ON CONFLICT (a) DO NOTHING (more in the record)"),
            "{s}"
        );
        assert_eq!(shown_statement("SELECT 1"), "SELECT 1");
    }
}

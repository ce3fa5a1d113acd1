//! The end-of-run table: one block per report group, tests in suite order.
//! A suite's section may print a table of its own instead
//! ([`Section::run_table`]) or name its groups ([`Section::groups`]); without
//! a section, groups follow the order the run stored them in.

use std::collections::HashMap;

use super::model::unit_note;
use super::section::{GroupDef, Section};
use crate::results::{RunDoc, TestResult};

/// A rate as the run tables print it.
pub fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The groups of `doc` in the order to print them: its section's, or as
/// first stored (titled `suite: group`).
fn run_groups(doc: &RunDoc, section: Option<&dyn Section>) -> Vec<(String, String)> {
    let defs: Vec<GroupDef> = section.map(|s| s.groups()).unwrap_or_default();
    if !defs.is_empty() {
        return defs
            .iter()
            .map(|d| (d.key.to_string(), d.title.to_string()))
            .collect();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for t in &doc.tests {
        if !out.iter().any(|(k, _)| *k == t.group) {
            out.push((t.group.clone(), format!("{}: {}", doc.suite, t.group)));
        }
    }
    out
}

/// Renders the reported tests of `doc` grouped as the field's reports are,
/// or as its suite's section prints them (`sections`: the caller's, one per
/// known suite). `all` also lists warm-up steps.
pub fn run_table(doc: &RunDoc, all: bool, sections: &[&'static dyn Section]) -> String {
    let mut text = tables(doc, all, sections);
    text.push_str(&bound_lines(doc, all));
    // Why each test that is not ok is not, under the tables that mark it.
    for t in doc.tests.iter().filter(|t| {
        (all || t.reported)
            && !matches!(
                t.status,
                crate::results::Status::Ok | crate::results::Status::Running
            )
    }) {
        if let Some(why) = &t.reason {
            text.push_str(&format!(
                "{}: {} t={}: {why}\n",
                t.status, t.test, t.threads
            ));
        }
    }
    text
}

/// ` oltp_point_select.lua --table-size=100`: a run's script and its options
/// (a stored `script` parameter that is a line), its path by the file's
/// name; empty for a run of a suite's own tests.
fn workload_line(doc: &RunDoc) -> String {
    let Some(line) = doc.params.get("script").and_then(|v| v.as_str()) else {
        return String::new();
    };
    let (path, rest) = line.split_once(' ').unwrap_or((line, ""));
    let file = std::path::Path::new(path)
        .file_name()
        .map_or(path.into(), |f| f.to_string_lossy());
    format!(" {}", format!("{file} {rest}").trim_end())
}

/// What ended the tests that had an event bound (`--events`): one line
/// when their events ended them all, else a line for each test whose time
/// ran out first.
fn bound_lines(doc: &RunDoc, all: bool) -> String {
    let bounded: Vec<(&TestResult, crate::results::EventBound)> = doc
        .tests
        .iter()
        .filter(|t| all || t.reported)
        .filter_map(|t| t.event_bound.map(|b| (t, b)))
        .collect();
    let Some((_, first)) = bounded.first() else {
        return String::new();
    };
    let by_events = |b: &crate::results::EventBound| b.ended_by == crate::results::EndedBy::Events;
    if bounded
        .iter()
        .all(|(_, b)| by_events(b) && b.events == first.events)
    {
        let each = if bounded.len() == 1 {
            "the test"
        } else {
            "each test"
        };
        return format!(
            "{each} ended at its event limit: {} events (--events)\n",
            first.events
        );
    }
    bounded
        .iter()
        .map(|(t, b)| format!("{} t={}: {}\n", t.test, t.threads, b.said(t.events, t.secs)))
        .collect()
}

/// [`run_table`] without the reasons of the tests that are not ok.
fn tables(doc: &RunDoc, all: bool, sections: &[&'static dyn Section]) -> String {
    let section = sections.iter().copied().find(|s| s.suite() == doc.suite);
    if let Some(mut text) = section.and_then(|s| s.run_table(doc, all)) {
        // A suite's own tables carry no stall mark: the notes say which stalled.
        for t in &doc.tests {
            for (mark, w) in marked(t) {
                text.push_str(&format!("{mark}: {} t={}: {w}\n", t.test, t.threads));
            }
        }
        return text;
    }
    let groups = run_groups(doc, section);
    let mut out = String::new();
    let mut stalls: Vec<String> = Vec::new();
    let mut busy = 0usize;
    out.push_str(&format!(
        "{}{} on {} {} ({}), {}\n",
        doc.suite,
        workload_line(doc),
        doc.engine.name,
        doc.engine.version,
        doc.name,
        doc.status
    ));
    if let Some(l) = &doc.load {
        out.push_str(&format!(
            "load: {} rows in {:.1} s, {:.0} rows/s\n",
            l.rows, l.secs, l.rows_per_sec
        ));
    }
    let speedups = Speedups::of(doc, all);
    for (key, title) in &groups {
        let rows: Vec<&TestResult> = doc
            .tests
            .iter()
            .filter(|t| {
                t.group == *key
                    && (all || t.reported)
                    && t.status != crate::results::Status::Running
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut header = vec!["test", "thr", "QPS"];
        if speedups.any() {
            header.push("speed-up");
        }
        header.extend([
            "TPS", "p50 us", "p95 us", "p99 us", "max us", "errors", "status",
        ]);
        let mut table = TextTable::new(&header);
        for t in rows {
            let mut status = t.status.to_string();
            for (mark, w) in marked(t) {
                stalls.push(format!("{mark}: {} t={}: {w}", t.test, t.threads));
                status.push_str(&format!(" ({mark})"));
            }
            if crate::results::ran_busy(&t.warnings) {
                status.push_str(&format!(" {}", crate::results::BUSY_MARK));
                busy += 1;
            }
            let qps = match unit_note(&t.qps_unit) {
                Some(unit) => format!("{} {unit}", num(t.qps)),
                None => num(t.qps),
            };
            let mut cells = vec![t.test.clone(), t.threads.to_string(), qps];
            if speedups.any() {
                cells.push(speedups.of_test(t));
            }
            cells.extend([
                num(t.tps),
                num(t.latency_us.p50),
                num(t.latency_us.p95),
                num(t.latency_us.p99),
                num(t.latency_us.max),
                t.errors.to_string(),
                status,
            ]);
            table.row(cells);
        }
        out.push_str(&format!("\n{title}\n{}", table.render()));
    }
    for s in &stalls {
        out.push_str(&format!("{s}\n"));
    }
    if busy > 0 {
        out.push_str(&format!(
            "{} ran while the machine was busy (status marked {}): {} figures may be the other load's; rerun on an idle machine\n",
            if busy == 1 { "1 test".to_string() } else { format!("{busy} tests") },
            crate::results::BUSY_MARK,
            if busy == 1 { "its" } else { "their" }
        ));
    }
    out.push_str(&hw_table(doc, all, &groups));
    out
}

/// The warnings that mark a test's status in the table (`ok (stalled)`),
/// each with its mark, in the order of [`MARKS`].
fn marked(t: &TestResult) -> impl Iterator<Item = (&'static str, &String)> {
    MARKS.iter().filter_map(|(start, mark)| {
        let w = t.warnings.iter().find(|w| w.starts_with(start))?;
        Some((*mark, w))
    })
}

/// How the warnings that mark a status start, and their marks: a server
/// stall, and a step that ran past its deadline (a stuck connection).
const MARKS: [(&str, &str); 2] = [
    (crate::results::STALL_WARNING, "stalled"),
    (crate::results::OVERRAN_WARNING, "overran"),
];

/// The speed-up of each test a run measured at two thread counts or more:
/// QPS at N threads over QPS at its fewest threads (counted results only).
struct Speedups<'a> {
    /// (suite, test) → (fewest threads, QPS there, most threads)
    first: HashMap<(&'a str, &'a str), (usize, f64, usize)>,
}

impl<'a> Speedups<'a> {
    fn of(doc: &'a RunDoc, all: bool) -> Self {
        let mut first: HashMap<(&str, &str), (usize, f64, usize)> = HashMap::new();
        for t in doc
            .tests
            .iter()
            .filter(|t| (all || t.reported) && t.status == crate::results::Status::Ok)
        {
            let e = first
                .entry((t.suite.as_str(), t.test.as_str()))
                .or_insert((t.threads, t.qps, t.threads));
            e.2 = e.2.max(t.threads);
            if t.threads < e.0 {
                (e.0, e.1) = (t.threads, t.qps);
            }
        }
        Speedups { first }
    }

    /// Whether some test is a sweep.
    fn any(&self) -> bool {
        self.first.values().any(|f| f.2 > f.0)
    }

    /// `1.85`, or `-` for a test run at one thread count or not counted.
    fn of_test(&self, t: &TestResult) -> String {
        match self.first.get(&(t.suite.as_str(), t.test.as_str())) {
            Some(&(fewest, q, most))
                if most > fewest && q > 0.0 && t.status == crate::results::Status::Ok =>
            {
                format!("{:.2}", t.qps / q)
            }
            _ => "-".into(),
        }
    }
}

/// A per-op figure as the run tables print it, `-` where not measured.
pub fn cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// What one operation of a test is, from the unit of its rate: a
/// transaction for `tx/s` (pgbench, TPC-C's), an operation for `ops/s`
/// (LinkBench), else a statement. For results stored before rqps stored
/// it with the figures ([`per_unit`]).
pub fn op_noun(qps_unit: &str) -> &'static str {
    match qps_unit {
        "tx/s" | "tps" => "transaction",
        "ops/s" => "operation",
        _ => "statement",
    }
}

/// What a test's hardware figures are per: as its suite counts them and
/// stored with them (`hw.per`: a statement, a transaction, an operation, a
/// row), else as its rate's unit says ([`op_noun`]).
pub fn per_unit<'a>(t: &TestResult, hw: &'a crate::results::HwCost) -> &'a str {
    match &hw.per {
        Some(p) => p,
        None => op_noun(&t.qps_unit),
    }
}

/// Hardware cost per operation of the load (per row) and of every test (per
/// statement, per transaction: what its suite counts, named in the heading,
/// or in a column where the tests count different things). A suite's own
/// run table ([`Section::run_table`]) adds it after its tables.
pub fn hw_table(doc: &RunDoc, all: bool, groups: &[(String, String)]) -> String {
    let mut table = TextTable::new(&[
        "test",
        "thr",
        "host cpu/o",
        "server cpu/o",
        "client cpu/o",
        "cs/o",
        "r/o",
        "rKB/o",
        "wKB/o",
        "rss MB",
        "db MB",
    ]);
    // Results stored before rqps measured the limit have no column.
    let limits = doc
        .load
        .as_ref()
        .and_then(|l| l.hw.as_ref())
        .into_iter()
        .chain(doc.tests.iter().filter_map(|t| t.hw.as_deref()))
        .any(|h| h.limit.is_some());
    if limits {
        table.header.push("limit".into());
    }
    // The unit of the tests' figures: one for the heading, or a column.
    let mut nouns: Vec<&str> = Vec::new();
    for (key, _) in groups {
        for t in doc.tests.iter().filter(|t| {
            t.group == *key && (all || t.reported) && t.status == crate::results::Status::Ok
        }) {
            if let Some(hw) = &t.hw
                && !nouns.contains(&per_unit(t, hw))
            {
                nouns.push(per_unit(t, hw));
            }
        }
    }
    let per_column = nouns.len() > 1;
    if per_column {
        table.header.insert(2, "per".into());
    }
    let mut rows = 0;
    let mut notes: Vec<String> = Vec::new();
    let mut limited = false;
    let mut add = |name: String, thr: String, per: &str, hw: &crate::results::HwCost| {
        let db = hw
            .db_after
            .as_ref()
            .and_then(|d| d.disk_bytes.or(d.engine_bytes))
            .map(|b| b as f64 / 1048576.0);
        let mut cells = vec![name, thr];
        if per_column {
            cells.push(per.to_string());
        }
        cells.extend([
            cell(hw.cpu_us_per_op),
            cell(hw.server_cpu_us_per_op),
            cell(hw.client_cpu_us_per_op),
            cell(hw.cs_per_op),
            cell(hw.reads_per_op),
            cell(hw.rkb_per_op),
            cell(hw.wkb_per_op),
            cell(hw.server_max_rss_mb),
            cell(db),
        ]);
        if limits {
            cells.push(limit_cell(hw.limit.as_ref()));
        }
        table.row(cells);
        if hw.limit.as_ref().is_some_and(|l| l.by.is_some()) {
            limited = true;
        }
        for n in &hw.unavailable {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
        rows += 1;
    };
    if let Some(hw) = doc.load.as_ref().and_then(|l| l.hw.as_ref()) {
        add("load (per row)".into(), "-".into(), "row", hw);
    }
    for (key, _) in groups {
        for t in doc.tests.iter().filter(|t| {
            t.group == *key && (all || t.reported) && t.status == crate::results::Status::Ok
        }) {
            if let Some(hw) = &t.hw {
                add(t.test.clone(), t.threads.to_string(), per_unit(t, hw), hw);
            }
        }
    }
    if rows == 0 {
        return String::new();
    }
    let per = match nouns[..] {
        [] => "per row".into(),
        [one] => format!("per {one}"),
        _ => "per operation: the column per says of what".into(),
    };
    let mut out = format!(
        "\nhardware cost per operation ({per}; CPU in microseconds: host = the whole machine's, \
         other processes' included; cs = context switches; r = storage reads; KB read/written on {})\n{}",
        doc.tests
            .iter()
            .find_map(|t| t.hw.as_ref().and_then(|h| h.device.clone()))
            .unwrap_or_else(|| "-".into()),
        table.render()
    );
    if limited {
        out.push_str(&format!("  - {}\n", LIMIT_LEGEND));
    }
    for n in notes {
        out.push_str(&format!("  - not measured: {n}\n"));
    }
    out
}

/// What the limit column means, where a table shows one.
pub const LIMIT_LEGEND: &str = "limit: the budget the test used up (90% or more over its measured \
interval): client = the CPUs rqps ran on (--client-cpus, else the machine's), so the figure is \
the client's, not the server's; server-cpu = the server's CPUs; host-cpu = all the machine's \
CPUs; disk = the data device was busy (io_ticks). none: no budget was used up";

/// A stored limit as the tables print it: its label, `none` when nothing
/// was used up, `-` for results stored before rqps measured it.
pub fn limit_cell(l: Option<&crate::results::Limit>) -> String {
    match l {
        None => "-".into(),
        Some(l) => l.label().unwrap_or_else(|| "none".into()),
    }
}

/// A plain aligned text table: the first column left-aligned, the others right-aligned.
pub struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    pub fn new(header: &[&str]) -> Self {
        TextTable {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut width = vec![0usize; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |r: &Vec<String>| -> String {
            let cells: Vec<String> = (0..n)
                .map(|i| {
                    let c = r.get(i).map(String::as_str).unwrap_or("");
                    if i == 0 {
                        format!("{c:<w$}", w = width[i])
                    } else {
                        format!("{c:>w$}", w = width[i])
                    }
                })
                .collect();
            format!("  {}\n", cells.join("  ").trim_end())
        };
        let mut out = line(&self.header);
        out.push_str(&format!(
            "  {}\n",
            width
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("  ")
        ));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

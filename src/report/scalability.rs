//! The scalability view of a thread sweep: for every test measured at more
//! than one thread count, each name's QPS at its fewest threads, its speed-up
//! at every count (QPS at N threads / QPS at the fewest), and the thread
//! count of its peak QPS. Term and Markdown show the table; HTML adds one
//! chart of QPS against threads per test, one line per name (targets that
//! differ only in a CPU budget make the curves of a scalability study).
//!
//! Built from the [`Report`]'s rows (geometric means over the repeats), so
//! it says nothing the QPS tables do not; it only reads them across threads.

use serde::Serialize;

use super::doc::{Block, Chart, TCell, Table};
use super::model::Report;

/// QPS as the QPS tables print it (the exporters call this module, so it
/// does not reach back into them).
fn qps(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// One name's QPS against threads at one test.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Curve {
    pub suite: String,
    pub test: String,
    pub name: String,
    /// `(threads, qps)`, ascending threads.
    pub points: Vec<(usize, f64)>,
}

impl Curve {
    /// QPS at the fewest threads of the curve.
    pub fn first_qps(&self) -> f64 {
        self.points.first().map(|p| p.1).unwrap_or(0.0)
    }

    /// QPS at `threads` over QPS at the fewest threads; `None` where the
    /// name has no result at `threads` or none at the fewest is above 0.
    pub fn speedup(&self, threads: usize) -> Option<f64> {
        let first = self.first_qps();
        let (_, q) = self.points.iter().find(|p| p.0 == threads)?;
        (first > 0.0).then(|| q / first)
    }

    /// The thread count of the highest QPS (the fewest threads on a tie), and that QPS.
    pub fn peak(&self) -> (usize, f64) {
        self.points
            .iter()
            .fold((0, f64::NEG_INFINITY), |best, &(t, q)| {
                if q > best.1 { (t, q) } else { best }
            })
    }
}

/// Every curve of the report with at least two thread counts: tests in
/// report order, then names (the base first).
pub fn curves(r: &Report) -> Vec<Curve> {
    let mut tests: Vec<(&str, &str)> = Vec::new();
    for row in r.rows() {
        let k = (row.suite.as_str(), row.test.as_str());
        if !tests.contains(&k) {
            tests.push(k);
        }
    }
    let names = r.names();
    let mut out = Vec::new();
    for (suite, test) in tests {
        for (i, name) in names.iter().enumerate() {
            let mut points: Vec<(usize, f64)> = r
                .rows()
                .filter(|x| x.suite == suite && x.test == test)
                .filter_map(|row| {
                    let side = row.side(i)?;
                    Some((row.threads, side.qps))
                })
                .collect();
            points.sort_by_key(|p| p.0);
            points.dedup_by_key(|p| p.0);
            if points.len() > 1 {
                out.push(Curve {
                    suite: suite.to_string(),
                    test: test.to_string(),
                    name: name.to_string(),
                    points,
                });
            }
        }
    }
    out
}

/// What limited `c`'s name at its peak: the limit its repeats there named.
pub fn peak_limit<'r>(r: &'r Report, c: &Curve) -> Option<&'r crate::results::Limit> {
    let i = r.names().iter().position(|n| *n == c.name)?;
    let (threads, _) = c.peak();
    let row = r
        .rows()
        .find(|x| x.suite == c.suite && x.test == c.test && x.threads == threads)?;
    let side = if i == 0 {
        &row.base
    } else {
        &row.cells.get(i - 1)?.as_ref()?.side
    };
    side.limit()
}

/// Whether a peak was set by something other than the server: the client's
/// CPUs or the whole host's.
fn not_the_servers(l: Option<&crate::results::Limit>) -> bool {
    matches!(l.and_then(|l| l.by.as_deref()), Some("client" | "host-cpu"))
}

/// The scalability table: one row per test and name.
pub fn table(r: &Report, curves: &[Curve]) -> Table {
    let mut header: Vec<String> = ["test", "name", "QPS at fewest threads"]
        .map(String::from)
        .to_vec();
    header.extend(r.thread_counts.iter().map(|t| format!("t={t}")));
    header.extend(["peak QPS", "peak at threads"].map(String::from));
    // Results stored before rqps measured the limit have no column.
    let limits = curves.iter().any(|c| peak_limit(r, c).is_some());
    if limits {
        header.push("limit at peak".into());
    }
    let rows = curves
        .iter()
        .map(|c| {
            let mut cells: Vec<TCell> = vec![
                c.test.as_str().into(),
                c.name.as_str().into(),
                qps(c.first_qps()).into(),
            ];
            cells.extend(r.thread_counts.iter().map(|&t| {
                TCell::from(match c.speedup(t) {
                    Some(s) => format!("{s:.2}"),
                    None => "-".into(),
                })
            }));
            let (t, q) = c.peak();
            let limit = peak_limit(r, c);
            let mark = if not_the_servers(limit) { " *" } else { "" };
            cells.push(format!("{}{mark}", qps(q)).into());
            cells.push(t.to_string().into());
            if limits {
                cells.push(crate::report::table::limit_cell(limit).into());
            }
            cells
        })
        .collect();
    Table {
        header,
        rows,
        left: 2,
    }
}

/// The section: heading, legend, table and (with `charts`) one QPS-against-
/// threads chart per test. Nothing when no test has two thread counts.
pub fn blocks(r: &Report, charts: bool) -> Vec<Block> {
    let curves = curves(r);
    if curves.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Scalability".into()),
        Block::Para(
            "Speed-up: QPS at N threads / QPS at the fewest threads the name ran (1.00 there; \
- where it has no result). Peak: the thread count of the highest QPS. QPS are geometric \
means over the repeats."
                .into(),
        ),
        Block::Table(table(r, &curves)),
    ];
    let by_client = curves
        .iter()
        .any(|c| peak_limit(r, c).and_then(|l| l.by.as_deref()) == Some("client"));
    let by_host = curves
        .iter()
        .any(|c| peak_limit(r, c).and_then(|l| l.by.as_deref()) == Some("host-cpu"));
    if by_client {
        out.push(Block::Para(
            "* client: the client, not the server, set this figure: give it more CPUs or use client parts (--part)."
                .into(),
        ));
    }
    if by_host {
        out.push(Block::Para(
            "* host-cpu: the machine's CPUs were full (client, server and other processes together), so this is not the server's \
peak alone: run the client on CPUs of its own (--client-cpus, --server-cpus) or on another machine."
                .into(),
        ));
    }
    if charts {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for c in &curves {
            let k = (c.suite.as_str(), c.test.as_str());
            if !seen.contains(&k) {
                seen.push(k);
                out.push(Block::Chart(Chart::Sweep {
                    suite: c.suite.clone(),
                    test: c.test.clone(),
                }));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(points: &[(usize, f64)]) -> Curve {
        Curve {
            suite: "sysbench".into(),
            test: "point-query".into(),
            name: "a".into(),
            points: points.to_vec(),
        }
    }

    /// A run of `name` whose point-query ran at each `(threads, qps, limit)`.
    fn run(name: &str, points: &[(usize, f64, Option<&str>)]) -> crate::results::RunDoc {
        let mut doc: crate::results::RunDoc = serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": name, "name": name, "suite": "sysbench",
            "status": "ok", "started": name, "command_line": [], "target": "",
            "engine": {"name": "postgres", "version": "16"}, "params": {},
            "host": {"arch": "x86_64", "cpus": 16, "hostname": "h", "os": "linux"},
            "tests": []
        }))
        .unwrap();
        for &(threads, qps, by) in points {
            let mut t = crate::results::TestResult::running(
                "sysbench",
                "point-query".into(),
                "point",
                threads,
                true,
                "statements/s",
            );
            t.status = crate::results::Status::Ok;
            t.qps = qps;
            t.secs = 10.0;
            t.hw = Some(Box::new(crate::results::HwCost {
                limit: Some(crate::results::Limit {
                    by: by.map(String::from),
                    threshold_pct: 90.0,
                    client_cores: Some(if by == Some("client") { 3.97 } else { 1.0 }),
                    client_cpus: 4,
                    host_cpus: 16,
                    host_busy_pct: Some(50.0),
                    ..Default::default()
                }),
                per_op: crate::results::PerOp {
                    cpu_us_per_op: Some(10.0),
                    ..Default::default()
                },
                ..Default::default()
            }));
            doc.tests.push(t);
        }
        doc
    }

    fn section(runs: &[crate::results::RunDoc]) -> String {
        format!("{:?}", blocks(&report(runs), false))
    }

    fn report(runs: &[crate::results::RunDoc]) -> Report {
        crate::report::load::build(
            runs,
            &crate::report::load::Options {
                base: "a".into(),
                targets: None,
                rules: crate::report::model::Rules::default(),
                all: false,
                sections: Vec::new(),
                workloads: Vec::new(),
                engines: Default::default(),
                allow_mismatch: false,
            },
        )
        .unwrap()
    }

    #[test]
    fn the_hardware_tables_carry_each_sides_limit_and_its_legend() {
        let a = run("a", &[(32, 371_000.0, Some("client"))]);
        let b = run("b", &[(32, 200_000.0, None)]);
        let doc = crate::report::export::document(&report(&[a, b]), false);
        let table = doc
            .iter()
            .find_map(|b| match b {
                Block::Table(t) if t.header.last().is_some_and(|h| h == "limit") => Some(t),
                _ => None,
            })
            .expect("a hardware table with a limit column");
        let last = |i: usize| table.rows[i].last().unwrap().text();
        assert_eq!(last(0), "client 99% of 4 CPUs");
        assert_eq!(last(1), "none");
        let text = format!("{doc:?}");
        assert!(
            text.contains("so the figure is the client's, not the server's"),
            "{text}"
        );
        // Results stored before rqps measured the limit: no column, no legend.
        let mut old = run("a", &[(32, 371_000.0, None)]);
        let mut older = run("b", &[(32, 200_000.0, None)]);
        for d in [&mut old, &mut older] {
            for t in &mut d.tests {
                t.hw.as_mut().unwrap().limit = None;
            }
        }
        let doc = crate::report::export::document(&report(&[old, older]), false);
        let text = format!("{doc:?}");
        assert!(
            text.contains("cpu/o") && !text.contains("\"limit\""),
            "{text}"
        );
        assert!(!text.contains("not the server's"), "{text}");
    }

    #[test]
    fn a_peak_the_client_set_is_marked_and_explained() {
        let a = run(
            "a",
            &[
                (32, 371_000.0, Some("client")),
                (64, 369_000.0, Some("client")),
            ],
        );
        let b = run("b", &[(32, 200_000.0, None), (64, 210_000.0, None)]);
        let text = section(&[a, b]);
        assert!(text.contains("371000 *"), "{text}");
        assert!(text.contains("client 99% of 4 CPUs"), "{text}");
        assert!(
            text.contains(
                "the client, not the server, set this figure: give it more CPUs or use client parts"
            ),
            "{text}"
        );
        assert!(text.contains("210000\"") && text.contains("none"), "{text}");
    }

    #[test]
    fn a_peak_the_server_set_is_not_marked() {
        let a = run(
            "a",
            &[(1, 10_000.0, None), (2, 19_000.0, Some("server-cpu"))],
        );
        let b = run("b", &[(1, 10_000.0, None), (2, 18_000.0, None)]);
        let text = section(&[a, b]);
        assert!(!text.contains(" *"), "{text}");
        assert!(!text.contains("the client, not the server"), "{text}");
    }

    #[test]
    fn speedup_is_over_the_fewest_threads_and_peak_takes_the_first_maximum() {
        let c = curve(&[(2, 100.0), (4, 180.0), (8, 250.0), (16, 250.0), (32, 200.0)]);
        assert_eq!(c.speedup(2), Some(1.0));
        assert_eq!(c.speedup(8), Some(2.5));
        assert_eq!(c.speedup(1), None);
        assert_eq!(c.peak(), (8, 250.0));
        assert_eq!(curve(&[(1, 0.0), (2, 5.0)]).speedup(2), None);
    }
}

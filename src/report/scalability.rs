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

/// The scalability table: one row per test and name.
pub fn table(r: &Report, curves: &[Curve]) -> Table {
    let mut header: Vec<String> = ["test", "name", "QPS at fewest threads"]
        .map(String::from)
        .to_vec();
    header.extend(r.thread_counts.iter().map(|t| format!("t={t}")));
    header.extend(["peak QPS", "peak at threads"].map(String::from));
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
            cells.push(qps(q).into());
            cells.push(t.to_string().into());
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

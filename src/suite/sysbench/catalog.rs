//! The sysbench tests by their reference names (reference §1.3), the two
//! suite orders (§1.4.1 classic, §1.4.2 current) and the report groups (§1.5).

use crate::error::usage;
use serde::{Deserialize, Serialize};

/// The four groups the field's reports use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    Point,
    Range,
    RangeAgg,
    Write,
}

impl Group {
    pub const ALL: [Group; 4] = [Group::Point, Group::Range, Group::RangeAgg, Group::Write];

    pub fn title(self) -> &'static str {
        match self {
            Group::Point => "point queries",
            Group::Range => "range queries without aggregation",
            Group::RangeAgg => "range queries with aggregation",
            Group::Write => "writes",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Group::Point => "point",
            Group::Range => "range",
            Group::RangeAgg => "range-agg",
            Group::Write => "write",
        }
    }
}

/// Which ids an update-non-index event touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdMode {
    /// Uniform over the table (or `--rand-type`).
    Default,
    /// Always id 1 (update-one: the reference forces `--table-size=1`).
    One,
    /// Zipfian, theta 0.8 (update-zipf).
    Zipf,
}

/// What one event of a test does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `SELECT c FROM t WHERE id=?`.
    PointSelect,
    /// `SELECT c FROM t WHERE id IN (points ids)`; `hot`: always ids N/2+1..N/2+points.
    InList { points: usize, hot: bool },
    /// `SELECT id|k[, c] FROM t WHERE id|k IN (100 values)`.
    PointsCovered { covered: bool, on_id: bool },
    /// `SELECT id|k[, c] FROM t WHERE id|k BETWEEN x AND x+100`.
    RangeCovered { covered: bool, on_id: bool },
    /// Full scan returning no rows, not prepared, one table per thread.
    Scan,
    /// BEGIN; 10 point selects; the chosen ranges of `range` rows; COMMIT.
    ReadOnly {
        range: i64,
        simple: bool,
        sum: bool,
        order: bool,
        distinct: bool,
    },
    /// `SELECT count(c) ... BETWEEN x AND x+range-1`, autocommit.
    ReadOnlyCount { range: i64 },
    /// `UPDATE t SET c=? WHERE id IN (10 ids)`.
    UpdateInlist,
    /// `UPDATE t SET k=k+1 WHERE id=?`.
    UpdateIndex,
    /// `UPDATE t SET c=? WHERE id=?`.
    UpdateNonIndex { ids: IdMode },
    /// BEGIN; index update; non-index update; delete + insert of one id; COMMIT.
    WriteOnly,
    /// BEGIN; 10 point selects; 4 ranges of `range` rows; the write-only writes; COMMIT.
    ReadWrite { range: i64 },
    /// `DELETE FROM t WHERE id=?`.
    Delete,
    /// Insert with an engine-assigned id, sent as plain text.
    Insert,
}

/// Which duration parameter a test runs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    Read,
    Write,
    /// Unreported warm-up steps (`scan.warm`, `point-query.warm`, ...).
    Warm,
}

#[derive(Clone, Debug)]
pub struct TestDef {
    pub name: String,
    pub kind: Kind,
    pub group: Group,
    pub span: Span,
    /// Part of the reported set of its order (warm-up and `.pre` steps of the
    /// current order are run but left out of reports).
    pub reported: bool,
    /// Run the settle step after this test (reference §1.6 "postwrite").
    pub settle_after: bool,
    /// Run with one thread per table instead of `--threads` (point-query.warm).
    pub threads_per_table: bool,
}

/// The two orders of reference §1.4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Current,
    Classic,
}

impl std::str::FromStr for Order {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, crate::error::Error> {
        match s {
            "current" => Ok(Order::Current),
            "classic" => Ok(Order::Classic),
            _ => Err(usage(format!(
                "unknown --list '{s}' (expected current or classic)"
            ))),
        }
    }
}

/// A test by its base name (no `.pre`/`.warm` suffix) and range, if the name has one.
fn base(name: &str) -> Option<(Kind, Group, Span)> {
    use Group::*;
    use Kind::*;
    let (stem, range) = match name.split_once("_range=") {
        Some((s, r)) => (s, Some(r.parse::<i64>().ok()?)),
        None => (name, None),
    };
    let pc = |covered, on_id| PointsCovered { covered, on_id };
    let rc = |covered, on_id| RangeCovered { covered, on_id };
    let ro = |simple, sum, order, distinct| ReadOnly {
        range: 1000,
        simple,
        sum,
        order,
        distinct,
    };
    let def = match (stem, range) {
        ("point-query", None) => (PointSelect, Point, Span::Read),
        ("random-points", Some(r)) if [10, 100, 1000].contains(&r) => (
            InList {
                points: r as usize,
                hot: false,
            },
            Point,
            Span::Read,
        ),
        ("hot-points", None) => (
            InList {
                points: 100,
                hot: true,
            },
            Point,
            Span::Read,
        ),
        ("points-covered-pk", None) => (pc(true, true), Point, Span::Read),
        ("points-notcovered-pk", None) => (pc(false, true), Point, Span::Read),
        ("points-covered-si", None) => (pc(true, false), Point, Span::Read),
        ("points-notcovered-si", None) => (pc(false, false), Point, Span::Read),
        ("range-covered-pk", None) => (rc(true, true), Range, Span::Read),
        ("range-notcovered-pk", None) => (rc(false, true), Range, Span::Read),
        ("range-covered-si", None) => (rc(true, false), Range, Span::Read),
        ("range-notcovered-si", None) => (rc(false, false), Range, Span::Read),
        ("scan", None) => (Scan, Range, Span::Read),
        ("read-only", Some(r)) if [10, 100, 10000].contains(&r) => (
            ReadOnly {
                range: r,
                simple: true,
                sum: true,
                order: true,
                distinct: true,
            },
            RangeAgg,
            Span::Read,
        ),
        ("read-only-simple", None) => (ro(true, false, false, false), RangeAgg, Span::Read),
        ("read-only-sum", None) => (ro(false, true, false, false), RangeAgg, Span::Read),
        ("read-only-order", None) => (ro(false, false, true, false), RangeAgg, Span::Read),
        ("read-only-distinct", None) => (ro(false, false, false, true), RangeAgg, Span::Read),
        ("read-only-count", None) => (ReadOnlyCount { range: 1000 }, RangeAgg, Span::Read),
        ("update-inlist", None) => (UpdateInlist, Write, Span::Write),
        ("update-index", None) => (UpdateIndex, Write, Span::Write),
        ("update-nonindex", None) => (
            UpdateNonIndex {
                ids: IdMode::Default,
            },
            Write,
            Span::Write,
        ),
        ("update-one", None) => (UpdateNonIndex { ids: IdMode::One }, Write, Span::Write),
        ("update-zipf", None) => (UpdateNonIndex { ids: IdMode::Zipf }, Write, Span::Write),
        // The reference gives write-only the read duration (§1.2).
        ("write-only", None) => (WriteOnly, Write, Span::Read),
        ("read-write", Some(r)) if [10, 100].contains(&r) => {
            (ReadWrite { range: r }, Write, Span::Write)
        }
        ("delete", None) => (Delete, Write, Span::Write),
        ("insert", None) => (Insert, Write, Span::Write),
        _ => return None,
    };
    Some(def)
}

/// Looks a test up by its full name, including `.pre` and `.warm` variants
/// (`point-query.pre`, `random-points.pre_range=10`, `scan.warmpre`).
pub fn lookup(name: &str) -> Option<TestDef> {
    let (stem, range) = match name.split_once("_range=") {
        Some((s, r)) => (s, Some(r)),
        None => (name, None),
    };
    let (base_stem, suffix) = match stem.split_once('.') {
        Some((b, s)) => (b, Some(s)),
        None => (stem, None),
    };
    let base_name = match range {
        Some(r) => format!("{base_stem}_range={r}"),
        None => base_stem.to_string(),
    };
    let (kind, group, span) = base(&base_name)?;
    let (reported, span, threads_per_table) = match suffix {
        None => (true, span, false),
        Some("pre") => (true, span, false),
        Some("warm") if base_stem == "point-query" => (false, Span::Warm, true),
        Some("warm") | Some("warmpre") if base_stem == "scan" => (false, Span::Warm, false),
        Some("warm") if base_stem == "points-covered-si" => (false, span, false),
        _ => return None,
    };
    Some(TestDef {
        name: name.to_string(),
        kind,
        group,
        span,
        reported,
        settle_after: name == "point-query.warm" || name == "read-write_range=100",
        threads_per_table,
    })
}

const CURRENT: &[&str] = &[
    "point-query.warm",
    "scan.warmpre",
    "point-query.pre",
    "range-notcovered-si.pre",
    "update-inlist",
    "update-index",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
    "read-write_range=10",
    "read-write_range=100",
    "scan.warm",
    "scan",
    "read-only_range=10",
    "read-only_range=100",
    "read-only_range=10000",
    "read-only-simple",
    "read-only-sum",
    "read-only-order",
    "read-only-distinct",
    "read-only-count",
    "point-query",
    "random-points_range=10",
    "random-points_range=100",
    "random-points_range=1000",
    "hot-points",
    "points-covered-pk",
    "points-notcovered-pk",
    "range-covered-pk",
    "range-notcovered-pk",
    "points-covered-si.warm",
    "points-covered-si",
    "points-notcovered-si",
    "range-covered-si",
    "range-notcovered-si",
    "delete",
    "insert",
];

const CLASSIC: &[&str] = &[
    "point-query.warm",
    "point-query.pre",
    "random-points.pre_range=10",
    "random-points.pre_range=100",
    "random-points.pre_range=1000",
    "read-only.pre_range=10",
    "read-only.pre_range=100",
    "read-only.pre_range=10000",
    "points-covered-pk.pre",
    "points-notcovered-pk.pre",
    "points-covered-si.pre",
    "points-notcovered-si.pre",
    "range-covered-pk.pre",
    "range-notcovered-pk.pre",
    "range-covered-si.pre",
    "range-notcovered-si.pre",
    "update-inlist",
    "update-index",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
    "read-write_range=10",
    "read-write_range=100",
    "read-only_range=10",
    "read-only_range=100",
    "read-only_range=10000",
    "point-query",
    "random-points_range=10",
    "random-points_range=100",
    "random-points_range=1000",
    "hot-points",
    "points-covered-pk",
    "points-notcovered-pk",
    "points-covered-si",
    "points-notcovered-si",
    "range-covered-pk",
    "range-notcovered-pk",
    "range-covered-si",
    "range-notcovered-si",
    "scan",
    "delete",
    "insert",
];

/// Every step of an order, reported or not, in the order it runs.
pub fn order(order: Order) -> Vec<TestDef> {
    let names = match order {
        Order::Current => CURRENT,
        Order::Classic => CLASSIC,
    };
    names
        .iter()
        .map(|n| {
            let mut t = lookup(n).unwrap_or_else(|| panic!("catalog names an unknown test {n}"));
            // In the current order the `.pre` steps run but are not reported.
            if order == Order::Current && n.contains(".pre") {
                t.reported = false;
            }
            // The classic order (before March 2025) gives scan the read duration too;
            // both orders do, so nothing changes here.
            t
        })
        .collect()
}

/// The steps of `order` restricted to `names` (kept in suite order), or the
/// names that are not in it.
pub fn select(order_kind: Order, names: &[String]) -> Result<Vec<TestDef>, Vec<String>> {
    let all = order(order_kind);
    let unknown: Vec<String> = names
        .iter()
        .filter(|n| !all.iter().any(|t| &t.name == *n))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(unknown);
    }
    Ok(all
        .into_iter()
        .filter(|t| names.contains(&t.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_order_reports_32_tests_in_four_groups() {
        let steps = order(Order::Current);
        let reported: Vec<_> = steps.iter().filter(|t| t.reported).collect();
        assert_eq!(reported.len(), 32);
        let count = |g| reported.iter().filter(|t| t.group == g).count();
        assert_eq!(
            (
                count(Group::Point),
                count(Group::Range),
                count(Group::RangeAgg),
                count(Group::Write)
            ),
            (9, 5, 8, 10)
        );
        assert_eq!(steps.len(), 38);
        assert_eq!(steps.first().unwrap().name, "point-query.warm");
        assert_eq!(steps.last().unwrap().name, "insert");
        let settle: Vec<_> = steps
            .iter()
            .filter(|t| t.settle_after)
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(settle, ["point-query.warm", "read-write_range=100"]);
    }

    #[test]
    fn classic_order_has_42_reported_tests() {
        let steps = order(Order::Classic);
        assert_eq!(steps.iter().filter(|t| t.reported).count(), 42);
        assert_eq!(steps.iter().filter(|t| t.name.contains(".pre")).count(), 15);
    }

    #[test]
    fn names_map_to_the_reference_statements() {
        assert_eq!(
            lookup("random-points_range=100").unwrap().kind,
            Kind::InList {
                points: 100,
                hot: false
            }
        );
        assert_eq!(
            lookup("hot-points").unwrap().kind,
            Kind::InList {
                points: 100,
                hot: true
            }
        );
        assert_eq!(lookup("write-only").unwrap().span, Span::Read);
        assert_eq!(
            lookup("update-one").unwrap().kind,
            Kind::UpdateNonIndex { ids: IdMode::One }
        );
        assert!(lookup("random-points_range=7").is_none());
        assert!(lookup("nope").is_none());
        assert!(lookup("read-only.pre_range=10").unwrap().reported);
    }

    #[test]
    fn select_keeps_suite_order_and_names_unknown_tests() {
        let names = vec!["insert".to_string(), "point-query".to_string()];
        let got = select(Order::Current, &names).unwrap();
        assert_eq!(
            got.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["point-query", "insert"]
        );
        let bad = select(Order::Current, &["point-query".into(), "pointquery".into()]).unwrap_err();
        assert_eq!(bad, ["pointquery"]);
    }
}

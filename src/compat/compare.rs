//! How two engines' answers to one statement are compared: values as
//! values, rows in order where the statement orders them and as a multiset
//! where it does not, errors by what they mean. [`RULES`] says it in words;
//! every compatibility record carries them.

use std::cmp::Ordering;

use super::trace::Answer;
use crate::results::compat::Level;

/// The comparison rules, one line each, as records and reports state them.
pub const RULES: &[&str] = &[
    "a value that reads as a number (digits, a sign, a decimal point, an exponent) is compared as a number: 1, 1.0 and 1.000 are equal, and two numbers within a relative 1e-9 of each other are equal",
    "a value that reads as a date and time (YYYY-MM-DD HH:MM:SS...) is compared by its kind only: loads and writes stamp the clock of the moment they ran",
    "any other value is text, compared byte for byte (trailing spaces of a CHAR column count); NULL equals only NULL",
    "rows are compared in order when the statement has an ORDER BY outside parentheses, and as a multiset otherwise; the same rows in another order is a difference of its own",
    "an affected-row count must be equal; a result set never equals an affected-row count",
    "errors are compared by what they mean (duplicate key, deadlock, lock wait, serialization failure, syntax error, unknown name, unsupported feature), not by code or message",
    "a statement the reference ran and the target refused (a syntax error, an unknown name, an unsupported feature) is at the protocol level; one the target ran with another answer, or failed otherwise, at the syntax level",
    "a table the test writes is read whole afterwards (its columns that no clock fills) and compared as a multiset of rows",
];

/// A value normalized for comparison.
#[derive(Clone, Debug, PartialEq)]
enum Norm {
    Null,
    /// The canonical text of a number, and its value.
    Num(String, f64),
    DateTime,
    Text(String),
}

/// Whether `s` is a number as SQL prints one.
fn numeric(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits_from = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - digits_from;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return false;
        }
    }
    i == b.len()
}

/// The canonical text of a number: no sign for zero or `+`, no leading
/// zeros, no trailing zeros after the point, no point without decimals.
fn canonical(s: &str) -> String {
    if s.contains(['e', 'E']) {
        return s.parse::<f64>().map(|v| v.to_string()).unwrap_or_default();
    }
    let (neg, digits) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let body = if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    };
    if neg && body != "0" {
        format!("-{body}")
    } else {
        body
    }
}

/// Whether `s` starts like a SQL date and time: `YYYY-MM-DD HH:MM:SS`.
fn datetime(s: &str) -> bool {
    let b = s.as_bytes();
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    b.len() >= 19
        && (0..4).all(d)
        && b[4] == b'-'
        && d(5)
        && d(6)
        && b[7] == b'-'
        && d(8)
        && d(9)
        && (b[10] == b' ' || b[10] == b'T')
        && d(11)
        && d(12)
        && b[13] == b':'
        && d(14)
        && d(15)
        && b[16] == b':'
        && d(17)
        && d(18)
}

fn norm(v: &Option<String>) -> Norm {
    match v {
        None => Norm::Null,
        Some(s) if numeric(s.trim()) => {
            let t = s.trim();
            Norm::Num(canonical(t), t.parse().unwrap_or(f64::NAN))
        }
        Some(s) if datetime(s) => Norm::DateTime,
        Some(s) => Norm::Text(s.clone()),
    }
}

fn same_value(a: &Norm, b: &Norm) -> bool {
    match (a, b) {
        (Norm::Num(x, xv), Norm::Num(y, yv)) => {
            x == y || (xv - yv).abs() <= 1e-9 * xv.abs().max(yv.abs())
        }
        _ => a == b,
    }
}

fn same_row(a: &[Norm], b: &[Norm]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_value(x, y))
}

/// An order on normalized values for sorting a multiset.
fn order(a: &Norm, b: &Norm) -> Ordering {
    let rank = |n: &Norm| match n {
        Norm::Null => 0,
        Norm::Num(..) => 1,
        Norm::DateTime => 2,
        Norm::Text(_) => 3,
    };
    match (a, b) {
        (Norm::Num(_, x), Norm::Num(_, y)) => x.total_cmp(y),
        (Norm::Text(x), Norm::Text(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn sorted(rows: &[Vec<Option<String>>]) -> Vec<Vec<Norm>> {
    let mut v: Vec<Vec<Norm>> = rows.iter().map(|r| r.iter().map(norm).collect()).collect();
    v.sort_by(|a, b| {
        a.iter()
            .zip(b)
            .map(|(x, y)| order(x, y))
            .find(|o| o.is_ne())
            .unwrap_or(a.len().cmp(&b.len()))
    });
    v
}

/// Whether `sql` orders its rows: an ORDER BY outside parentheses and quotes.
pub fn orders(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    let b = upper.as_bytes();
    let (mut depth, mut quote) = (0i32, None::<u8>);
    for i in 0..b.len() {
        match (quote, b[i]) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, q @ (b'\'' | b'"' | b'`')) => quote = Some(q),
            (None, b'(') => depth += 1,
            (None, b')') => depth -= 1,
            (None, b'O') if depth == 0 && upper[i..].starts_with("ORDER BY") => {
                let before = i.checked_sub(1).map(|j| b[j]);
                if before.is_none_or(|c| !c.is_ascii_alphanumeric() && c != b'_') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// A comparison's verdict: the level, and what differs in one line.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub level: Level,
    pub what: String,
}

/// A row as a report shows it: `(1, 'abc', NULL)`, cut after 160 characters.
pub fn show_row(r: &[Option<String>]) -> String {
    let cells: Vec<String> = r
        .iter()
        .map(|v| match v {
            None => "NULL".into(),
            Some(s) if numeric(s.trim()) => s.clone(),
            Some(s) => format!("'{}'", middle(s, 40)),
        })
        .collect();
    cut(&format!("({})", cells.join(", ")), 160)
}

/// A long text as its first and last characters around `...`, so that a
/// difference at either end (a trailing space) still shows.
fn middle(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        return s.to_string();
    }
    let half = n / 2;
    let head: String = s.chars().take(half).collect();
    let tail: String = s.chars().skip(len - half).collect();
    format!("{head}...{tail}")
}

/// `s` cut to `n` characters at most, with `...` where it was cut.
pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n).collect();
    t.push_str("...");
    t
}

/// `s` in at most about `n` characters, its start and its end: what a
/// long statement refuses is often at its end (a multi-row INSERT's
/// `ON CONFLICT ...`), past a cut of its start alone.
pub fn cut_statement(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        return s.to_string();
    }
    let tail = n / 4;
    let head: String = s.chars().take(n - tail).collect();
    let end: String = s.chars().skip(len - tail).collect();
    format!("{head} ... {end}")
}

/// An answer as a report shows it, in one line.
pub fn show(a: &Answer) -> String {
    match a {
        Answer::Prepared => "prepared".into(),
        Answer::Affected(n) => format!("{n} row(s) affected"),
        Answer::Scalar(None) => "no value".into(),
        Answer::Scalar(Some(v)) => format!("value {}", show_row(&[Some(v.clone())])),
        Answer::Rows(rows) => match rows.len() {
            0 => "no rows".into(),
            1 => format!("1 row: {}", show_row(&rows[0])),
            n => format!("{n} rows, the first {}", show_row(&rows[0])),
        },
        Answer::Error {
            meaning,
            code,
            message,
        } => format!(
            "{} ({}{})",
            meaning.key(),
            code.as_deref()
                .map(|c| format!("{c}: "))
                .unwrap_or_default(),
            cut(message.lines().next().unwrap_or(""), 160)
        ),
    }
}

/// The first row where two result sets differ, for the one-line reason.
fn first_difference(
    a: &[Vec<Norm>],
    b: &[Vec<Norm>],
    ra: &[Vec<Option<String>>],
    rb: &[Vec<Option<String>>],
    in_order: bool,
) -> String {
    let show = |rows: &[Vec<Option<String>>], n: &[Norm]| -> String {
        // The original text of a normalized row, for showing.
        rows.iter()
            .find(|r| same_row(&r.iter().map(norm).collect::<Vec<_>>(), n))
            .map(|r| show_row(r))
            .unwrap_or_default()
    };
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if same_row(x, y) => continue,
            (Some(x), Some(y)) => {
                let at = if in_order {
                    format!("row {}", i + 1)
                } else {
                    "a row".into()
                };
                return format!("{at}: {} against {}", show(rb, y), show(ra, x));
            }
            (Some(x), None) => return format!("a row the target lacks: {}", show(ra, x)),
            (None, Some(y)) => return format!("a row only the target has: {}", show(rb, y)),
            (None, None) => break,
        }
    }
    String::new()
}

/// Compares `target` with `reference` for statement `sql`.
pub fn compare(sql: &str, reference: &Answer, target: &Answer) -> Verdict {
    let same = Verdict {
        level: Level::Semantics,
        what: String::new(),
    };
    let differ = |what: String| Verdict {
        level: Level::Syntax,
        what,
    };
    match (reference, target) {
        (_, Answer::Error { meaning, .. }) if meaning.refused() => match reference {
            Answer::Error { meaning: m, .. } if m == meaning => same,
            _ => Verdict {
                level: Level::Protocol,
                what: format!("refused: {}", meaning.key()),
            },
        },
        (_, Answer::Error { meaning, .. })
            if matches!(
                meaning,
                crate::engine::Meaning::Connection | crate::engine::Meaning::Protocol
            ) =>
        {
            Verdict {
                level: Level::None,
                what: match meaning {
                    crate::engine::Meaning::Protocol => {
                        "the client could not read the answer: a protocol violation".into()
                    }
                    _ => "the connection failed".into(),
                },
            }
        }
        (Answer::Error { meaning: a, .. }, Answer::Error { meaning: b, .. }) => {
            if a == b {
                same
            } else {
                differ(format!("another error: {} against {}", b.key(), a.key()))
            }
        }
        (Answer::Error { meaning, .. }, _) => differ(format!(
            "ran where the reference failed ({})",
            meaning.key()
        )),
        (_, Answer::Error { meaning, .. }) => differ(format!("failed: {}", meaning.key())),
        (Answer::Prepared, Answer::Prepared) => same,
        (Answer::Affected(a), Answer::Affected(b)) if a == b => same,
        (Answer::Affected(a), Answer::Affected(b)) => {
            differ(format!("{b} row(s) affected against {a}"))
        }
        (Answer::Scalar(a), Answer::Scalar(b)) => {
            if same_value(&norm(a), &norm(b)) {
                same
            } else {
                differ("another value".into())
            }
        }
        (Answer::Rows(a), Answer::Rows(b)) => {
            let width = |r: &Vec<Vec<Option<String>>>| r.first().map_or(0, Vec::len);
            if !a.is_empty() && !b.is_empty() && width(a) != width(b) {
                return differ(format!("{} columns against {}", width(b), width(a)));
            }
            if a.len() != b.len() {
                let (sa, sb) = (sorted(a), sorted(b));
                return differ(format!(
                    "{} rows against {}; {}",
                    b.len(),
                    a.len(),
                    first_difference(&sa, &sb, a, b, false)
                ));
            }
            let (sa, sb) = (sorted(a), sorted(b));
            let set_same = sa.iter().zip(&sb).all(|(x, y)| same_row(x, y));
            if !set_same {
                return differ(format!(
                    "rows differ; {}",
                    first_difference(&sa, &sb, a, b, false)
                ));
            }
            if orders(sql) {
                let na: Vec<Vec<Norm>> = a.iter().map(|r| r.iter().map(norm).collect()).collect();
                let nb: Vec<Vec<Norm>> = b.iter().map(|r| r.iter().map(norm).collect()).collect();
                if !na.iter().zip(&nb).all(|(x, y)| same_row(x, y)) {
                    return differ(format!(
                        "the same rows in another order; {}",
                        first_difference(&na, &nb, a, b, true)
                    ));
                }
            }
            same
        }
        (a, b) => differ(format!("{} against {}", kind(b), kind(a))),
    }
}

fn kind(a: &Answer) -> &'static str {
    match a {
        Answer::Prepared => "a prepared statement",
        Answer::Rows(_) => "a result set",
        Answer::Affected(_) => "an affected-row count",
        Answer::Scalar(_) => "a value",
        Answer::Error { .. } => "an error",
    }
}

/// Each row of `rows` as a hash of its normalized values (numbers by their
/// canonical text, date-times by their kind, text as it is), sorted: two
/// tables whose lists are equal hold the same rows. Cheaper than
/// [`compare_tables`] on the large tables of TPC-C, which runs only where
/// the lists differ (to say what differs, numbers within their tolerance
/// counted equal).
pub fn row_hashes(rows: &crate::engine::Rows) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut out: Vec<u64> = (0..rows.len())
        .map(|r| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            for c in 0..rows.width() {
                match rows.get(r, c) {
                    None => 0u8.hash(&mut h),
                    Some(v) if numeric(v.trim()) => {
                        1u8.hash(&mut h);
                        canonical(v.trim()).hash(&mut h);
                    }
                    Some(v) if datetime(v) => 2u8.hash(&mut h),
                    Some(v) => {
                        3u8.hash(&mut h);
                        v.hash(&mut h);
                    }
                }
            }
            h.finish()
        })
        .collect();
    out.sort_unstable();
    out
}

/// Compares two tables read whole (rows as a multiset): `None` when equal,
/// else what differs.
pub fn compare_tables(
    reference: &[Vec<Option<String>>],
    target: &[Vec<Option<String>>],
) -> Option<String> {
    let (sa, sb) = (sorted(reference), sorted(target));
    if sa.len() == sb.len() && sa.iter().zip(&sb).all(|(x, y)| same_row(x, y)) {
        return None;
    }
    let lead = if sa.len() == sb.len() {
        format!("{} rows on both", sa.len())
    } else {
        format!("{} rows against {}", sb.len(), sa.len())
    };
    Some(format!(
        "{lead}; {}",
        first_difference(&sa, &sb, reference, target, false)
    ))
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_long_statement_is_cut_in_its_middle_so_its_end_shows() {
        let rows = vec!["(?, ?)"; 1000].join(", ");
        let sql = format!("INSERT INTO t (a, b) VALUES {rows} ON CONFLICT (a) DO NOTHING");
        let c = cut_statement(&sql, 400);
        assert!(c.starts_with("INSERT INTO t (a, b) VALUES (?, ?)"), "{c}");
        assert!(c.ends_with("ON CONFLICT (a) DO NOTHING"), "{c}");
        assert!(c.contains(" ... ") && c.chars().count() < 420, "{c}");
        assert_eq!(cut_statement("SELECT 1", 400), "SELECT 1");
    }
    use super::*;
    use crate::engine::Meaning;

    fn rows(v: &[&[Option<&str>]]) -> Answer {
        Answer::Rows(
            v.iter()
                .map(|r| r.iter().map(|c| c.map(str::to_string)).collect())
                .collect(),
        )
    }

    #[test]
    fn numbers_compare_as_values_and_text_byte_for_byte() {
        for (a, b) in [
            ("1", "1.0"),
            ("1.500", "1.5"),
            ("-0", "0"),
            ("+7", "7"),
            ("007", "7"),
            ("1e3", "1000"),
            ("0.30000000000000004", "0.3"),
        ] {
            assert!(
                same_value(&norm(&Some(a.into())), &norm(&Some(b.into()))),
                "{a} {b}"
            );
        }
        for (a, b) in [("1", "2"), ("abc ", "abc"), ("1.5", "1.05"), ("x", "X")] {
            assert!(
                !same_value(&norm(&Some(a.into())), &norm(&Some(b.into()))),
                "{a} {b}"
            );
        }
        assert!(!same_value(&norm(&None), &norm(&Some("".into()))));
        assert!(same_value(
            &norm(&Some("2024-01-02 03:04:05.123".into())),
            &norm(&Some("2026-11-27 10:00:00+00".into()))
        ));
        assert!(!numeric("1-2") && !numeric(".") && !numeric("e5") && numeric(".5"));
    }

    #[test]
    fn rows_are_a_multiset_unless_the_statement_orders_them() {
        let a = rows(&[&[Some("1")], &[Some("2")]]);
        let b = rows(&[&[Some("2")], &[Some("1.0")]]);
        let v = compare("SELECT x FROM t WHERE id IN (1, 2)", &a, &b);
        assert_eq!(v.level, Level::Semantics, "{v:?}");
        let v = compare("SELECT x FROM t ORDER BY x", &a, &b);
        assert_eq!(v.level, Level::Syntax);
        assert!(
            v.what.starts_with("the same rows in another order"),
            "{v:?}"
        );
        // An ORDER BY inside a sub-select orders nothing outside it.
        assert!(!orders(
            "DELETE FROM t WHERE id IN (SELECT id FROM t ORDER BY id LIMIT 3)"
        ));
        assert!(orders(
            "select distinct c from t where id between ? and ? order by c"
        ));
        assert!(!orders("SELECT 'ORDER BY' FROM t"));
        let c = rows(&[&[Some("1")], &[Some("3")]]);
        let v = compare("SELECT x FROM t", &a, &c);
        assert_eq!(v.level, Level::Syntax);
        assert!(v.what.contains("(3) against (2)"), "{v:?}");
        let v = compare("SELECT x FROM t", &a, &rows(&[&[Some("1")]]));
        assert!(v.what.starts_with("1 rows against 2"), "{v:?}");
    }

    #[test]
    fn errors_compare_by_meaning_and_a_refusal_is_the_protocol_level() {
        let err = |meaning, code: &str| Answer::Error {
            meaning,
            code: Some(code.into()),
            message: "m".into(),
        };
        let dup_pg = err(Meaning::DuplicateKey, "23505");
        let dup_h2 = err(Meaning::DuplicateKey, "23505");
        assert_eq!(compare("INSERT", &dup_pg, &dup_h2).level, Level::Semantics);
        let v = compare(
            "SELECT",
            &Answer::Affected(1),
            &err(Meaning::Syntax, "42601"),
        );
        assert_eq!(v.level, Level::Protocol);
        let v = compare("INSERT", &dup_pg, &Answer::Affected(1));
        assert_eq!(v.level, Level::Syntax);
        assert!(v.what.contains("ran where the reference failed"), "{v:?}");
        let v = compare("UPDATE", &Answer::Affected(1), &Answer::Affected(0));
        assert_eq!(v.what, "0 row(s) affected against 1");
        let v = compare("BEGIN", &Answer::Affected(0), &rows(&[]));
        assert_eq!(v.what, "a result set against an affected-row count");
    }

    #[test]
    fn tables_compare_as_multisets() {
        let t = |v: &[&str]| -> Vec<Vec<Option<String>>> {
            v.iter().map(|s| vec![Some(s.to_string())]).collect()
        };
        assert_eq!(compare_tables(&t(&["a", "b"]), &t(&["b", "a"])), None);
        let d = compare_tables(&t(&["a", "b"]), &t(&["a", "c"])).unwrap();
        assert!(
            d.starts_with("2 rows on both; a row: ('c') against ('b')"),
            "{d}"
        );
    }
}

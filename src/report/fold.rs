//! Notes alike folded into one line with a count: a warning each of 2,000
//! runs gives (a busy machine, an overrun, a failed test) is one line on
//! standard error, not 2,000. The documents keep every note.

use std::collections::HashMap;

/// What a note says with its numbers and run ids (which start with the
/// run's date and time) left out: notes of the same cause on other runs,
/// tests or thread counts are alike. Digits that end a word (`pg16`,
/// `l.i1`) are part of a name, and kept.
fn cause(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut prev = ' ';
    let mut in_number = false;
    for c in line.chars() {
        if c.is_ascii_digit() && (in_number || !(prev.is_alphanumeric() || prev == '_')) {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
        prev = c;
    }
    out
}

/// `lines` in order, each line alike with an earlier one counted on that
/// one (`… (and 1999 more like it)`) instead of repeated. A line alone is
/// unchanged.
pub fn folded(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut firsts: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for line in lines {
        match at.entry(cause(&line)) {
            std::collections::hash_map::Entry::Occupied(e) => firsts[*e.get()].1 += 1,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(firsts.len());
                firsts.push((line, 1));
            }
        }
    }
    firsts
        .into_iter()
        .map(|(line, n)| match n {
            1 => line,
            n => format!("{line} (and {} more like it)", n - 1),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_of_one_cause_on_many_runs_are_one_line_with_a_count() {
        let lines = (0..2000).map(|i| {
            format!(
                "pg16 run 20261202-04{:04}-pg16: other processes used {}% before 3 of its steps",
                i,
                40 + i % 7
            )
        });
        let mut all: Vec<String> = lines.collect();
        all.push(
            "pg17 run 20261202-050000-pg17: other processes used 41% before 1 of its steps".into(),
        );
        all.push("skipped unreadable run /r/x: not JSON".into());
        let f = folded(all);
        assert_eq!(f.len(), 3, "{f:?}");
        assert_eq!(
            f[0],
            "pg16 run 20261202-040000-pg16: other processes used 40% before 3 of its steps (and 1999 more like it)"
        );
        // ... while a note of another name stays apart (quiet: nothing folded).
        let two = folded([
            "pg16 point-select t=1 in run 20261202-040000-pg16: overran".to_string(),
            "pg17 point-select t=1 in run 20261202-040000-pg17: overran".to_string(),
        ]);
        assert_eq!(two.len(), 2);
        assert!(two.iter().all(|l| !l.contains("more like it")), "{two:?}");
    }
}

//! What a results directory holds, for the commands that list, show and
//! merge stored runs: the names stored (`rqps runs`: one line per name and
//! workload, with its suite, engine, the workload's shape, how many repeats,
//! and when the first and last began; a name stored with two shapes gets two
//! lines, so a mix shows before a report compares it), the latest readable
//! run (`rqps show`), and the runs of client parts merged into one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, usage};
use crate::results::{RunDoc, Status, Store, merge, read_run};

/// Parameters every line shows, when a run has them: the profile, the
/// thread counts, and a script run's script with its options.
const ALWAYS: [&str; 3] = ["profile", "threads", "script"];

/// The widest line `rqps runs` prints; a longer SHAPE is cut to fit.
const MAX_LINE: usize = 200;

/// A parameter's value as one short word: `1,4` for a list.
fn word(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(word).collect::<Vec<_>>().join(","),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The parameter keys that tell runs of `suite` apart: those that make its
/// experiment (its workload, treatments, what rqps adds) whose values differ
/// between its runs that measure. A seed rqps drew, a warm-up or a record of
/// how a run was made is no shape: such runs are repeats.
fn varying(runs: &[RunDoc], suite: &str, keys: &[&str]) -> BTreeSet<String> {
    let of_suite: Vec<&serde_json::Map<String, Value>> = runs
        .iter()
        .filter(|r| r.suite == suite && r.measures)
        .filter_map(|r| r.params.as_object())
        .collect();
    let Some(first) = of_suite.first() else {
        return BTreeSet::new();
    };
    keys.iter()
        .filter(|k| {
            let v = first.get(**k);
            of_suite.iter().any(|p| p.get(**k) != v)
        })
        .map(|k| k.to_string())
        .collect()
}

/// `/usr/share/sysbench/oltp_read_only.lua --tables=2` →
/// `oltp_read_only.lua --tables=2`: a value that starts with a path, by its
/// file's name (the whole path is in the run's record).
fn file_first(v: &str) -> String {
    let (first, rest) = v.split_once(' ').unwrap_or((v, ""));
    match Path::new(first).file_name() {
        Some(f) if first.contains('/') => {
            let f = f.to_string_lossy();
            if rest.is_empty() {
                f.into_owned()
            } else {
                format!("{f} {rest}")
            }
        }
        _ => v.to_string(),
    }
}

/// `profile=ci threads=1,4 table_size=10000`: the profile, the thread
/// counts and a script (those a run has) always, then the keys in `extra`.
pub fn shape(params: &Value, extra: &BTreeSet<String>) -> String {
    let Some(p) = params.as_object() else {
        return String::new();
    };
    let mut parts = Vec::new();
    for k in ALWAYS {
        if let Some(v) = p.get(k).filter(|v| !v.is_null()) {
            parts.push(format!("{k}={}", file_first(&word(v))));
        }
    }
    for k in extra {
        if ALWAYS.contains(&k.as_str()) {
            continue;
        }
        parts.push(format!("{k}={}", p.get(k).map_or("-".into(), word)));
    }
    parts.join(" ")
}

/// `2026-11-26T06:40:31Z` → `2026-11-26 06:40`.
fn minute(t: &str) -> String {
    t.get(..16).unwrap_or(t).replacen('T', " ", 1)
}

/// One line of the listing.
#[derive(Debug, PartialEq)]
pub struct Line {
    pub name: String,
    pub suite: String,
    pub engine: String,
    pub shape: String,
    /// Runs that measure (the name's repeats); 0 on the line of a name's
    /// runs of commands alone.
    pub repeats: usize,
    /// Runs that did not end `ok` (failed, interrupted, killed, still running).
    pub not_ok: usize,
    /// A line of runs that measured nothing (a script's `prepare` or
    /// `cleanup` alone): its SHAPE names their commands.
    pub commands_only: bool,
    pub first: String,
    pub last: String,
}

/// The lines for `runs` (oldest first, as `read_results` orders them): a
/// line per name, suite and shape, counting the repeats; a name's runs
/// that measured nothing on one line of their own.
pub fn lines(runs: &[RunDoc]) -> Vec<Line> {
    let (workloads, engines) = (
        crate::suite::workloads(),
        crate::plan::report::engine_keys(),
    );
    let suites: BTreeSet<&str> = runs.iter().map(|r| r.suite.as_str()).collect();
    let extra: Vec<(&str, BTreeSet<String>)> = suites
        .into_iter()
        .map(|s| {
            let keys = crate::report::load::experiment_keys(s, &workloads, &engines);
            (s, varying(runs, s, &keys))
        })
        .collect();
    let mut out: Vec<Line> = Vec::new();
    for r in runs {
        let keys = extra
            .iter()
            .find(|(s, _)| *s == r.suite)
            .map(|(_, k)| k.clone())
            .unwrap_or_default();
        let commands: Vec<&str> = r.commands.iter().map(|c| c.command.as_str()).collect();
        let shape = if r.measures {
            shape(&r.params, &keys)
        } else {
            String::new()
        };
        // `mariadb 10.11.19`: the version as its number (the whole string
        // is in the run).
        let engine = format!(
            "{} {}",
            r.engine.name,
            crate::plan::session::short_version(&r.engine.version)
        )
        .trim()
        .to_string();
        let ok = r.status == Status::Ok;
        match out.iter_mut().find(|l| {
            l.name == r.name && l.suite == r.suite && l.commands_only != r.measures && {
                !r.measures || l.shape == shape
            }
        }) {
            Some(l) => {
                l.repeats += usize::from(r.measures);
                l.not_ok += usize::from(!ok);
                l.last = minute(&r.started);
                if !l.engine.split(", ").any(|e| e == engine) {
                    l.engine = format!("{}, {engine}", l.engine);
                }
                if !r.measures {
                    for c in commands {
                        if !l.shape.split(", ").any(|x| x == c) {
                            l.shape = format!("{}, {c}", l.shape);
                        }
                    }
                }
            }
            None => out.push(Line {
                name: r.name.clone(),
                suite: r.suite.clone(),
                engine,
                shape: if r.measures {
                    shape
                } else {
                    commands.join(", ")
                },
                repeats: usize::from(r.measures),
                not_ok: usize::from(!ok),
                commands_only: !r.measures,
                first: minute(&r.started),
                last: minute(&r.started),
            }),
        }
    }
    out
}

/// The listing as a table, each line at most [`MAX_LINE`] characters (a
/// SHAPE too long for it is cut, with `…`).
pub fn render(lines: &[Line]) -> String {
    let head = [
        "NAME", "SUITE", "ENGINE", "REPEATS", "FIRST", "LAST", "SHAPE",
    ];
    let rows: Vec<[String; 7]> = lines
        .iter()
        .map(|l| {
            let repeats = if l.commands_only {
                "-".to_string()
            } else {
                l.repeats.to_string()
            };
            [
                l.name.clone(),
                l.suite.clone(),
                l.engine.clone(),
                if l.not_ok > 0 {
                    format!("{repeats} ({} not ok)", l.not_ok)
                } else {
                    repeats
                },
                l.first.clone(),
                l.last.clone(),
                if l.commands_only {
                    format!("no test: {}", l.shape)
                } else {
                    l.shape.clone()
                },
            ]
        })
        .collect();
    let mut width = head.map(str::len);
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut push = |cells: &[String]| {
        let mut line = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                let room = MAX_LINE.saturating_sub(line.chars().count()).max(12);
                if c.chars().count() > room {
                    line.extend(c.chars().take(room - 1));
                    line.push('…');
                } else {
                    line.push_str(c);
                }
            } else {
                line.push_str(&format!("{c:<w$}  ", w = width[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    };
    push(&head.map(String::from));
    for r in &rows {
        push(r);
    }
    out
}

/// `rqps runs`: the listing of `results`, printed.
pub fn list(results: &Path) -> Result<(), Error> {
    if !results.is_dir() {
        return Err(crate::report::load::no_results_dir(results));
    }
    let (runs, warnings) =
        crate::report::load::read_results_keeping(results, crate::results::Keep::Context)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    if runs.is_empty() {
        return Err(usage(format!(
            "no runs in {}: store one with `rqps run --results {}`",
            results.display(),
            results.display()
        )));
    }
    print!("{}", render(&lines(&runs)));
    if let Some(hint) = crate::plan::hints::runs_hint(results, &runs) {
        println!("{hint}");
    }
    Ok(())
}

/// The run in `results` named `run`, else the latest that reads (one that
/// does not is skipped, as reports skip it).
pub fn read_one(results: &Path, run: Option<&str>) -> Result<RunDoc, Error> {
    if !results.exists() {
        return Err(crate::report::load::no_results_dir(results));
    }
    if let Some(r) = run {
        return Ok(read_run(&results.join(r))?);
    }
    let mut runs: Vec<PathBuf> = std::fs::read_dir(results)
        .map_err(|e| {
            usage(format!(
                "cannot read results directory {}: {e}",
                results.display()
            ))
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.json").is_file())
        .collect();
    runs.sort();
    loop {
        let dir = runs.pop().ok_or_else(|| {
            usage(format!(
                "no readable runs in {}: `rqps run` stores one there, or give --results DIR",
                results.display()
            ))
        })?;
        match read_run(&dir) {
            Ok(doc) => return Ok(doc),
            Err(e) => eprintln!("warning: skipped unreadable run {}: {e}", dir.display()),
        }
    }
}

/// Every run in `dir`: the run itself when `dir` holds a run.json.
fn runs_in(dir: &Path) -> Result<Vec<RunDoc>, Error> {
    if dir.join("run.json").is_file() {
        return Ok(vec![read_run(dir)?]);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| {
        usage(format!(
            "cannot read {}: {e} (give the results directories of the parts)",
            dir.display()
        ))
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(usage(format!(
            "{} holds no runs (give the results directories of the parts)",
            dir.display()
        )));
    }
    dirs.iter()
        .map(|d| read_run(d).map_err(Error::from))
        .collect()
}

/// `rqps merge`: the runs of the parts in `dirs`, merged into one run per
/// name and repeat, stored in `results`.
pub fn merge_parts(dirs: &[PathBuf], results: &Path) -> Result<(), Error> {
    let out = std::fs::canonicalize(results).unwrap_or_else(|_| results.to_path_buf());
    let mut runs = Vec::new();
    for d in dirs {
        if std::fs::canonicalize(d).is_ok_and(|d| out.starts_with(&d) || d.starts_with(&out)) {
            return Err(usage(format!(
                "--results {} is (inside) a part's directory {}: store the merged runs elsewhere, so reports never count a part beside the whole",
                results.display(),
                d.display()
            )));
        }
        runs.extend(runs_in(d)?);
    }
    let merged = merge::merge(runs).map_err(usage)?;
    let dir = crate::results::check_writable(results)?;
    let mut command_line = vec!["rqps".to_string(), "merge".into()];
    command_line.extend(dirs.iter().map(|d| d.display().to_string()));
    for mut doc in merged {
        let tests = std::mem::take(&mut doc.tests);
        let status = doc.status;
        doc.command_line = command_line.clone();
        let parts = doc.merged_from.len();
        for p in doc.merged_from.iter().filter(|p| p.late) {
            eprintln!(
                "warning: {} part {}/{} began {:.1} s after --start-at (flagged late)",
                doc.name, p.index, p.count, p.late_secs
            );
        }
        let mut store = Store::create(&dir, doc, None)?;
        for t in tests {
            let slot = store.begin_test(&t)?;
            store.finish_test(slot, t)?;
        }
        store.finish(status)?;
        println!(
            "{}",
            crate::report::table::run_table(store.doc(), false, &crate::suite::report_sections())
        );
        eprintln!(
            "merged {parts} parts of {} repeat {} into {}",
            store.doc().name,
            store.doc().repeat,
            store.dir().display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, name: &str, params: Value, measures: bool) -> RunDoc {
        serde_json::from_value(serde_json::json!({
            "rqps_version": "0", "run_id": id, "name": name, "suite": "sysbench",
            "status": "ok", "started": "2026-12-01T10:00:00Z", "command_line": [], "target": "",
            "engine": {"name": "mariadb", "version": "10.11"}, "params": params,
            "host": {"arch": "x86_64", "cpus": 1, "hostname": "h", "os": "linux"},
            "measures": measures,
            "commands": if measures { serde_json::json!([]) } else {
                serde_json::json!([{"command": "prepare", "secs": 1.0, "statements": 3, "status": "ok"}])
            }
        }))
        .unwrap()
    }

    fn params(seed: u64, rand_seed: u32, table_size: u64, script: Option<&str>) -> Value {
        serde_json::json!({
            "profile": "ci", "threads": [2], "table_size": table_size, "seed": seed,
            "rand_seed": rand_seed, "script": script,
            "script_plan": script.map(|_| serde_json::json!({"seed": seed, "rand_seed": rand_seed})),
        })
    }

    #[test]
    fn repeats_with_drawn_seeds_are_one_line_and_runs_of_commands_alone_another() {
        let s = Some("oltp_point_select.lua --table-size=100");
        let runs = vec![
            run("1", "p", params(1, 0, 100, s), false),
            // Seeds drawn (a matrix's, or a script's recorded plan) differ.
            run("2", "p", params(2, 11, 100, s), true),
            run("3", "p", params(3, 12, 100, s), true),
            run("4", "q", params(4, 13, 200, None), true),
        ];
        let l = lines(&runs);
        assert_eq!(l.len(), 3, "{l:?}");
        assert_eq!((l[0].commands_only, l[0].shape.as_str()), (true, "prepare"));
        assert_eq!(l[1].repeats, 2, "{l:?}");
        assert_eq!(
            l[1].shape,
            "profile=ci threads=2 script=oltp_point_select.lua --table-size=100 table_size=100"
        );
        assert!(!l[2].shape.contains("seed"), "{:?}", l[2]);
        let text = render(&l);
        assert!(
            text.contains("  -  ") && text.contains("no test: prepare"),
            "{text}"
        );
    }

    #[test]
    fn a_line_fits_200_columns() {
        let long = format!("s.lua {}", "--an-option=with-a-long-value ".repeat(12));
        let l = lines(&[run("1", "p", params(1, 0, 100, Some(&long)), true)]);
        let text = render(&l);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= MAX_LINE, "{widest}: {text}");
        assert!(text.contains('…'), "{text}");
    }
}

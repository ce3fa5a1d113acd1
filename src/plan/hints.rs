//! The commands rqps suggests: the end-of-run `compare with:` line and the
//! last line of `rqps runs`. Each is a command that works on the results
//! present: a report is suggested only when it builds (it is built here,
//! with the options the command gives), and otherwise the run's own command
//! line with a name that no stored run has, then the report that compares
//! the two.

use std::path::Path;

use crate::report::compare::Rules;
use crate::report::load::{self, Options};
use crate::results::RunDoc;

pub use crate::cmdline::{results_arg, shell_word};

/// Whether `rqps report --base BASE` builds on `runs` and compares `with`
/// (or, without `with`, anything: a target or a thread sweep).
fn report_builds(runs: &[RunDoc], base: &str, with: Option<&str>) -> bool {
    let opts = Options {
        base: base.to_string(),
        targets: None,
        rules: Rules {
            noise_floor: crate::plan::report::NOISE_FLOOR,
            ..Rules::default()
        },
        all: false,
        sections: crate::suite::report_sections(),
        workloads: crate::suite::workloads(),
        engines: crate::plan::report::engine_keys(),
        allow_mismatch: false,
    };
    match load::build(runs, &opts) {
        Ok(r) => with.is_none_or(|w| w == base || r.targets.iter().any(|t| t == w)),
        Err(_) => false,
    }
}

/// The base of a report that works on `runs` and compares `name` (any
/// report when `None`): another name of the same suite, oldest first, then
/// `name` itself (its thread sweep, or its comparison with the others).
pub fn report_base(runs: &[RunDoc], name: Option<&str>) -> Option<String> {
    let suite_of = |n: &str| runs.iter().rev().find(|r| r.name == n).map(|r| &r.suite);
    let names = load::names(runs);
    let others = names
        .iter()
        .filter(|n| name.is_none_or(|x| x != n.as_str()))
        .filter(|n| name.is_none_or(|x| suite_of(n) == suite_of(x)));
    for base in others {
        if report_builds(runs, base, name) {
            return Some(base.clone());
        }
    }
    name.filter(|n| report_builds(runs, n, None))
        .map(String::from)
}

/// A name no run under `results` is stored as: `NAME-2`, `NAME-3`, ...
pub fn free_name(results: &Path, name: &str) -> String {
    (2..)
        .map(|n| format!("{name}-{n}"))
        .find(|n| crate::results::run_heads_named(results, n).is_empty())
        .unwrap_or_else(|| format!("{name}-new"))
}

/// The `rqps run` of `command_line` (a stored, redacted argv) under
/// `new_name`: the program called `rqps`, the old `--name` and options
/// that only served that run (`--json`, `--allow-mismatch`) left out.
/// `None` when it is not an `rqps run` command line.
pub fn rerun(command_line: &[String], new_name: &str) -> Option<String> {
    if command_line.get(1).map(String::as_str) != Some("run") {
        return None;
    }
    let mut words = vec!["rqps".to_string(), "run".to_string()];
    // Words after `--` belong to the suite (a sysbench script's options):
    // kept as they are, after the new name.
    let end = command_line
        .iter()
        .skip(2)
        .position(|a| a == "--")
        .map_or(command_line.len(), |i| i + 2);
    let mut args = command_line[2..end].iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--name" | "--json" | "--repeat-number" => {
                args.next();
            }
            "--allow-mismatch" => {}
            s if ["--name=", "--json=", "--repeat-number="]
                .iter()
                .any(|p| s.starts_with(p)) => {}
            s => words.push(shell_word(s)),
        }
    }
    words.push("--name".into());
    words.push(shell_word(new_name));
    words.extend(command_line[end..].iter().map(|a| shell_word(a)));
    Some(words.join(" "))
}

/// The end-of-run line for the run named `name` of `command_line`, stored
/// in `results`: the report that compares it, when one works; else the same
/// run under a free name, then the report of the two.
pub fn next_step(results: &Path, name: &str, command_line: &[String]) -> Option<String> {
    let dir = results_arg(results);
    let runs = load::read_results_keeping(results, crate::results::Keep::Report)
        .map(|(runs, _)| runs)
        .unwrap_or_default();
    if let Some(base) = report_base(&runs, Some(name)).filter(|b| b != name) {
        return Some(format!(
            "compare with: rqps report{dir} --base {}",
            shell_word(&base)
        ));
    }
    let again = rerun(command_line, &free_name(results, name))?;
    Some(format!(
        "compare with: {again}   (the same run under a new name: change what you compare, such as --target, --server, --config or --ps-mode), then: rqps report{dir} --base {}",
        shell_word(name)
    ))
}

/// The last line of `rqps runs`: a report that works on the runs stored in
/// `results`, else the latest run's command under a free name. `runs` are
/// the listing's (their context alone); whether a report builds needs the
/// tests, so they are read here as the report reads them.
pub fn runs_hint(results: &Path, runs: &[RunDoc]) -> Option<String> {
    let dir = format!(" --results {}", shell_word(&results.display().to_string()));
    let with_tests = load::read_results_keeping(results, crate::results::Keep::Report)
        .map(|(runs, _)| runs)
        .unwrap_or_default();
    if let Some(base) = report_base(&with_tests, None) {
        return Some(format!(
            "compare them with: rqps report{dir} --base {}",
            shell_word(&base)
        ));
    }
    let last = runs.last()?;
    let again = rerun(&last.command_line, &free_name(results, &last.name))?;
    Some(format!(
        "nothing to compare yet: run {} again under a new name, changing what you compare: {again}",
        last.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_rerun_keeps_the_options_and_takes_a_new_name() {
        assert_eq!(
            rerun(
                &argv("/x/rqps run --profile ci --name a --json j.json --results r"),
                "a-2"
            )
            .as_deref(),
            Some("rqps run --profile ci --results r --name a-2")
        );
        assert_eq!(
            rerun(&argv("rqps run --name=a --allow-mismatch -q"), "it's").as_deref(),
            Some("rqps run -q --name 'it'\\''s'")
        );
        assert_eq!(rerun(&argv("rqps merge a b"), "x"), None);
    }

    #[test]
    fn a_rerun_puts_the_new_name_before_the_words_after_the_double_dash() {
        assert_eq!(
            rerun(
                &argv("rqps run --suite sysbench --script x.lua --name a -- --name=b run"),
                "a-2"
            )
            .as_deref(),
            Some("rqps run --suite sysbench --script x.lua --name a-2 -- --name=b run")
        );
    }
}

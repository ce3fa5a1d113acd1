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
    rerun_changed(command_line, new_name, None).map(|w| w.join(" "))
}

/// [`rerun`] with one option set to another value (`("--ps-mode",
/// "disable")`): the option as given left out, the new one added. Its
/// words, each as a shell reads it.
fn rerun_changed(
    command_line: &[String],
    new_name: &str,
    change: Option<(&str, &str)>,
) -> Option<Vec<String>> {
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
    let changed = change.map(|(flag, _)| flag);
    let mut args = command_line[2..end].iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--name" | "--json" | "--repeat-number" => {
                args.next();
            }
            s if Some(s) == changed => {
                args.next();
            }
            "--allow-mismatch" => {}
            s if ["--name=", "--json=", "--repeat-number="]
                .iter()
                .any(|p| s.starts_with(p))
                || changed.is_some_and(|f| s.starts_with(&format!("{f}="))) => {}
            s => words.push(shell_word(s)),
        }
    }
    if let Some((flag, value)) = change {
        words.push(flag.to_string());
        words.push(shell_word(value));
    }
    words.push("--name".into());
    words.push(shell_word(new_name));
    words.extend(command_line[end..].iter().map(|a| shell_word(a)));
    Some(words)
}

/// The columns a hint fits in: a terminal's (tests/help.rs checks it).
const WIDTH: usize = 120;

/// A command of `words` (each as a shell reads it) as lines of a hint that
/// fit [`WIDTH`]: indented by two spaces, its continuation lines by four,
/// each line but the last ending in ` \` so that the shell reads them, as
/// pasted, as one command. An option and its value stay on one line; a
/// word longer than a line stands alone.
fn command_lines(words: &[String]) -> String {
    let mut units: Vec<String> = Vec::new();
    for w in words {
        match units.last_mut() {
            Some(flag)
                if flag.starts_with("--") && !flag.contains([' ', '=']) && !w.starts_with('-') =>
            {
                flag.push(' ');
                flag.push_str(w);
            }
            _ => units.push(w.clone()),
        }
    }
    let mut lines = vec![String::from("  ")];
    for w in &units {
        let line = lines.last_mut().expect("a line");
        let fresh = line.trim().is_empty();
        if !fresh && line.chars().count() + 1 + w.chars().count() + " \\".len() > WIDTH {
            line.push_str(" \\");
            lines.push(format!("    {w}"));
        } else {
            if !fresh {
                line.push(' ');
            }
            line.push_str(w);
        }
    }
    lines.join("\n")
}

/// `head` and the command of `words` after it on one line when that fits
/// [`WIDTH`], else the command on lines of its own below `head`.
fn with_command(head: &str, words: &[String]) -> String {
    let one = format!("{head} {}", words.join(" "));
    if one.chars().count() <= WIDTH {
        one
    } else {
        format!("{head}\n{}", command_lines(words))
    }
}

/// `rqps report [--results DIR] --base BASE` as words.
fn report_words(results: &Path, base: &str) -> Vec<String> {
    let mut words = vec!["rqps".to_string(), "report".to_string()];
    if let Some(dir) = results_arg(results).strip_prefix(" --results ") {
        words.extend(["--results".to_string(), dir.to_string()]);
    }
    words.extend(["--base".to_string(), shell_word(base)]);
    words
}

/// A change to compare a run of `run`'s suite with: one of the suite's
/// own treatments (`--ps-mode`) set to another of its values, as
/// (`--flag`, the run's value, another value). `None` when the suite has
/// none with listed values, or the run's own options (after `--`) set it.
fn a_change(run: &RunDoc) -> Option<(String, String, String)> {
    let suite = crate::suite::find(&run.suite).ok()?;
    let cmd = suite.args(clap::Command::new("run"));
    let after_dash = run
        .command_line
        .iter()
        .skip_while(|a| *a != "--")
        .collect::<Vec<_>>();
    for key in suite.treatments() {
        let long = key.replace('_', "-");
        if after_dash
            .iter()
            .any(|a| a.contains(&long) || a.contains(key))
        {
            continue;
        }
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(&long)) else {
            continue;
        };
        let Some(now) = run.params.get(*key).and_then(|v| v.as_str()) else {
            continue;
        };
        if let Some(to) = arg
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .find(|v| v != now)
        {
            return Some((format!("--{long}"), now.to_string(), to));
        }
    }
    None
}

/// The run again with one thing changed, under a name of its own, and why:
/// (`rqps run ... --ps-mode disable --name a-disable`, `--ps-mode auto →
/// disable`). `None` when rqps knows no change to suggest for its suite.
fn changed_run(results: &Path, run: &RunDoc, typed: &[String]) -> Option<(Vec<String>, String)> {
    let (flag, from, to) = a_change(run)?;
    let wanted = format!("{}-{to}", run.name);
    let name = if crate::results::run_heads_named(results, &wanted).is_empty() {
        wanted
    } else {
        free_name(results, &wanted)
    };
    let cmd = rerun_changed(typed, &name, Some((&flag, &to)))?;
    Some((cmd, format!("{flag} {from} → {to}")))
}

/// The words of a hint that asks for a change without a command for it.
const CHANGE_ONE_THING: &str = "one thing changed, such as --target, --server or --config";

/// The end-of-run line for the run named `name` of `command_line`, stored
/// in `results`: the report that compares it, when one works; else the run
/// again with one thing changed (a treatment of its suite, under a name of
/// its own), then the report of the two. Nothing after a run that measured
/// nothing or did not end `ok`: there is nothing to compare.
pub fn next_step(results: &Path, name: &str, command_line: &[String]) -> Option<String> {
    let runs = load::read_results_keeping(results, crate::results::Keep::Report)
        .map(|(runs, _)| runs)
        .unwrap_or_default();
    let this = runs.iter().rev().find(|r| r.name == name)?;
    if !this.measures || this.status != crate::results::Status::Ok {
        return None;
    }
    if let Some(base) = report_base(&runs, Some(name)).filter(|b| b != name) {
        return Some(with_command("compare with:", &report_words(results, &base)));
    }
    match changed_run(results, this, command_line) {
        // Two commands, each on lines of its own, so that both fit a
        // terminal and each pastes as it stands.
        Some((again, what)) => Some(format!(
            "compare with (one change: {what}; or change --target, --server or --config), then the report:\n{}\n{}",
            command_lines(&again),
            command_lines(&report_words(results, name))
        )),
        None => Some(with_command(
            &format!(
                "to compare: run it again with {CHANGE_ONE_THING}, under another --name, then:"
            ),
            &report_words(results, name),
        )),
    }
}

/// The last line of `rqps runs`: a report that works on the runs stored in
/// `results`, else the latest run that measured with one thing changed.
/// `runs` are the listing's (their context alone); whether a report builds
/// needs the tests, so they are read here as the report reads them.
pub fn runs_hint(results: &Path, runs: &[RunDoc]) -> Option<String> {
    let with_tests = load::read_results_keeping(results, crate::results::Keep::Report)
        .map(|(runs, _)| runs)
        .unwrap_or_default();
    if let Some(base) = report_base(&with_tests, None) {
        // `rqps runs` names its results folder even where it is the default.
        let mut words = vec![
            "rqps".to_string(),
            "report".to_string(),
            "--results".to_string(),
        ];
        words.push(shell_word(&results.display().to_string()));
        words.extend(["--base".to_string(), shell_word(&base)]);
        return Some(with_command("compare them with:", &words));
    }
    let last = runs.iter().rev().find(|r| r.measures)?;
    match changed_run(results, last, &last.command_line) {
        Some((again, what)) => Some(with_command(
            &format!(
                "nothing to compare yet: run {} again with one change ({what}):",
                last.name
            ),
            &again,
        )),
        None => Some(format!(
            "nothing to compare yet: run {} again with {CHANGE_ONE_THING}, under another --name",
            last.name
        )),
    }
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
    fn a_long_command_goes_on_lines_that_fit_and_that_the_shell_reads_as_one() {
        let words = argv(
            "rqps run --profile ci --tests point-query --threads 1 --read-secs 0.2 --write-secs 0.2 \
             --results /a/rather/long/folder/of/results/that/goes/on --ps-mode disable --name a-disable",
        );
        let text = command_lines(&words);
        assert_eq!(text.lines().count(), 2, "{text}");
        for l in text.lines() {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        assert!(text.starts_with("  rqps run ") && text.contains(" \\\n    --results /a/"));
        assert_eq!(text.replace(" \\\n    ", " ").trim_start(), words.join(" "));
        // Short enough: one line after its head.
        assert_eq!(
            with_command("compare with:", &argv("rqps report --base a")),
            "compare with: rqps report --base a"
        );
        assert_eq!(
            with_command("compare with:", &words),
            format!("compare with:\n{text}")
        );
        // A word longer than a line stands alone.
        let long = format!("/{}", "x".repeat(150));
        let text = command_lines(&argv(&format!("rqps report --results {long} --base a")));
        assert_eq!(
            text,
            format!("  rqps report \\\n    --results {long} \\\n    --base a")
        );
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

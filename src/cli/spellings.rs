//! Options rqps does not take, answered in one line: another tool's
//! spelling (pgbench's `-c 8`, sysbench's `--time`) with rqps's, or another
//! suite's option with the suite it belongs to.

use crate::suite::{self, Suite};

/// The long option names of `cmd`.
pub(super) fn longs(cmd: &clap::Command) -> Vec<String> {
    cmd.get_arguments()
        .filter_map(|a| a.get_long().map(String::from))
        .collect()
}

/// Habits from the tools the suites reproduce (pgbench's `-c 8 -T 10`,
/// sysbench's `--time`), all in one line: of the flags the command does not
/// take, the chosen suite's peer flags, else another suite's, pointing to
/// `--suite` with rqps's spellings.
pub(super) fn peer_spellings(
    argv: &[String],
    chosen: &dyn Suite,
    cmd: &clap::Command,
    sub: &str,
) -> Option<String> {
    let args = argv.get(1..).unwrap_or_default();
    // Flags the command takes are left out (a blank keeps values in place).
    let sc = cmd.find_subcommand(sub)?;
    let takes = |cmd: &clap::Command, a: &str| {
        if let Some(long) = a.strip_prefix("--") {
            let long = long.split('=').next().unwrap_or(long);
            cmd.get_arguments().any(|x| x.get_long() == Some(long))
        } else if let Some(short) = a.strip_prefix('-').and_then(|s| s.chars().next()) {
            cmd.get_arguments().any(|x| x.get_short() == Some(short))
        } else {
            false
        }
    };
    let blank = |args: &[String], cmd: &clap::Command| -> Vec<String> {
        args.iter()
            .map(|a| {
                if takes(cmd, a) {
                    String::new()
                } else {
                    a.clone()
                }
            })
            .collect()
    };
    let mut unknown = blank(args, sc);
    if let Some(m) = chosen.peer_hint(&unknown) {
        return Some(m);
    }
    // Another suite's own option is for the wrong-suite refusal to name.
    for s in suite::registry() {
        unknown = blank(&unknown, &s.args(clap::Command::new("x")));
    }
    let mut lines = Vec::new();
    for s in suite::registry()
        .iter()
        .filter(|s| s.name() != chosen.name())
    {
        let (peer, flags) = s.peer();
        // `--suite NAME` only where the chosen suite lacks rqps's spelling
        // (sysbench's --rand-seed is every suite's --seed).
        let others_only = crate::suite::api::peer_flag_hits(&unknown, flags)
            .iter()
            .filter_map(|(_, instead)| instead.split(' ').next())
            .any(|f| f.starts_with("--") && !takes(sc, f));
        let before = if others_only {
            format!("--suite {} ", s.name())
        } else {
            String::new()
        };
        lines.extend(crate::suite::api::peer_flag_hint(
            &unknown, peer, flags, &before,
        ));
    }
    if !lines.is_empty() {
        return Some(lines.join("; "));
    }
    None
}

/// Options in `argv` that belong to another suite than `chosen`: one line
/// saying which suite they apply to.
pub(super) fn foreign_options(
    argv: &[String],
    known: &[String],
    chosen: &dyn Suite,
) -> Option<String> {
    let mut found: Vec<(String, &'static str)> = Vec::new();
    for a in argv.iter().skip(1).take_while(|a| *a != "--") {
        let Some(name) = a.strip_prefix("--") else {
            continue;
        };
        let name = name.split('=').next().unwrap_or(name);
        if known.iter().any(|k| k == name) {
            continue;
        }
        let owner = suite::registry()
            .iter()
            .filter(|s| s.name() != chosen.name())
            .find(|s| {
                longs(&s.args(clap::Command::new("x")))
                    .iter()
                    .any(|k| k == name)
            });
        if let Some(s) = owner {
            found.push((format!("--{name}"), s.name()));
        }
    }
    let (_, other) = *found.first()?;
    let names: Vec<&str> = found
        .iter()
        .filter(|(_, s)| *s == other)
        .map(|(n, _)| n.as_str())
        .collect();
    // What the chosen suite sets the same thing with (`--clients` given to
    // sysbench: its `--threads`).
    let owner = suite::find(other).ok()?;
    let ours = names
        .iter()
        .find_map(|n| suite::counterpart(chosen, owner, &n[2..], &|o| format!("--{o}")))
        .map(|c| format!("; --suite {c}"))
        .unwrap_or_default();
    Some(format!(
        "{} appl{} only to --suite {other}{ours}",
        names.join(", "),
        if names.len() > 1 { "y" } else { "ies" }
    ))
}

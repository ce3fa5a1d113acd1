//! Advice for command lines written in another tool's habits, each with a
//! command that runs: a script's options given before `--`, the reference
//! tool's positional words (`rqps run oltp_read_only run`). The suites say
//! what their peer's words mean ([`crate::suite::api::PeerWord`]); this file
//! names no suite.

use crate::suite::{self, Suite};

/// How `a` reads the word after it: as its value (`Some(true)`), as its
/// value unless it is an option (`Some(false)`: `--keying true`), or not.
fn takes_next(a: &clap::Arg) -> Option<bool> {
    if !a.get_action().takes_values() {
        return None;
    }
    Some(a.get_num_args().is_none_or(|r| r.min_values() > 0))
}

/// For each word of `args` (the command line after the subcommand) up to
/// `--`: whether `sc` takes it, as an option or as an option's value.
/// Words after `--` are not looked at (the result is shorter then).
pub fn taken(sc: &clap::Command, args: &[String]) -> Vec<bool> {
    let mut out = Vec::new();
    let mut value_next: Option<bool> = None;
    for a in args {
        if a == "--" {
            break;
        }
        match value_next.take() {
            Some(true) => {
                out.push(true);
                continue;
            }
            Some(false) if !a.starts_with('-') => {
                out.push(true);
                continue;
            }
            _ => {}
        }
        let arg = if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            sc.get_arguments()
                .find(|x| x.get_long() == Some(name))
                .map(|x| (x, inline))
        } else if let Some(short) = a.strip_prefix('-').and_then(|s| s.chars().next()) {
            sc.get_arguments()
                .find(|x| x.get_short() == Some(short))
                .map(|x| (x, a.len() > 2))
        } else {
            None
        };
        match arg {
            Some((x, inline)) => {
                out.push(true);
                value_next = if inline { None } else { takes_next(x) };
            }
            None => out.push(false),
        }
    }
    out
}

/// The words of a command line before its `--`, split by [`taken`].
struct Split<'a> {
    /// The words the subcommand takes (its options and their values), in order.
    kept: Vec<String>,
    /// The words it does not take, in order.
    foreign: Vec<&'a String>,
    /// How many words came before `--` (all of them where there is none).
    len: usize,
}

fn split<'a>(sc: &clap::Command, args: &'a [String]) -> Split<'a> {
    let taken = taken(sc, args);
    let (mut kept, mut foreign) = (Vec::new(), Vec::new());
    for (a, t) in args.iter().zip(&taken) {
        if *t {
            kept.push(a.clone());
        } else {
            foreign.push(a);
        }
    }
    Split {
        kept,
        foreign,
        len: taken.len(),
    }
}

/// `rqps SUB` and `words`, as a shell would read them back.
fn command_line(sub: &str, words: &[String]) -> String {
    std::iter::once(format!("rqps {sub}"))
        .chain(words.iter().map(|w| crate::cmdline::shell_word(w)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A script's options and commands written before `--` (sysbench's
/// `s.lua --threads=2 --time=10 run`): where the subcommand takes a
/// `--script` and the words after `--` are the script's, the words rqps
/// does not take belong there. One line with the command that does so.
pub fn script_words_before_dashes(
    sc: &clap::Command,
    sub: &str,
    argv: &[String],
) -> Option<String> {
    let args = argv.get(2..)?;
    // A `--script` whose own words follow `--` (a trailing argument).
    let has_script = sc.get_arguments().any(|a| a.get_long() == Some("script"))
        && sc.get_arguments().any(|a| a.is_last_set());
    let script_given = args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--script" || a.starts_with("--script="));
    if !has_script || !script_given {
        return None;
    }
    let Split {
        kept: mut fixed,
        foreign,
        len,
    } = split(sc, args);
    if foreign.is_empty() {
        return None;
    }
    fixed.push("--".into());
    fixed.extend(foreign.iter().map(|a| a.to_string()));
    fixed.extend(args.iter().skip(len + 1).cloned());
    let shown: Vec<&str> = foreign.iter().map(|a| a.as_str()).collect();
    Some(format!(
        "{} {} the script's: its options and commands go after --, as sysbench takes them after the script's name: `{}`",
        shown.join(" "),
        if shown.len() > 1 { "are" } else { "is" },
        command_line(sub, &fixed)
    ))
}

/// The suite's peer word `w` stands for (`/usr/share/sysbench/oltp_read_only.lua`
/// and `oltp_read_only` alike), with the suite it belongs to.
fn peer_word(
    chosen: &'static dyn Suite,
    w: &str,
) -> Option<(&'static dyn Suite, crate::suite::api::PeerWord)> {
    let bare = w.rsplit('/').next().unwrap_or(w);
    let bare = bare.strip_suffix(".lua").unwrap_or(bare);
    std::iter::once(chosen)
        .chain(suite::registry().iter().copied())
        .find_map(|s| {
            s.peer_words()
                .iter()
                .find(|p| p.word == bare)
                .map(|p| (s, *p))
        })
}

/// The reference tool's positional words (`rqps run oltp_read_only run`,
/// sysbench's spelling): where every word the subcommand does not take is
/// one of a suite's [`crate::suite::api::PeerWord`]s, one line with the
/// command that spells them as rqps's options.
pub fn peer_words(
    chosen: &'static dyn Suite,
    sc: &clap::Command,
    sub: &str,
    argv: &[String],
) -> Option<String> {
    let args = argv.get(2..)?;
    let Split {
        kept: mut fixed,
        foreign,
        len,
    } = split(sc, args);
    if foreign.is_empty() || foreign.iter().any(|a| a.starts_with('-')) {
        return None;
    }
    let mut found = Vec::new();
    for w in &foreign {
        found.push(peer_word(chosen, w)?);
    }
    let (owner, _) = found.iter().find(|(_, p)| !p.instead.is_empty())?;
    if owner.name() != chosen.name() {
        // The suite the words are of, in place of the one given.
        let mut kept = Vec::new();
        let mut it = fixed.into_iter();
        while let Some(a) = it.next() {
            if a == "--suite" {
                it.next();
            } else if !a.starts_with("--suite=") {
                kept.push(a);
            }
        }
        fixed = kept;
        fixed.extend(["--suite".to_string(), owner.name().to_string()]);
    }
    // One option each, the values of several words joined (`--tests a,b`).
    let mut options: Vec<(String, Vec<String>)> = Vec::new();
    for (_, p) in &found {
        let mut words = p.instead.split_whitespace();
        while let Some(opt) = words.next() {
            let value = words.next().unwrap_or_default().to_string();
            match options.iter_mut().find(|(o, _)| o == opt) {
                Some((_, values)) => values.push(value),
                None => options.push((opt.to_string(), vec![value])),
            }
        }
    }
    for (opt, values) in options {
        fixed.push(opt);
        fixed.push(values.join(","));
    }
    fixed.extend(args.iter().skip(len).cloned());
    let (peer, _) = owner.peer();
    let shown: Vec<&str> = foreign.iter().map(|a| a.as_str()).collect();
    let commands: Vec<&str> = found
        .iter()
        .filter(|(_, p)| p.instead.is_empty())
        .map(|(_, p)| p.word)
        .collect();
    Some(format!(
        "`{}` is {peer}'s spelling: rqps names the test with an option{}: `{}`",
        shown.join(" "),
        if commands.is_empty() {
            String::new()
        } else {
            format!(
                " and needs no {} (one `rqps {sub}` loads the tables, runs the tests and drops the tables)",
                commands.join(", ")
            )
        },
        command_line(sub, &fixed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        std::iter::once("rqps")
            .chain(s.split(' '))
            .map(String::from)
            .collect()
    }

    #[test]
    fn the_words_rqps_takes_are_told_from_the_script_s() {
        let chosen = suite::registry()[0];
        let cmd = super::super::command(chosen);
        let sc = cmd.find_subcommand("run").unwrap();
        let a = argv("run --script s.lua --threads=2 --profile ci --time=10 run");
        assert_eq!(
            taken(sc, &a[2..]),
            [true, true, true, true, true, false, false]
        );
        let m = script_words_before_dashes(sc, "run", &a).unwrap();
        assert!(
            m.ends_with("`rqps run --script s.lua --threads=2 --profile ci -- --time=10 run`"),
            "{m}"
        );
        // Given after --, nothing to say.
        let a = argv("run --script s.lua -- --time=10 run");
        assert!(script_words_before_dashes(sc, "run", &a).is_none());
        let a = argv("run --profile ci oltp_read_only run");
        let m = peer_words(chosen, sc, "run", &a).unwrap();
        assert!(
            m.ends_with("`rqps run --profile ci --tests read-only_range=100`"),
            "{m}"
        );
        // A word no suite knows: left to clap.
        assert!(peer_words(chosen, sc, "run", &argv("run nonsense")).is_none());
    }
}

//! `rqps completions SHELL` and `rqps man [SUBCOMMAND...]`, both generated
//! from the clap definitions that parse the command line, so they never fall
//! behind it.
//!
//! Completion is clap's dynamic completion (clap_complete's `CompleteEnv`):
//! the script `rqps completions SHELL` prints is clap's registration, which
//! calls `COMPLETE=SHELL rqps -- WORDS` at every TAB, and rqps answers from
//! the command [`with_candidates`] builds: the options of the suite the line
//! names with `--suite`, and the values of `--suite`, `--profile`, `--server`,
//! `engine install`'s kind and version, and `man` from the registries and the
//! engine cache (a suite's own values, such as sysbench's `--tests`, come
//! with its options). No shell code here is written by hand.
//!
//! Man pages: one per command at every depth (rqps-engine-install(1)), with
//! `run` and `tests` listing the options every suite shares and then each
//! suite's options under its own heading (flags two suites share, such as
//! `--threads`, appear under both).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Command};
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};

use crate::error::Error;
use crate::suite::{self, Suite};

#[derive(Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(Args)]
pub struct ManArgs {
    /// The command whose page to print: `run` for rqps-run(1), `engine install` for
    /// rqps-engine-install(1); default: rqps(1).
    #[arg(value_name = "SUBCOMMAND", num_args = 0..)]
    subcommand: Vec<String>,
    /// Write every page (rqps.1 and one rqps-*.1 per command, at every depth) into DIR
    /// instead, and list the files written.
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    dir: Option<PathBuf>,
}

/// Candidates from a list of (value, help) pairs.
fn candidates(values: Vec<(String, Option<String>)>) -> ArgValueCandidates {
    ArgValueCandidates::new(move || {
        values
            .iter()
            .map(|(v, help)| CompletionCandidate::new(v.clone()).help(help.clone().map(Into::into)))
            .collect()
    })
}

/// `cmd` (the CLI's, with `suite`'s options) with the values each option and
/// argument completes to. `words`: the command line being completed.
pub fn with_candidates(cmd: Command, suite: &'static dyn Suite, words: &[String]) -> Command {
    let suites = || {
        candidates(
            suite::registry()
                .iter()
                .map(|s| (s.name().to_string(), Some(s.about().to_string())))
                .collect(),
        )
    };
    let profiles = || {
        candidates(
            suite
                .profiles()
                .iter()
                .map(|p| (p.to_string(), None))
                .collect(),
        )
    };
    let servers = candidates(
        crate::engine::install::server_choices()
            .into_iter()
            .map(|s| (s, None))
            .collect(),
    );
    let kinds = crate::engine::install::installable_kinds();
    let kind = words
        .iter()
        .skip_while(|w| *w != "install")
        .nth(1)
        .map(String::as_str);
    let versions = candidates(
        kind.map(crate::engine::install::releases)
            .unwrap_or_default()
            .into_iter()
            .map(|v| (v, None))
            .collect(),
    );
    let pages: Vec<(String, Option<String>)> = cmd
        .get_subcommands()
        .filter(|c| c.get_name() != "help")
        .map(|c| {
            (
                c.get_name().to_string(),
                c.get_about().map(|a| a.to_string()),
            )
        })
        .collect();
    cmd.mut_subcommand("run", |c| {
        c.mut_arg("suite", |a| a.add(suites()))
            .mut_arg("profile", |a| a.add(profiles()))
            .mut_arg("server", |a| a.add(servers))
    })
    .mut_subcommand("tests", |c| {
        c.mut_arg("suite", |a| a.add(suites()))
            .mut_arg("profile", |a| a.add(profiles()))
    })
    .mut_subcommand("engine", |c| {
        c.mut_subcommand("install", |c| {
            c.mut_arg("kind", |a| {
                a.add(candidates(kinds.into_iter().map(|k| (k, None)).collect()))
            })
            .mut_arg("version", |a| a.add(versions))
        })
    })
    .mut_subcommand("man", |c| {
        c.mut_arg("subcommand", |a| a.add(candidates(pages)))
    })
}

/// The registration script of clap's dynamic completion for `shell`: it
/// asks the `rqps` on PATH for candidates at every TAB.
pub fn completions_script(shell: clap_complete::Shell) -> Result<Vec<u8>, Error> {
    let name = shell.to_string();
    let env = clap_complete::env::Shells::builtins();
    let completer = env.completer(&name).ok_or_else(|| {
        crate::error::usage(format!(
            "no dynamic completion for {name}: use bash, zsh, fish, elvish or powershell"
        ))
    })?;
    let mut out = Vec::new();
    completer
        .write_registration("COMPLETE", "rqps", "rqps", "rqps", &mut out)
        .map_err(|e| crate::error::failed(format!("cannot write the completion script: {e}")))?;
    Ok(out)
}

/// `cmd` and its subcommands at every depth without clap's `help`
/// subcommand: man pages do not refer to a page rqps-engine-help(1).
fn without_help_subcommands(cmd: Command) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let cmd = cmd.disable_help_subcommand(true);
    names.iter().fold(cmd, |cmd, n| {
        cmd.mut_subcommand(n, without_help_subcommands)
    })
}

/// How the man pages describe the engine cache: by rule, not as the path
/// of the machine that generated them.
const CACHE_RULE: &str = "The engine cache is $RQPS_CACHE_DIR when that is set; otherwise \
/var/cache/rqps/engines for root (unless $XDG_CACHE_HOME is set), $XDG_CACHE_HOME/rqps/engines \
when XDG_CACHE_HOME is an absolute path, else ~/.cache/rqps/engines. `rqps engine list` names \
the one in use.";

/// The synopsis of a command whose options are sectioned per suite.
const RUN_SYNOPSIS: &str = "rqps run [--suite NAME] [--profile NAME] [--target URL | --server \
KIND[@VERSION]] [OPTIONS] [SUITE OPTIONS]";
const TESTS_SYNOPSIS: &str = "rqps tests [--suite NAME] [--profile NAME] [SUITE OPTIONS]";

/// The page of one command (`cmd` built, without help subcommands), with
/// `suites`' options in a section each when it takes a suite.
fn render(cmd: &Command, per_suite: bool) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    if !per_suite {
        let man = clap_mangen::Man::new(cmd.clone());
        man.render_title(&mut out)?;
        man.render_name_section(&mut out)?;
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        if cmd.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut out)?;
        }
        if cmd.has_subcommands() {
            man.render_subcommands_section(&mut out)?;
        }
        extra_section(cmd, &mut out)?;
        if cmd.get_version().is_some() {
            man.render_version_section(&mut out)?;
        }
        return Ok(out);
    }
    let synopsis = if cmd.get_name() == "run" {
        RUN_SYNOPSIS
    } else {
        TESTS_SYNOPSIS
    };
    // The options every suite shares: the first suite's, which the CLI's
    // command carries, are left to its own section below.
    let first: Vec<clap::Id> = suite::registry()[0]
        .args(Command::new("x"))
        .get_arguments()
        .map(|a| a.get_id().clone())
        .collect();
    let shared = first.iter().fold(cmd.clone(), |c, id| {
        if c.get_arguments().any(|a| a.get_id() == id) {
            c.mut_arg(id, |a| a.hide(true))
        } else {
            c
        }
    });
    let man = clap_mangen::Man::new(shared.override_usage(synopsis));
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    for s in suite::registry() {
        let opts = s.args(Command::new("x"));
        let opts = opts
            .get_arguments()
            .cloned()
            .fold(Command::new("x"), |c, a| c.arg(a.help_heading(None)))
            .disable_help_flag(true);
        let mut section = Vec::new();
        clap_mangen::Man::new(opts).render_options_section(&mut section)?;
        let section = String::from_utf8_lossy(&section).into_owned();
        // What follows the section's heading (roff output starts with a preamble).
        let Some((_, body)) = section.split_once(".SH OPTIONS\n") else {
            continue;
        };
        let mut head = clap_mangen::roff::Roff::default();
        head.control(
            "SH",
            [format!("{} OPTIONS (--suite {})", s.name().to_uppercase(), s.name()).as_str()],
        )
        .text([clap_mangen::roff::roman(s.about())]);
        head.to_writer(&mut out)?;
        out.extend_from_slice(body.as_bytes());
    }
    extra_section(cmd, &mut out)?;
    Ok(out)
}

/// The text after the options (`after_help`) as roff that reads at any
/// width: a line of its own starts a paragraph; an indented item
/// (`  NAME  what it is`, `  COMMAND  # what it does`, or a comment line
/// `  # what` over its command) becomes a tagged paragraph, the name or
/// command in bold on its own line and what it does indented under it, so
/// nothing runs into the next line. Indented lines deeper than an item
/// continue it.
fn extra_section(cmd: &Command, out: &mut Vec<u8>) -> Result<(), std::io::Error> {
    use clap_mangen::roff::{Roff, bold, roman};
    let Some(text) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) else {
        return Ok(());
    };
    let text = text.to_string();
    // (tag, body) items and paragraphs, in order.
    enum Piece {
        Para(String),
        Item(String, String),
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut comment: Option<String> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        if body.is_empty() {
            continue;
        }
        match indent {
            0 => pieces.push(Piece::Para(body.to_string())),
            1..=2 => {
                if let Some(c) = body.strip_prefix("# ") {
                    comment = Some(c.to_string());
                    continue;
                }
                let (tag, what) = match body.split_once("  ") {
                    Some((t, w)) => (t.trim(), w.trim().trim_start_matches("# ")),
                    None => (body, ""),
                };
                let what = match comment.take() {
                    Some(c) if what.is_empty() => c,
                    _ => what.to_string(),
                };
                pieces.push(Piece::Item(tag.to_string(), what));
            }
            _ => match pieces.last_mut() {
                Some(Piece::Item(_, what)) | Some(Piece::Para(what)) => {
                    what.push(' ');
                    what.push_str(body);
                }
                None => pieces.push(Piece::Para(body.to_string())),
            },
        }
    }
    let mut roff = Roff::default();
    let title = if text.starts_with("Examples:") {
        "EXAMPLES"
    } else if text.starts_with("Suites") {
        "SUITES"
    } else {
        "NOTES"
    };
    roff.control("SH", [title]);
    for p in pieces {
        match p {
            Piece::Para(t) if t == "Examples:" => {}
            Piece::Para(t) => {
                roff.control("PP", []).text([roman(t)]);
            }
            Piece::Item(tag, what) => {
                roff.control("TP", []).text([bold(tag)]);
                roff.text([roman(what)]);
            }
        }
    }
    roff.to_writer(out)
}

/// The command `path` names under `cmd` (`["engine", "install"]`); also
/// found from one word with dashes (`engine-install`).
fn find<'c>(cmd: &'c Command, path: &[String]) -> Option<&'c Command> {
    let words: Vec<&str> = match path {
        [one] => one.split('-').collect(),
        _ => path.iter().map(String::as_str).collect(),
    };
    words
        .iter()
        .try_fold(cmd, |c, w| c.get_subcommands().find(|s| s.get_name() == *w))
}

/// Every command at every depth, with the path of words that names it.
fn all_pages(cmd: &Command, path: Vec<String>, out: &mut Vec<(Vec<String>, Command)>) {
    out.push((path.clone(), cmd.clone()));
    for s in cmd.get_subcommands() {
        let mut p = path.clone();
        p.push(s.get_name().to_string());
        all_pages(s, p, out);
    }
}

/// `cmd` (the CLI's, with the first suite's options) as man pages render
/// it: built, without help subcommands, the engine cache by rule.
fn man_command(cmd: Command) -> Command {
    let mut cmd = without_help_subcommands(cmd).mut_subcommand("engine", |c| {
        c.mut_subcommand("install", |c| {
            let long = c
                .get_long_about()
                .or(c.get_about())
                .map(|a| a.to_string())
                .unwrap_or_default();
            c.long_about(format!("{long}\n\n{CACHE_RULE}"))
        })
    });
    cmd.build();
    cmd
}

/// The roff page of rqps (`path` empty) or of the command `path` names
/// (`cmd`: the CLI's own command, as `rqps man` hands it in).
pub fn man_page(path: &[String], cmd: Command) -> Result<Vec<u8>, Error> {
    let cmd = man_command(cmd);
    let page = if path.is_empty() {
        &cmd
    } else {
        find(&cmd, path).ok_or_else(|| {
            let mut pages = Vec::new();
            all_pages(&cmd, Vec::new(), &mut pages);
            let names: Vec<String> = pages
                .iter()
                .filter(|(p, _)| !p.is_empty())
                .map(|(p, _)| p.join(" "))
                .collect();
            let asked = path.join(" ");
            let hint = crate::util::did_you_mean(&asked, names.iter().map(String::as_str))
                .map(|n| format!(" (did you mean `rqps man {n}`?)"))
                .unwrap_or_default();
            crate::error::usage(format!(
                "no command '{asked}'{hint}: man pages exist for {}",
                names.join(", ")
            ))
        })?
    };
    let per_suite = !path.is_empty() && matches!(page.get_name(), "run" | "tests");
    render(page, per_suite)
        .map_err(|e| crate::error::failed(format!("cannot render the man page: {e}")))
}

/// Writes every page into `dir`: `rqps.1` and `rqps-PATH.1` for each
/// command at every depth. Returns the files written.
pub fn write_pages(dir: &Path, cmd: Command) -> Result<Vec<PathBuf>, Error> {
    let cmd = man_command(cmd);
    let mut pages = Vec::new();
    all_pages(&cmd, Vec::new(), &mut pages);
    std::fs::create_dir_all(dir)
        .map_err(|e| crate::error::failed(format!("cannot create {}: {e}", dir.display())))?;
    let mut written = Vec::new();
    for (path, page) in pages {
        let name = std::iter::once("rqps".to_string())
            .chain(path.iter().cloned())
            .collect::<Vec<_>>()
            .join("-");
        let per_suite = !path.is_empty() && matches!(page.get_name(), "run" | "tests");
        let bytes = render(&page, per_suite)
            .map_err(|e| crate::error::failed(format!("cannot render {name}(1): {e}")))?;
        let file = dir.join(format!("{name}.1"));
        std::fs::write(&file, bytes)
            .map_err(|e| crate::error::failed(format!("cannot write {}: {e}", file.display())))?;
        written.push(file);
    }
    Ok(written)
}

fn print(bytes: &[u8]) -> Result<i32, Error> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|_| stdout.flush())
        .map_err(|e| crate::error::failed(format!("cannot write to stdout: {e}")))?;
    Ok(0)
}

pub fn completions(a: &CompletionsArgs) -> Result<i32, Error> {
    print(&completions_script(a.shell)?)
}

pub fn man(a: &ManArgs, cmd: Command) -> Result<i32, Error> {
    match &a.dir {
        Some(dir) => {
            for f in write_pages(dir, cmd)? {
                println!("{}", f.display());
            }
            Ok(0)
        }
        None => print(&man_page(&a.subcommand, cmd)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's own command, as `rqps man` hands it in.
    fn cli() -> Command {
        super::super::man_command()
    }

    /// The examples of a page as (command, comment) pairs: each `.TP` item
    /// of its EXAMPLES section, its tag and the line after it; and the
    /// section's other lines (a paragraph, a comment left on its own).
    fn examples_of(page: &str) -> (Vec<(String, String)>, Vec<String>) {
        let at = page.find(".SH EXAMPLES").expect("an EXAMPLES section") + 12;
        let section = &page[at..];
        let section = &section[..section.find(".SH").unwrap_or(section.len())];
        // roff's definition of its quote string (`.ie`/`.el`) left out.
        let lines: Vec<&str> = section
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with(".ie ") && !l.starts_with(".el "))
            .collect();
        let (mut pairs, mut other) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < lines.len() {
            if lines[i] == ".TP" && i + 2 < lines.len() {
                let tag = lines[i + 1]
                    .trim_start_matches("\\fB")
                    .trim_end_matches("\\fR");
                // roff's escapes of a dash and a quote read back.
                let tag = tag.replace("\\-", "-").replace("\\*(Aq", "'");
                pairs.push((tag, lines[i + 2].to_string()));
                i += 3;
            } else {
                other.push(lines[i].to_string());
                i += 1;
            }
        }
        (pairs, other)
    }

    #[test]
    fn the_man_page_s_examples_are_each_a_command_with_its_comment_whole() {
        let (pairs, other) = examples_of(&page(&[]));
        let want: Vec<(String, String)> = super::super::help::EXAMPLES
            .iter()
            .map(|(c, w)| (c.to_string(), w.to_string()))
            .collect();
        assert_eq!(pairs, want);
        assert!(other.is_empty(), "{other:?}");
        // Laid out as help does on a 40-column terminal (each comment on a
        // line of its own above its command), the page's examples are the same.
        let narrow = super::super::command_at(suite::registry()[0], 40);
        let narrow = String::from_utf8(man_page(&[], narrow).unwrap()).unwrap();
        assert_eq!(examples_of(&narrow), (want.clone(), Vec::new()));
        // Another list of examples is what the check finds.
        let other = super::super::man_command().after_help("Examples:\n  rqps show   # a table");
        let other = String::from_utf8(man_page(&[], other).unwrap()).unwrap();
        assert_ne!(examples_of(&other).0, want);
    }

    fn page(path: &[&str]) -> String {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        String::from_utf8(man_page(&path, cli()).unwrap()).unwrap()
    }

    #[test]
    fn every_page_another_page_refers_to_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_pages(dir.path(), cli()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        for name in [
            "rqps",
            "rqps-run",
            "rqps-engine-install",
            "rqps-engine-list",
        ] {
            assert!(names.iter().any(|n| n == name), "no {name} in {names:?}");
        }
        assert!(!names.iter().any(|n| n.ends_with("-help")), "{names:?}");
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for r in text.split("rqps\\-").skip(1) {
                let Some(end) = r.find("(1)") else { continue };
                let referred = format!("rqps-{}", r[..end].replace("\\-", "-"));
                if referred.contains(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                    continue;
                }
                assert!(
                    names.contains(&referred),
                    "{} refers to {referred}(1), which is not written",
                    f.display()
                );
            }
        }
    }

    #[test]
    fn the_run_page_has_a_section_per_suite_with_each_suites_shared_flags() {
        let run = page(&["run"]);
        assert!(run.contains(".TH rqps-run 1"), "{run:.300}");
        for s in suite::registry() {
            let head = format!(
                ".SH \"{} OPTIONS (--suite {})\"",
                s.name().to_uppercase(),
                s.name()
            );
            let at = run
                .find(&head)
                .unwrap_or_else(|| panic!("no {head} in rqps-run(1)"));
            let section = &run[at + head.len()..];
            let section = &section[..section[1..]
                .find(".SH")
                .map(|e| e + 1)
                .unwrap_or(section.len())];
            for a in s.args(Command::new("x")).get_arguments() {
                if let Some(l) = a.get_long() {
                    let flag = format!("\\-\\-{}", l.replace('-', "\\-"));
                    assert!(section.contains(&flag), "--{l} missing under {}", s.name());
                }
            }
        }
        // The synopsis is short, and the cache path is a rule in the install page.
        let synopsis =
            &run[run.find(".SH SYNOPSIS").unwrap()..run.find(".SH DESCRIPTION").unwrap()];
        assert!(synopsis.len() < 400, "{synopsis}");
        let install = page(&["engine", "install"]);
        assert!(install.contains("\\-\\-repository"), "{install}");
        assert!(install.contains("XDG_CACHE_HOME"), "{install}");
        assert_eq!(page(&["engine-install"]), install);
    }

    #[test]
    fn an_unknown_page_is_a_usage_error_with_a_suggestion() {
        let e = man_page(&["engin".to_string()], cli()).unwrap_err();
        assert!(matches!(e, Error::Usage(_)));
        assert!(
            e.to_string().contains("did you mean `rqps man engine`"),
            "{e}"
        );
    }

    #[test]
    fn each_shell_gets_clap_s_registration_calling_the_rqps_on_path() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let s = String::from_utf8(completions_script(shell).unwrap()).unwrap();
            assert!(s.contains("COMPLETE"), "{shell}: {s}");
            assert!(s.contains("rqps"), "{shell}: {s}");
        }
    }
}
